/*
 * trainer_pool.c — a caching allocator in the manner of PyTorch's native
 * CUDA allocator (c10/cuda/CUDACachingAllocator.cpp), for --alloc caching
 * and --alloc vmm.
 *
 * Device memory comes in segments that are never given back while the
 * program trains; tensors are blocks carved out of them.  Sizes round up
 * to 512 bytes; requests up to 1 MiB come from the small pool, larger
 * ones from the large pool, and a block never moves between pools.  A
 * request takes the best-fitting free block of its pool *and stream*
 * (smallest, then lowest address) and splits off the rest when it is big
 * enough to be useful; a freed block merges with free neighbours of its
 * segment.  Only when no free block fits does the pool grow:
 *
 *   caching  a new segment from cudaMalloc: 2 MiB for the small pool,
 *            20 MiB for large requests under 10 MiB, else the request
 *            rounded up to 2 MiB.
 *   vmm      the stream's expandable segment for that pool (one reserved
 *            virtual range) maps more chunks at its end (trainer_vmm.c),
 *            as PyTorch's expandable_segments:True does.
 *
 * Reuse is stream-ordered: a block belongs to the stream it was allocated
 * on and is handed out again only on that stream, where the new user's
 * work is queued after the old user's.  A block another stream also used
 * (pool_record_stream, PyTorch's record_stream) is not reusable when it
 * is freed: an event is recorded on each such stream and the block goes
 * back to the pool once they have all completed.
 */
#include "trainer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BLOCK       512u
#define SMALL_SIZE      (1u << 20)  /* largest request of the small pool */
#define SMALL_BUFFER    (2u << 20)  /* small-pool segment */
#define MIN_LARGE_ALLOC (10u << 20) /* below this a large request gets LARGE_BUFFER */
#define LARGE_BUFFER    (20u << 20)
#define ROUND_LARGE     (2u << 20)
#define MAX_USES        4 /* other streams that may use one block */
#define LIVE_BUCKETS    1024

struct segment;

struct block {
	uintptr_t ptr;
	size_t size;
	struct segment *seg;
	struct block *prev, *next;           /* address neighbours in the segment */
	struct block *free_prev, *free_next; /* in the pool's free list */
	struct block *live_next;             /* in the hash of allocated blocks */
	int allocated;                       /* handed out, or freed with events pending */
	int pending;                         /* events still to complete */
	cudaStream_t uses[MAX_USES];         /* other streams that used it */
	int nuses;
};

struct segment {
	cudaStream_t stream;
	int small;
	uintptr_t base;
	size_t size;          /* bytes of device memory it holds */
	struct vmm_range vmm; /* vmm: the reserved range (size == vmm.mapped) */
	struct block *first, *last;
	size_t used; /* caching: bytes from base any tensor ever took */
	struct segment *next;
};

struct pending_free {
	cudaEvent_t event;
	struct block *block;
	struct pending_free *next;
};

static struct {
	pthread_mutex_t lock;
	enum alloc_mode mode;
	struct segment *segments;
	struct block *free_list[2]; /* [small] */
	int fill_tails;             /* --pool-tail */
	struct block *live[LIVE_BUCKETS];
	struct pending_free *pending, *spare_events;
	struct pool_stats stats;
	size_t allocated_bytes;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static size_t round_size(size_t bytes)
{
	return bytes < MIN_BLOCK ? MIN_BLOCK : round_up(bytes, MIN_BLOCK);
}

static size_t segment_size(size_t rsize)
{
	if (rsize <= SMALL_SIZE)
		return SMALL_BUFFER;
	return rsize < MIN_LARGE_ALLOC ? LARGE_BUFFER : round_up(rsize, ROUND_LARGE);
}

/* Zeroed host memory; running out ends the program (trainer_data.c). */
static void *zalloc(size_t bytes)
{
	return memset(host_alloc(bytes, 0), 0, bytes);
}

static struct block *block_new(uintptr_t ptr, size_t size, struct segment *seg)
{
	struct block *b = zalloc(sizeof *b);
	b->ptr = ptr;
	b->size = size;
	b->seg = seg;
	return b;
}

/* ---- free lists and the hash of allocated blocks ------------------------ */

static void free_insert(struct block *b)
{
	struct block **head = &pool.free_list[b->seg->small];
	b->free_prev = NULL;
	b->free_next = *head;
	if (*head)
		(*head)->free_prev = b;
	*head = b;
}

static void free_remove(struct block *b)
{
	if (b->free_prev)
		b->free_prev->free_next = b->free_next;
	else
		pool.free_list[b->seg->small] = b->free_next;
	if (b->free_next)
		b->free_next->free_prev = b->free_prev;
	b->free_prev = b->free_next = NULL;
}

static struct block **live_slot(uintptr_t ptr)
{
	return &pool.live[(ptr / MIN_BLOCK) % LIVE_BUCKETS];
}

static void live_insert(struct block *b)
{
	struct block **slot = live_slot(b->ptr);
	b->live_next = *slot;
	*slot = b;
}

static struct block *live_remove(uintptr_t ptr)
{
	for (struct block **p = live_slot(ptr); *p; p = &(*p)->live_next)
		if ((*p)->ptr == ptr) {
			struct block *b = *p;
			*p = b->live_next;
			return b;
		}
	return NULL;
}

static struct block *live_find(uintptr_t ptr)
{
	for (struct block *b = *live_slot(ptr); b; b = b->live_next)
		if (b->ptr == ptr)
			return b;
	return NULL;
}

/* ---- blocks --------------------------------------------------------------- */

static int is_free(const struct block *b)
{
	return b && !b->allocated;
}

/* b absorbs its next neighbour, which is in no free list. */
static void absorb_next(struct block *b)
{
	struct block *n = b->next;
	b->size += n->size;
	b->next = n->next;
	if (n->next)
		n->next->prev = b;
	else
		b->seg->last = b;
	free(n);
	pool.stats.merges++;
}

/* Returns b to its pool, merged with free neighbours, so no two free
 * blocks are ever side by side. */
static void block_release(struct block *b)
{
	b->allocated = 0;
	b->nuses = 0;
	if (is_free(b->prev)) {
		b = b->prev;
		free_remove(b);
		absorb_next(b);
	}
	if (is_free(b->next)) {
		free_remove(b->next);
		absorb_next(b);
	}
	free_insert(b);
}

/* Best fit of the pool and stream: smallest, then lowest address. */
static struct block *best_fit(int small, cudaStream_t stream, size_t rsize)
{
	struct block *best = NULL;
	for (struct block *b = pool.free_list[small]; b; b = b->free_next)
		if (b->seg->stream == stream && b->size >= rsize &&
		    (best == NULL || b->size < best->size ||
		     (b->size == best->size && b->ptr < best->ptr)))
			best = b;
	return best;
}

/* PyTorch's should_split: the small pool (and expandable segments) keep
 * any remainder of at least 512 bytes, the large pool only one over 1 MiB,
 * so large segments are not shredded into unusable slivers. */
static int worth_splitting(const struct block *b, size_t rsize)
{
	size_t rest = b->size - rsize;
	if (b->seg->small || pool.mode == ALLOC_VMM)
		return rest >= MIN_BLOCK;
	return rest > SMALL_SIZE;
}

static void split(struct block *b, size_t rsize)
{
	struct block *rest = block_new(b->ptr + rsize, b->size - rsize, b->seg);
	rest->prev = b;
	rest->next = b->next;
	if (b->next)
		b->next->prev = rest;
	else
		b->seg->last = rest;
	b->next = rest;
	b->size = rsize;
	free_insert(rest);
	pool.stats.splits++;
}

/* ---- cross-stream frees ---------------------------------------------------- */

static cudaEvent_t event_get(void)
{
	struct pending_free *spare = pool.spare_events;
	if (spare) {
		pool.spare_events = spare->next;
		cudaEvent_t e = spare->event;
		free(spare);
		return e;
	}
	cudaEvent_t e;
	RT(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	return e;
}

static void event_done(struct pending_free *pf)
{
	pf->next = pool.spare_events;
	pool.spare_events = pf;
	if (--pf->block->pending == 0)
		block_release(pf->block);
}

/* Releases the blocks whose events have all completed; with wait, waits
 * for every one (before growing would fail). */
static void process_events(int wait)
{
	struct pending_free **p = &pool.pending;
	while (*p) {
		struct pending_free *pf = *p;
		cudaError_t e = wait ? cudaEventSynchronize(pf->event) : cudaEventQuery(pf->event);
		if (e == cudaErrorNotReady) {
			p = &pf->next;
			continue;
		}
		rt_check(e, wait ? "cudaEventSynchronize" : "cudaEventQuery");
		*p = pf->next;
		event_done(pf);
	}
}

/* ---- growing ---------------------------------------------------------------- */

static struct segment *segment_new(cudaStream_t stream, int small)
{
	struct segment *seg = zalloc(sizeof *seg);
	seg->stream = stream;
	seg->small = small;
	seg->next = pool.segments;
	pool.segments = seg;
	pool.stats.segments++;
	return seg;
}

/* Gives cached segments that hold no block back to the device, as PyTorch
 * does before it reports out of memory (release_cached_blocks). */
static void release_empty_segments(void)
{
	for (struct segment **p = &pool.segments; *p;) {
		struct segment *seg = *p;
		if (seg->first != seg->last || seg->first->allocated) {
			p = &seg->next;
			continue;
		}
		RT(cudaFree((void *)seg->base));
		pool.stats.reserved_bytes -= seg->size;
		pool.stats.segments_released++;
		free_remove(seg->first);
		free(seg->first);
		*p = seg->next;
		free(seg);
	}
}

static int grow_caching(cudaStream_t stream, int small, size_t rsize, const char **oom)
{
	size_t size = segment_size(rsize);
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, size);
	if (e == cudaErrorMemoryAllocation) {
		(void)cudaGetLastError(); /* not sticky: clear it for later calls */
		*oom = cudaGetErrorName(e);
		return 0;
	}
	rt_check(e, "cudaMalloc");
	if (pool.fill_tails) { /* what the program leaves there (its own content) */
		RT(cudaMemset(p, 0xa5, size));
		RT(cudaDeviceSynchronize());
	}
	pool.stats.device_allocs++;
	struct segment *seg = segment_new(stream, small);
	seg->base = (uintptr_t)p;
	seg->size = size;
	seg->first = seg->last = block_new(seg->base, size, seg);
	free_insert(seg->first);
	pool.stats.reserved_bytes += size;
	return 1;
}

static struct segment *expandable(cudaStream_t stream, int small)
{
	for (struct segment *seg = pool.segments; seg; seg = seg->next)
		if (seg->stream == stream && seg->small == small)
			return seg;
	struct segment *seg = segment_new(stream, small);
	vmm_reserve(&seg->vmm, small);
	seg->base = (uintptr_t)seg->vmm.base;
	return seg;
}

static int grow_vmm(cudaStream_t stream, int small, size_t rsize, const char **oom)
{
	struct segment *seg = expandable(stream, small);
	/* A free block at the end grows in place: only the difference is new. */
	size_t have = is_free(seg->last) ? seg->last->size : 0;
	size_t chunks = seg->vmm.nchunks;
	size_t added = vmm_grow(&seg->vmm, rsize - have, oom);
	if (added == 0)
		return 0;
	pool.stats.chunks += seg->vmm.nchunks - chunks;
	pool.stats.device_allocs += seg->vmm.nchunks - chunks;
	pool.stats.reserved_bytes += added;
	struct block *b = block_new(seg->base + seg->size, added, seg);
	seg->size += added;
	b->prev = seg->last;
	if (seg->last)
		seg->last->next = b;
	else
		seg->first = b;
	seg->last = b;
	block_release(b);
	return 1;
}

/* ---- the interface ---------------------------------------------------------- */

/* Also after pool_release, for another mode (the unit tests). */
void pool_init(enum alloc_mode mode)
{
	pool.mode = mode;
	memset(&pool.stats, 0, sizeof pool.stats);
}

static int grow(cudaStream_t stream, int small, size_t rsize, const char **oom)
{
	return pool.mode == ALLOC_VMM ? grow_vmm(stream, small, rsize, oom)
	                              : grow_caching(stream, small, rsize, oom);
}

void *pool_alloc(size_t bytes, cudaStream_t stream, const char **oom)
{
	size_t rsize = round_size(bytes);
	int small = rsize <= SMALL_SIZE;
	pthread_mutex_lock(&pool.lock);
	process_events(0);
	struct block *b = best_fit(small, stream, rsize);
	if (b)
		pool.stats.reused++;
	else if (!grow(stream, small, rsize, oom)) {
		/* Out of device memory: as PyTorch, wait for the blocks other
		 * streams still use, give back empty cached segments, try again. */
		process_events(1);
		if (pool.mode == ALLOC_CACHING)
			release_empty_segments();
		b = best_fit(small, stream, rsize);
		if (b == NULL && !grow(stream, small, rsize, oom)) {
			pthread_mutex_unlock(&pool.lock);
			return NULL;
		}
	}
	if (b == NULL)
		b = best_fit(small, stream, rsize);
	free_remove(b);
	if (worth_splitting(b, rsize))
		split(b, rsize);
	b->allocated = 1;
	if (b->ptr + b->size - b->seg->base > b->seg->used)
		b->seg->used = b->ptr + b->size - b->seg->base;
	live_insert(b);
	pool.stats.tensors++;
	pool.allocated_bytes += b->size;
	if (pool.allocated_bytes > pool.stats.peak_allocated)
		pool.stats.peak_allocated = pool.allocated_bytes;
	pthread_mutex_unlock(&pool.lock);
	return (void *)b->ptr;
}

void pool_fill_tails(void)
{
	pool.fill_tails = 1;
}

unsigned long long pool_tail_digest(void)
{
	unsigned long long h = 0xcbf29ce484222325ull;
	RT(cudaDeviceSynchronize());
	for (struct segment *seg = pool.segments; seg; seg = seg->next) {
		size_t n = seg->size - seg->used;
		if (pool.mode != ALLOC_CACHING || !n)
			continue;
		unsigned char *bytes = zalloc(n);
		RT(cudaMemcpy(bytes, (void *)(seg->base + seg->used), n, cudaMemcpyDeviceToHost));
		for (size_t i = 0; i < n; i++)
			h = (h ^ bytes[i]) * 0x100000001b3ull;
		free(bytes);
	}
	return h;
}

static _Noreturn void misuse(const char *what, const void *p)
{
	fprintf(stderr, "%s: %s %p\n", trainer_prog, what, p);
	exit(2);
}

void pool_record_stream(void *p, cudaStream_t stream)
{
	pthread_mutex_lock(&pool.lock);
	struct block *b = live_find((uintptr_t)p);
	if (b == NULL)
		misuse("record_stream of a pointer the pool did not hand out:", p);
	int known = stream == b->seg->stream;
	for (int i = 0; i < b->nuses; i++)
		known |= b->uses[i] == stream;
	if (!known) {
		if (b->nuses == MAX_USES)
			misuse("too many streams use", p);
		b->uses[b->nuses++] = stream;
	}
	pthread_mutex_unlock(&pool.lock);
}

void pool_free(void *p, cudaStream_t stream)
{
	pthread_mutex_lock(&pool.lock);
	struct block *b = live_remove((uintptr_t)p);
	if (b == NULL)
		misuse("free of a pointer the pool did not hand out:", p);
	/* A free on another stream than the allocation's is a use the pool
	 * cannot see; the program must record_stream and free on the owner. */
	if (stream != b->seg->stream)
		misuse("free on another stream than the allocation's:", p);
	pool.allocated_bytes -= b->size;
	if (b->nuses == 0)
		block_release(b);
	else {
		for (int i = 0; i < b->nuses; i++) {
			struct pending_free *pf = zalloc(sizeof *pf);
			pf->event = event_get();
			RT(cudaEventRecord(pf->event, b->uses[i]));
			pf->block = b;
			pf->next = pool.pending;
			pool.pending = pf;
			b->pending++;
		}
		b->nuses = 0;
		pool.stats.deferred_frees++;
	}
	pthread_mutex_unlock(&pool.lock);
}

void pool_stats(struct pool_stats *out)
{
	pthread_mutex_lock(&pool.lock);
	*out = pool.stats;
	pthread_mutex_unlock(&pool.lock);
}

void pool_release(void)
{
	pthread_mutex_lock(&pool.lock);
	RT(cudaDeviceSynchronize());
	process_events(1);
	while (pool.spare_events) {
		struct pending_free *pf = pool.spare_events;
		pool.spare_events = pf->next;
		RT(cudaEventDestroy(pf->event));
		free(pf);
	}
	memset(pool.live, 0, sizeof pool.live);
	pool.free_list[0] = pool.free_list[1] = NULL;
	while (pool.segments) {
		struct segment *seg = pool.segments;
		pool.segments = seg->next;
		if (pool.mode == ALLOC_VMM)
			vmm_release(&seg->vmm);
		else
			RT(cudaFree((void *)seg->base));
		for (struct block *b = seg->first, *n; b; b = n) {
			n = b->next;
			free(b);
		}
		free(seg);
	}
	pool.stats.reserved_bytes = 0;
	pool.allocated_bytes = 0;
	pthread_mutex_unlock(&pool.lock);
}
