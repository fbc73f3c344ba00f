/*
 * budget.c — parsing a memory budget: bytes with an optional K/M/G/T
 * suffix (powers of 1024, optional trailing "B" or "iB"), or a percentage
 * of the baseline peak.
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int pl_parse_budget(const char *s, int64_t baseline_peak, int64_t *out, char *err, size_t errlen)
{
	if (!s || !*s)
		return pl_errf(err, errlen, PL_EINPUT, "budget: empty value");
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-' || *p == '+')
		return pl_errf(err, errlen, PL_EINPUT,
		               "budget '%s': expected a positive size such as 12G or a percentage "
		               "such as 50%%",
		               s);
	errno = 0;
	char *end;
	double v = strtod(p, &end);
	if (end == p || errno || !isfinite(v))
		return pl_errf(err, errlen, PL_EINPUT,
		               "budget '%s': expected a size such as 12G, 1536M or 4096, or a "
		               "percentage such as 50%%",
		               s);
	double mult = 1;
	const char *suf = end;
	if (*suf == '%') {
		suf++;
		if (*suf)
			return pl_errf(err, errlen, PL_EINPUT, "budget '%s': junk after '%%'", s);
		if (v <= 0 || v > 1000)
			return pl_errf(err, errlen, PL_EINPUT,
			               "budget '%s': percentage must be in (0, 1000]", s);
		*out = (int64_t)floor(v / 100.0 * (double)baseline_peak);
		if (*out <= 0)
			return pl_errf(err, errlen, PL_EINPUT, "budget '%s': rounds to 0 bytes", s);
		return PL_OK;
	}
	switch (toupper((unsigned char)*suf)) {
	case 'K':
		mult = 1024.0;
		suf++;
		break;
	case 'M':
		mult = 1024.0 * 1024;
		suf++;
		break;
	case 'G':
		mult = 1024.0 * 1024 * 1024;
		suf++;
		break;
	case 'T':
		mult = 1024.0 * 1024 * 1024 * 1024;
		suf++;
		break;
	default:
		break;
	}
	if (mult > 1 && (*suf == 'i' || *suf == 'I') && (suf[1] == 'B' || suf[1] == 'b'))
		suf += 2;
	else if (*suf == 'B' || *suf == 'b')
		suf++;
	while (isspace((unsigned char)*suf))
		suf++;
	if (*suf)
		return pl_errf(err, errlen, PL_EINPUT,
		               "budget '%s': unknown suffix '%s' (use K, M, G, T or %%)", s, suf);
	double bytes = v * mult;
	if (bytes < 1 || bytes > 9.0e18)
		return pl_errf(err, errlen, PL_EINPUT, "budget '%s': out of range", s);
	if (mult == 1 && floor(v) != v)
		return pl_errf(err, errlen, PL_EINPUT, "budget '%s': bytes must be a whole number",
		               s);
	*out = (int64_t)floor(bytes);
	return PL_OK;
}
