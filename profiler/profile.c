/*
 * profile.c — what is kept of each op of the profiled iteration: its
 * static description, its parameter bytes, the buffers its parameters
 * point into, the buffers whose content it changed, and its duration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../alloc/alloc.h"
#include "../core/driver.h"
#include "../core/hash.h"
#include "../core/log.h"
#include "../core/param_words.h"
#include "internal.h"

/* The profile being recorded and what recording it takes. */
static struct prof_record {
	struct remat_profile prof; /* handed over (moved to the heap) at its end */
	size_t period;
	struct prof_live **pb; /* profile buffer id -> profiler buffer */
	size_t npb, cappb;
	uint64_t graph_hash; /* FNV-1a over the iteration's signature */
	int64_t next_seq;
	CUstream streams[256]; /* stream id i + 1 */
	int nstreams;
	uint32_t corr_min, corr_max;
} pr;

#define MIX(v) (pr.graph_hash = remat_fnv1a(pr.graph_hash, &(v), sizeof(v)))

static void release_pbufs(void)
{
	for (size_t i = 0; i < pr.npb; i++) {
		struct prof_live *b = pr.pb[i];
		b->in_trace = 0;
		b->trace_id = -1;
		if (b->dead)
			prof_live_free(b);
	}
	pr.npb = 0;
}

static int add_pbuf(struct prof_live *b)
{
	if (REMAT_GROW(pr.pb, pr.npb, pr.cappb))
		return -1;
	b->trace_id = (int32_t)pr.npb;
	b->in_trace = 1;
	pr.pb[pr.npb++] = b;
	return 0;
}

int prof_profile_begin(uint64_t start_op, size_t ops, size_t iteration, int cupti_ok,
                       const char *cupti_note)
{
	prof_profile_release(&pr.prof);
	release_pbufs();
	pr.period = ops;
	pr.graph_hash = REMAT_FNV_OFFSET;
	pr.next_seq = 0;
	pr.nstreams = 0;
	pr.corr_min = UINT32_MAX;
	pr.corr_max = 0;
	pr.prof.ops = calloc(ops, sizeof(*pr.prof.ops));
	if (!pr.prof.ops || prof_delta_begin(ops))
		return -1;
	pr.prof.period = ops;
	pr.prof.start_op = start_op;
	pr.prof.profiled = pr.prof.iterations_seen = iteration;
	pr.prof.cupti_available = cupti_ok;
	pr.prof.cupti_note = cupti_note;
	prof_kinfo_reset_trace_ids();
	prof_host_copy_init();
	for (size_t i = 0; i < prof_live_count(); i++) {
		struct prof_live *b = prof_live_at(i);
		b->alloc_at = b->free_at = b->alloc_seq = -1;
		if (add_pbuf(b))
			return -1;
	}
	prof_sync_all();
	remat_alloc_reset_peak();
	return 0;
}

void prof_profile_adopt(struct prof_live *b)
{
	if (b->trace_id < 0 || b->alloc_at >= 0)
		return;
	b->alloc_at = 0;
	b->alloc_seq = pr.next_seq++;
	uint64_t size = b->size;
	MIX(size);
}

static int32_t stream_id(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY)
		return 0;
	for (int i = 0; i < pr.nstreams; i++)
		if (pr.streams[i] == s)
			return i + 1;
	if (pr.nstreams < (int)(sizeof(pr.streams) / sizeof(pr.streams[0])))
		pr.streams[pr.nstreams++] = s;
	return pr.nstreams;
}

static int32_t kernel_id(struct prof_kinfo *k)
{
	if (k->trace_id >= 0)
		return k->trace_id;
	if (REMAT_GROW(pr.prof.kernels, pr.prof.nkernels, pr.prof.capkernels))
		return -1;
	struct prof_kernel *t = &pr.prof.kernels[pr.prof.nkernels];
	memset(t, 0, sizeof(*t));
	t->name = strdup(k->name ? k->name : "?");
	t->layout_known = k->layout_known;
	t->param_bytes = k->param_bytes;
	if (k->nparams && (t->param = malloc(k->nparams * sizeof(*t->param)))) {
		memcpy(t->param, k->param, k->nparams * sizeof(*t->param));
		t->nparams = k->nparams;
	}
	k->trace_id = (int32_t)pr.prof.nkernels++;
	return k->trace_id;
}

static uint8_t *params_grow(size_t n)
{
	if (REMAT_RESERVE(pr.prof.params, pr.prof.params_len + n, pr.prof.params_cap))
		return NULL;
	uint8_t *at = pr.prof.params + pr.prof.params_len;
	pr.prof.params_len += n;
	return at;
}

/* The parameter bytes of a launch, as the kernel receives them. */
static void pack_params(struct prof_op *o, struct prof_kinfo *k, const struct remat_op *op)
{
	o->params_off = pr.prof.params_len;
	size_t size;
	const uint8_t *buf = remat_op_extra_params(op, &size);
	if (buf && size) {
		o->via_extra = 1;
		uint8_t *dst = params_grow(size);
		if (dst) {
			memcpy(dst, buf, size);
			o->params_len = size;
		}
		return;
	}
	if (!k->layout_known || (k->nparams && !op->params)) {
		o->replayable = 0;
		o->why_not = "unknown parameter layout";
		return;
	}
	uint8_t *dst = params_grow(k->param_bytes);
	if (!dst)
		return;
	memset(dst, 0, k->param_bytes);
	for (size_t j = 0; j < k->nparams; j++)
		memcpy(dst + k->param[j][0], op->params[j], k->param[j][1]);
	o->params_len = k->param_bytes;
}

static void push_ref(struct prof_op *o, int32_t buf, uint64_t off, int64_t param_off)
{
	void *p = realloc(o->refs, (o->nrefs + 1) * sizeof(*o->refs));
	if (!p)
		return;
	o->refs = p;
	o->refs[o->nrefs++] = (struct prof_ref){buf, off, param_off};
}

static void push_id(int32_t **v, size_t *n, int32_t id)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == id)
			return;
	void *p = realloc(*v, (*n + 1) * sizeof(**v));
	if (!p)
		return;
	*v = p;
	(*v)[(*n)++] = id;
}

void prof_op_wrote(struct prof_op *o, int32_t id)
{
	push_id(&o->writes, &o->nwrites, id);
}

/* Every aligned 8-byte word of the parameters that points into a live
 * managed buffer is a reference to it. */
static void scan_refs(struct prof_op *o)
{
	struct remat_words it = remat_words_packed(pr.prof.params + o->params_off, o->params_len);
	uint64_t v, off;
	while (remat_words_next(&it, &v, &off)) {
		struct prof_live *b = v ? prof_live_find(v) : NULL;
		if (!b || b->trace_id < 0)
			continue;
		push_ref(o, b->trace_id, v - b->addr, (int64_t)off);
		push_id(&o->reads, &o->nreads, b->trace_id);
	}
}

static int is_device(uint64_t addr)
{
	if (prof_live_find(addr))
		return 1;
	unsigned int type = 0;
	return remat_drv.cuPointerGetAttribute &&
	       remat_drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr) ==
	           CUDA_SUCCESS &&
	       type == CU_MEMORYTYPE_DEVICE;
}

static void describe_copy(struct prof_op *o, const struct remat_op *op, uint64_t k)
{
	int c = op->copy;
	if (c == REMAT_COPY_INFER) {
		int d = is_device(op->dst), s = is_device(op->src);
		c = d ? (s ? REMAT_COPY_DTOD : REMAT_COPY_HTOD)
		      : (s ? REMAT_COPY_DTOH : REMAT_COPY_HTOH);
	}
	static const char *names[] = {"memcpyHtoD", "memcpyDtoH", "memcpyDtoD", "memcpyHtoH"};
	o->copy = c;
	o->name = names[c];
	o->bytes = op->bytes;
	if (c == REMAT_COPY_DTOD || c == REMAT_COPY_DTOH) {
		struct prof_live *b = prof_live_find(op->src);
		if (b && b->trace_id >= 0) {
			push_ref(o, b->trace_id, op->src - b->addr, -1);
			push_id(&o->reads, &o->nreads, b->trace_id);
			prof_delta_range(k, b->trace_id, op->src - b->addr,
			                 op->src - b->addr + op->bytes, 0);
		}
	}
	if (c == REMAT_COPY_DTOD || c == REMAT_COPY_HTOD) {
		struct prof_live *b = prof_live_find(op->dst);
		if (b && b->trace_id >= 0) {
			push_ref(o, b->trace_id, op->dst - b->addr, -1);
			push_id(&o->writes, &o->nwrites, b->trace_id);
			prof_delta_range(k, b->trace_id, op->dst - b->addr,
			                 op->dst - b->addr + op->bytes, 1);
		}
	}
	if (c == REMAT_COPY_HTOD || c == REMAT_COPY_HTOH) {
		o->replayable = 0;
		o->why_not = "copy from host memory";
	} else if (c == REMAT_COPY_DTOH) {
		o->replayable = 0;
		o->why_not = "copy to host memory";
	}
}

/* A graph launch references every live buffer its nodes' parameter words
 * and ranges fall in (graphs.c); one it could not read, every live one. */
static void graph_refs(struct prof_op *o, const struct remat_op *op)
{
	const struct remat_graph_refs *g = op->graph;
	o->graph_kernels = g ? g->kernels : 0;
	for (size_t i = 0; i < pr.npb; i++) {
		struct prof_live *b = pr.pb[i];
		if (b->dead)
			continue;
		int hit = !g || g->opaque;
		for (size_t j = 0; !hit && j < g->n; j++)
			hit = g->range[j][0] < b->addr + b->size && b->addr < g->range[j][1];
		if (hit) {
			push_ref(o, b->trace_id, 0, -1);
			push_id(&o->reads, &o->nreads, b->trace_id);
		}
	}
}

/* Host copies of everything kernel or graph op k references, before it:
 * those that differ after it are its writes (delta.c).  A collective gets
 * none (collective.c): all it references it may write. */
static void copy_inputs(struct prof_op *o, uint64_t k)
{
	if (o->collective) {
		for (size_t r = 0; r < o->nreads; r++)
			prof_op_wrote(o, o->reads[r]);
		return;
	}
	prof_sync(o->cstream);
	o->own_copies[0] = prof_delta_before(k, o, pr.pb);
}

void prof_profile_op_before(struct remat_op *op, uint64_t k)
{
	struct prof_op *o = &pr.prof.ops[k];
	memset(o, 0, sizeof(*o));
	pr.prof.nops = k + 1;
	o->kind = op->kind;
	o->via = op->via;
	o->kernel = -1;
	o->name = "";
	memcpy(o->grid, op->grid, sizeof(o->grid));
	memcpy(o->block, op->block, sizeof(o->block));
	o->shmem = op->shmem;
	o->stream = stream_id(op->stream);
	o->func = op->func;
	o->cstream = op->stream;
	o->duration_ns = -1;
	o->replayable = 1;
	o->why_not = "";
	o->swap_copies = prof_swap_copies_take();
	switch (op->kind) {
	case REMAT_OP_KERNEL: {
		struct prof_kinfo *ki = prof_kinfo_get(op->func);
		if (!ki) {
			o->replayable = 0;
			o->why_not = "out of memory";
			break;
		}
		o->name = ki->name;
		o->kernel = kernel_id(ki);
		if (prof_collective_name(o->name)) {
			o->collective = 1;
			o->replayable = 0;
			o->why_not = "collective";
		}
		pack_params(o, ki, op);
		pr.graph_hash = prof_attrs_record(o, op, pr.graph_hash);
		scan_refs(o);
		copy_inputs(o, k);
		break;
	}
	case REMAT_OP_MEMCPY:
		describe_copy(o, op, k);
		break;
	case REMAT_OP_MEMSET: {
		o->name = "memset";
		o->bytes = op->bytes;
		o->value = op->value;
		struct prof_live *b = prof_live_find(op->dst);
		if (b && b->trace_id >= 0) {
			push_ref(o, b->trace_id, op->dst - b->addr, -1);
			push_id(&o->writes, &o->nwrites, b->trace_id);
			prof_delta_range(k, b->trace_id, op->dst - b->addr,
			                 op->dst - b->addr + op->bytes, 1);
		}
		break;
	}
	default:
		o->name = "cuGraphLaunch";
		o->replayable = 0;
		o->why_not = "graph launch";
		o->collective = op->graph && op->graph->collective;
		graph_refs(o, op);
		copy_inputs(o, k);
		break;
	}
	int32_t kind = o->kind;
	MIX(kind);
	pr.graph_hash = remat_fnv1a(pr.graph_hash, o->name, strlen(o->name) + 1);
	MIX(o->grid);
	MIX(o->block);
	MIX(o->shmem);
	MIX(o->params_len);
	MIX(o->stream);
	MIX(o->bytes);
	prof_cupti_tls.driver_corr = 0;
}

static void note_corr(uint32_t c)
{
	if (!c)
		return;
	if (c < pr.corr_min)
		pr.corr_min = c;
	if (c > pr.corr_max)
		pr.corr_max = c;
}

void prof_profile_op_after(struct remat_op *op, uint64_t k, CUresult rc)
{
	struct prof_op *o = &pr.prof.ops[k];
	struct prof_cupti_tls *t = &prof_cupti_tls;
	o->corr_driver = t->driver_corr;
	o->corr_runtime = prof_cupti_runtime_corr();
	note_corr(o->corr_driver);
	note_corr(o->corr_runtime);
	if (o->corr_runtime && t->runtime_name)
		o->via = prof_intern(t->runtime_name);
	if (rc != CUDA_SUCCESS) {
		o->replayable = 0;
		o->why_not = "the call failed";
	}
	if (o->collective) {
		prof_collective_issued(op->stream);
		return;
	}
	if ((op->kind != REMAT_OP_KERNEL && op->kind != REMAT_OP_GRAPH) || !o->nreads)
		return;
	prof_sync(op->stream);
	o->own_copies[1] = prof_delta_after(k, o, op, pr.pb);
}

void prof_profile_alloc(struct prof_live *b, uint64_t k)
{
	if (k >= pr.period) /* after the last op: it belongs to the next iteration */
		return;
	if (add_pbuf(b))
		return;
	b->alloc_at = (int64_t)k;
	b->alloc_seq = pr.next_seq++;
	b->free_at = -1;
	uint64_t size = b->size;
	MIX(size);
}

void prof_profile_free(struct prof_live *b, uint64_t k)
{
	if (b->trace_id >= 0 && k < pr.period)
		b->free_at = (int64_t)k;
}

static void process_info(void)
{
	pr.prof.pid = (int)getpid();
	FILE *f = fopen("/proc/self/cmdline", "rb");
	char buf[4096];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	while (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	pr.prof.cmdline = strdup(buf);
	CUdevice dev;
	size_t total = 0;
	snprintf(pr.prof.device, sizeof(pr.prof.device), "?");
	if (remat_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
		remat_drv.cuDeviceGetName(pr.prof.device, (int)sizeof(pr.prof.device), dev);
		if (remat_drv.cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS)
			pr.prof.device_memory = total;
	}
}

struct remat_profile *prof_profile_end(int cupti_ok, int64_t level0)
{
	/* The last ops may still be running: their records come at completion. */
	prof_sync_all();
	prof_copy_rate(&pr.prof.copy_fixed_ns, &pr.prof.copy_bytes_per_us);
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	pr.prof.peak_bytes = st.peak;
	pr.prof.small_pool_bytes = st.small_pool;
	/* The program's own memory outside its extents stays, like the
	 * chunks no region holds whole. */
	pr.prof.edge_bytes = st.program_fixed;
	pr.prof.granularity = st.granularity;
	if (cupti_ok) {
		prof_durations(&pr.prof, pr.corr_min, pr.corr_max);
	} else {
		struct prof_activity *rec;
		free(prof_cupti_collect(&rec) ? rec : NULL);
	}
	pr.prof.duration_ns = 0;
	for (size_t i = 0; i < pr.prof.nops; i++)
		if (pr.prof.ops[i].duration_ns > 0)
			pr.prof.duration_ns += pr.prof.ops[i].duration_ns;
	if (!cupti_ok)
		pr.prof.duration_ns = -1;
	pr.prof.bufs = calloc(pr.npb ? pr.npb : 1, sizeof(*pr.prof.bufs));
	for (size_t i = 0; pr.prof.bufs && i < pr.npb; i++) {
		struct prof_live *b = pr.pb[i];
		struct prof_buf *u = &pr.prof.bufs[i];
		u->addr = b->addr;
		u->size = b->size;
		u->rounded = b->rounded;
		u->small = b->small;
		u->alloc_at = b->alloc_at;
		u->free_at = b->free_at;
		u->alloc_seq = b->alloc_seq;
		u->persistent = b->alloc_at < 0 && b->free_at < 0;
		if (u->persistent)
			pr.prof.persistent_bytes += b->rounded;
		u->site = b->nsite ? calloc(b->nsite, sizeof(char *)) : NULL;
		for (size_t k = 0; u->site && k < b->nsite; k++)
			u->site[k] = strdup(b->site[k]);
		u->nsite = u->site ? b->nsite : 0;
	}
	pr.prof.nbufs = pr.prof.bufs ? pr.npb : 0;
	int cut = pr.prof.bufs ? prof_regions(&pr.prof) : -1;
	prof_delta_drop();
	pr.prof.graph_hash = pr.graph_hash;
	pr.prof.level0 = level0;
	process_info();
	release_pbufs();
	/* Stream id 0 is the legacy stream; id i + 1 the i-th one seen. */
	pr.prof.streams = calloc((size_t)pr.nstreams + 1, sizeof(*pr.prof.streams));
	if (pr.prof.streams) {
		memcpy(pr.prof.streams + 1, pr.streams, (size_t)pr.nstreams * sizeof(*pr.streams));
		pr.prof.nstreams = pr.nstreams + 1;
	}
	struct remat_profile *p = malloc(sizeof(*p));
	if (!p || !pr.prof.bufs || !pr.prof.streams || cut) {
		free(p);
		prof_profile_release(&pr.prof);
		return NULL;
	}
	*p = pr.prof;
	p->refs = 1;
	memset(&pr.prof, 0, sizeof(pr.prof));
	return p;
}

void prof_profile_drop(void)
{
	struct prof_activity *rec;
	if (prof_cupti_collect(&rec))
		free(rec);
	prof_profile_release(&pr.prof);
	prof_delta_drop();
	release_pbufs();
}
