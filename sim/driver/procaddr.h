/*
 * procaddr.h — the cuGetProcAddress version table (generated from
 * cudaTypedefs.h by gen-procaddr.sh): one row per ABI variant of each
 * driver function.
 */
#ifndef SIMCUDA_PROCADDR_H
#define SIMCUDA_PROCADDR_H

struct procaddr_entry {
	const char *name;   /* as callers ask for it: "cuMemAlloc" */
	int version;        /* CUDA version that introduced this variant */
	int per_thread;     /* the _ptsz/_ptds variant */
	const char *symbol; /* exported name: "cuMemAlloc_v2" */
	void *fn;
};

extern const struct procaddr_entry procaddr_table[];
extern const unsigned procaddr_count;

#endif
