/*
 * vmm.c — the program's own virtual memory calls (interpose/vmm.c).
 * alloc/program.c keeps their books; here the profiler and replay hear
 * what changed.  The extents the program maps are long-lived allocations
 * to the profiler.  A change to them is a change of the program's memory
 * layout: a profile under way is dropped (its regions would be cut
 * wrong), and in run mode whatever is evicted is rebuilt before the
 * change and the next op profiles again.
 */
#include "../alloc/alloc.h"
#include "../core/capture.h"
#include "../profiler/profiler.h"
#include "internal.h"

int session_vmm_live(void)
{
	/* A forked child cannot use the parent's device memory anyway: its
	 * calls go to the driver, which refuses them. */
	return !session.forked && __atomic_load_n(&remat_prog_live, __ATOMIC_ACQUIRE);
}

/* Before a call that changes the extents (session lock held). */
static void reshape(void)
{
	switch (session.state) {
	case SESSION_PROFILE:
		prof_reshaped();
		session_profile_dropped();
		break;
	case SESSION_PLAN:
	case SESSION_RUN:
		replay_reshape();
		break;
	default:
		break;
	}
}

/* After it: the extents that went and came (session lock held). */
static void report(void)
{
	struct remat_prog_change c[16];
	size_t n;
	int stack = session.state == SESSION_DETECT || session.state == SESSION_PROFILE;
	while ((n = remat_prog_changes(c, sizeof(c) / sizeof(c[0]))))
		for (size_t i = 0; i < n && session_following(); i++) {
			if (c[i].added)
				prof_alloc(c[i].addr, c[i].size, c[i].size, 0, stack);
			else
				prof_free(c[i].addr);
		}
}

/* A call that may change the extents: with the lock, told before and
 * after.  FAILED refuses what needs a healthy device, as a sticky error
 * does. */
#define RESHAPING(touches, call)                                                                   \
	do {                                                                                       \
		pthread_mutex_lock(&session.lock);                                                 \
		if (session.state == SESSION_FAILED) {                                             \
			pthread_mutex_unlock(&session.lock);                                       \
			return session.failure;                                                    \
		}                                                                                  \
		if (touches)                                                                       \
			reshape();                                                                 \
		CUresult r_ = call;                                                                \
		report();                                                                          \
		pthread_mutex_unlock(&session.lock);                                               \
		return r_;                                                                         \
	} while (0)

CUresult session_vmm_reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags)
{
	if (!remat_session_active || session_ready())
		return CUDA_ERROR_NOT_SUPPORTED;
	return remat_prog_reserve(p, size, align, addr, flags);
}

CUresult session_vmm_address_free(CUdeviceptr p, size_t size)
{
	return remat_prog_address_free(p, size);
}

CUresult session_vmm_create(CUmemGenericAllocationHandle *h, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
	/* Getting chunks may wait for frees, which a capture can forbid: the
	 * handle is then the driver's. */
	if (!remat_session_active || session_ready() ||
	    (__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE) && remat_capture_strict()))
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&session.lock);
	CUresult r = session.state == SESSION_FAILED ? session.failure
	                                             : remat_prog_create(h, size, prop, flags);
	pthread_mutex_unlock(&session.lock);
	return r;
}

CUresult session_vmm_release(CUmemGenericAllocationHandle h)
{
	return remat_prog_release(h);
}

CUresult session_vmm_props(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h)
{
	return remat_prog_props(prop, h);
}

CUresult session_vmm_retain(CUmemGenericAllocationHandle *h, void *addr)
{
	return remat_prog_retain(h, addr);
}

CUresult session_vmm_map(CUdeviceptr va, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                         unsigned long long flags)
{
	RESHAPING(remat_prog_mapped_handle(h), remat_prog_map(va, size, offset, h, flags));
}

CUresult session_vmm_unmap(CUdeviceptr va, size_t size)
{
	RESHAPING(remat_prog_touches(va, size), remat_prog_unmap(va, size));
}

CUresult session_vmm_set_access(CUdeviceptr va, size_t size, const CUmemAccessDesc *desc,
                                size_t count)
{
	RESHAPING(remat_prog_touches(va, size), remat_prog_set_access(va, size, desc, count));
}
