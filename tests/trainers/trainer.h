/*
 * trainer.h — what mlp.c and gpt.c share: command-line flags, CUDA error
 * handling (one clear message, exit 2), kernel modules and the three
 * launch paths, the input pipeline on a second stream, row-major matmuls
 * over cuBLAS, deterministic host data, the parameter checksum and
 * the training loop itself.
 *
 * Everything printed on stdout is deterministic: `iter N loss HEX` lines
 * and a final `checksum HEX16`.  Diagnostics go to stderr.
 */
#ifndef TRAINER_H
#define TRAINER_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <cublas_v2.h>

extern const char *trainer_prog; /* "mlp" or "gpt", prefix of every message */

/* ---- trainer_cli.c ---------------------------------------------------- */
enum kernel_format { KF_AUTO, KF_SO, KF_CUBIN };
/* Where tensors live (--alloc): each its own cudaMallocAsync allocation
 * (async; parameters cudaMalloc), or blocks of the program's own pool of
 * cudaMalloc segments (caching) or of VMM-grown ranges (vmm). */
enum alloc_mode { ALLOC_ASYNC, ALLOC_CACHING, ALLOC_VMM };

struct trainer_opts {
	int batch, hidden, layers, iters, seq, heads, vocab, in_dim, classes, accum;
	int short_last; /* 0: off, else the last iteration's batch */
	int bwd_thread; /* run each backward pass on a second host thread */
	int pinned;     /* stage inputs in pinned (cudaMallocHost) memory, not malloc */
	enum alloc_mode alloc;
	int alloc_stats; /* print the allocator's counters on stderr at the end */
	/* caching: segments are filled with a pattern when made, and after
	 * iteration N (1-based; 0 off) a digest of the bytes of their tails
	 * no tensor ever took is printed: memory no op touches, which
	 * libremat may keep on the host (tests/e2e/run_park.sh) */
	int pool_tail;
	int graphs;       /* gpt: transformer blocks captured once as CUDA graphs, then replayed */
	int launch_attrs; /* gpt: a kernel launched with a cluster, one cooperatively */
	float lr, dropout;
	unsigned long long seed;
	/* bytes of device memory (from the trainer's allocator) given to every
	 * cuBLAS handle with cublasSetWorkspace, as PyTorch does; 0: none */
	unsigned long long blas_workspace;
	const char *kernels_dir;
	enum kernel_format format;
	int ranks;              /* data parallelism over this many processes (NCCL) */
	const char *rendezvous; /* --ranks: a directory the ranks share */
};

/* Fills opts from argv; opts holds the program's defaults on entry.  Flags
 * a program does not use are listed in `unused` ("--seq,--heads") and
 * refused.  Prints usage and exits 0 on --help, 1 on bad input. */
void trainer_parse(int argc, char **argv, struct trainer_opts *opts, const char *unused);
/* The batch of iteration `iter` (0-based): --short-last applies to the last. */
int trainer_batch(const struct trainer_opts *o, int iter);

/* ---- trainer_check.c ---------------------------------------------------- */
/* Exit 2 with "<prog>: <call> failed: <name> (<description>)" on error. */
void rt_check(cudaError_t e, const char *call);
void drv_check(CUresult r, const char *call);
void blas_check(cublasStatus_t s, const char *call);
#define RT(call)  rt_check((call), #call)
#define DRV(call) drv_check((call), #call)

/* ---- trainer_alloc.c ---------------------------------------------------- */
/* Before the first allocation, once the context exists: `home` is the
 * stream persistent tensors (dev_alloc) are allocated on in the pool
 * modes, as PyTorch allocates on the current stream. */
void alloc_setup(enum alloc_mode mode, int stats, cudaStream_t home);
/* Allocations name what they hold; out of memory is reported as
 * "<prog>: out of device memory allocating N bytes for WHAT (...)". */
float *dev_alloc_async(size_t bytes, const char *what, cudaStream_t stream);
/* On the stream it was allocated on. */
void dev_free_async(void *p, cudaStream_t stream);
float *dev_alloc(size_t bytes, const char *what); /* for the whole run */
/* Another stream uses p too: in the pool modes it is not reused before
 * that stream's work queued so far is done (PyTorch's record_stream). */
void dev_record_stream(void *p, cudaStream_t stream);
/* At the end: with --alloc-stats prints the allocator's counters on stderr,
 * then gives all pool memory back. */
void alloc_finish(void);

/* ---- trainer_pool.c: the caching allocator of the pool modes ------------ */
struct pool_stats {
	unsigned long long tensors;           /* blocks handed out */
	unsigned long long reused;            /* ... from memory the pool already held */
	unsigned long long device_allocs;     /* cudaMalloc or cuMemCreate calls */
	unsigned long long segments;          /* cudaMalloc segments or reserved ranges */
	unsigned long long segments_released; /* empty segments freed to retry after OOM */
	unsigned long long chunks;            /* vmm: chunks mapped */
	unsigned long long splits, merges;
	unsigned long long deferred_frees; /* frees waiting for another stream */
	unsigned long long reserved_bytes; /* device memory the pool holds */
	unsigned long long peak_allocated; /* most bytes in blocks at once */
};
void pool_init(enum alloc_mode mode);
/* --pool-tail: new segments filled with a pattern from now on; the
 * digest of the never-used tails of the segments (FNV-1a 64). */
void pool_fill_tails(void);
unsigned long long pool_tail_digest(void);
/* NULL when the device is out of memory: *oom names the error. */
void *pool_alloc(size_t bytes, cudaStream_t stream, const char **oom);
void pool_free(void *p, cudaStream_t stream);
void pool_record_stream(void *p, cudaStream_t stream);
void pool_stats(struct pool_stats *out);
/* Synchronizes the device and gives every segment back. */
void pool_release(void);

/* ---- trainer_vmm.c: a growable range (PyTorch's expandable segment) ----- */
struct vmm_range {
	CUdeviceptr base;
	size_t reserved, mapped, chunk; /* mapped: bytes from base, whole chunks */
	CUmemGenericAllocationHandle *chunks;
	size_t nchunks;
};
/* Reserves the range for the small (chunks of one granule) or the large
 * pool (20 MiB chunks). */
void vmm_reserve(struct vmm_range *r, int small);
/* Maps chunks at the end for at least `need` more bytes; returns the bytes
 * added, or 0 (nothing changed) with *oom set when the device is full. */
size_t vmm_grow(struct vmm_range *r, size_t need, const char **oom);
/* Unmaps and releases every chunk and frees the reservation. */
void vmm_release(struct vmm_range *r);

/* ---- trainer_kernels.c -------------------------------------------------- */
enum launch_path {
	LAUNCH_RUNTIME,   /* cudaLibraryLoadFromFile / cudaLibraryGetKernel / cudaLaunchKernel */
	LAUNCH_DRIVER,    /* cuModuleLoad / cuModuleGetFunction / cuLaunchKernel */
	LAUNCH_DRIVER_EX, /* the same module, launched with cuLaunchKernelEx */
	/* cuLaunchKernelEx with a cluster of TRAINER_CLUSTER blocks (x) */
	LAUNCH_DRIVER_CLUSTER,
	LAUNCH_DRIVER_COOP, /* cuLaunchCooperativeKernel */
};
#define TRAINER_CLUSTER 2 /* as in kernels/reduce.cu */

struct kmodule {
	int runtime; /* loaded through cudart's library API */
	cudaLibrary_t lib;
	CUmodule mod;
};

struct kernel {
	enum launch_path path;
	cudaKernel_t rt;
	CUfunction fn;
	const char *name;
};

/* Loads DIR/NAME.so, or DIR/sm_90/NAME.cubin when the driver refuses the
 * .so as an image it cannot use (a real GPU) or --kernel-format says so. */
void kmodule_load(struct kmodule *m, const struct trainer_opts *o, const char *name, int runtime);
void kernel_get(struct kernel *k, struct kmodule *m, const char *name, enum launch_path path);
/* 1-D launch of `threads` threads in blocks of `block`. */
void launch1d(const struct kernel *k, long long threads, unsigned block, cudaStream_t s,
              void **args);
void launch(const struct kernel *k, dim3 grid, dim3 block, unsigned smem, cudaStream_t s,
            void **args);

/* ---- trainer_blas.c ----------------------------------------------------- */
/* Row-major C[M x N] = alpha * op(A) op(B) + beta * C, A stored M x K
 * (K x M when ta), B stored K x N (N x K when tb); batched over `batch`
 * problems at the given element strides. */
void matmul(cublasHandle_t h, int ta, int tb, int M, int N, int K, float alpha, const float *A,
            const float *B, float beta, float *C);
void matmul_batched(cublasHandle_t h, int ta, int tb, int M, int N, int K, float alpha,
                    const float *A, long long sa, const float *B, long long sb, float beta,
                    float *C, long long sc, int batch);

/* ---- trainer_data.c ----------------------------------------------------- */
/* splitmix64 stream: deterministic host data and initial parameters. */
uint64_t rng_next(uint64_t *state);
float rng_uniform(uint64_t *state); /* [-1, 1) */

/* Pinned (cudaMallocHost) host memory, or plain malloc. */
void *host_alloc(size_t bytes, int pinned);
void host_free(void *p, int pinned);

/* Copies inputs host-to-device on a second stream from a plain (or pinned)
 * staging buffer; the compute stream waits on an event recorded there, and
 * the next copy waits until the compute stream is done with the buffer. */
struct stager {
	cudaStream_t copy, compute;
	cudaEvent_t copied, consumed;
	void *host;
	size_t cap;
	int pinned;
};
void stager_init(struct stager *st, cudaStream_t compute, size_t cap, int pinned);
/* Returns the host staging buffer, once the previous copy from it is done. */
void *stager_host(struct stager *st);
/* Queues the copy of `bytes` staged bytes to dst and makes compute wait. */
void stager_send(struct stager *st, void *dst, size_t bytes);
/* Call after the compute stream's last use of the staged device data. */
void stager_consumed(struct stager *st);
void stager_destroy(struct stager *st);

/* A parameter tensor with its gradient and Adam moments. */
struct param {
	float *w, *g, *m, *v;
	int n;
	const char *name;
};
/* Allocates the four buffers; w is filled with scale * uniform (or `fill`
 * when scale is 0), the others are zeroed. */
void param_init(struct param *p, const char *name, int n, float scale, float fill, uint64_t *rng);
void param_zero_grads(struct param *ps, int n, cudaStream_t s);
/* FNV-1a 64 over the bytes of every tensor, copied back in order. */
uint64_t params_checksum(const struct param *ps, int n, float *const *extra, const int *extra_n,
                         int n_extra);

/* Runs fn(arg) on a new host thread (which first binds the device) and
 * joins it; used for --bwd-thread. */
void run_on_thread(void (*fn)(void *), void *arg);

/* ---- trainer_dist.c ------------------------------------------------------ */
/* --ranks N: one process per rank (RANK or LOCAL_RANK from torchrun), a
 * communicator made through the rendezvous directory, each rank on its own
 * shard of the data, the parameters broadcast from rank 0 at the start and
 * the gradients averaged across ranks before every optimizer step (one
 * group of all-reduces on a stream of its own, as DDP does). */
void dist_init(const struct trainer_opts *o, cudaStream_t compute);
int dist_rank(void);
void dist_broadcast_params(struct param *ps, int n);
void dist_average_grads(struct param *ps, int n);
void dist_finish(void);

/* ---- trainer_loop.c ----------------------------------------------------- */
/* A model as trainer_run drives it.  The pointers name the program's own
 * statics, which trainer_run sets before the hooks that use them run. */
struct trainer_model {
	cudaStream_t *stream; /* the compute stream */
	cublasHandle_t *blas; /* bound to *stream */
	float **loss;         /* the device float the loss kernels accumulate into */
	int *batch;           /* this iteration's batch size */
	struct param *params; /* filled by init; checksummed at the end */
	const int *nparams;
	float *const *extra; /* more tensors for the checksum (may be NULL) */
	const int *extra_n;
	int n_extra;
	size_t sample_bytes; /* staged input bytes per sample */
	void (*load_kernels)(void);
	int (*init)(void); /* parameters and fixed data; nonzero: exit status */
	void (*make_batch)(void *host, int B, int iter, int micro);
	void (*forward)(void *input, int B); /* input: the batch, staged on the device */
	void (*backward)(void *unused);
	void (*step)(int step); /* the optimizer; steps count from 1 */
};
/* Sets up device, stream and cuBLAS, trains for o->iters iterations
 * printing `iter N loss HEX`, then `checksum HEX16`.  Returns the exit
 * status. */
int trainer_run(const struct trainer_opts *o, const struct trainer_model *m);
/* One adam_step launch (optim.cu) over parameter p. */
void adam_launch(const struct kernel *k, struct param *p, float lr, float b1, float b2, float eps,
                 float wd, int decoupled, int step, cudaStream_t s);

#endif
