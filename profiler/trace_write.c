/*
 * trace_write.c — the trace files, written by hand (no JSON library in the
 * preloaded object).  Runs on the writer thread, never inside a launch.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/grow.h"
#include "../core/hash.h"
#include "profiler.h"

struct sbuf {
	char *s;
	size_t n, cap;
	int oom;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (REMAT_RESERVE(b->s, b->n + n + 1, b->cap)) {
		b->oom = 1;
		return;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void putf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void str(struct sbuf *b, const char *s)
{
	put(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\') {
			char e[2] = {'\\', (char)*p};
			put(b, e, 2);
		} else if (*p < 0x20) {
			putf(b, "\\u%04x", *p);
		} else {
			put(b, (const char *)p, 1);
		}
	}
	put(b, "\"", 1);
}

static const char *kind_name(int k)
{
	switch (k) {
	case REMAT_OP_KERNEL:
		return "kernel";
	case REMAT_OP_MEMCPY:
		return "memcpy";
	case REMAT_OP_MEMSET:
		return "memset";
	case REMAT_OP_HOST_FUNC:
		return "host_func";
	default:
		return "graph";
	}
}

static const char *copy_name(int c)
{
	static const char *n[] = {"HtoD", "DtoH", "DtoD", "HtoH"};
	return c >= 0 && c < 4 ? n[c] : "DtoD";
}

static void ids(struct sbuf *b, const int32_t *v, size_t n)
{
	put(b, "[", 1);
	for (size_t i = 0; i < n; i++)
		putf(b, "%s%d", i ? ", " : "", v[i]);
	put(b, "]", 1);
}

static void buffers(struct sbuf *b, const struct remat_profile *t)
{
	puts_(b, "  \"buffers\": [");
	for (size_t i = 0; i < t->nbufs; i++) {
		const struct prof_buf *u = &t->bufs[i];
		putf(b, "%s\n    {\"id\": %zu, \"addr\": \"0x%llx\", \"size\": %llu, ",
		     i ? "," : "", i, (unsigned long long)u->addr, (unsigned long long)u->size);
		putf(b, "\"rounded\": %llu, \"small\": %s, \"alloc_at\": %lld, \"free_at\": %lld, ",
		     (unsigned long long)u->rounded, u->small ? "true" : "false",
		     (long long)u->alloc_at, (long long)u->free_at);
		putf(b, "\"alloc_seq\": %lld, \"persistent\": %s, ", (long long)u->alloc_seq,
		     u->persistent ? "true" : "false");
		if (u->dead_across)
			puts_(b, "\"dead_across_boundary\": true, ");
		if (u->region)
			putf(b,
			     "\"region\": {\"allocation\": \"0x%llx\", \"offset\": %llu, \"map\": "
			     "\"0x%llx\"}, ",
			     (unsigned long long)u->alloc_addr, (unsigned long long)u->alloc_off,
			     (unsigned long long)u->map_addr);
		puts_(b, "\"site\": [");
		for (size_t k = 0; k < u->nsite; k++) {
			if (k)
				puts_(b, ", ");
			str(b, u->site[k]);
		}
		puts_(b, "]}");
	}
	puts_(b, "\n  ],\n");
}

/* Chunks regions share (docs/trace-format.md): only when there are some. */
static void shared_chunks(struct sbuf *b, const struct remat_profile *t)
{
	if (!t->nshared)
		return;
	puts_(b, "  \"shared_chunks\": [");
	for (size_t i = 0; i < t->nshared; i++) {
		const struct prof_shared *c = &t->shared[i];
		putf(b, "%s\n    {\"addr\": \"0x%llx\", \"bytes\": %llu, \"buffers\": [",
		     i ? "," : "", (unsigned long long)c->addr, (unsigned long long)c->bytes);
		for (uint32_t k = 0; k < c->n; k++)
			putf(b, "%s%d", k ? ", " : "", c->first + (int32_t)k);
		puts_(b, "]}");
	}
	puts_(b, "\n  ],\n");
}

static void kernels(struct sbuf *b, const struct remat_profile *t)
{
	puts_(b, "  \"kernels\": [");
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct prof_kernel *k = &t->kernels[i];
		putf(b, "%s\n    {\"id\": %zu, \"name\": ", i ? "," : "", i);
		str(b, k->name);
		puts_(b, ", \"params\": [");
		for (size_t j = 0; j < k->nparams; j++)
			putf(b, "%s[%u, %u]", j ? ", " : "", k->param[j][0], k->param[j][1]);
		putf(b, "], \"layout_known\": %s}", k->layout_known ? "true" : "false");
	}
	puts_(b, "\n  ],\n");
}

static const char *attr_name(CUlaunchAttributeID id)
{
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
		return "ignore";
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		return "access_policy_window";
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
		return "cooperative";
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		return "synchronization_policy";
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		return "cluster_dimension";
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return "cluster_scheduling_policy_preference";
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
		return "programmatic_stream_serialization";
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
		return "programmatic_event";
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		return "priority";
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		return "mem_sync_domain_map";
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		return "mem_sync_domain";
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
		return "preferred_cluster_dimension";
	case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
		return "launch_completion_event";
	case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
		return "device_updatable_kernel_node";
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		return "preferred_shared_memory_carveout";
	default:
		return "other";
	}
}

/* A kernel's launch attributes: a cluster shape as [x, y, z], one-int
 * values as a number, anything else as the hex of its bytes. */
static void attrs(struct sbuf *b, const struct prof_op *o)
{
	puts_(b, ", \"attrs\": [");
	for (uint32_t i = 0; i < o->nattrs; i++) {
		const CUlaunchAttribute *a = &o->attrs[i];
		putf(b, "%s{\"id\": %d, \"name\": \"%s\", \"value\": ", i ? ", " : "", (int)a->id,
		     attr_name(a->id));
		size_t n = remat_attr_value_size(a->id);
		if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION ||
		    a->id == CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION) {
			putf(b, "[%u, %u, %u]", a->value.clusterDim.x, a->value.clusterDim.y,
			     a->value.clusterDim.z);
		} else if (n == sizeof(int)) {
			int v;
			memcpy(&v, &a->value, sizeof(v));
			putf(b, "%d", v);
		} else {
			puts_(b, "\"");
			for (size_t k = 0; k < n; k++)
				putf(b, "%02x", (unsigned)(unsigned char)a->value.pad[k]);
			puts_(b, "\"");
		}
		puts_(b, "}");
	}
	puts_(b, "]");
}

static void ops(struct sbuf *b, const struct remat_profile *t)
{
	puts_(b, "  \"ops\": [");
	for (size_t i = 0; i < t->nops; i++) {
		const struct prof_op *o = &t->ops[i];
		putf(b, "%s\n    {\"i\": %zu, \"kind\": \"%s\", \"via\": ", i ? "," : "", i,
		     kind_name(o->kind));
		str(b, o->via);
		if (o->kind == REMAT_OP_KERNEL)
			putf(b, ", \"kernel\": %d", o->kernel);
		puts_(b, ", \"name\": ");
		str(b, o->name);
		putf(b, ", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shmem\": %u",
		     o->grid[0], o->grid[1], o->grid[2], o->block[0], o->block[1], o->block[2],
		     o->shmem);
		putf(b, ", \"stream\": %d", o->stream);
		if (o->nattrs)
			attrs(b, o);
		if (o->kind == REMAT_OP_KERNEL)
			putf(b, ", \"params\": [%llu, %llu]", (unsigned long long)o->params_off,
			     (unsigned long long)o->params_len);
		puts_(b, ", \"refs\": [");
		for (size_t r = 0; r < o->nrefs; r++)
			putf(b, "%s[%d, %llu, %lld]", r ? ", " : "", o->refs[r].buf,
			     (unsigned long long)o->refs[r].off, (long long)o->refs[r].param_off);
		puts_(b, "], \"reads\": ");
		ids(b, o->reads, o->nreads);
		puts_(b, ", \"writes\": ");
		ids(b, o->writes, o->nwrites);
		if (o->npartial) {
			puts_(b, ", \"partial\": ");
			ids(b, o->partial, o->npartial);
		}
		putf(b, ", \"bytes\": %llu", (unsigned long long)o->bytes);
		if (o->kind == REMAT_OP_MEMCPY)
			putf(b, ", \"copy\": \"%s\"", copy_name(o->copy));
		if (o->kind == REMAT_OP_MEMSET)
			putf(b, ", \"value\": %u", o->value);
		putf(b, ", \"duration_ns\": %lld, \"replayable\": %s, \"why_not\": ",
		     (long long)o->duration_ns, o->replayable ? "true" : "false");
		str(b, o->why_not ? o->why_not : "");
		if (o->collective)
			puts_(b, ", \"collective\": true");
		puts_(b, "}");
	}
	puts_(b, "\n  ],\n");
}

static int mkdirs(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			snprintf(err, errlen, "cannot create trace directory %s: %s", path,
			         strerror(errno));
			return -1;
		}
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

static int write_file(const char *path, const void *data, size_t n, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errlen, "cannot write %s: %s", path,
			         w < 0 ? strerror(errno) : "short write");
			close(fd);
			unlink(path);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	return 0;
}

int prof_trace_write(const struct remat_profile *t, const char *dir, char *err, size_t errlen)
{
	if (mkdirs(dir, err, errlen))
		return -1;
	struct sbuf b = {0};
	puts_(&b, "{\n  \"format\": \"remat-trace\",\n  \"version\": 1,\n");
	putf(&b, "  \"graph_hash\": \"0x%016llx\",\n", (unsigned long long)t->graph_hash);
	if (t->copy_bytes_per_us > 0)
		putf(&b, "  \"device_copy\": {\"fixed_ns\": %lld, \"bytes_per_us\": %lld},\n",
		     (long long)t->copy_fixed_ns, (long long)t->copy_bytes_per_us);
	putf(&b, "  \"process\": {\"pid\": %d, \"cmdline\": ", t->pid);
	str(&b, t->cmdline);
	puts_(&b, ", \"device\": ");
	str(&b, t->device);
	putf(&b, ", \"device_memory\": %llu, \"granularity\": %llu},\n",
	     (unsigned long long)t->device_memory, (unsigned long long)t->granularity);
	putf(&b,
	     "  \"iteration\": {\"period\": %llu, \"iterations_seen\": %llu, \"profiled\": %llu, "
	     "\"start_op\": %llu, \"duration_ns\": %lld},\n",
	     (unsigned long long)t->period, (unsigned long long)t->iterations_seen,
	     (unsigned long long)t->profiled, (unsigned long long)t->start_op,
	     (long long)t->duration_ns);
	putf(&b,
	     "  \"memory\": {\"persistent_bytes\": %llu, \"peak_bytes\": %llu, "
	     "\"small_pool_bytes\": %llu, \"edge_bytes\": %llu},\n",
	     (unsigned long long)t->persistent_bytes, (unsigned long long)t->peak_bytes,
	     (unsigned long long)t->small_pool_bytes, (unsigned long long)t->edge_bytes);
	buffers(&b, t);
	shared_chunks(&b, t);
	kernels(&b, t);
	ops(&b, t);
	putf(&b,
	     "  \"cupti\": {\"available\": %s, \"kernels\": %llu, \"launches\": %llu, "
	     "\"mismatch\": %lld, \"note\": ",
	     t->cupti_available ? "true" : "false", (unsigned long long)t->cupti_kernels,
	     (unsigned long long)t->cupti_launches, (long long)t->cupti_mismatch);
	str(&b, t->cupti_note ? t->cupti_note : "");
	puts_(&b, "},\n");
	putf(&b,
	     "  \"files\": {\"params.bin\": {\"size\": %zu, \"fnv1a64\": \"0x%016llx\"}},\n"
	     "  \"end\": true\n}\n",
	     t->params_len,
	     (unsigned long long)remat_fnv1a(REMAT_FNV_OFFSET, t->params, t->params_len));
	if (b.oom) {
		free(b.s);
		snprintf(err, errlen, "out of memory while formatting the trace");
		return -1;
	}
	char tmp_p[4200], tmp_j[4200], fin_p[4200], fin_j[4200];
	int pid = (int)getpid();
	snprintf(tmp_p, sizeof(tmp_p), "%s/.params.bin.%d.tmp", dir, pid);
	snprintf(tmp_j, sizeof(tmp_j), "%s/.trace.json.%d.tmp", dir, pid);
	snprintf(fin_p, sizeof(fin_p), "%s/params.bin", dir);
	snprintf(fin_j, sizeof(fin_j), "%s/trace.json", dir);
	int rc = -1;
	if (write_file(tmp_p, t->params, t->params_len, err, errlen))
		goto out;
	if (write_file(tmp_j, b.s, b.n, err, errlen)) {
		unlink(tmp_p);
		goto out;
	}
	if (rename(tmp_p, fin_p) || rename(tmp_j, fin_j)) {
		snprintf(err, errlen, "cannot rename the trace files into %s: %s", dir,
		         strerror(errno));
		unlink(tmp_p);
		unlink(tmp_j);
		goto out;
	}
	rc = 0;
out:
	free(b.s);
	return rc;
}
