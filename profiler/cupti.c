/*
 * cupti.c — durations and correlation ids from CUPTI, reached at run time
 * (dlopen "libcupti.so.13", then "libcupti.so"); only subscribed around the
 * profiled iteration.
 *
 * A kernel record carries the correlation id of the OUTERMOST API call that
 * launched it: the runtime call when it came through cudart, else the
 * driver call.  Our launch wrapper sits inside the driver call, so the API
 * callbacks leave both ids in thread-locals for it to pick up.  A driver
 * call made inside a runtime call reports the runtime call's id (CUPTI 13
 * on an H100): libremat's own calls there share the application's id.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cupti.h>

#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

__thread struct prof_cupti_tls prof_cupti_tls __attribute__((tls_model("initial-exec")));

/* CUPTI, reached at run time, and what it delivered. */
static struct prof_cupti {
	struct {
		CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
		CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
		CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle,
		                             CUpti_CallbackDomain);
		CUptiResult (*register_cb)(CUpti_BuffersCallbackRequestFunc,
		                           CUpti_BuffersCallbackCompleteFunc);
		CUptiResult (*enable)(CUpti_ActivityKind);
		CUptiResult (*disable)(CUpti_ActivityKind);
		CUptiResult (*flush)(uint32_t);
		CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
		CUptiResult (*finalize)(void);                         /* optional */
		CUptiResult (*dropped)(CUcontext, uint32_t, size_t *); /* optional */
	} api;
	CUpti_SubscriberHandle sub;
	int running;
	uint32_t gen;             /* subscriptions so far (prof_cupti_tls.gen) */
	pthread_mutex_t rec_lock; /* the records and internal ids (CUPTI's threads) */
	struct prof_activity *recs;
	size_t nrecs, caprecs;
	/* Every record delivered, by kind, for the debug log: a record CUPTI
	 * never delivered and one we could not match look alike in the
	 * cross-check. */
	uint64_t delivered[4];
	/* correlation ids + 1 of libremat's own calls (prof_own_work) */
	struct remat_map internal;
	/* interned strings (runtime API names as "via") */
	char **interned;
	size_t ninterned, capinterned;
	char note[96]; /* why CUPTI could not start, when not a constant */
} cu = {.rec_lock = PTHREAD_MUTEX_INITIALIZER, .internal = REMAT_MAP_INIT(uint64_t)};

/* ---- interned strings (runtime API names as "via") ---------------------- */

const char *prof_intern(const char *s)
{
	char buf[128];
	size_t len = strlen(s);
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	/* cudaLaunchKernel_v7000 -> cudaLaunchKernel */
	char *v = strrchr(buf, '_');
	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' &&
	    strspn(v + 2, "0123456789") == strlen(v + 2))
		*v = '\0';
	for (size_t i = 0; i < cu.ninterned; i++)
		if (!strcmp(cu.interned[i], buf))
			return cu.interned[i];
	if (REMAT_GROW(cu.interned, cu.ninterned, cu.capinterned))
		return "?";
	char *c = strdup(buf);
	if (!c)
		return "?";
	cu.interned[cu.ninterned++] = c;
	return c;
}

/* ---- API callbacks ----------------------------------------------------- */

static int is_op_call(const char *f)
{
	return f && (!strncmp(f, "cuLaunch", 8) || !strncmp(f, "cuMemcpy", 8) ||
	             !strncmp(f, "cuMemset", 8) || !strncmp(f, "cuGraphLaunch", 13));
}

static void note_internal(uint32_t id)
{
	pthread_mutex_lock(&cu.rec_lock);
	remat_map_insert(&cu.internal, (uint64_t)id + 1); /* lost: its record counts as the op's */
	pthread_mutex_unlock(&cu.rec_lock);
}

/* Forgets what a thread's calls showed under an earlier subscription:
 * one that ended inside a runtime call never saw its exit, and its depth
 * would stay above 0 for good, every later op taking that call's id (the
 * kernels' records then match no op: darknet, profiled again after a
 * divergence, had 1952 launches "around the interposition"). */
static void fresh(struct prof_cupti_tls *t)
{
	uint32_t g = __atomic_load_n(&cu.gen, __ATOMIC_ACQUIRE);
	if (t->gen == g)
		return;
	t->gen = g;
	t->rt_depth = 0;
	t->runtime_corr = 0;
	t->runtime_name = NULL;
}

uint32_t prof_cupti_runtime_corr(void)
{
	struct prof_cupti_tls *t = &prof_cupti_tls;
	return t->gen == __atomic_load_n(&cu.gen, __ATOMIC_ACQUIRE) ? t->runtime_corr : 0;
}

static void CUPTIAPI on_api(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                            const void *data)
{
	(void)ud;
	(void)cbid;
	const CUpti_CallbackData *d = data;
	struct prof_cupti_tls *t = &prof_cupti_tls;
	fresh(t);
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (d->callbackSite == CUPTI_API_ENTER && is_op_call(d->functionName)) {
			t->driver_corr = d->correlationId;
			/* Inside the application's runtime call a driver call has
			 * that call's id (seen on an H100): it is the application's
			 * as much as ours, and its kernel's record must count. */
			if (t->internal &&
			    !(t->rt_depth > 0 && d->correlationId == t->runtime_corr))
				note_internal(d->correlationId);
		}
	} else if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (d->callbackSite == CUPTI_API_ENTER) {
			if (t->rt_depth++ == 0) {
				t->runtime_corr = d->correlationId;
				t->runtime_name = d->functionName;
			}
		} else if (t->rt_depth > 0 && --t->rt_depth == 0) {
			t->runtime_corr = 0;
			t->runtime_name = NULL;
		}
	}
}

/* ---- activity buffers -------------------------------------------------- */

#define BUF_SIZE (1 << 20)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUF_SIZE);
	*size = *buffer ? BUF_SIZE : 0;
	*max_records = 0;
}

static void keep(uint32_t corr, int kind, uint64_t start, uint64_t end)
{
	if (REMAT_GROW(cu.recs, cu.nrecs, cu.caprecs))
		return;
	cu.recs[cu.nrecs++] = (struct prof_activity){corr, kind, start, (int64_t)(end - start)};
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&cu.rec_lock);
	while (buffer && cu.api.next(buffer, valid, &r) == CUPTI_SUCCESS) {
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
			const CUpti_ActivityKernel10 *k = (const void *)r;
			cu.delivered[0]++;
			keep(k->correlationId, 0, k->start, k->end);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			const CUpti_ActivityMemcpy6 *m = (const void *)r;
			cu.delivered[1]++;
			keep(m->correlationId, 1, m->start, m->end);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMSET: {
			const CUpti_ActivityMemset4 *m = (const void *)r;
			cu.delivered[2]++;
			keep(m->correlationId, 2, m->start, m->end);
			break;
		}
		default:
			cu.delivered[3]++;
			break;
		}
	}
	pthread_mutex_unlock(&cu.rec_lock);
	free(buffer);
}

static void *open_cupti(void)
{
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	return h ? h : dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
}

int prof_cupti_start(const char **note)
{
	void *h = open_cupti();
	if (!h) {
		*note = "CUPTI not found (libcupti.so.13, libcupti.so)";
		return -1;
	}
#define GET(f, name)                                                                               \
	if (!(*(void **)&cu.api.f = remat_real_dlsym(h, name))) {                                  \
		*note = "CUPTI lacks " name;                                                       \
		return -1;                                                                         \
	}
	GET(subscribe, "cuptiSubscribe");
	GET(unsubscribe, "cuptiUnsubscribe");
	GET(enable_domain, "cuptiEnableDomain");
	GET(register_cb, "cuptiActivityRegisterCallbacks");
	GET(enable, "cuptiActivityEnable");
	GET(disable, "cuptiActivityDisable");
	GET(flush, "cuptiActivityFlushAll");
	GET(next, "cuptiActivityGetNextRecord");
#undef GET
	*(void **)&cu.api.finalize = remat_real_dlsym(h, "cuptiFinalize");
	*(void **)&cu.api.dropped = remat_real_dlsym(h, "cuptiActivityGetNumDroppedRecords");
	memset(cu.delivered, 0, sizeof(cu.delivered));
	__atomic_add_fetch(&cu.gen, 1, __ATOMIC_RELEASE);
	CUptiResult r = cu.api.subscribe(&cu.sub, on_api, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		*note = "CUPTI already has a subscriber (another profiler?)";
		return -1;
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(cu.note, sizeof(cu.note), "cuptiSubscribe failed (CUptiResult %d)",
		         (int)r);
		*note = cu.note;
		return -1;
	}
	if (cu.api.enable_domain(1, cu.sub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS ||
	    cu.api.enable_domain(1, cu.sub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
	    cu.api.register_cb(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    cu.api.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		cu.api.unsubscribe(cu.sub);
		*note = "CUPTI refused the callbacks or kernel activity";
		return -1;
	}
	/* Copies and sets are nice to have; their absence is not fatal. */
	cu.api.enable(CUPTI_ACTIVITY_KIND_MEMCPY);
	cu.api.enable(CUPTI_ACTIVITY_KIND_MEMSET);
	cu.running = 1;
	*note = "";
	return 0;
}

size_t prof_cupti_collect(struct prof_activity **out)
{
	*out = NULL;
	if (!cu.running)
		return 0;
	cu.api.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	size_t lost = 0;
	if (cu.api.dropped && cu.api.dropped(NULL, 0, &lost) != CUPTI_SUCCESS)
		lost = 0;
	remat_log(REMAT_LOG_DEBUG,
	          "CUPTI delivered %llu kernel, %llu copy, %llu set and %llu other records; "
	          "%zu dropped",
	          (unsigned long long)cu.delivered[0], (unsigned long long)cu.delivered[1],
	          (unsigned long long)cu.delivered[2], (unsigned long long)cu.delivered[3], lost);
	cu.api.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cu.api.disable(CUPTI_ACTIVITY_KIND_MEMCPY);
	cu.api.disable(CUPTI_ACTIVITY_KIND_MEMSET);
	cu.api.enable_domain(0, cu.sub, CUPTI_CB_DOMAIN_DRIVER_API);
	cu.api.enable_domain(0, cu.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	cu.api.unsubscribe(cu.sub);
	/* Detach: CUPTI left attached keeps a cost on every API call for the
	 * rest of the run. */
	if (cu.api.finalize)
		cu.api.finalize();
	cu.running = 0;
	pthread_mutex_lock(&cu.rec_lock);
	*out = cu.recs;
	size_t n = cu.nrecs;
	cu.recs = NULL;
	cu.nrecs = cu.caprecs = 0;
	pthread_mutex_unlock(&cu.rec_lock);
	return n;
}

int prof_cupti_is_internal(uint32_t corr)
{
	return remat_map_find(&cu.internal, (uint64_t)corr + 1) != NULL;
}

void prof_own_work(int on)
{
	prof_cupti_tls.internal = on;
}

void prof_swap_copies(uint32_t n)
{
	prof_cupti_tls.swap_copies = prof_cupti_runtime_corr() ? n : 0;
}

uint32_t prof_swap_copies_take(void)
{
	uint32_t n = prof_cupti_tls.swap_copies;
	prof_cupti_tls.swap_copies = 0;
	return n;
}
