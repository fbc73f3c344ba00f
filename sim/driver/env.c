/*
 * env.c — the SIMCUDA_* environment variables (documented in
 * sim/README.md).  A malformed value is a configuration error of
 * the test setup: one message naming the variable, then exit 1.
 */
#include "driver.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_config sim_cfg;

static _Noreturn void bad(const char *var, const char *val, const char *want)
{
	fprintf(stderr, "simcuda: invalid %s='%s' (expected %s)\n", var, val, want);
	exit(1);
}

/* "256M", "4G", "4096", "64K": a byte count with an optional binary suffix. */
static uint64_t parse_size(const char *var, const char *val)
{
	const char *want = "a byte count such as 4096, 64K, 256M or 4G";
	if (!isdigit((unsigned char)val[0]))
		bad(var, val, want);
	errno = 0;
	char *end;
	unsigned long long n = strtoull(val, &end, 10);
	if (errno)
		bad(var, val, want);
	unsigned shift = 0;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	case 'T':
	case 't':
		shift = 40;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0' || n == 0 || (shift && n > (UINT64_MAX >> shift)))
		bad(var, val, want);
	return (uint64_t)n << shift;
}

static uint64_t parse_count(const char *var, const char *val, const char *want)
{
	if (!isdigit((unsigned char)val[0]))
		bad(var, val, want);
	errno = 0;
	char *end;
	unsigned long long n = strtoull(val, &end, 10);
	if (errno || *end != '\0')
		bad(var, val, want);
	return n;
}

/* SIMCUDA_FAIL_ALLOC/_LAUNCH: "N" fails the N-th event, "A-B" or "A-"
 * sweeps from A to B (or to the last event): sweep.c. */
static void parse_fail(const char *var, const char *what, enum sim_sweep_kind kind, uint64_t *fail)
{
	const char *v = getenv(var);
	if (v == NULL || !*v)
		return;
	char want[160];
	snprintf(want, sizeof(want),
	         "N >= 1, the %s to fail, or A-B or A- (from A to B or to the "
	         "last), a sweep",
	         what);
	const char *dash = strchr(v, '-');
	if (dash == NULL) {
		*fail = parse_count(var, v, want);
		return;
	}
	char from[24];
	size_t n = (size_t)(dash - v);
	if (n == 0 || n >= sizeof(from))
		bad(var, v, want);
	memcpy(from, v, n);
	from[n] = '\0';
	uint64_t a = parse_count(var, from, want);
	uint64_t b = dash[1] ? parse_count(var, dash + 1, want) : UINT64_MAX;
	if (a == 0 || b < a)
		bad(var, v, want);
	if (sim_cfg.sweep)
		bad(var, v, "one sweep at a time: SIMCUDA_FAIL_ALLOC or SIMCUDA_FAIL_LAUNCH");
	sim_cfg.sweep = kind;
	sim_cfg.sweep_from = a;
	sim_cfg.sweep_to = b;
}

/* SIMCUDA_SWEEP_DIR, needed by a sweep: where each child gets a directory. */
static void parse_sweep_dir(void)
{
	const char *v = getenv("SIMCUDA_SWEEP_DIR");
	char *dir = v && *v ? realpath(v, NULL) : NULL;
	if (dir == NULL)
		bad("SIMCUDA_SWEEP_DIR", v ? v : "",
		    "an existing directory: a sweep's children go there");
	sim_cfg.sweep_dir = dir;
}

void sim_config_load(void)
{
	const char *v;
	profile_load();
	sim_cfg.capacity = 16ull << 30;
	sim_cfg.granularity = 2ull << 20;
	if ((v = getenv("SIMCUDA_MEMORY")) && *v)
		sim_cfg.capacity = parse_size("SIMCUDA_MEMORY", v);
	if ((v = getenv("SIMCUDA_GRANULARITY")) && *v) {
		sim_cfg.granularity = parse_size("SIMCUDA_GRANULARITY", v);
		/* Mappings are mmap()s: whole pages, power-of-two sizes. */
		uint64_t g = sim_cfg.granularity;
		if ((g & (g - 1)) || g < 4096 || g > (1ull << 30))
			bad("SIMCUDA_GRANULARITY", v, "a power of two from 4K to 1G");
	}
	if ((v = getenv("SIMCUDA_REPORT")) && *v) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			bad("SIMCUDA_REPORT", v, "0 or 1");
		sim_cfg.report = v[0] == '1';
	}
	if ((v = getenv("SIMCUDA_REPORT_FILE")) && *v)
		sim_cfg.report_file = v;
	parse_fail("SIMCUDA_FAIL_ALLOC", "allocation", SWEEP_ALLOC, &sim_cfg.fail_alloc);
	parse_fail("SIMCUDA_FAIL_LAUNCH", "launch", SWEEP_LAUNCH, &sim_cfg.fail_launch);
	if (sim_cfg.sweep)
		parse_sweep_dir();
	if ((v = getenv("SIMCUDA_FAIL_COPY")) && *v)
		sim_cfg.fail_copy = parse_count("SIMCUDA_FAIL_COPY", v,
		                                "N >= 1, the copy with page-locked memory to fail");
	sim_cfg.fail_launch_error = CUDA_ERROR_LAUNCH_FAILED;
	if ((v = getenv("SIMCUDA_FAIL_LAUNCH_ERROR")) && *v) {
		if (strcmp(v, "oom") == 0)
			sim_cfg.fail_launch_error = CUDA_ERROR_OUT_OF_MEMORY;
		else if (strcmp(v, "fault") != 0)
			bad("SIMCUDA_FAIL_LAUNCH_ERROR", v, "fault or oom");
	}
	if ((v = getenv("SIMCUDA_FILL")) && *v) {
		if (strcmp(v, "poison") == 0)
			sim_cfg.fill = FILL_POISON;
		else if (strcmp(v, "zero") == 0)
			sim_cfg.fill = FILL_ZERO;
		else if (strcmp(v, "random") == 0)
			sim_cfg.fill = FILL_RANDOM;
		else
			bad("SIMCUDA_FILL", v, "zero, poison or random");
	}
	if ((v = getenv("SIMCUDA_SLOW_STREAM")) && *v) {
		uint64_t ms = parse_count("SIMCUDA_SLOW_STREAM", v, "milliseconds, 0 to 10000");
		if (ms > 10000)
			bad("SIMCUDA_SLOW_STREAM", v, "milliseconds, 0 to 10000");
		sim_cfg.slow_stream_ms = (unsigned)ms;
	}
}
