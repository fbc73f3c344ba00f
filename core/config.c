/*
 * config.c — the REMAT_* variables (config.h).  Pure: reads through a
 * getenv-like function so the unit tests can feed any value.  One table
 * holds every variable, its parser and what it accepts; the list of known
 * names for the typo check is the same table.
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"

struct remat_config remat_cfg;

/* Parsers: 0, or -1 when the value is not accepted. */
typedef int (*parse_fn)(const char *value, struct remat_config *c);

static int parse_mode(const char *v, struct remat_config *c)
{
	static const char *const names[] = {"off", "trace", "run"};
	for (int m = 0; m < 3; m++)
		if (!strcmp(v, names[m])) {
			c->mode = (enum remat_mode)m;
			return 0;
		}
	return -1;
}

static int parse_budget(const char *v, struct remat_config *c)
{
	char err[256];
	return remat_budget_parse(v, &c->budget, err, sizeof(err));
}

static int copy_path(const char *v, char *dst, size_t n)
{
	if (!*v || strlen(v) >= n)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int parse_trace_dir(const char *v, struct remat_config *c)
{
	/* Room for the file names written inside it. */
	return copy_path(v, c->trace_dir, sizeof(c->trace_dir) - 32);
}

static int parse_log(const char *v, struct remat_config *c)
{
	static const char *const names[] = {"error", "info", "debug"};
	for (int l = 0; l < 3; l++)
		if ((v[0] == '0' + l && !v[1]) || !strcasecmp(v, names[l])) {
			c->log_level = l;
			return 0;
		}
	return -1;
}

static int parse_log_file(const char *v, struct remat_config *c)
{
	return copy_path(v, c->log_file, sizeof(c->log_file));
}

static int parse_warmup(const char *v, struct remat_config *c)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end || errno || n > 1000000)
		return -1;
	c->warmup = (int)n;
	return 0;
}

static int parse_verify(const char *v, struct remat_config *c)
{
	if ((v[0] != '0' && v[0] != '1') || v[1])
		return -1;
	c->verify = v[0] == '1';
	return 0;
}

static int parse_offload(const char *v, struct remat_config *c)
{
	if ((v[0] != '0' && v[0] != '1') || v[1])
		return -1;
	c->offload = v[0] == '1';
	return 0;
}

static int parse_write_proof(const char *v, struct remat_config *c)
{
	if (!strcmp(v, "0"))
		c->write_proof = REMAT_PROOF_OFF;
	else if (!strcmp(v, "data"))
		c->write_proof = REMAT_PROOF_DATA;
	else if (!strcmp(v, "1"))
		c->write_proof = REMAT_PROOF_ALL;
	else
		return -1;
	c->write_proof_set = 1;
	return 0;
}

static int parse_timeout(const char *v, struct remat_config *c)
{
	char *end;
	errno = 0;
	double t = strtod(v, &end);
	if (!isdigit((unsigned char)*v) || *end || errno || !isfinite(t) || t <= 0 || t > 86400)
		return -1;
	c->plan_timeout_s = t;
	return 0;
}

static int parse_planner(const char *v, struct remat_config *c)
{
	if (access(v, X_OK))
		return -1;
	return copy_path(v, c->planner, sizeof(c->planner));
}

static int parse_cache_dir(const char *v, struct remat_config *c)
{
	/* Room for "/<hash>-<budget>-x<set>.plan.json". */
	if (copy_path(v, c->cache_dir, sizeof(c->cache_dir) - 80))
		return -1;
	c->cache_dir_from = "REMAT_CACHE_DIR";
	return 0;
}

static const struct var {
	const char *name;
	parse_fn parse;
	const char *accepted;
	int selects_mode; /* its presence alone asks for trace or run mode */
} vars[] = {
    {"REMAT_MODE", parse_mode, "off, trace, run", 1},
    {"REMAT_BUDGET", parse_budget,
     "a size such as 12G, 1536M or 4096 (K, M, G, T are powers of 1024), or a percentage of "
     "the baseline peak (one unmodified iteration's) such as 50%",
     1},
    {"REMAT_TRACE_DIR", parse_trace_dir, "a directory path", 1},
    {"REMAT_LOG", parse_log, "0, 1, 2, error, info, debug", 0},
    {"REMAT_LOG_FILE", parse_log_file, "a file path", 0},
    {"REMAT_WARMUP", parse_warmup, "a whole number of iterations from 0 to 1000000", 0},
    {"REMAT_VERIFY", parse_verify, "0, 1", 0},
    {"REMAT_OFFLOAD", parse_offload, "0, 1", 0},
    {"REMAT_WRITE_PROOF", parse_write_proof,
     "data (the default: launch kernels a second time while profiling, perturbing only "
     "words that held data), 0 (no second launch) or 1 (perturb every tested byte)",
     0},
    {"REMAT_PLAN_TIMEOUT", parse_timeout, "seconds in (0, 86400], like 60 or 2.5", 0},
    {"REMAT_PLANNER", parse_planner, "the path of an executable remat-plan", 0},
    {"REMAT_CACHE_DIR", parse_cache_dir, "a directory path", 0},
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))

__attribute__((format(printf, 2, 3))) static void say(struct remat_config_msgs *m, const char *fmt,
                                                      ...)
{
	if (!m)
		return;
	if (m->n >= REMAT_CONFIG_MAX_MSGS - 1) {
		/* Full: the last slot counts the rest, so none goes unmentioned. */
		int more = m->n == REMAT_CONFIG_MAX_MSGS ? atoi(m->text[m->n - 1]) + 1 : 1;
		snprintf(m->text[REMAT_CONFIG_MAX_MSGS - 1], sizeof(m->text[0]),
		         "%d more problem%s with REMAT_* variables not shown (fix the ones above "
		         "first)",
		         more, more == 1 ? "" : "s");
		m->n = REMAT_CONFIG_MAX_MSGS;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->text[m->n++], sizeof(m->text[0]), fmt, ap);
	va_end(ap);
}

static void defaults(struct remat_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = REMAT_MODE_OFF;
	snprintf(c->trace_dir, sizeof(c->trace_dir), "./remat-trace");
	c->log_level = REMAT_LOG_ERROR;
	c->warmup = 2;
	/* The proofs launch a kernel again on content it never ran on, and a
	 * kernel that synchronizes its blocks through memory (cuBLAS split-K
	 * semaphores) can spin forever on a counter set to anything else, with
	 * no way to stop it but losing the context: by default they perturb
	 * only words that held data, never one that held a small integer or a
	 * device address (delta.c). */
	c->write_proof = REMAT_PROOF_DATA;
	c->plan_timeout_s = 60;
	c->cache_dir_from = "";
	c->offload = 1; /* REMAT_OFFLOAD=0 switches it off */
}

/* The default plan cache when REMAT_CACHE_DIR is not given.  The XDG spec
 * says a relative XDG_CACHE_HOME is to be ignored. */
static void default_cache_dir(remat_getenv_fn get, struct remat_config *c)
{
	const char *v;
	int n = -1;
	if ((v = get("XDG_CACHE_HOME")) && v[0] == '/') {
		n = snprintf(c->cache_dir, sizeof(c->cache_dir), "%s/libremat", v);
		c->cache_dir_from = "XDG_CACHE_HOME";
	} else if ((v = get("HOME")) && v[0]) {
		n = snprintf(c->cache_dir, sizeof(c->cache_dir), "%s/.cache/libremat", v);
		c->cache_dir_from = "HOME";
	}
	if (n < 0 || (size_t)n >= sizeof(c->cache_dir) - 80) {
		c->cache_dir[0] = '\0'; /* too long: no cache, said when a plan is needed */
		if (n >= 0)
			c->cache_dir_from = "too long";
	}
}

static void unknown_names(char *const *env, struct remat_config_msgs *msgs)
{
	for (; env && *env; env++) {
		if (strncmp(*env, "REMAT_", 6))
			continue;
		size_t len = strcspn(*env, "=");
		int found = 0;
		for (size_t k = 0; k < NVARS && !found; k++)
			found = strlen(vars[k].name) == len && !strncmp(*env, vars[k].name, len);
		if (found)
			continue;
		char known[400];
		size_t w = 0;
		for (size_t k = 0; k < NVARS && w < sizeof(known); k++)
			w += (size_t)snprintf(known + w, sizeof(known) - w, "%s%s", k ? ", " : "",
			                      vars[k].name);
		say(msgs, "unknown variable %.*s ignored (known: %s)", (int)(len > 64 ? 64 : len),
		    *env, known);
	}
}

int remat_config_load(remat_getenv_fn get, char *const *env, struct remat_config *cfg,
                      struct remat_config_msgs *msgs)
{
	struct remat_config c;
	defaults(&c);
	int bad = 0, selected = 0;
	for (size_t k = 0; k < NVARS; k++) {
		const char *v = get(vars[k].name);
		if (!v)
			continue;
		c.any_set = 1;
		selected |= vars[k].selects_mode;
		if (vars[k].parse(v, &c)) {
			say(msgs, "%s=\"%s\" is not valid (accepted: %s); libremat stays inactive",
			    vars[k].name, v, vars[k].accepted);
			bad = 1;
		}
	}
	const char *mode = get("REMAT_MODE");
	int has_budget = c.budget.bytes > 0 || c.budget.percent > 0;
	if (!bad && mode && c.mode == REMAT_MODE_RUN && !has_budget) {
		say(msgs, "REMAT_MODE=run needs REMAT_BUDGET (like 12G or 50%%); libremat stays "
		          "inactive");
		bad = 1;
	}
	if (!mode && selected)
		c.mode = has_budget ? REMAT_MODE_RUN : REMAT_MODE_TRACE;
	if (!c.cache_dir[0])
		default_cache_dir(get, &c);
	const char *path = get("PATH");
	if (path && strlen(path) < sizeof(c.path))
		memcpy(c.path, path, strlen(path) + 1);
	unknown_names(env, msgs);
	if (bad) {
		int any = c.any_set;
		defaults(&c);
		c.any_set = any;
	}
	*cfg = c;
	return bad ? -1 : 0;
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
