/*
 * simcuda_kernel.h — the shim that lets a .cu file written in our CUDA C
 * subset compile with g++ (C++17) for the simulated device.  sim/bin/simcc
 * force-includes it (-include) and defines __SIMCUDA__; nvcc never sees it.
 *
 * The CUDA built-ins become the thread-locals of libsimcuda_kernel.so (see
 * simcuda_abi.h).  `__shared__` becomes a function-static thread_local: a
 * block's threads all run on one worker thread and blocks run one after
 * another, so a thread_local is exactly one block's shared memory.
 * Atomics use the GCC __atomic builtins because two streams may run kernels
 * on two worker threads at once, as two streams may on a GPU.
 *
 * Warp-level functions go through simcuda_warp (a real per-warp rendezvous,
 * see simcuda_abi.h); cooperative groups come from include/device/.
 *
 * The second half holds the templates the generated registration code
 * (appended by simcc after the .cu source) uses to describe each kernel.
 */
#ifndef SIMCUDA_KERNEL_H
#define SIMCUDA_KERNEL_H

/* The host side of the CUDA headers first: dim3, uint3, float4,
 * make_float4, cudaStream_t ... for the kernels and for host code in the
 * same file (a later #include of them is a no-op).  For a host compiler
 * they define __global__, __device__, __host__ and __constant__ as
 * nothing, which is what the simulator wants. */
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tuple>
#include <type_traits>
#include <utility>
#include "simcuda_abi.h"

/* ---- qualifiers ---------------------------------------------------------- */
/* simcc's first pass (the preprocessor, with SIMCUDA_SCAN) keeps them as
 * words for its scanner; the compile pass defines them. */
#undef __global__
#undef __device__
#undef __host__
#undef __constant__
#undef __shared__
#undef __managed__
#ifndef SIMCUDA_SCAN
#include "simcuda_qualifiers.h"
#endif
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __grid_constant__
#define __grid_constant__

/* ---- built-ins ----------------------------------------------------------- */
/* Read-only views of libsimcuda_kernel.so's thread-locals, typed as CUDA's
 * (uint3 for the indices, dim3 for the sizes). */
#define threadIdx       (reinterpret_cast<const uint3 &>(simcuda_threadIdx))
#define blockIdx        (reinterpret_cast<const uint3 &>(simcuda_blockIdx))
#define blockDim        (reinterpret_cast<const dim3 &>(simcuda_blockDim))
#define gridDim         (reinterpret_cast<const dim3 &>(simcuda_gridDim))
#define __syncthreads() simcuda_syncthreads()
/* A variable as on a GPU (cudaDeviceProp::warpSize and the runtime's own
 * locals named warpSize stay untouched, unlike with a #define). */
static const int &warpSize = simcuda_warpSize;
static_assert(sizeof(uint3) == sizeof(simcuda_dim3) && sizeof(dim3) == sizeof(simcuda_dim3),
              "built-in layout");

/* `extern __shared__ T name[];` is rewritten by simcc into
 * `static simcuda_dynamic_shared<T> name;` (same line, so line numbers hold):
 * an object that indexes and converts like the array it stands for. */
template <typename T> struct simcuda_dynamic_shared {
	T *ptr() const
	{
		return static_cast<T *>(simcuda_dynamic_smem());
	}
	operator T *() const
	{
		return ptr();
	}
	template <typename I> T &operator[](I i) const
	{
		return ptr()[i];
	}
};

/* ---- device math that libm lacks or spells differently -------------------- */
static inline float rsqrtf(float x)
{
	return 1.0f / sqrtf(x);
}
/* __expf, __logf, __sinf and the other fast-math intrinsics: glibc's
 * <math.h> declares them, libsimcuda_kernel.so defines them (mathfn.c). */
static inline float __fdividef(float a, float b)
{
	return a / b;
}
static inline float __saturatef(float x)
{
	return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}
static inline int __float_as_int(float f)
{
	int i;
	memcpy(&i, &f, sizeof i);
	return i;
}
static inline float __int_as_float(int i)
{
	float f;
	memcpy(&f, &i, sizeof f);
	return f;
}
static inline unsigned __float_as_uint(float f)
{
	unsigned u;
	memcpy(&u, &f, sizeof u);
	return u;
}
static inline float __uint_as_float(unsigned u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* ---- loads and stores with cache hints: plain accesses here -------------- */
template <typename T> struct simcuda_same {
	using type = T;
};
#define SIMCUDA_LOAD(name)                                                                         \
	template <typename T> static inline T name(const T *p)                                     \
	{                                                                                          \
		return *p;                                                                         \
	}
#define SIMCUDA_STORE(name)                                                                        \
	template <typename T> static inline void name(T *p, typename simcuda_same<T>::type v)      \
	{                                                                                          \
		*p = v;                                                                            \
	}
SIMCUDA_LOAD(__ldg)
SIMCUDA_LOAD(__ldca)
SIMCUDA_LOAD(__ldcg)
SIMCUDA_LOAD(__ldcs)
SIMCUDA_LOAD(__ldlu)
SIMCUDA_LOAD(__ldcv)
SIMCUDA_STORE(__stwb)
SIMCUDA_STORE(__stcg)
SIMCUDA_STORE(__stcs)
SIMCUDA_STORE(__stwt)
#undef SIMCUDA_LOAD
#undef SIMCUDA_STORE

/* ---- integer intrinsics -------------------------------------------------- */
static inline int __popc(unsigned x)
{
	return __builtin_popcount(x);
}
static inline int __popcll(unsigned long long x)
{
	return __builtin_popcountll(x);
}
static inline unsigned __brev(unsigned x)
{
	x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
	x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
	x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
	return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x)
{
	return (unsigned long long)__brev((unsigned)x) << 32 | __brev((unsigned)(x >> 32));
}
static inline int __clz(int x)
{
	return x ? __builtin_clz((unsigned)x) : 32;
}
static inline int __clzll(long long x)
{
	return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __ffs(int x)
{
	return __builtin_ffs(x);
}
static inline int __ffsll(long long x)
{
	return __builtin_ffsll(x);
}

/* ---- CUDA's overloaded min and max (the set crt/math_functions.hpp has:
 * each width, mixed signedness giving the unsigned type, float with
 * double giving double) ---------------------------------------------------- */
#define SIMCUDA_MINMAX(R, A, B)                                                                    \
	static inline R min(A a, B b)                                                              \
	{                                                                                          \
		return (R)a < (R)b ? (R)a : (R)b;                                                  \
	}                                                                                          \
	static inline R max(A a, B b)                                                              \
	{                                                                                          \
		return (R)a > (R)b ? (R)a : (R)b;                                                  \
	}
#define SIMCUDA_MINMAX_INT(S, U)                                                                   \
	SIMCUDA_MINMAX(S, S, S)                                                                    \
	SIMCUDA_MINMAX(U, U, U)                                                                    \
	SIMCUDA_MINMAX(U, S, U)                                                                    \
	SIMCUDA_MINMAX(U, U, S)
SIMCUDA_MINMAX_INT(int, unsigned)
SIMCUDA_MINMAX_INT(long, unsigned long)
SIMCUDA_MINMAX_INT(long long, unsigned long long)
SIMCUDA_MINMAX(float, float, float)
SIMCUDA_MINMAX(double, double, double)
SIMCUDA_MINMAX(double, float, double)
SIMCUDA_MINMAX(double, double, float)
#undef SIMCUDA_MINMAX_INT
#undef SIMCUDA_MINMAX

/* ---- warp-synchronous functions (libsimcuda_kernel.so's simcuda_warp) ----- */
/* Shuffles move 32 or 64 bits, for the types CUDA overloads them on. */
template <typename T>
static inline T simcuda_shfl(enum simcuda_warp_op op, unsigned mask, T var, int arg, int width)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "32- or 64-bit shuffles");
	unsigned long long bits = 0;
	memcpy(&bits, &var, sizeof var);
	bits = simcuda_warp(op, mask, bits, arg, width);
	memcpy(&var, &bits, sizeof var);
	return var;
}
#define SIMCUDA_SHFL(T)                                                                            \
	static inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize)      \
	{                                                                                          \
		return simcuda_shfl(SIMCUDA_WARP_SHFL_IDX, mask, var, src_lane, width);            \
	}                                                                                          \
	static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) \
	{                                                                                          \
		return simcuda_shfl(SIMCUDA_WARP_SHFL_UP, mask, var, (int)delta, width);           \
	}                                                                                          \
	static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta,                     \
	                                 int width = warpSize)                                     \
	{                                                                                          \
		return simcuda_shfl(SIMCUDA_WARP_SHFL_DOWN, mask, var, (int)delta, width);         \
	}                                                                                          \
	static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) \
	{                                                                                          \
		return simcuda_shfl(SIMCUDA_WARP_SHFL_XOR, mask, var, lane_mask, width);           \
	}
SIMCUDA_SHFL(int)
SIMCUDA_SHFL(unsigned)
SIMCUDA_SHFL(long)
SIMCUDA_SHFL(unsigned long)
SIMCUDA_SHFL(long long)
SIMCUDA_SHFL(unsigned long long)
SIMCUDA_SHFL(float)
SIMCUDA_SHFL(double)
#undef SIMCUDA_SHFL

static inline unsigned __ballot_sync(unsigned mask, int predicate)
{
	return (unsigned)simcuda_warp(SIMCUDA_WARP_BALLOT, mask, predicate != 0, 0, 0);
}
static inline int __any_sync(unsigned mask, int predicate)
{
	return (int)simcuda_warp(SIMCUDA_WARP_ANY, mask, predicate != 0, 0, 0);
}
static inline int __all_sync(unsigned mask, int predicate)
{
	return (int)simcuda_warp(SIMCUDA_WARP_ALL, mask, predicate != 0, 0, 0);
}
static inline void __syncwarp(unsigned mask = 0xffffffffu)
{
	simcuda_warp(SIMCUDA_WARP_SYNC, mask, 0, 0, 0);
}
/* The default argument names the caller's line: lanes on two sides of a
 * branch are two groups, as a diverged warp is. */
static inline unsigned __activemask(int site = __builtin_LINE())
{
	return simcuda_activemask(site);
}

/* ---- memory fences: blocks that publish data to other blocks of the grid
 * (a split-K GEMM's partial sums) fence before bumping a counter; another
 * stream's kernel may run on another worker thread at the same time. ---- */
static inline void __threadfence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_block(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_system(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- atomics: return the old value, like CUDA ----------------------------- */
#define SIMCUDA_ATOMIC_INT(T)                                                                      \
	static inline T atomicAdd(T *p, T v)                                                       \
	{                                                                                          \
		return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);                                 \
	}                                                                                          \
	static inline T atomicSub(T *p, T v)                                                       \
	{                                                                                          \
		return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);                                 \
	}                                                                                          \
	static inline T atomicExch(T *p, T v)                                                      \
	{                                                                                          \
		return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);                                \
	}                                                                                          \
	static inline T atomicAnd(T *p, T v)                                                       \
	{                                                                                          \
		return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);                                 \
	}                                                                                          \
	static inline T atomicOr(T *p, T v)                                                        \
	{                                                                                          \
		return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);                                  \
	}                                                                                          \
	static inline T atomicCAS(T *p, T expected, T desired)                                     \
	{                                                                                          \
		__atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,        \
		                            __ATOMIC_RELAXED);                                     \
		return expected;                                                                   \
	}                                                                                          \
	static inline T atomicMax(T *p, T v)                                                       \
	{                                                                                          \
		T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
		while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, \
		                                               __ATOMIC_RELAXED))                  \
			;                                                                          \
		return old;                                                                        \
	}                                                                                          \
	static inline T atomicMin(T *p, T v)                                                       \
	{                                                                                          \
		T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
		while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, \
		                                               __ATOMIC_RELAXED))                  \
			;                                                                          \
		return old;                                                                        \
	}
SIMCUDA_ATOMIC_INT(int)
SIMCUDA_ATOMIC_INT(unsigned)
SIMCUDA_ATOMIC_INT(unsigned long long)
#undef SIMCUDA_ATOMIC_INT

/* Floating-point add by compare-and-swap on the bit pattern, as CUDA does
 * for types without a native atomic. */
template <typename F, typename U> static inline F simcuda_atomic_add_float(F *p, F v)
{
	U *q = reinterpret_cast<U *>(p);
	U old = __atomic_load_n(q, __ATOMIC_RELAXED), upd;
	F f;
	do {
		memcpy(&f, &old, sizeof f);
		F sum = f + v;
		memcpy(&upd, &sum, sizeof upd);
	} while (
	    !__atomic_compare_exchange_n(q, &old, upd, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return f;
}
static inline float atomicAdd(float *p, float v)
{
	return simcuda_atomic_add_float<float, uint32_t>(p, v);
}
static inline double atomicAdd(double *p, double v)
{
	return simcuda_atomic_add_float<double, uint64_t>(p, v);
}
static inline float atomicExch(float *p, float v)
{
	return __uint_as_float(atomicExch(reinterpret_cast<unsigned *>(p), __float_as_uint(v)));
}

/* ---- cost functions ------------------------------------------------------- */
/*
 * In a .cu file, under #ifdef __SIMCUDA__ (nvcc never sees it):
 *
 *     SIMCUDA_COST(my_kernel) { return 1000.0 + 0.5 * SIMCUDA_ARG(2); }
 *
 * defines the simulated duration (ns) of a whole launch of my_kernel.
 * SIMCUDA_ARG(i) is kernel parameter i with its declared type; `grid` and
 * `block` are the launch dimensions.  simcc finds the macro in the source
 * and points the kernel's cost_ns at it.
 */
template <typename F> struct simcuda_sig;

template <typename F> struct simcuda_cost_args {
	void *const *args;
	template <unsigned I> auto get() const
	{
		using T = typename simcuda_sig<F>::template param<I>;
		return *static_cast<const T *>(args[I]);
	}
};

#define SIMCUDA_COST(k)                                                                            \
	static double simcuda_cost_##k(simcuda_cost_args<decltype(&k)> simcuda_cost_a,             \
	                               simcuda_dim3 grid, simcuda_dim3 block)
#define SIMCUDA_ARG(i) (simcuda_cost_a.template get<i>())

/*
 * The device profiles (SIMCUDA_DEVICE=h100, h200, a100) price a launch by
 * its work instead: flops at the rate of its math and bytes moved, in terms
 * of the same arguments:
 *
 *     SIMCUDA_WORK(my_kernel) { return {2.0 * n, 12.0 * n, SIMCUDA_MATH_FP32, 0}; }
 *
 * A kernel without one gets the driver's default there (the bytes its
 * pointer parameters touch); SIMCUDA_COST is the legacy model's.
 */
#define SIMCUDA_WORK(k)                                                                            \
	static simcuda_work simcuda_work_##k(simcuda_cost_args<decltype(&k)> simcuda_cost_a,       \
	                                     simcuda_dim3 grid, simcuda_dim3 block)

/*
 * A file may also give every kernel without its own SIMCUDA_COST one
 * model, in terms of the launch dimensions only:
 *
 *     SIMCUDA_DEFAULT_COST { return 2000.0 + 0.02 * grid.x * block.x; }
 */
#define SIMCUDA_DEFAULT_COST                                                                       \
	static double simcuda_default_cost_fn(simcuda_dim3 grid, simcuda_dim3 block);              \
	static double simcuda_default_cost(void *const *, simcuda_dim3 grid, simcuda_dim3 block)   \
	{                                                                                          \
		return simcuda_default_cost_fn(grid, block);                                       \
	}                                                                                          \
	static double simcuda_default_cost_fn(simcuda_dim3 grid, simcuda_dim3 block)

/* ---- kernel descriptions (used by the code simcc appends) ----------------- */
/* CUDA ABI: each parameter at the next multiple of its alignment, in
 * declaration order; the buffer ends right after the last one.  One spare
 * slot keeps the arrays non-empty for kernels without parameters. */
template <typename... A> struct simcuda_layout {
	static constexpr unsigned n = sizeof...(A);
	unsigned size[n + 1] = {static_cast<unsigned>(sizeof(A))..., 0};
	unsigned offset[n + 1] = {};
	unsigned bytes = 0;
	constexpr simcuda_layout()
	{
		const unsigned align[n + 1] = {static_cast<unsigned>(alignof(A))..., 1};
		unsigned at = 0;
		for (unsigned i = 0; i < n; i++) {
			at = (at + align[i] - 1) / align[i] * align[i];
			offset[i] = at;
			at += size[i];
		}
		bytes = at;
	}
};

template <typename... A> struct simcuda_sig<void (*)(A...)> {
	static constexpr unsigned n = sizeof...(A);
	template <unsigned I> using param = std::tuple_element_t<I, std::tuple<A...>>;
	static constexpr simcuda_layout<A...> lay{};
	using cost_fn = double (*)(simcuda_cost_args<void (*)(A...)>, simcuda_dim3, simcuda_dim3);
	using work_fn = simcuda_work (*)(simcuda_cost_args<void (*)(A...)>, simcuda_dim3,
	                                 simcuda_dim3);

	template <void (*K)(A...), size_t... I>
	static void call(void *const *args, std::index_sequence<I...>)
	{
		(void)args;
		K(*static_cast<A *>(args[I])...);
	}
	/* The trampoline the driver calls once per CUDA thread. */
	template <void (*K)(A...)> static void thread_fn(void *const *args)
	{
		call<K>(args, std::index_sequence_for<A...>{});
	}
	template <cost_fn C>
	static double cost(void *const *args, simcuda_dim3 grid, simcuda_dim3 block)
	{
		return C(simcuda_cost_args<void (*)(A...)>{args}, grid, block);
	}
	template <work_fn W>
	static simcuda_work work(void *const *args, simcuda_dim3 grid, simcuda_dim3 block)
	{
		return W(simcuda_cost_args<void (*)(A...)>{args}, grid, block);
	}
};

/* One registration entry (what the code simcc appends builds per kernel,
 * a constant initializer).  `name` is the kernel's symbol name, which simcc
 * has the assembler spell: the plain name of an extern "C" kernel, the
 * mangled one of a C++ kernel, as nvcc registers them. */
template <auto K>
constexpr simcuda_kernel simcuda_entry(const char *name, unsigned synchronizes,
                                       double (*cost)(void *const *, simcuda_dim3, simcuda_dim3),
                                       simcuda_work (*work)(void *const *, simcuda_dim3,
                                                            simcuda_dim3) = nullptr)
{
	using S = simcuda_sig<decltype(K)>;
	return {name,         &S::template thread_fn<K>,
	        S::n,         S::lay.offset,
	        S::lay.size,  S::lay.bytes,
	        synchronizes, cost,
	        work};
}
/* Macros do not outlive simcc's preprocessing pass; the registration
 * block it appends afterwards uses this. */
static constexpr unsigned simcuda_abi_version = SIMCUDA_ABI_VERSION;
/* The work of a kernel K with the SIMCUDA_WORK function W. */
template <auto K, auto W>
constexpr simcuda_work (*simcuda_priced_by())(void *const *, simcuda_dim3, simcuda_dim3)
{
	return &simcuda_sig<decltype(K)>::template work<W>;
}
/* The cost_ns of a kernel K with the SIMCUDA_COST function C. */
template <auto K, auto C>
constexpr double (*simcuda_cost_of())(void *const *, simcuda_dim3, simcuda_dim3)
{
	return &simcuda_sig<decltype(K)>::template cost<C>;
}

#endif
