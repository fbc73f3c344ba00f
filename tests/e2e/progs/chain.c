/*
 * chain.c — a small driver-API "training" loop for run-mode tests: each
 * iteration computes three activations (a1 -> a2 -> a3), keeps them across
 * a gap, then consumes them in reverse order into a persistent accumulator
 * and prints its checksum.
 *
 *   chain KERNELS.so ITERS [--host-read N] [--indirect]
 *
 * --host-read N  iteration N also copies a1 to the host after the whole
 *                forward pass (an access the plan did not foresee) and
 *                prints its checksum
 * --indirect     a2 is computed by fwd_indirect, whose scale lives behind a
 *                pointer in device memory and is overwritten after the
 *                forward pass: a replay of it is not bit-identical (a1 is
 *                freed right after, a fourth activation follows a3, backward uses a4,
 *                a3 and a2)
 * --side        like --indirect, but a2 comes from fwd_side, which also
 *                writes a small side output m (read all along, last after
 *                a2): a replay that rebuilds a2 must save and restore m
 * --swap-at K   iteration K reads a1 first and a3 last in backward: the
 *                same launches with other pointers (a1 is evicted then)
 * --late-free   a3 is freed at the end of the iteration, long after its
 *                last use, and a temporary comes and goes in between; with
 *                --host-read N, iteration N reads a3 on the host right
 *                after its last use
 * --switch-at K  from iteration K on, every launch uses blocks of 128
 *                threads instead of 256: same results, another graph
 * --persistent  a1, a2 and a3 are allocated once before the loop (each its
 *                own allocation, live across iterations)
 * --arena       a1, a2 and a3 are offsets into one allocation made before
 *                the loop, with a small scratch s between a1 and a2
 *                (layout a1 | s | a2 | a3); s is written before a1
 * --peek        like --arena, with a copy xa of x first (xa | s | a1 |
 *                a2 | a3): a1 comes from fwd_peek, which also reads s
 *                through its xa pointer (past the end of xa's region), and
 *                s is overwritten after the forward pass and read last: a
 *                rebuild of a1 by replay reads the new s
 * --tiny        a3 is set to zero, then add_tiny adds x * 1e-6 to it: an
 *                update in place the write-set proof must not mistake for
 *                no write
 * --reuse       one allocation made before the loop, a block p of N floats
 *                and y after it, used as a caching allocator reuses a
 *                block: p holds two tensors t1 | t2 of N/2 floats each
 *                (t2 written through p + N/2), then one tensor of N floats
 *                written through p; before that, use reads t1 alone
 *                through p and fwd_peek reads t1 and the start of t2
 *                through p; y holds a tensor of N/2 floats (fwd_peek's
 *                output), then one of N floats (reuse_loop)
 * --count       every launch of fwd through launch() goes to fwd_counted,
 *                which counts on the host how often the device ran it; at
 *                the end "fwd_counted: L launches, R runs" on stderr (the
 *                profile must not run a kernel the program did not launch)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "progs.h"

enum { N = 65536 }; /* 256 KiB per activation */

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static unsigned block = 256;

/* --count: fwd's launches and the device's runs of them. */
static struct {
	CUfunction fwd, counted;
	volatile unsigned long long *runs; /* mapped host memory */
	CUdeviceptr runs_dev;
	unsigned long long launches;
} count;

static void launch(CUfunction f, CUstream s, void **args)
{
	void *counted[5];
	if (count.counted && f == count.fwd) {
		memcpy(counted, args, 4 * sizeof(*args)); /* fwd's x, y, n, a */
		counted[4] = &count.runs_dev;
		f = count.counted;
		args = counted;
		count.launches++;
	}
	CK(cuLaunchKernel(f, N / block, 1, 1, block, 1, 1, 0, s, args, NULL));
}

static void count_begin(CUmodule mod, CUfunction fwd)
{
	void *host;
	count.fwd = fwd;
	CK(cuModuleGetFunction(&count.counted, mod, "fwd_counted"));
	CK(cuMemHostAlloc(&host, sizeof(*count.runs), CU_MEMHOSTALLOC_DEVICEMAP));
	count.runs = host;
	*count.runs = 0;
	CK(cuMemHostGetDevicePointer(&count.runs_dev, host, 0));
}

static void count_end(void)
{
	if (!count.counted)
		return;
	CK(cuCtxSynchronize());
	fprintf(stderr, "fwd_counted: %llu launches, %llu runs\n", count.launches, *count.runs);
}

/* --reuse: a pointer to a block's start through which a later kernel
 * writes further than the tensor there now.  The profile's reach of p
 * takes t2 in for every kernel given p; use reads t1 alone, fwd_peek
 * really reads into t2.  y: no pointer shows where its first tensor
 * ends, only where fwd_peek's write does. */
static void reuse_loop(CUfunction fwd, CUfunction fwd_peek, CUfunction use, CUstream s,
                       CUdeviceptr x, CUdeviceptr acc, int iters)
{
	size_t bytes = N * sizeof(float);
	CUdeviceptr base;
	CK(cuMemAlloc(&base, 2 * bytes));
	CUdeviceptr p = base, t2 = base + bytes / 2, y = base + bytes;
	CK(cuCtxSynchronize());
	int n = N, h = N / 2;
	for (int it = 0; it < iters; it++) {
		float k0 = 0.5f + (float)it / 64, k1 = 1.25f, k2 = 0.75f;
		void *w2[] = {&x, &t2, &h, &k0}, *w1[] = {&x, &p, &h, &k1};
		void *r1[] = {&p, &acc, &h}, *pk[] = {&p, &y, &h, &k1};
		void *w[] = {&x, &p, &n, &k2}, *r[] = {&p, &acc, &n}, *ry[] = {&y, &acc, &h};
		void *wy[] = {&x, &y, &n, &k0}, *rwy[] = {&y, &acc, &n};
		launch(fwd, s, w2);
		launch(fwd, s, w1);
		launch(use, s, r1);
		launch(fwd_peek, s, pk);
		launch(fwd, s, w);
		launch(use, s, r);
		launch(use, s, ry);
		launch(fwd, s, wy);
		launch(use, s, rwy);
		float h4[4];
		CK(cuMemcpyDtoHAsync(h4, acc, sizeof(h4), s));
		CK(cuStreamSynchronize(s));
		printf("iter %d acc %a %a\n", it, h4[0], h4[3]);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 1;
	int iters = atoi(argv[2]), host_read = -1, indirect = 0, side = 0, switch_at = -1,
	    swap_at = -1, late_free = 0, keep = 0, arena = 0, peek = 0, tiny = 0, reuse = 0,
	    counting = 0;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--host-read") && i + 1 < argc)
			host_read = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--swap-at") && i + 1 < argc)
			swap_at = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--switch-at") && i + 1 < argc)
			switch_at = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--indirect"))
			indirect = 1;
		else if (!strcmp(argv[i], "--late-free"))
			late_free = 1;
		else if (!strcmp(argv[i], "--side"))
			side = 1;
		else if (!strcmp(argv[i], "--persistent"))
			keep = 1;
		else if (!strcmp(argv[i], "--arena"))
			keep = arena = 1;
		else if (!strcmp(argv[i], "--peek"))
			keep = arena = peek = 1;
		else if (!strcmp(argv[i], "--tiny"))
			tiny = 1;
		else if (!strcmp(argv[i], "--reuse"))
			reuse = 1;
		else if (!strcmp(argv[i], "--count"))
			counting = 1;
	}
	int deep = indirect || side;
	CUmodule mod;
	CUfunction fwd, fwd_ind, fwd_side, fwd_peek, use, use_m, add_tiny;
	CUstream s;
	prog_context();
	CK(cuModuleLoad(&mod, argv[1]));
	CK(cuModuleGetFunction(&fwd, mod, "fwd"));
	CK(cuModuleGetFunction(&fwd_ind, mod, "fwd_indirect"));
	CK(cuModuleGetFunction(&fwd_side, mod, "fwd_side"));
	CK(cuModuleGetFunction(&fwd_peek, mod, "fwd_peek"));
	CK(cuModuleGetFunction(&use, mod, "use"));
	CK(cuModuleGetFunction(&use_m, mod, "use_m"));
	CK(cuModuleGetFunction(&add_tiny, mod, "add_tiny"));
	if (counting)
		count_begin(mod, fwd);
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	size_t bytes = N * sizeof(float);
	CUdeviceptr x, acc, scale, tbl;
	CK(cuMemAlloc(&x, bytes));
	CK(cuMemAlloc(&acc, bytes));
	CK(cuMemAlloc(&scale, 256));
	CK(cuMemAlloc(&tbl, 256));
	float *h = malloc(bytes);
	for (int i = 0; i < N; i++)
		h[i] = (float)(i % 97) / 97.0f;
	CK(cuMemcpyHtoD(x, h, bytes));
	CK(cuMemsetD32(acc, 0, N));
	CK(cuMemcpyHtoD(tbl, &scale, sizeof(scale)));
	if (reuse) {
		reuse_loop(fwd, fwd_peek, use, s, x, acc, iters);
		CK(cuMemcpyDtoH(h, acc, bytes));
		printf("checksum %016llx\n", (unsigned long long)fnv(h, bytes));
		count_end();
		free(h);
		return 0;
	}
	/* Long-lived activations: three allocations, or one arena. */
	CUdeviceptr ka1 = 0, ka2 = 0, ka3 = 0, ks = 0, base = 0, xa = 0;
	size_t sbytes = 1024 * sizeof(float);
	if (peek) {
		CK(cuMemAlloc(&base, 4 * bytes + sbytes));
		xa = base;
		CK(cuMemcpyDtoD(xa, x, bytes));
		ks = xa + bytes;
		ka1 = ks + sbytes;
		ka2 = ka1 + bytes;
		ka3 = ka2 + bytes;
	} else if (arena) {
		CK(cuMemAlloc(&base, 3 * bytes + sbytes));
		ka1 = base;
		ks = base + bytes;
		ka2 = ks + sbytes;
		ka3 = ka2 + bytes;
	} else if (keep) {
		CK(cuMemAlloc(&ka1, bytes));
		CK(cuMemAlloc(&ka2, bytes));
		CK(cuMemAlloc(&ka3, bytes));
	}
	/* The set-up ran on the legacy stream; s does not wait for it. */
	CK(cuCtxSynchronize());
	int n = N, ns = 1024;
	for (int it = 0; it < iters; it++) {
		if (it == switch_at)
			block = 128; /* same results, other launches from here on */
		CUdeviceptr a1, a2, a3;
		/* Long-lived activations get new values every iteration (as a
		 * new batch gives them): a write of what is there is no change. */
		float k1 = keep ? 1.25f + (float)it / 64 : 1.25f, k3 = 0.75f;
		CK(cuMemsetD32Async(scale, 0x40000000u, 1, s)); /* 2.0f */
		if (arena) {
			float ksv = 0.5f + (float)it;
			void *ps[] = {&x, &ks, &ns, &ksv};
			CK(cuLaunchKernel(fwd, 1024 / block, 1, 1, block, 1, 1, 0, s, ps, NULL));
		}
		if (keep)
			a1 = ka1;
		else
			CK(cuMemAllocAsync(&a1, bytes, s));
		void *p1[] = {&x, &a1, &n, &k1}, *p1p[] = {&xa, &a1, &n, &k1};
		launch(peek ? fwd_peek : fwd, s, peek ? p1p : p1);
		CUdeviceptr m = 0;
		if (side)
			CK(cuMemAllocAsync(&m, 64 * sizeof(float), s));
		if (keep)
			a2 = ka2;
		else
			CK(cuMemAllocAsync(&a2, bytes, s));
		if (side) {
			/* a2 and a side output m from one kernel: replaying it to
			 * rebuild a2 must leave the live m as it is. */
			void *p2[] = {&a1, &a2, &m, &n};
			launch(fwd_side, s, p2);
			CK(cuMemFreeAsync(a1, s));
		} else if (indirect) {
			/* a1 dies at once: a2 is then the one activation worth
			 * evicting, and fwd_indirect is what rebuilds it. */
			void *p2[] = {&tbl, &a1, &a2, &n};
			launch(fwd_ind, s, p2);
			CK(cuMemFreeAsync(a1, s));
		} else {
			void *p2[] = {&a1, &a2, &n, &k1};
			launch(fwd, s, p2);
		}
		if (keep)
			a3 = ka3;
		else
			CK(cuMemAllocAsync(&a3, bytes, s));
		void *p3[] = {&a2, &a3, &n, &k3}, *pt3[] = {&a2, &a3, &n};
		if (tiny) {
			CK(cuMemsetD32Async(a3, 0, N, s));
			launch(add_tiny, s, pt3);
		} else {
			launch(fwd, s, p3);
		}
		CUdeviceptr a4 = 0;
		if (deep) {
			/* One more activation, so that dropping a2 saves memory. */
			CK(cuMemAllocAsync(&a4, bytes, s));
			void *p4[] = {&a3, &a4, &n, &k3};
			launch(fwd, s, p4);
		}
		if (side) {
			void *um0[] = {&m, &acc, &n};
			launch(use_m, s, um0);
			/* m moves on: a replay of fwd_side would turn it back. */
			CK(cuMemsetD32Async(m, 0x3f800000u, 64, s));
		}
		/* The scale changes after the forward pass: fwd_indirect would now
		 * compute something else. */
		CK(cuMemsetD32Async(scale, 0x40400000u, 1, s)); /* 3.0f */
		if (arena) /* s moves on: fwd_peek would now compute something else */
			CK(cuMemsetD32Async(ks, 0x3f000000u, 1024, s));
		if (it == host_read && !deep && !late_free) {
			CK(cuMemcpyDtoHAsync(h, a1, bytes, s));
			CK(cuStreamSynchronize(s));
			printf("iter %d a1 %016llx\n", it, (unsigned long long)fnv(h, bytes));
		}
		void *u3[] = {&a3, &acc, &n}, *u2[] = {&a2, &acc, &n}, *u1[] = {&a1, &acc, &n};
		if (deep) {
			void *u4[] = {&a4, &acc, &n};
			launch(use, s, u4);
			CK(cuMemFreeAsync(a4, s));
		}
		void *um[] = {&m, &acc, &n};
		if (side)
			launch(use_m, s, um); /* m is read all along */
		/* --swap-at: the same kernels, reading a1 first and a3 last. */
		int swap = it == swap_at && !deep;
		launch(use, s, swap ? u1 : u3);
		if (late_free && it == host_read) {
			/* a3 is dead to the plan here, yet the host reads it. */
			CK(cuMemcpyDtoHAsync(h, a3, bytes, s));
			CK(cuStreamSynchronize(s));
			printf("iter %d a3 %016llx\n", it, (unsigned long long)fnv(h, bytes));
		}
		if (keep) {
		} else if (!late_free) {
			CK(cuMemFreeAsync(swap ? a1 : a3, s));
		} else {
			/* A temporary while a3 is still allocated: dropping a3
			 * early is what keeps the peak down. */
			CUdeviceptr t;
			CK(cuMemAllocAsync(&t, bytes, s));
			void *pt[] = {&x, &t, &n, &k3}, *ut[] = {&t, &acc, &n};
			launch(fwd, s, pt);
			launch(use, s, ut);
			CK(cuMemFreeAsync(t, s));
		}
		if (side)
			launch(use_m, s, um);
		launch(use, s, u2);
		if (!keep)
			CK(cuMemFreeAsync(a2, s));
		if (side) {
			launch(use_m, s, um);
			CK(cuMemFreeAsync(m, s));
		}
		if (!deep) {
			launch(use, s, swap ? u3 : u1);
			if (!keep)
				CK(cuMemFreeAsync(swap ? a3 : a1, s));
		}
		if (arena) {
			void *us[] = {&ks, &acc, &ns};
			CK(cuLaunchKernel(use, 1024 / block, 1, 1, block, 1, 1, 0, s, us, NULL));
		}
		if (late_free)
			CK(cuMemFreeAsync(a3, s));
		float h4[4];
		CK(cuMemcpyDtoHAsync(h4, acc, sizeof(h4), s));
		CK(cuStreamSynchronize(s));
		printf("iter %d acc %a %a\n", it, h4[0], h4[3]);
	}
	CK(cuMemcpyDtoH(h, acc, bytes));
	printf("checksum %016llx\n", (unsigned long long)fnv(h, bytes));
	count_end();
	free(h);
	return 0;
}
