/*
 * config.c — the REMAT_* environment variables.  Pure: reads through a
 * getenv-like function so the unit tests can feed any value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat.h"

struct remat_config remat_cfg;

static void defaults(struct remat_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = REMAT_MODE_OFF;
	snprintf(cfg->trace_dir, sizeof(cfg->trace_dir), "./remat-trace");
	cfg->log_level = REMAT_LOG_ERROR;
	cfg->warmup = 2;
}

int remat_parse_bytes(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	}
	if (shift) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_percent(const char *s, double *out)
{
	size_t n = strlen(s);
	if (n < 2 || s[n - 1] != '%' || !(isdigit((unsigned char)s[0])))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end != s + n - 1 || !(v > 0.0) || v > 100.0)
		return -1;
	*out = v;
	return 0;
}

static int bad(char *err, size_t errlen, const char *var, const char *val, const char *accepted)
{
	snprintf(err, errlen, "%s=\"%s\" is not valid (accepted: %s); libremat stays inactive", var,
	         val, accepted);
	return -1;
}

int remat_config_parse(remat_getenv_fn get, struct remat_config *cfg, char *err, size_t errlen)
{
	defaults(cfg);
	if (errlen)
		err[0] = '\0';
	const char *mode = get("REMAT_MODE"), *budget = get("REMAT_BUDGET"),
	           *dir = get("REMAT_TRACE_DIR"), *log = get("REMAT_LOG"),
	           *logfile = get("REMAT_LOG_FILE"), *warmup = get("REMAT_WARMUP"),
	           *verify = get("REMAT_VERIFY");
	cfg->any_set = mode || budget || dir || log || logfile || warmup;
	struct remat_config c = *cfg;

	if (log) {
		if (!strcmp(log, "0") || !strcasecmp(log, "error"))
			c.log_level = REMAT_LOG_ERROR;
		else if (!strcmp(log, "1") || !strcasecmp(log, "info"))
			c.log_level = REMAT_LOG_INFO;
		else if (!strcmp(log, "2") || !strcasecmp(log, "debug"))
			c.log_level = REMAT_LOG_DEBUG;
		else
			return bad(err, errlen, "REMAT_LOG", log, "0, 1, 2, error, info, debug");
	}
	if (logfile) {
		if (!*logfile || strlen(logfile) >= sizeof(c.log_file))
			return bad(err, errlen, "REMAT_LOG_FILE", logfile, "a file path");
		snprintf(c.log_file, sizeof(c.log_file), "%s", logfile);
	}
	if (budget) {
		if (strchr(budget, '%')) {
			if (parse_percent(budget, &c.budget_percent))
				return bad(err, errlen, "REMAT_BUDGET", budget,
				           "a percentage of device memory in (0, 100], like 60%");
		} else if (remat_parse_bytes(budget, &c.budget_bytes) || c.budget_bytes == 0) {
			return bad(err, errlen, "REMAT_BUDGET", budget,
			           "a positive byte count with optional K/M/G/T suffix, like 12G, "
			           "or a percentage like 60%");
		}
	}
	if (dir) {
		if (!*dir || strlen(dir) >= sizeof(c.trace_dir) - 32)
			return bad(err, errlen, "REMAT_TRACE_DIR", dir, "a directory path");
		snprintf(c.trace_dir, sizeof(c.trace_dir), "%s", dir);
	}
	if (warmup) {
		char *end;
		errno = 0;
		long v = strtol(warmup, &end, 10);
		if (!isdigit((unsigned char)*warmup) || *end || errno || v > 1000000)
			return bad(err, errlen, "REMAT_WARMUP", warmup,
			           "a whole number of iterations from 0 to 1000000");
		c.warmup = (int)v;
	}
	if (verify) {
		if (!strcmp(verify, "0") || !strcmp(verify, "1"))
			c.verify = verify[0] == '1';
		else
			return bad(err, errlen, "REMAT_VERIFY", verify, "0, 1");
	}
	if (mode) {
		if (!strcmp(mode, "off"))
			c.mode = REMAT_MODE_OFF;
		else if (!strcmp(mode, "trace"))
			c.mode = REMAT_MODE_TRACE;
		else if (!strcmp(mode, "run"))
			c.mode = REMAT_MODE_RUN;
		else
			return bad(err, errlen, "REMAT_MODE", mode, "off, trace, run");
		if (c.mode == REMAT_MODE_RUN && !budget) {
			snprintf(err, errlen,
			         "REMAT_MODE=run needs REMAT_BUDGET (like 12G or 60%%); libremat "
			         "stays inactive");
			return -1;
		}
	} else if (budget) {
		c.mode = REMAT_MODE_RUN;
	} else if (dir) {
		c.mode = REMAT_MODE_TRACE;
	}
	*cfg = c;
	return 0;
}

/* PYTORCH_CUDA_ALLOC_CONF is "key:value,key:value".  We need every tensor
 * to come with a stream (backend:cudaMallocAsync), and expandable segments
 * would fight our own VMM mapping. */
int remat_alloc_conf_merge(const char *old, char *out, size_t outlen)
{
	size_t n = 0;
	int w = snprintf(out, outlen, "backend:cudaMallocAsync");
	if (w < 0 || (size_t)w >= outlen)
		return -1;
	n = (size_t)w;
	const char *p = old ? old : "";
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		size_t klen = colon ? (size_t)(colon - p) : len;
		while (klen && isspace((unsigned char)*p)) {
			p++, len--, klen--;
		}
		while (klen && isspace((unsigned char)p[klen - 1]))
			klen--;
		int drop = len == 0 || (klen == 7 && !strncmp(p, "backend", 7)) ||
		           (klen == 19 && !strncmp(p, "expandable_segments", 19));
		if (!drop) {
			if (n + 1 + len >= outlen)
				return -1;
			out[n++] = ',';
			memcpy(out + n, p, len);
			n += len;
			out[n] = '\0';
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* A REMAT_* name we do not know is most likely a typo of one we do (say
 * REMAT_TRACEDIR): worth one line, since the user thinks it is in effect. */
int remat_config_unknown(char *const *env, char *msg, size_t msglen)
{
	static const char *known[] = {"REMAT_MODE",     "REMAT_BUDGET",       "REMAT_TRACE_DIR",
	                              "REMAT_LOG",      "REMAT_LOG_FILE",     "REMAT_WARMUP",
	                              "REMAT_VERIFY",   "REMAT_PLAN_TIMEOUT", "REMAT_PLANNER",
	                              "REMAT_CACHE_DIR"};
	for (; env && *env; env++) {
		if (strncmp(*env, "REMAT_", 6))
			continue;
		size_t len = strcspn(*env, "=");
		int found = 0;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			found |= strlen(known[k]) == len && !strncmp(*env, known[k], len);
		if (!found) {
			snprintf(
			    msg, msglen,
			    "unknown variable %.*s ignored (known: REMAT_MODE, REMAT_BUDGET, "
			    "REMAT_TRACE_DIR, REMAT_LOG, REMAT_LOG_FILE, REMAT_WARMUP, "
			    "REMAT_VERIFY, REMAT_PLAN_TIMEOUT, REMAT_PLANNER, REMAT_CACHE_DIR)",
			    (int)(len > 64 ? 64 : len), *env);
			return 1;
		}
	}
	return 0;
}
