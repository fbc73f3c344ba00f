/*
 * simcuda_kernel.h — the shim that lets a .cu file written in our CUDA C
 * subset compile with g++ (C++17) for the simulated device.  tools/simcc
 * force-includes it (-include) and defines __SIMCUDA__; nvcc never sees it.
 *
 * The CUDA built-ins become the thread-locals of libsimcuda_kernel.so (see
 * simcuda_abi.h).  `__shared__` becomes a function-static thread_local: a
 * block's threads all run on one worker thread and blocks run one after
 * another, so a thread_local is exactly one block's shared memory.
 * Atomics use the GCC __atomic builtins because two streams may run kernels
 * on two worker threads at once, as two streams may on a GPU.
 *
 * The second half holds the templates the generated registration code
 * (appended by simcc after the .cu source) uses to describe each kernel.
 */
#ifndef SIMCUDA_KERNEL_H
#define SIMCUDA_KERNEL_H

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
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__    __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__   static thread_local

/* ---- built-ins ----------------------------------------------------------- */
#define threadIdx       simcuda_threadIdx
#define blockIdx        simcuda_blockIdx
#define blockDim        simcuda_blockDim
#define gridDim         simcuda_gridDim
#define warpSize        32
#define __syncthreads() simcuda_syncthreads()

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
/* __expf and __logf: glibc's libm already declares and exports them. */
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
template <typename T> static inline T __ldg(const T *p)
{
	return *p;
}
/* CUDA's overloaded integer/float min and max. */
#define SIMCUDA_MINMAX(T)                                                                          \
	static inline T min(T a, T b)                                                              \
	{                                                                                          \
		return a < b ? a : b;                                                              \
	}                                                                                          \
	static inline T max(T a, T b)                                                              \
	{                                                                                          \
		return a > b ? a : b;                                                              \
	}
SIMCUDA_MINMAX(int)
SIMCUDA_MINMAX(unsigned)
SIMCUDA_MINMAX(long long)
SIMCUDA_MINMAX(unsigned long long)
SIMCUDA_MINMAX(float)
SIMCUDA_MINMAX(double)
#undef SIMCUDA_MINMAX

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
};

#define SIMCUDA_KERNEL_ENTRY(k, sync, costfn)                                                      \
	{                                                                                          \
#k, &simcuda_sig < decltype(&k)> ::thread_fn < &k>,                                \
		    simcuda_sig < decltype(&k)> ::n, simcuda_sig < decltype(&k)> ::lay.offset,     \
		    simcuda_sig < decltype(&k)> ::lay.size,                                        \
		    simcuda_sig < decltype(&k)> ::lay.bytes, sync, costfn                          \
	}
#define SIMCUDA_COST_OF(k) (&simcuda_sig<decltype(&k)>::cost<simcuda_cost_##k>)

#endif
