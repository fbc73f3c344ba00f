/*
 * launch.c — kernel launches: cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel (+ their _ptsz twins) and cuGraphLaunch.
 * Outside the iteration detection and the profiled iteration, a launch
 * costs one load and one branch on top of the real call.
 */
#include "hooks.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);

/* The real function behind a door, NULL until resolved: the pass-through
 * path's one load (launch_slow resolves). */
REMAT_INLINE void *door_loaded(struct remat_hook *h, int door)
{
	return __atomic_load_n(door ? &h->pa_real : &h->exp_real, __ATOMIC_RELAXED);
}

/* First call (symbol not resolved yet) or tracking: out of line, so the
 * pass-through path stays a load, two tests and a tail jump. */
static __attribute__((noinline)) CUresult launch_slow(struct remat_hook *h, int door, CUfunction f,
                                                      unsigned gx, unsigned gy, unsigned gz,
                                                      unsigned bx, unsigned by, unsigned bz,
                                                      unsigned shmem, CUstream s, void **params,
                                                      void **extra)
{
	void *real = remat_door_real(h, door);
	REMAT_OP_BODY(real, ((launch_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra),
	              .kind = REMAT_OP_KERNEL, .via = remat_door_via(h, door), .func = f,
	              .grid = {gx, gy, gz}, .block = {bx, by, bz}, .shmem = shmem,
	              .stream = remat_stream(s, h->per_thread), .params = params, .extra = extra);
}

REMAT_INLINE CUresult launch(struct remat_hook *h, int door, CUfunction f, unsigned gx, unsigned gy,
                             unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                             CUstream s, void **params, void **extra)
{
	void *real = door_loaded(h, door);
	if (likely(real != NULL && !remat_session_watch))
		return ((launch_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	return launch_slow(h, door, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

REMAT_INLINE CUresult launch_ex(struct remat_hook *h, int door, const CUlaunchConfig *c,
                                CUfunction f, void **params, void **extra)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!c) && real) /* the driver's to refuse: no op to record */
		return ((launch_ex_fn)real)(c, f, params, extra);
	REMAT_OP_BODY(real, ((launch_ex_fn)real)(c, f, params, extra), .kind = REMAT_OP_KERNEL,
	              .via = remat_door_via(h, door), .func = f,
	              .grid = {c->gridDimX, c->gridDimY, c->gridDimZ},
	              .block = {c->blockDimX, c->blockDimY, c->blockDimZ},
	              .shmem = c->sharedMemBytes, .stream = remat_stream(c->hStream, h->per_thread),
	              .params = params, .extra = extra, .attrs = c->attrs, .nattrs = c->numAttrs);
}

REMAT_INLINE CUresult coop(struct remat_hook *h, int door, CUfunction f, unsigned gx, unsigned gy,
                           unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                           CUstream s, void **params)
{
	void *real = remat_door_real(h, door);
	REMAT_OP_BODY(real, ((coop_fn)real)(f, gx, gy, gz, bx, by, bz, shmem, s, params),
	              .kind = REMAT_OP_KERNEL, .via = remat_door_via(h, door), .func = f,
	              .grid = {gx, gy, gz}, .block = {bx, by, bz}, .shmem = shmem,
	              .stream = remat_stream(s, h->per_thread), .params = params, .cooperative = 1);
}

/* A graph launch is recorded (so the op count stays right) but can never
 * be replayed: its kernels are not ours to see. */
REMAT_INLINE CUresult graph(struct remat_hook *h, int door, CUgraphExec g, CUstream s)
{
	void *real = remat_door_real(h, door);
	REMAT_OP_BODY(real, ((graph_fn)real)(g, s), .kind = REMAT_OP_GRAPH,
	              .via = remat_door_via(h, door), .func = g,
	              .stream = remat_stream(s, h->per_thread));
}

#define LAUNCH_PARAMS                                                                              \
	(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,            \
	 unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
REMAT_DOORS(cuLaunchKernel, "cuLaunchKernel", 0, 0, LAUNCH_PARAMS, launch, f, gx, gy, gz, bx, by,
            bz, shmem, s, params, extra);
REMAT_DOORS(cuLaunchKernel_ptsz, "cuLaunchKernel", 1, 0, LAUNCH_PARAMS, launch, f, gx, gy, gz, bx,
            by, bz, shmem, s, params, extra);

#define EX_PARAMS (const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
REMAT_DOORS(cuLaunchKernelEx, "cuLaunchKernelEx", 0, 0, EX_PARAMS, launch_ex, c, f, params, extra);
REMAT_DOORS(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 1, 0, EX_PARAMS, launch_ex, c, f, params,
            extra);

#define COOP_PARAMS                                                                                \
	(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,            \
	 unsigned bz, unsigned shmem, CUstream s, void **params)
REMAT_DOORS(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 0, 0, COOP_PARAMS, coop, f, gx,
            gy, gz, bx, by, bz, shmem, s, params);
REMAT_DOORS(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 1, 0, COOP_PARAMS, coop, f,
            gx, gy, gz, bx, by, bz, shmem, s, params);

REMAT_DOORS(cuGraphLaunch, "cuGraphLaunch", 0, 0, (CUgraphExec g, CUstream s), graph, g, s);
REMAT_DOORS(cuGraphLaunch_ptsz, "cuGraphLaunch", 1, 0, (CUgraphExec g, CUstream s), graph, g, s);

/* Function lookups: the name is right there, keep it for the trace. */
typedef CUresult (*getfn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*getkernel_fn)(CUkernel *, CUlibrary, const char *);

static CUresult get_function(struct remat_hook *h, int door, CUfunction *f, CUmodule m,
                             const char *name)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((getfn_fn)real)(f, m, name);
	if (remat_session_active && r == CUDA_SUCCESS && f)
		session_function_name(*f, name, 0);
	return r;
}

static CUresult get_kernel(struct remat_hook *h, int door, CUkernel *k, CUlibrary l,
                           const char *name)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((getkernel_fn)real)(k, l, name);
	if (remat_session_active && r == CUDA_SUCCESS && k)
		session_function_name(*k, name, 1);
	return r;
}

REMAT_DOORS(cuModuleGetFunction, "cuModuleGetFunction", 0, 0,
            (CUfunction * f, CUmodule m, const char *name), get_function, f, m, name);
REMAT_DOORS(cuLibraryGetKernel, "cuLibraryGetKernel", 0, 0,
            (CUkernel * k, CUlibrary l, const char *name), get_kernel, k, l, name);
