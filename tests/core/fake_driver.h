/*
 * fake_driver.h — a driver for unit tests, put into core's driver table
 * (remat_drv): a device with virtual memory, physical chunks backed by
 * host memory, events that complete when the test says so, and kernels
 * that are C functions run at launch on the memory they point to.  Every
 * map, unmap and access is checked: a kernel or copy touching an unmapped
 * page fails the test, as the simulated device would fault.
 *
 * It also stands in for core/log.c (the last warning is kept).
 */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#define FAKE_GRAN  (64u << 10)
#define FAKE_TOTAL (4u << 20)

/* A kernel: run(params) with kernelParams as the launch passed them. */
struct fake_kernel {
	const char *name;
	void (*run)(void **params);
};

struct fake_driver {
	CUdevice dev; /* what cuCtxGetDevice answers */
	int created, released;
	int create_limit; /* chunks alive at once before CUDA_ERROR_OUT_OF_MEMORY */
	int nmapped;
	int syncs, waits, host_waits;
	int events_complete_at_record; /* 1: every event is done as soon as recorded */
	int launches;                  /* kernels run */
	int fail_launch_at;            /* the n-th launch (from 1) fails, 0 never */
	int sticky;                    /* ... and so does every launch after it, as on a GPU */
	char last_warn[512];
};
extern struct fake_driver fake;

/* Fills remat_drv with the fake (cuLaunchKernel runs fake_kernels). */
void fake_install(void);
void fake_complete_all_events(void);
/* The byte at a device address; the page must be mapped. */
uint8_t *fake_byte(uint64_t va);
int fake_is_mapped(uint64_t va);
/* Copies to and from device memory, checked like a kernel's accesses. */
void fake_read(void *dst, uint64_t src, size_t n);
void fake_write(uint64_t dst, const void *src, size_t n);

#endif
