/*
 * hooks.h — interpose/'s one header: the hook machinery behind every
 * driver entry point libremat controls.  Each one has two doors: the
 * exported symbol (programs linked against libcuda, and dlsym on the
 * driver's handle) and a twin handed out by cuGetProcAddress (cudart,
 * cuBLAS and anything else that asks for driver pointers).  Both call the
 * same implementation with the door they came through; the twin lets the
 * trace say which door was used.  REMAT_DOORS also puts the hook's
 * description in the section "remat_hooks": the linker makes that section
 * the table procaddr.c searches, so a hook defined is a hook handed out.
 */
#ifndef REMAT_INTERPOSE_HOOKS_H
#define REMAT_INTERPOSE_HOOKS_H

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

/* Hook id's two doors: the exported function id and its twin, both of type
 * CUresult PARAMS (the parameter list in parentheses), each returning
 * IMPL(hook, door, ...) with door 0 for the exported symbol and 1 for the
 * twin; base and min_version as in struct remat_hook, pt its per_thread. */
#define REMAT_DOORS(id, base, pt, min_version, PARAMS, IMPL, ...)                                  \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id PARAMS;                                                           \
	CUresult id PARAMS                                                                         \
	{                                                                                          \
		return IMPL(&remat_hook_##id, 0, __VA_ARGS__);                                     \
	}                                                                                          \
	static CUresult pa_##id PARAMS                                                             \
	{                                                                                          \
		return IMPL(&remat_hook_##id, 1, __VA_ARGS__);                                     \
	}                                                                                          \
	__attribute__((used, section("remat_hooks"),                                               \
	               aligned(8))) struct remat_hook remat_hook_##id = {                          \
	    #id,         base,       pt,                                                           \
	    min_version, (void *)id, (void *)pa_##id,                                              \
	    NULL,        NULL,       "cuGetProcAddress:" #id}

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

/* The real function behind a door (NULL when there is none). */
REMAT_INLINE void *remat_door_real(struct remat_hook *h, int door)
{
	return door ? __atomic_load_n(&h->pa_real, __ATOMIC_ACQUIRE) : remat_hook_exp_real(h);
}

/* The name the trace gives the door an op came through. */
REMAT_INLINE const char *remat_door_via(struct remat_hook *h, int door)
{
	return door ? h->pa_via : h->name;
}

/* Stream 0 through a per-thread entry point is the per-thread stream. */
static inline CUstream remat_stream(CUstream s, int per_thread)
{
	return (per_thread && s == NULL) ? CU_STREAM_PER_THREAD : s;
}

/* The body of every entry point that issues an op (a launch, copy or set):
 * CALL, the real call expression, passes through while no session
 * watches; else the op (the struct remat_op initialisers after CALL) goes
 * to the session before and after it. */
#define REMAT_OP_BODY(real, CALL, ...)                                                             \
	do {                                                                                       \
		if (unlikely(!(real)))                                                             \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		if (likely(!remat_session_watch))                                                  \
			return CALL;                                                               \
		struct remat_op op_ = {__VA_ARGS__};                                               \
		CUresult r_ = session_op_begin(&op_);                                              \
		if (r_ != CUDA_SUCCESS)                                                            \
			return r_;                                                                 \
		r_ = CALL;                                                                         \
		session_op_end(&op_, r_);                                                          \
		return r_;                                                                         \
	} while (0)

/* For the dlsym hook: our function for an exported name, or NULL. */
void *remat_hooks_exported(const char *name);

#endif
