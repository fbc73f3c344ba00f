/*
 * json_util.c — typed member access with one precise message per problem.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

json_t *pl_json_load_file(const char *path, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (je.line > 0)
			pl_errf(err, errlen, PL_EINPUT, "%s:%d:%d: invalid JSON: %s", path, je.line,
			        je.column, je.text);
		else
			pl_errf(err, errlen, PL_EINPUT, "%s: %s", path, je.text);
	}
	return root;
}

json_t *pl_json_load_bytes(const char *name, const char *bytes, size_t n, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(bytes, n, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		pl_errf(err, errlen, PL_EINPUT, "%s:%d:%d: invalid JSON: %s", name, je.line,
		        je.column, je.text);
	return root;
}

int pl_jfail(struct jctx *c, const char *where, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pl_errf(c->err, c->errlen, PL_EINPUT, "%s: %s: %s", c->file, where, msg);
}

static json_t *member(struct jobj o, const char *key, int required, int *rc)
{
	*rc = 0;
	if (!json_is_object(o.obj)) {
		*rc = pl_jfail(o.c, o.where, "expected an object");
		return NULL;
	}
	json_t *v = json_object_get(o.obj, key);
	if (!v && required)
		*rc = pl_jfail(o.c, o.where, "missing member \"%s\"", key);
	return v;
}

int pl_jint(struct jobj o, const char *key, int64_t *out, int required, int64_t dflt)
{
	int rc;
	json_t *v = member(o, key, required, &rc);
	if (rc)
		return rc;
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	/* Graph generators write sizes as 3.0 now and then; accept whole reals
	 * (in int64_t's range: converting any other double is undefined). */
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
		    d == (double)(int64_t)d) {
			*out = (int64_t)d;
			return 0;
		}
	}
	return pl_jfail(o.c, o.where, "member \"%s\" must be an integer", key);
}

int pl_jint_in(struct jobj o, const char *key, int64_t *out, struct jint rule)
{
	int64_t lo = rule.lo, hi = rule.hi;
	int rc = pl_jint(o, key, out, rule.required, rule.dflt);
	if (rc || (*out >= lo && *out <= hi))
		return rc;
	if (hi == PL_MAX_AMOUNT && lo == -PL_MAX_AMOUNT)
		return pl_jfail(o.c, o.where, "member \"%s\" is %lld, outside -2^53..2^53", key,
		                (long long)*out);
	if (hi == PL_MAX_AMOUNT)
		return pl_jfail(o.c, o.where, "member \"%s\" is %lld, outside %lld..2^53", key,
		                (long long)*out, (long long)lo);
	return pl_jfail(o.c, o.where, "member \"%s\" is %lld, outside %lld..%lld", key,
	                (long long)*out, (long long)lo, (long long)hi);
}

int pl_jbool(struct jobj o, const char *key, int *out, int required, int dflt)
{
	int rc;
	json_t *v = member(o, key, required, &rc);
	if (rc)
		return rc;
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return pl_jfail(o.c, o.where, "member \"%s\" must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

int pl_jstr(struct jobj o, const char *key, const char **out, int required, const char *dflt)
{
	int rc;
	json_t *v = member(o, key, required, &rc);
	if (rc)
		return rc;
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_string(v))
		return pl_jfail(o.c, o.where, "member \"%s\" must be a string", key);
	*out = json_string_value(v);
	return 0;
}

int pl_jarr(struct jobj o, const char *key, json_t **out, int required)
{
	int rc;
	json_t *v = member(o, key, required, &rc);
	if (rc)
		return rc;
	if (v && !json_is_array(v))
		return pl_jfail(o.c, o.where, "member \"%s\" must be an array", key);
	*out = v;
	return 0;
}

int pl_jhash(struct jobj o, const char *key, uint64_t *out, int *present)
{
	const char *s;
	int rc = pl_jstr(o, key, &s, 0, NULL);
	if (rc)
		return rc;
	*present = s != NULL;
	if (!s)
		return 0;
	char *end;
	if (strncmp(s, "0x", 2) != 0 || !s[2])
		return pl_jfail(o.c, o.where, "member \"%s\" must be a hex string like 0x1234abcd",
		                key);
	*out = strtoull(s + 2, &end, 16);
	if (*end)
		return pl_jfail(o.c, o.where, "member \"%s\": bad hex string \"%s\"", key, s);
	return 0;
}
