/*
 * launch.c — kernel launches: cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel (+ their _ptsz twins) and cuGraphLaunch.
 * Outside the iteration detection and the profiled iteration, a launch
 * costs one load and one branch on top of the real call.
 */
#include "procaddr.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);

/* The real function behind one of a hook's two doors (0: the exported
 * symbol, 1: the twin from cuGetProcAddress), NULL until resolved. */
REMAT_INLINE void *door_real(struct remat_hook *h, int door)
{
	return __atomic_load_n(door ? &h->pa_real : &h->exp_real, __ATOMIC_RELAXED);
}

static void *door_resolve(struct remat_hook *h, int door)
{
	return door ? remat_hook_pa_real(h) : remat_hook_exp_real(h);
}

static const char *door_via(struct remat_hook *h, int door)
{
	return door ? h->pa_via : h->name;
}

/* First call (symbol not resolved yet) or tracking: out of line, so the
 * pass-through path stays a load, two tests and a tail jump. */
static __attribute__((noinline)) CUresult launch_slow(struct remat_hook *h, int door, CUfunction f,
                                                      unsigned gx, unsigned gy, unsigned gz,
                                                      unsigned bx, unsigned by, unsigned bz,
                                                      unsigned shmem, CUstream s, void **params,
                                                      void **extra)
{
	void *real = door_resolve(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!remat_session_watch)
		return ((launch_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	struct remat_op op = {.kind = REMAT_OP_KERNEL,
	                      .via = door_via(h, door),
	                      .func = f,
	                      .grid = {gx, gy, gz},
	                      .block = {bx, by, bz},
	                      .shmem = shmem,
	                      .stream = remat_stream(s, h->per_thread),
	                      .params = params,
	                      .extra = extra};
	CUresult r = session_op_begin(&op);
	if (r != CUDA_SUCCESS)
		return r;
	r = ((launch_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	session_op_end(&op, r);
	return r;
}

REMAT_INLINE CUresult launch(struct remat_hook *h, int door, CUfunction f, unsigned gx, unsigned gy,
                             unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                             CUstream s, void **params, void **extra)
{
	void *real = door_real(h, door);
	if (likely(real != NULL && !remat_session_watch))
		return ((launch_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	return launch_slow(h, door, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

REMAT_INLINE CUresult launch_ex(void *real, const char *via, int pt, const CUlaunchConfig *c,
                                CUfunction f, void **params, void **extra)
{
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (likely(!remat_session_watch) || !c)
		return ((launch_ex_fn)real)(c, f, params, extra);
	struct remat_op op = {.kind = REMAT_OP_KERNEL,
	                      .via = via,
	                      .func = f,
	                      .grid = {c->gridDimX, c->gridDimY, c->gridDimZ},
	                      .block = {c->blockDimX, c->blockDimY, c->blockDimZ},
	                      .shmem = c->sharedMemBytes,
	                      .stream = remat_stream(c->hStream, pt),
	                      .params = params,
	                      .extra = extra,
	                      .attrs = c->attrs,
	                      .nattrs = c->numAttrs};
	CUresult r = session_op_begin(&op);
	if (r != CUDA_SUCCESS)
		return r;
	r = ((launch_ex_fn)real)(c, f, params, extra);
	session_op_end(&op, r);
	return r;
}

REMAT_INLINE CUresult coop(void *real, const char *via, int pt, CUfunction f, unsigned gx,
                           unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shmem, CUstream s, void **params)
{
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (likely(!remat_session_watch))
		return ((coop_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params);
	struct remat_op op = {.kind = REMAT_OP_KERNEL,
	                      .via = via,
	                      .func = f,
	                      .grid = {gx, gy, gz},
	                      .block = {bx, by, bz},
	                      .shmem = shmem,
	                      .stream = remat_stream(s, pt),
	                      .params = params,
	                      .cooperative = 1};
	CUresult r = session_op_begin(&op);
	if (r != CUDA_SUCCESS)
		return r;
	r = ((coop_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params);
	session_op_end(&op, r);
	return r;
}

/* A graph launch is recorded (so the op count stays right) but can never
 * be replayed: its kernels are not ours to see. */
REMAT_INLINE CUresult graph(void *real, const char *via, int pt, CUgraphExec g, CUstream s)
{
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (likely(!remat_session_watch))
		return ((graph_fn)real)(g, s);
	struct remat_op op = {
	    .kind = REMAT_OP_GRAPH, .via = via, .func = g, .stream = remat_stream(s, pt)};
	CUresult r = session_op_begin(&op);
	if (r != CUDA_SUCCESS)
		return r;
	r = ((graph_fn)real)(g, s);
	session_op_end(&op, r);
	return r;
}

#define LAUNCH_PARAMS                                                                              \
	CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,             \
	    unsigned bz, unsigned shmem, CUstream s, void **params, void **extra
#define LAUNCH_ARGS f, gx, gy, gz, bx, by, bz, shmem, s, params, extra
#define LAUNCH_HOOK(id, pt)                                                                        \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(LAUNCH_PARAMS);                                                   \
	CUresult id(LAUNCH_PARAMS)                                                                 \
	{                                                                                          \
		return launch(&remat_hook_##id, 0, LAUNCH_ARGS);                                   \
	}                                                                                          \
	static CUresult pa_##id(LAUNCH_PARAMS)                                                     \
	{                                                                                          \
		return launch(&remat_hook_##id, 1, LAUNCH_ARGS);                                   \
	}                                                                                          \
	REMAT_HOOK(id, "cuLaunchKernel", pt, 0, id, pa_##id)

LAUNCH_HOOK(cuLaunchKernel, 0);
LAUNCH_HOOK(cuLaunchKernel_ptsz, 1);

#define EX_PARAMS const CUlaunchConfig *c, CUfunction f, void **params, void **extra
#define EX_HOOK(id, pt)                                                                            \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(EX_PARAMS);                                                       \
	CUresult id(EX_PARAMS)                                                                     \
	{                                                                                          \
		return launch_ex(remat_hook_exp_real(&remat_hook_##id), #id, pt, c, f, params,     \
		                 extra);                                                           \
	}                                                                                          \
	static CUresult pa_##id(EX_PARAMS)                                                         \
	{                                                                                          \
		return launch_ex(remat_hook_pa_real(&remat_hook_##id), remat_hook_##id.pa_via, pt, \
		                 c, f, params, extra);                                             \
	}                                                                                          \
	REMAT_HOOK(id, "cuLaunchKernelEx", pt, 0, id, pa_##id)

EX_HOOK(cuLaunchKernelEx, 0);
EX_HOOK(cuLaunchKernelEx_ptsz, 1);

#define COOP_PARAMS                                                                                \
	CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,             \
	    unsigned bz, unsigned shmem, CUstream s, void **params
#define COOP_ARGS f, gx, gy, gz, bx, by, bz, shmem, s, params
#define COOP_HOOK(id, pt)                                                                          \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(COOP_PARAMS);                                                     \
	CUresult id(COOP_PARAMS)                                                                   \
	{                                                                                          \
		return coop(remat_hook_exp_real(&remat_hook_##id), #id, pt, COOP_ARGS);            \
	}                                                                                          \
	static CUresult pa_##id(COOP_PARAMS)                                                       \
	{                                                                                          \
		return coop(remat_hook_pa_real(&remat_hook_##id), remat_hook_##id.pa_via, pt,      \
		            COOP_ARGS);                                                            \
	}                                                                                          \
	REMAT_HOOK(id, "cuLaunchCooperativeKernel", pt, 0, id, pa_##id)

COOP_HOOK(cuLaunchCooperativeKernel, 0);
COOP_HOOK(cuLaunchCooperativeKernel_ptsz, 1);

#define GRAPH_HOOK(id, pt)                                                                         \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(CUgraphExec g, CUstream s);                                       \
	CUresult id(CUgraphExec g, CUstream s)                                                     \
	{                                                                                          \
		return graph(remat_hook_exp_real(&remat_hook_##id), #id, pt, g, s);                \
	}                                                                                          \
	static CUresult pa_##id(CUgraphExec g, CUstream s)                                         \
	{                                                                                          \
		return graph(remat_hook_pa_real(&remat_hook_##id), remat_hook_##id.pa_via, pt, g,  \
		             s);                                                                   \
	}                                                                                          \
	REMAT_HOOK(id, "cuGraphLaunch", pt, 0, id, pa_##id)

GRAPH_HOOK(cuGraphLaunch, 0);
GRAPH_HOOK(cuGraphLaunch_ptsz, 1);

/* Function lookups: the name is right there, keep it for the trace. */
typedef CUresult (*getfn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*getkernel_fn)(CUkernel *, CUlibrary, const char *);

static CUresult get_function(void *real, CUfunction *f, CUmodule m, const char *name)
{
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((getfn_fn)real)(f, m, name);
	if (remat_session_active && r == CUDA_SUCCESS && f)
		session_function_name(*f, name, 0);
	return r;
}

static CUresult get_kernel(void *real, CUkernel *k, CUlibrary l, const char *name)
{
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((getkernel_fn)real)(k, l, name);
	if (remat_session_active && r == CUDA_SUCCESS && k)
		session_function_name(*k, name, 1);
	return r;
}

extern struct remat_hook remat_hook_cuModuleGetFunction, remat_hook_cuLibraryGetKernel;
REMAT_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	return get_function(remat_hook_exp_real(&remat_hook_cuModuleGetFunction), f, m, name);
}
static CUresult pa_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	return get_function(remat_hook_pa_real(&remat_hook_cuModuleGetFunction), f, m, name);
}
REMAT_HOOK(cuModuleGetFunction, "cuModuleGetFunction", 0, 0, cuModuleGetFunction,
           pa_cuModuleGetFunction);

REMAT_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name);
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	return get_kernel(remat_hook_exp_real(&remat_hook_cuLibraryGetKernel), k, l, name);
}
static CUresult pa_cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	return get_kernel(remat_hook_pa_real(&remat_hook_cuLibraryGetKernel), k, l, name);
}
REMAT_HOOK(cuLibraryGetKernel, "cuLibraryGetKernel", 0, 0, cuLibraryGetKernel,
           pa_cuLibraryGetKernel);
