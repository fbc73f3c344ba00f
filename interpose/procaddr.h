/*
 * procaddr.h — the driver entry points libremat controls, as interpose/'s
 * files declare them.  Each one has two doors: the exported symbol
 * (programs linked against libcuda, and dlsym on the driver's handle) and
 * a twin handed out by cuGetProcAddress (cudart, cuBLAS and anything else
 * that asks for driver pointers).  Both call the same implementation; the
 * twin lets the trace say which door was used.
 *
 * REMAT_HOOK puts each hook's description in the section "remat_hooks":
 * the linker makes that section the table procaddr.c searches, so a hook
 * defined is a hook handed out, with no second list to forget it in.
 */
#ifndef REMAT_PROCADDR_H
#define REMAT_PROCADDR_H

#include "../core/driver.h"
#include "../core/op.h"
#include "../session/session.h"

#define REMAT_EXPORT __attribute__((visibility("default")))
#define likely(x)    __builtin_expect(!!(x), 1)
#define unlikely(x)  __builtin_expect(!!(x), 0)
/* The pass-through path of every entry point: inlined, so a call costs a
 * load and a branch or two before the tail call to the real function. */
#define REMAT_INLINE static inline __attribute__((always_inline))

struct remat_hook {
	const char *name;   /* exported driver symbol, e.g. "cuMemcpyHtoD_v2_ptds" */
	const char *base;   /* what cuGetProcAddress is asked for, e.g. "cuMemcpyHtoD" */
	int per_thread;     /* the _ptds/_ptsz variant */
	int min_version;    /* cudaVersion from which cuGetProcAddress returns it */
	void *exp_fn;       /* our exported function of that name */
	void *pa_fn;        /* our twin returned by cuGetProcAddress */
	void *exp_real;     /* the real function behind exp_fn (lazy) */
	void *pa_real;      /* what the real cuGetProcAddress returned */
	const char *pa_via; /* "cuGetProcAddress:<name>" */
};

#define REMAT_HOOK(id, base, per_thread, min_version, exp_fn, pa_fn)                               \
	__attribute__((used, section("remat_hooks"),                                               \
	               aligned(8))) struct remat_hook remat_hook_##id = {                          \
	    #id,         base,           per_thread,                                               \
	    min_version, (void *)exp_fn, (void *)pa_fn,                                            \
	    NULL,        NULL,           "cuGetProcAddress:" #id}

/* Both doors of hook id (base and min_version as REMAT_HOOK's), each
 * returning CALL_EXP or CALL_PA with `real` the real function behind it. */
#define REMAT_DOORS(id, base, pt, minver, PARAMS, CALL_EXP, CALL_PA)                               \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id PARAMS;                                                           \
	CUresult id PARAMS                                                                         \
	{                                                                                          \
		void *real = remat_hook_exp_real(&remat_hook_##id);                                \
		return CALL_EXP;                                                                   \
	}                                                                                          \
	static CUresult pa_##id PARAMS                                                             \
	{                                                                                          \
		void *real = remat_hook_pa_real(&remat_hook_##id);                                 \
		return CALL_PA;                                                                    \
	}                                                                                          \
	REMAT_HOOK(id, base, pt, minver, id, pa_##id)

/* The real function behind an exported entry point. */
static inline void *remat_hook_exp_real(struct remat_hook *h)
{
	void *r = __atomic_load_n(&h->exp_real, __ATOMIC_ACQUIRE);
	if (unlikely(!r)) {
		r = remat_real_driver_symbol(h->name);
		__atomic_store_n(&h->exp_real, r, __ATOMIC_RELEASE);
	}
	return r;
}

static inline void *remat_hook_pa_real(struct remat_hook *h)
{
	return __atomic_load_n(&h->pa_real, __ATOMIC_ACQUIRE);
}

/* For the dlsym hook: our function for an exported name, or NULL. */
void *remat_procaddr_exported(const char *name);

/* Stream 0 through a per-thread entry point is the per-thread stream. */
static inline CUstream remat_stream(CUstream s, int per_thread)
{
	return (per_thread && s == NULL) ? CU_STREAM_PER_THREAD : s;
}

#endif
