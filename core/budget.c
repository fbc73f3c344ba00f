/*
 * budget.c — the budget grammar (budget.h).  Strict: no spaces, no sign,
 * a fraction only before a suffix (1.5G is a whole number of bytes, 1.5 is
 * not), nothing above INT64_MAX.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h> /* isfinite: a macro, no libm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"

#define ACCEPTED                                                                                   \
	"a size such as 12G, 1536M or 4096 (K, M, G, T are powers of 1024), or a percentage of "   \
	"the baseline peak such as 50%"

static int bad(char *err, size_t errlen, const char *s, const char *why)
{
	snprintf(err, errlen, "budget '%s': %s (expected %s)", s, why, ACCEPTED);
	return -1;
}

static int shift_of(char c)
{
	switch (toupper((unsigned char)c)) {
	case 'K':
		return 10;
	case 'M':
		return 20;
	case 'G':
		return 30;
	case 'T':
		return 40;
	default:
		return -1;
	}
}

int remat_budget_parse(const char *s, struct remat_budget *out, char *err, size_t errlen)
{
	out->bytes = 0;
	out->percent = 0;
	if (!s || !*s)
		return bad(err, errlen, s ? s : "", "empty");
	if (!isdigit((unsigned char)s[0]))
		return bad(err, errlen, s, "not a positive number");
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || !isfinite(v) || end == s)
		return bad(err, errlen, s, "not a number");
	/* strtod also reads hex and exponents: only digits and one point here. */
	if (strspn(s, "0123456789.") != (size_t)(end - s))
		return bad(err, errlen, s, "not a plain decimal number");
	int fraction = memchr(s, '.', (size_t)(end - s)) != NULL;
	if (*end == '%') {
		if (end[1])
			return bad(err, errlen, s, "junk after '%'");
		if (!(v > 0) || v > 100)
			return bad(err, errlen, s, "a percentage must be in (0, 100]");
		out->percent = v;
		return 0;
	}
	int shift = 0;
	const char *suffix = end;
	if (*end && *end != 'B' && *end != 'b') {
		shift = shift_of(*end);
		if (shift < 0)
			end = ""; /* unknown: said below */
		else
			end++;
		if ((end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
			end += 2;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || shift < 0) {
		char why[64];
		snprintf(why, sizeof(why), "unknown suffix '%.16s'", suffix);
		return bad(err, errlen, s, why);
	}
	if (fraction && !shift)
		return bad(err, errlen, s, "bytes must be a whole number");
	double bytes = v * (double)(1ull << shift);
	/* 2^63 is the first double that does not fit int64_t. */
	if (bytes >= 9223372036854775808.0)
		return bad(err, errlen, s, "too large");
	if (bytes < 1)
		return bad(err, errlen, s, "not a positive size");
	out->bytes = (int64_t)bytes; /* whole bytes: the fraction is dropped */
	return 0;
}

int remat_budget_resolve(const struct remat_budget *b, int64_t baseline_peak, int64_t *out,
                         char *err, size_t errlen)
{
	if (b->bytes > 0) {
		*out = b->bytes;
		return 0;
	}
	double v = b->percent / 100.0 * (double)(baseline_peak > 0 ? baseline_peak : 0);
	if (!(v >= 1)) {
		snprintf(err, errlen,
		         "budget %g%% of a baseline peak of %lld bytes rounds to 0 bytes",
		         b->percent, (long long)baseline_peak);
		return -1;
	}
	*out = v >= 9223372036854775807.0 ? INT64_MAX : (int64_t)v; /* whole bytes, rounded down */
	return 0;
}
