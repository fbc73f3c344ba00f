/*
 * trace.h — one profiled iteration in memory, as docs/trace-format.md
 * describes it on disk.  record.c fills it, trace_write.c writes it.
 */
#ifndef REMAT_TRACE_H
#define REMAT_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct remat_tbuf {
	uint64_t addr, size, rounded;
	int small, persistent;
	int64_t alloc_at, free_at, alloc_seq; /* -1: before / still live / not inside */
	char **site;                          /* "function+0xoff (object)", innermost first */
	size_t nsite;
};

struct remat_tkernel {
	char *name;
	int layout_known;
	size_t nparams;
	uint32_t (*param)[2]; /* offset, size */
};

struct remat_tref {
	int32_t buf;
	uint64_t off;      /* byte offset into the buffer */
	int64_t param_off; /* byte offset in the parameters; -1 for copies */
};

struct remat_top {
	int kind;         /* enum remat_op_kind */
	const char *via;  /* static string */
	int32_t kernel;   /* index in kernels, -1 when not a kernel */
	const char *name; /* kernel name (owned by the kernel entry) or op name */
	unsigned grid[3], block[3], shmem;
	int32_t stream;
	uint64_t params_off, params_len;
	struct remat_tref *refs;
	size_t nrefs;
	int32_t *reads, *writes;
	size_t nreads, nwrites;
	uint64_t bytes;
	int copy; /* enum remat_copy_kind */
	unsigned value;
	int64_t duration_ns;
	int replayable;
	const char *why_not; /* static string, "" when replayable */
	/* correlation ids of the API calls that issued it, for CUPTI */
	uint32_t corr_driver, corr_runtime;
	/* run mode: what the replay engine checks later iterations against */
	void *func;    /* CUfunction/CUkernel as launched */
	void *kinfo;   /* struct remat_kinfo of func */
	void *cstream; /* CUstream as issued */
	int via_extra; /* parameters came packed in `extra` */
	uint64_t sig;  /* the op's signature (record.c) */
	/* our hashing kernels launched before and after it (device path) */
	uint32_t hash_before, hash_after;
	uint32_t swap_copies; /* libremat's swap copies issued inside the op's call, before it */
};

struct remat_trace {
	uint64_t graph_hash;
	int pid;
	char *cmdline;
	char device[256];
	uint64_t device_memory, granularity;
	uint64_t period, iterations_seen, profiled, start_op;
	int64_t duration_ns;
	uint64_t persistent_bytes, peak_bytes, small_pool_bytes;
	struct remat_tbuf *bufs;
	size_t nbufs, capbufs;
	struct remat_tkernel *kernels;
	size_t nkernels, capkernels;
	struct remat_top *ops;
	size_t nops, capops;
	uint8_t *params;
	size_t params_len, params_cap;
	int cupti_available;
	const char *cupti_note; /* why durations are unknown, "" otherwise */
	uint64_t cupti_kernels, cupti_launches;
	int64_t cupti_mismatch;
};

/* Writes trace.json and params.bin into dir (created when missing) under
 * temporary names, renamed into place, trace.json last.  0, or -1 with one
 * message in err. */
int remat_trace_write(const struct remat_trace *t, const char *dir, char *err, size_t errlen);
void remat_trace_free(struct remat_trace *t);

/* FNV-1a 64, the hash of params.bin and of the graph signature. */
#define REMAT_FNV_OFFSET 0xcbf29ce484222325ULL
#define REMAT_FNV_PRIME  0x100000001b3ULL
static inline uint64_t remat_fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= REMAT_FNV_PRIME;
	}
	return h;
}

#endif
