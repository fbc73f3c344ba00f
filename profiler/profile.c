/*
 * profile.c — what is kept of each op of the profiled iteration: its
 * static description, its parameter bytes, the buffers its parameters
 * point into, the buffers whose content it changed, and its duration.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../interpose/remat.h"
#include "../interpose/alloc/alloc.h"
#include "profile.h"
#include "trace.h"
#include "../replay/replay.h"

static struct remat_trace T;
static uint64_t start;
static size_t P;
static struct remat_pbuf **pb; /* trace buffer id -> profiler buffer */
static size_t npb, cappb;
static uint64_t gh; /* graph hash, FNV-1a over the iteration's signature */
static int64_t next_seq;
static CUstream streams[256];
static int nstreams;
static uint32_t corr_min, corr_max;
static uint64_t *before; /* hashes before the current op, per read buffer */
static size_t capbefore;
static pthread_t writer;
static int writer_running;

#define MIX(v) (gh = remat_fnv1a(gh, &(v), sizeof(v)))

static void release_pbufs(void)
{
	for (size_t i = 0; i < npb; i++) {
		struct remat_pbuf *b = pb[i];
		b->in_trace = 0;
		b->trace_id = -1;
		if (b->dead) {
			for (size_t k = 0; k < b->nsite; k++)
				free(b->site[k]);
			free(b->site);
			free(b);
		}
	}
	npb = 0;
}

static int add_pbuf(struct remat_pbuf *b)
{
	if (npb == cappb) {
		size_t c = cappb ? cappb * 2 : 256;
		struct remat_pbuf **p = realloc(pb, c * sizeof(*p));
		if (!p)
			return -1;
		pb = p;
		cappb = c;
	}
	b->trace_id = (int32_t)npb;
	b->in_trace = 1;
	pb[npb++] = b;
	return 0;
}

int remat_profile_begin(uint64_t start_op, size_t period, size_t iteration, int cupti_ok,
                        const char *cupti_note)
{
	remat_trace_free(&T);
	release_pbufs();
	start = start_op;
	P = period;
	gh = REMAT_FNV_OFFSET;
	next_seq = 0;
	nstreams = 0;
	corr_min = UINT32_MAX;
	corr_max = 0;
	T.ops = calloc(period, sizeof(*T.ops));
	if (!T.ops)
		return -1;
	T.capops = period;
	T.period = period;
	T.start_op = start_op;
	T.profiled = T.iterations_seen = iteration;
	T.cupti_available = cupti_ok;
	T.cupti_note = cupti_note;
	remat_kinfo_reset_trace_ids();
	remat_ws_init();
	for (size_t i = 0; i < remat_live_count(); i++) {
		struct remat_pbuf *b = remat_live_at(i);
		b->alloc_at = b->free_at = b->alloc_seq = -1;
		if (add_pbuf(b))
			return -1;
	}
	remat_drv.cuCtxSynchronize();
	remat_alloc_reset_peak();
	return 0;
}

uint64_t remat_profile_start(void)
{
	return start;
}

void remat_profile_adopt(struct remat_pbuf *b)
{
	if (b->trace_id < 0 || b->alloc_at >= 0)
		return;
	b->alloc_at = 0;
	b->alloc_seq = next_seq++;
	uint64_t size = b->size;
	MIX(size);
}

static int32_t stream_id(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY)
		return 0;
	for (int i = 0; i < nstreams; i++)
		if (streams[i] == s)
			return i + 1;
	if (nstreams < (int)(sizeof(streams) / sizeof(streams[0])))
		streams[nstreams++] = s;
	return nstreams;
}

static int32_t kernel_id(struct remat_kinfo *k)
{
	if (k->trace_id >= 0)
		return k->trace_id;
	if (T.nkernels == T.capkernels) {
		size_t c = T.capkernels ? T.capkernels * 2 : 64;
		struct remat_tkernel *p = realloc(T.kernels, c * sizeof(*p));
		if (!p)
			return -1;
		T.kernels = p;
		T.capkernels = c;
	}
	struct remat_tkernel *t = &T.kernels[T.nkernels];
	memset(t, 0, sizeof(*t));
	t->name = strdup(k->name ? k->name : "?");
	t->layout_known = k->layout_known;
	if (k->nparams && (t->param = malloc(k->nparams * sizeof(*t->param)))) {
		memcpy(t->param, k->param, k->nparams * sizeof(*t->param));
		t->nparams = k->nparams;
	}
	k->trace_id = (int32_t)T.nkernels++;
	return k->trace_id;
}

static uint8_t *params_grow(size_t n)
{
	if (T.params_len + n > T.params_cap) {
		size_t c = T.params_cap ? T.params_cap : 65536;
		while (c < T.params_len + n)
			c *= 2;
		uint8_t *p = realloc(T.params, c);
		if (!p)
			return NULL;
		T.params = p;
		T.params_cap = c;
	}
	uint8_t *at = T.params + T.params_len;
	T.params_len += n;
	return at;
}

/* The parameter bytes of a launch, as the kernel receives them. */
static void pack_params(struct remat_top *o, struct remat_kinfo *k, const struct remat_op *op)
{
	o->params_off = T.params_len;
	void *buf = NULL;
	size_t size = 0;
	for (void **e = op->extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = e[1];
		else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
			size = *(size_t *)e[1];
	}
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

static void push_ref(struct remat_top *o, int32_t buf, uint64_t off, int64_t param_off)
{
	void *p = realloc(o->refs, (o->nrefs + 1) * sizeof(*o->refs));
	if (!p)
		return;
	o->refs = p;
	o->refs[o->nrefs++] = (struct remat_tref){buf, off, param_off};
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

/* Every aligned 8-byte word of the parameters that points into a live
 * managed buffer is a reference to it. */
static void scan_refs(struct remat_top *o)
{
	const uint8_t *p = T.params + o->params_off;
	for (uint64_t off = 0; off + 8 <= o->params_len; off += 8) {
		uint64_t v;
		memcpy(&v, p + off, 8);
		struct remat_pbuf *b = v ? remat_live_find(v) : NULL;
		if (!b || b->trace_id < 0)
			continue;
		push_ref(o, b->trace_id, v - b->addr, (int64_t)off);
		push_id(&o->reads, &o->nreads, b->trace_id);
	}
}

static int is_device(uint64_t addr)
{
	if (remat_live_find(addr))
		return 1;
	unsigned int type = 0;
	return remat_drv.cuPointerGetAttribute &&
	       remat_drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr) ==
	           CUDA_SUCCESS &&
	       type == CU_MEMORYTYPE_DEVICE;
}

static void describe_copy(struct remat_top *o, const struct remat_op *op)
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
		struct remat_pbuf *b = remat_live_find(op->src);
		if (b && b->trace_id >= 0) {
			push_ref(o, b->trace_id, op->src - b->addr, -1);
			push_id(&o->reads, &o->nreads, b->trace_id);
		}
	}
	if (c == REMAT_COPY_DTOD || c == REMAT_COPY_HTOD) {
		struct remat_pbuf *b = remat_live_find(op->dst);
		if (b && b->trace_id >= 0) {
			push_ref(o, b->trace_id, op->dst - b->addr, -1);
			push_id(&o->writes, &o->nwrites, b->trace_id);
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

void remat_profile_op_before(struct remat_op *op, uint64_t k, int64_t level)
{
	(void)level;
	struct remat_top *o = &T.ops[k];
	memset(o, 0, sizeof(*o));
	T.nops = k + 1;
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
	o->swap_copies = remat_swap_copies_take();
	switch (op->kind) {
	case REMAT_OP_KERNEL: {
		struct remat_kinfo *ki = remat_kinfo_get(op->func);
		if (!ki) {
			o->replayable = 0;
			o->why_not = "out of memory";
			break;
		}
		o->name = ki->name;
		o->kinfo = ki;
		o->kernel = kernel_id(ki);
		pack_params(o, ki, op);
		scan_refs(o);
		if (o->nreads > capbefore) {
			void *p = realloc(before, o->nreads * sizeof(*before));
			if (p) {
				before = p;
				capbefore = o->nreads;
			}
		}
		remat_drv.cuCtxSynchronize();
		uint64_t l0 = remat_ws_launches;
		for (size_t r = 0; r < o->nreads && r < capbefore; r++) {
			struct remat_pbuf *b = pb[o->reads[r]];
			before[r] = remat_ws_hash(b->addr, b->size);
		}
		o->hash_before = (uint32_t)(remat_ws_launches - l0);
		break;
	}
	case REMAT_OP_MEMCPY:
		describe_copy(o, op);
		break;
	case REMAT_OP_MEMSET: {
		o->name = "memset";
		o->bytes = op->bytes;
		o->value = op->value;
		struct remat_pbuf *b = remat_live_find(op->dst);
		if (b && b->trace_id >= 0) {
			push_ref(o, b->trace_id, op->dst - b->addr, -1);
			push_id(&o->writes, &o->nwrites, b->trace_id);
		}
		break;
	}
	default:
		o->name = "cuGraphLaunch";
		o->replayable = 0;
		o->why_not = "graph launch";
		break;
	}
	int32_t kind = o->kind;
	MIX(kind);
	gh = remat_fnv1a(gh, o->name, strlen(o->name) + 1);
	MIX(o->grid);
	MIX(o->block);
	MIX(o->shmem);
	MIX(o->params_len);
	MIX(o->stream);
	MIX(o->bytes);
	remat_cupti_tls.driver_corr = 0;
}

static void note_corr(uint32_t c)
{
	if (!c)
		return;
	if (c < corr_min)
		corr_min = c;
	if (c > corr_max)
		corr_max = c;
}

void remat_profile_op_after(struct remat_op *op, uint64_t k, CUresult rc)
{
	struct remat_top *o = &T.ops[k];
	struct remat_cupti_tls *t = &remat_cupti_tls;
	o->corr_driver = t->driver_corr;
	o->corr_runtime = t->runtime_corr;
	note_corr(o->corr_driver);
	note_corr(o->corr_runtime);
	if (t->runtime_name)
		o->via = remat_intern(t->runtime_name);
	if (rc != CUDA_SUCCESS) {
		o->replayable = 0;
		o->why_not = "the call failed";
	}
	if (op->kind != REMAT_OP_KERNEL || !o->nreads)
		return;
	remat_drv.cuCtxSynchronize();
	uint64_t l0 = remat_ws_launches;
	for (size_t r = 0; r < o->nreads && r < capbefore; r++) {
		struct remat_pbuf *b = pb[o->reads[r]];
		if (remat_ws_hash(b->addr, b->size) != before[r])
			push_id(&o->writes, &o->nwrites, o->reads[r]);
	}
	o->hash_after = (uint32_t)(remat_ws_launches - l0);
}

void remat_profile_alloc(struct remat_pbuf *b, uint64_t next_op)
{
	uint64_t k = next_op - start;
	if (k >= P) /* after the last op: it belongs to the next iteration */
		return;
	if (add_pbuf(b))
		return;
	b->alloc_at = (int64_t)k;
	b->alloc_seq = next_seq++;
	b->free_at = -1;
	uint64_t size = b->size;
	MIX(size);
}

void remat_profile_free(struct remat_pbuf *b, uint64_t next_op)
{
	uint64_t k = next_op - start;
	if (b->trace_id >= 0 && k < P)
		b->free_at = (int64_t)k;
}

struct corr_idx {
	uint32_t corr;
	uint32_t op;
};

static int cmp_corr(const void *a, const void *b)
{
	uint32_t x = ((const struct corr_idx *)a)->corr, y = ((const struct corr_idx *)b)->corr;
	return x < y ? -1 : x > y;
}

/* A CUPTI record matched to the op it belongs to. */
struct match {
	uint32_t op;
	uint64_t start;
	int64_t dur;
};

static int cmp_match(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int kind_of_op(int kind)
{
	return kind == REMAT_OP_KERNEL   ? 0
	       : kind == REMAT_OP_MEMCPY ? 1
	       : kind == REMAT_OP_MEMSET ? 2
	                                 : -1;
}

static void durations(void)
{
	struct remat_activity *rec;
	size_t n = remat_cupti_collect(&rec);
	struct corr_idx *ix = malloc(2 * T.nops * sizeof(*ix) + 1);
	struct match *mt = malloc(n * sizeof(*mt) + 1);
	size_t m = 0, nm = 0;
	for (size_t i = 0; ix && i < T.nops; i++) {
		if (T.ops[i].corr_driver)
			ix[m++] = (struct corr_idx){T.ops[i].corr_driver, (uint32_t)i};
		if (T.ops[i].corr_runtime)
			ix[m++] = (struct corr_idx){T.ops[i].corr_runtime, (uint32_t)i};
	}
	if (ix)
		qsort(ix, m, sizeof(*ix), cmp_corr);
	uint64_t kernels = 0, internal = 0, unmatched[3] = {0, 0, 0};
	for (size_t r = 0; r < n; r++) {
		uint32_t c = rec[r].corr;
		if (c < corr_min || c > corr_max || remat_cupti_is_internal(c))
			continue;
		if (rec[r].kind == 0)
			kernels++;
		struct corr_idx key = {c, 0},
		                *hit = ix ? bsearch(&key, ix, m, sizeof(*ix), cmp_corr) : NULL;
		/* Our own hashing copies and kernels run inside the app's runtime
		 * call and carry its id: only records of the op's own kind count. */
		if (!hit || kind_of_op(T.ops[hit->op].kind) != rec[r].kind) {
			unmatched[rec[r].kind]++;
			continue;
		}
		if (mt)
			mt[nm++] = (struct match){hit->op, rec[r].start, rec[r].duration_ns};
	}
	if (mt)
		qsort(mt, nm, sizeof(*mt), cmp_match);
	for (size_t j = 0; j < nm;) {
		size_t k = j;
		while (k < nm && mt[k].op == mt[j].op)
			k++;
		struct remat_top *o = &T.ops[mt[j].op];
		if (o->kind == REMAT_OP_KERNEL) {
			/* In start order: hashing kernels before it, the op's own,
			 * hashing kernels after it. */
			size_t own = j + o->hash_before;
			internal += o->hash_before + o->hash_after;
			if (own < k)
				o->duration_ns = mt[own].dur;
		} else {
			/* In start order: the swap copies libremat made for the op
			 * (done before it was issued), then the op's own. */
			o->duration_ns = 0;
			for (size_t q = j + o->swap_copies; q < k; q++)
				o->duration_ns += mt[q].dur;
		}
		j = k;
	}
	free(mt);
	free(ix);
	free(rec);
	kernels -= internal < kernels ? internal : kernels;
	remat_log(REMAT_LOG_DEBUG,
	          "CUPTI: %zu records; not matched to an op: %llu kernels, %llu copies, %llu sets",
	          n, (unsigned long long)unmatched[0], (unsigned long long)unmatched[1],
	          (unsigned long long)unmatched[2]);
	uint64_t launches = 0;
	for (size_t i = 0; i < T.nops; i++)
		launches += T.ops[i].kind == REMAT_OP_KERNEL;
	T.cupti_kernels = kernels;
	T.cupti_launches = launches;
	T.cupti_mismatch = (int64_t)kernels - (int64_t)launches;
	if (T.cupti_mismatch)
		remat_log(REMAT_LOG_ERROR,
		          "CUPTI saw %llu kernels in the profiled iteration, libremat intercepted "
		          "%llu launches: %lld launch(es) went around the interposition",
		          (unsigned long long)kernels, (unsigned long long)launches,
		          (long long)T.cupti_mismatch);
}

static void process_info(void)
{
	T.pid = (int)getpid();
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
	T.cmdline = strdup(buf);
	CUdevice dev;
	size_t total = 0;
	snprintf(T.device, sizeof(T.device), "?");
	if (remat_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
		remat_drv.cuDeviceGetName(T.device, (int)sizeof(T.device), dev);
		if (remat_drv.cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS)
			T.device_memory = total;
	}
}

void remat_profile_end(int cupti_ok)
{
	/* The last ops may still be running: their records come at completion. */
	remat_drv.cuCtxSynchronize();
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	T.peak_bytes = st.peak;
	T.small_pool_bytes = st.small_pool;
	T.granularity = st.granularity;
	if (cupti_ok) {
		durations();
	} else {
		struct remat_activity *rec;
		free(remat_cupti_collect(&rec) ? rec : NULL);
	}
	T.duration_ns = 0;
	for (size_t i = 0; i < T.nops; i++)
		if (T.ops[i].duration_ns > 0)
			T.duration_ns += T.ops[i].duration_ns;
	if (!cupti_ok)
		T.duration_ns = -1;
	T.bufs = calloc(npb ? npb : 1, sizeof(*T.bufs));
	for (size_t i = 0; T.bufs && i < npb; i++) {
		struct remat_pbuf *b = pb[i];
		struct remat_tbuf *u = &T.bufs[i];
		u->addr = b->addr;
		u->size = b->size;
		u->rounded = b->rounded;
		u->small = b->small;
		u->alloc_at = b->alloc_at;
		u->free_at = b->free_at;
		u->alloc_seq = b->alloc_seq;
		u->persistent = b->alloc_at < 0 && b->free_at < 0;
		if (u->persistent)
			T.persistent_bytes += b->rounded;
		u->site = b->nsite ? calloc(b->nsite, sizeof(char *)) : NULL;
		for (size_t s = 0; u->site && s < b->nsite; s++)
			u->site[s] = strdup(b->site[s]);
		u->nsite = u->site ? b->nsite : 0;
	}
	T.nbufs = T.bufs ? npb : 0;
	T.graph_hash = gh;
	process_info();
	release_pbufs();
}

void remat_profile_set_sig(uint64_t k, uint64_t sig)
{
	if (k < T.nops)
		T.ops[k].sig = sig;
}

static void push_unique(int32_t *v, uint32_t off, uint32_t *n, int32_t id)
{
	for (uint32_t i = 0; i < *n; i++)
		if (v[off + i] == id)
			return;
	v[off + (*n)++] = id;
}

struct replay_profile *remat_profile_snapshot(int64_t level0)
{
	struct replay_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	size_t nwr = 0, nref = 0;
	for (size_t i = 0; i < T.nops; i++) {
		nwr += T.ops[i].nwrites;
		nref += T.ops[i].nrefs + T.ops[i].nwrites;
	}
	p->ops = calloc(T.nops ? T.nops : 1, sizeof(*p->ops));
	p->bufs = calloc(T.nbufs ? T.nbufs : 1, sizeof(*p->bufs));
	p->wr = malloc((nwr + 1) * sizeof(*p->wr));
	p->ref = malloc((nref + 1) * sizeof(*p->ref));
	p->seq = malloc((T.nbufs + 1) * sizeof(*p->seq));
	if (!p->ops || !p->bufs || !p->wr || !p->ref || !p->seq) {
		replay_profile_free(p);
		return NULL;
	}
	p->graph_hash = T.graph_hash;
	p->nops = (int32_t)T.nops;
	p->nbufs = (int32_t)T.nbufs;
	p->level0 = level0;
	uint32_t w = 0, r = 0;
	for (size_t i = 0; i < T.nops; i++) {
		const struct remat_top *o = &T.ops[i];
		struct replay_op *q = &p->ops[i];
		q->kind = o->kind;
		q->func = o->func;
		q->kinfo = o->kinfo;
		memcpy(q->grid, o->grid, sizeof(q->grid));
		memcpy(q->block, o->block, sizeof(q->block));
		q->shmem = o->shmem;
		q->stream = o->cstream;
		q->stream_id = o->stream;
		q->params_len = (uint32_t)o->params_len;
		q->via_extra = o->via_extra;
		q->copy = o->copy;
		q->bytes = o->bytes;
		q->replayable = o->replayable;
		q->sig = o->sig;
		q->wr_off = w;
		for (size_t k = 0; k < o->nwrites; k++)
			p->wr[w++] = o->writes[k];
		q->nwr = w - q->wr_off;
		q->ref_off = r;
		for (size_t k = 0; k < o->nrefs; k++)
			push_unique(p->ref, q->ref_off, &q->nref, o->refs[k].buf);
		for (size_t k = 0; k < o->nwrites; k++)
			push_unique(p->ref, q->ref_off, &q->nref, o->writes[k]);
		r += q->nref;
	}
	for (int i = 0; i < nstreams && i < 63; i++)
		p->streams[i + 1] = streams[i];
	p->streams[0] = NULL;
	p->nstreams = nstreams + 1 < 64 ? nstreams + 1 : 64;
	for (size_t b = 0; b < T.nbufs; b++) {
		const struct remat_tbuf *u = &T.bufs[b];
		p->bufs[b] = (struct replay_buf){u->addr,     u->size,    u->rounded,  u->small,
		                                 u->alloc_at, u->free_at, u->alloc_seq};
		p->seq[b] = -1;
	}
	for (size_t b = 0; b < T.nbufs; b++) {
		int64_t s = T.bufs[b].alloc_seq;
		if (s >= 0 && s < (int64_t)T.nbufs) {
			p->seq[s] = (int32_t)b;
			if (s + 1 > p->nseq)
				p->nseq = (int32_t)(s + 1);
		}
	}
	return p;
}

void remat_profile_drop(void)
{
	struct remat_activity *rec;
	if (remat_cupti_collect(&rec))
		free(rec);
	remat_trace_free(&T);
	release_pbufs();
}

struct job {
	struct remat_trace t;
	char dir[PATH_MAX];
};

static void *write_trace(void *arg)
{
	struct job *j = arg;
	char err[600];
	int ok = remat_trace_write(&j->t, j->dir, err, sizeof(err)) == 0;
	if (!ok)
		remat_warn("%s; no trace written, training continues unmodified", err);
	else
		remat_log(REMAT_LOG_INFO, "trace written to %s (%zu ops, %zu buffers)", j->dir,
		          j->t.nops, j->t.nbufs);
	if (remat_cfg.mode == REMAT_MODE_RUN)
		replay_trace_written(ok);
	remat_trace_free(&j->t);
	free(j);
	return NULL;
}

void remat_profile_publish(const char *dir)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j) {
		remat_trace_free(&T);
		return;
	}
	j->t = T;
	memset(&T, 0, sizeof(T));
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	if (pthread_create(&writer, NULL, write_trace, j) == 0)
		writer_running = 1;
	else
		write_trace(j);
}

void remat_profile_join(void)
{
	if (writer_running) {
		pthread_join(writer, NULL);
		writer_running = 0;
	}
}
