/*
 * checksum.c — the checksum a plan file carries (docs/plan-format.md,
 * "Checksum"): FNV-1a 64 over the file's bytes up to its last member but
 * one, "checksum", which only "end": true follows.  remat-plan's writer
 * and both readers (planner/formats/plan_json.c, acquire/plan_read.c)
 * use these functions, so the three cannot disagree on which bytes count.
 *
 * Works on the raw bytes, never on parsed JSON: whatever a later format
 * version adds is covered without a change here.
 */
#include <stdio.h>
#include <string.h>

#include "../core/hash.h"
#include "plan.h"

static const char key[] = "\"checksum\"";
#define KEYLEN (sizeof(key) - 1)

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* Matches the literal lit at s[*i], after JSON whitespace. */
static int lit(const char *s, size_t *i, size_t n, const char *l)
{
	size_t k = skip_ws(s, *i, n), len = strlen(l);
	if (n - k < len || memcmp(s + k, l, len))
		return 0;
	*i = k + len;
	return 1;
}

/* `, "end": true }` and nothing but whitespace after it. */
static int end_tail(const char *s, size_t i, size_t n)
{
	return lit(s, &i, n, ",") && lit(s, &i, n, "\"end\"") && lit(s, &i, n, ":") &&
	       lit(s, &i, n, "true") && lit(s, &i, n, "}") && skip_ws(s, i, n) == n;
}

/* The offset of the last occurrence of pat (len bytes) in s, or -1.  (A
 * JSON string holds no bare '"', so a key is never inside a value.) */
static long last_of(const char *s, size_t n, const char *pat, size_t len)
{
	for (size_t i = n >= len ? n - len + 1 : 0; i-- > 0;)
		if (!memcmp(s + i, pat, len))
			return (long)i;
	return -1;
}

uint64_t pl_checksum_of(const char *bytes, size_t n)
{
	return remat_fnv1a(REMAT_FNV_OFFSET, bytes, n);
}

long pl_checksum_locate(const char *s, size_t n, uint64_t *stated)
{
	long at = last_of(s, n, key, KEYLEN);
	if (at < 0)
		return -1;
	size_t i = (size_t)at + KEYLEN;
	if (!lit(s, &i, n, ":") || !lit(s, &i, n, "\"0x"))
		return -1;
	uint64_t v = 0;
	for (int d = 0; d < 16; d++, i++) {
		char c = i < n ? s[i] : 0;
		int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (x < 0)
			return -1;
		v = v << 4 | (uint64_t)x;
	}
	if (i >= n || s[i++] != '"' || !end_tail(s, i, n))
		return -1;
	*stated = v;
	return at;
}

long pl_checksum_unsealed_end(const char *s, size_t n)
{
	/* The member before "end" ends with a value, then the comma. */
	long at = last_of(s, n, "\"end\"", 5);
	if (at <= 0)
		return -1;
	size_t i = (size_t)at, comma = i;
	while (comma > 0 && (s[comma - 1] == ' ' || s[comma - 1] == '\t' || s[comma - 1] == '\n' ||
	                     s[comma - 1] == '\r'))
		comma--;
	if (comma == 0 || s[comma - 1] != ',')
		return -1;
	i = (size_t)at + 5;
	if (!lit(s, &i, n, ":") || !lit(s, &i, n, "true") || !lit(s, &i, n, "}") ||
	    skip_ws(s, i, n) != n)
		return -1;
	return at;
}

int pl_checksum_tail(uint64_t h, char *out, size_t n)
{
	int w = snprintf(out, n, "%s: \"0x%016llx\",\n  \"end\": true\n}\n", key,
	                 (unsigned long long)h);
	return w > 0 && (size_t)w < n ? w : -1;
}
