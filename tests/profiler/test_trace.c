/*
 * test_trace.c — the trace writer, read back with jansson: every section of
 * docs/trace-format.md, string escaping, params.bin and its FNV-1a hash,
 * no temporary file left behind, and one clear error for an unwritable
 * directory.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../profiler/profiler.h"

static char dir[256];

/* An allocation live across the iteration with a call stack, and a small
 * one allocated and freed in it. */
static void build_bufs(struct remat_profile *t)
{
	t->nbufs = 2;
	t->bufs = calloc(2, sizeof(*t->bufs));
	t->bufs[0] = (struct prof_buf){.addr = 0x7f0000000000ULL,
	                               .size = 4096,
	                               .rounded = 65536,
	                               .persistent = 1,
	                               .alloc_at = -1,
	                               .free_at = -1,
	                               .alloc_seq = -1};
	t->bufs[0].site = calloc(2, sizeof(char *));
	t->bufs[0].site[0] = strdup("train_step+0x10 (mlp)");
	t->bufs[0].site[1] = strdup("main+0x20 (mlp)");
	t->bufs[0].nsite = 2;
	t->bufs[1] = (struct prof_buf){.addr = 0x7f0000010000ULL,
	                               .size = 100,
	                               .small = 1,
	                               .alloc_at = 0,
	                               .free_at = 1,
	                               .alloc_seq = 0};
}

/* One kernel with two parameters, and their 12 bytes. */
static void build_kernel(struct remat_profile *t)
{
	t->nkernels = 1;
	t->kernels = calloc(1, sizeof(*t->kernels));
	t->kernels[0].name = strdup("relu_inplace");
	t->kernels[0].layout_known = 1;
	t->kernels[0].nparams = 2;
	t->kernels[0].param = calloc(2, sizeof(*t->kernels[0].param));
	t->kernels[0].param[1][0] = 8;
	t->kernels[0].param[0][1] = 8;
	t->kernels[0].param[1][1] = 4;
	t->params_len = 12;
	t->params = malloc(12);
	for (int i = 0; i < 12; i++)
		t->params[i] = (uint8_t)(i * 7);
}

/* A kernel that writes the first buffer and a copy from the host into
 * the second. */
static void build_ops(struct remat_profile *t)
{
	t->nops = 2;
	t->ops = calloc(2, sizeof(*t->ops));
	struct prof_op *k = &t->ops[0];
	k->kind = REMAT_OP_KERNEL;
	k->via = "cudaLaunchKernel";
	k->kernel = 0;
	k->name = "relu_inplace";
	k->grid[0] = 64, k->grid[1] = k->grid[2] = 1;
	k->block[0] = 256, k->block[1] = k->block[2] = 1;
	k->stream = 1;
	k->params_len = 12;
	k->nrefs = 1;
	k->refs = calloc(1, sizeof(*k->refs));
	k->refs[0] = (struct prof_ref){0, 0, 0};
	k->nreads = k->nwrites = 1;
	k->reads = calloc(1, sizeof(int32_t));
	k->writes = calloc(1, sizeof(int32_t));
	k->duration_ns = 2048;
	k->replayable = 1;
	k->why_not = "";
	struct prof_op *c = &t->ops[1];
	c->kind = REMAT_OP_MEMCPY;
	c->via = "cuGetProcAddress:cuMemcpyHtoDAsync_v2";
	c->kernel = -1;
	c->name = "memcpyHtoD";
	c->copy = REMAT_COPY_HTOD;
	c->bytes = 100;
	c->nrefs = 1;
	c->refs = calloc(1, sizeof(*c->refs));
	c->refs[0] = (struct prof_ref){1, 0, -1};
	c->nwrites = 1;
	c->writes = calloc(1, sizeof(int32_t));
	c->writes[0] = 1;
	c->duration_ns = -1;
	c->why_not = "copy from host memory";
}

static void build(struct remat_profile *t)
{
	memset(t, 0, sizeof(*t));
	t->graph_hash = 0x1234abcd5678ef90ULL;
	t->pid = 42;
	t->cmdline = strdup("build/trainers/mlp --iters \"6\"");
	snprintf(t->device, sizeof(t->device), "simcuda");
	t->device_memory = 268435456;
	t->granularity = 65536;
	t->period = 2;
	t->iterations_seen = t->profiled = 3;
	t->start_op = 40;
	t->duration_ns = 3000;
	t->persistent_bytes = 65536;
	t->peak_bytes = 196608;
	t->small_pool_bytes = 65536;
	build_bufs(t);
	build_kernel(t);
	build_ops(t);
	t->cupti_available = 1;
	t->cupti_note = "";
	t->cupti_kernels = t->cupti_launches = 1;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/remat-test-trace-%d/sub/dir", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf /tmp/remat-test-trace-%d", (int)getpid());
	return system(cmd) == 0 ? 0 : -1;
}

static uint64_t hexval(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	assert_non_null(s);
	assert_true(s[0] == '0' && s[1] == 'x');
	return strtoull(s + 2, NULL, 16);
}

static json_int_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* Frees what build() made, the way every profile goes: its last holder
 * lets go. */
static void drop(struct remat_profile *t)
{
	struct remat_profile *held = malloc(sizeof(*held));
	assert_non_null(held);
	*held = *t;
	held->refs = 1;
	prof_profile_put(held);
}

/* trace.json's header: format, process, iteration, memory. */
static void check_header(json_t *root)
{
	assert_string_equal(json_string_value(json_object_get(root, "format")), "remat-trace");
	assert_int_equal(num(root, "version"), 1);
	assert_true(hexval(root, "graph_hash") == 0x1234abcd5678ef90ULL);
	assert_true(json_is_true(json_object_get(root, "end")));
	json_t *proc = json_object_get(root, "process");
	assert_string_equal(json_string_value(json_object_get(proc, "cmdline")),
	                    "build/trainers/mlp --iters \"6\"");
	assert_int_equal(num(proc, "device_memory"), 268435456);
	assert_int_equal(num(proc, "granularity"), 65536);
	json_t *it = json_object_get(root, "iteration");
	assert_int_equal(num(it, "period"), 2);
	assert_int_equal(num(it, "profiled"), 3);
	assert_int_equal(num(it, "start_op"), 40);
	assert_int_equal(num(it, "duration_ns"), 3000);
	json_t *mem = json_object_get(root, "memory");
	assert_int_equal(num(mem, "persistent_bytes"), 65536);
	assert_int_equal(num(mem, "peak_bytes"), 196608);
	assert_int_equal(num(mem, "small_pool_bytes"), 65536);
}

static void check_buffers(json_t *root)
{
	json_t *bufs = json_object_get(root, "buffers");
	assert_int_equal(json_array_size(bufs), 2);
	json_t *b0 = json_array_get(bufs, 0), *b1 = json_array_get(bufs, 1);
	assert_true(hexval(b0, "addr") == 0x7f0000000000ULL);
	assert_int_equal(num(b0, "rounded"), 65536);
	assert_true(json_is_true(json_object_get(b0, "persistent")));
	assert_int_equal(num(b0, "alloc_at"), -1);
	assert_int_equal(json_array_size(json_object_get(b0, "site")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(b0, "site"), 1)),
	                    "main+0x20 (mlp)");
	assert_true(json_is_true(json_object_get(b1, "small")));
	assert_int_equal(num(b1, "free_at"), 1);
	assert_int_equal(num(b1, "alloc_seq"), 0);
}

/* The kernel, both ops and the CUPTI figures. */
static void check_ops(json_t *root)
{
	json_t *k = json_array_get(json_object_get(root, "kernels"), 0);
	assert_string_equal(json_string_value(json_object_get(k, "name")), "relu_inplace");
	json_t *p1 = json_array_get(json_object_get(k, "params"), 1);
	assert_int_equal(json_integer_value(json_array_get(p1, 0)), 8);
	assert_int_equal(json_integer_value(json_array_get(p1, 1)), 4);

	json_t *ops = json_object_get(root, "ops");
	assert_int_equal(json_array_size(ops), 2);
	json_t *o0 = json_array_get(ops, 0), *o1 = json_array_get(ops, 1);
	assert_string_equal(json_string_value(json_object_get(o0, "kind")), "kernel");
	assert_string_equal(json_string_value(json_object_get(o0, "via")), "cudaLaunchKernel");
	assert_int_equal(num(o0, "kernel"), 0);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(o0, "grid"), 0)), 64);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(o0, "params"), 1)), 12);
	assert_int_equal(json_array_size(json_object_get(o0, "writes")), 1);
	assert_true(json_is_true(json_object_get(o0, "replayable")));
	assert_int_equal(num(o0, "duration_ns"), 2048);
	assert_string_equal(json_string_value(json_object_get(o1, "kind")), "memcpy");
	assert_string_equal(json_string_value(json_object_get(o1, "copy")), "HtoD");
	assert_null(json_object_get(o1, "params"));
	json_t *r = json_array_get(json_object_get(o1, "refs"), 0);
	assert_int_equal(json_integer_value(json_array_get(r, 2)), -1);
	assert_true(json_is_false(json_object_get(o1, "replayable")));
	assert_string_equal(json_string_value(json_object_get(o1, "why_not")),
	                    "copy from host memory");
	assert_int_equal(num(o1, "duration_ns"), -1);

	json_t *cu = json_object_get(root, "cupti");
	assert_int_equal(num(cu, "kernels"), 1);
	assert_int_equal(num(cu, "mismatch"), 0);
	assert_true(json_is_true(json_object_get(cu, "available")));
}

/* params.bin: the bytes, and the size and hash trace.json promises. */
static void check_params(json_t *root, const struct remat_profile *t)
{
	char path[400];
	json_t *pb = json_object_get(json_object_get(root, "files"), "params.bin");
	snprintf(path, sizeof(path), "%s/params.bin", dir);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t buf[64];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(n, 12);
	assert_int_equal(num(pb, "size"), 12);
	assert_memory_equal(buf, t->params, 12);
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= buf[i];
		h *= 0x100000001b3ULL;
	}
	assert_true(hexval(pb, "fnv1a64") == h);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct remat_profile t;
	build(&t);
	char err[512];
	assert_int_equal(prof_trace_write(&t, dir, err, sizeof(err)), 0);
	char path[400];
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root)
		fail_msg("trace.json does not parse: %s (line %d)", je.text, je.line);
	check_header(root);
	check_buffers(root);
	check_ops(root);
	check_params(root, &t);
	json_decref(root);

	/* Exactly the two files: the temporaries were renamed. */
	DIR *d = opendir(dir);
	int files = 0;
	for (struct dirent *e; (e = readdir(d));)
		files += e->d_name[0] != '.' || strstr(e->d_name, "tmp") != NULL;
	closedir(d);
	assert_int_equal(files, 2);
	drop(&t);
}

static void test_escaping_and_no_cupti(void **state)
{
	(void)state;
	struct remat_profile t;
	build(&t);
	free(t.cmdline);
	t.cmdline = strdup("a\\b\"c\td\x01");
	t.cupti_available = 0;
	t.cupti_note = "CUPTI not found";
	char err[512];
	assert_int_equal(prof_trace_write(&t, dir, err, sizeof(err)), 0);
	char path[400];
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	json_t *root = json_load_file(path, 0, NULL);
	assert_non_null(root);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(root, "process"), "cmdline")),
	    "a\\b\"c\td\x01");
	json_t *cu = json_object_get(root, "cupti");
	assert_true(json_is_false(json_object_get(cu, "available")));
	assert_string_equal(json_string_value(json_object_get(cu, "note")), "CUPTI not found");
	json_decref(root);
	drop(&t);
}

static void test_unwritable(void **state)
{
	(void)state;
	struct remat_profile t;
	build(&t);
	char err[512] = "";
	/* A path under a regular file can never be created. */
	char bad[400];
	snprintf(bad, sizeof(bad), "%s/trace.json/x", dir);
	assert_int_equal(prof_trace_write(&t, dir, err, sizeof(err)), 0);
	assert_int_equal(prof_trace_write(&t, bad, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot create trace directory"));
	assert_non_null(strstr(err, "trace.json"));
	drop(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_escaping_and_no_cupti),
	    cmocka_unit_test(test_unwritable),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
