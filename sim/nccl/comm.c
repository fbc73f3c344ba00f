/*
 * comm.c — communicators.  The unique id names a POSIX shared-memory
 * segment (and the process that made it); ncclCommInitRank opens it,
 * checks that every rank agrees on the number of ranks, and waits until
 * all have joined, as NCCL's bootstrap does (without a timeout: a missing
 * rank hangs the others, as it does with NCCL).  Rank 0 unlinks the name
 * once all joined.  Barriers count arrivals in the segment.
 */
#include "nccl_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC 0x534d484d4e495331ull /* "1SIMNMHS" */
#define ID_PREFIX "simnccl:"

/* Spins a little, then sleeps a little: ranks are processes of one machine,
 * possibly fewer cores than ranks. */
static void pause_a_bit(unsigned *spins)
{
	if (++*spins < 64) {
		sched_yield();
		return;
	}
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

void nccl_barrier(struct ncclComm *c)
{
	uint64_t want = (c->barriers + 1) * (uint64_t)c->nranks;
	atomic_fetch_add(&c->shm->arrived, 1);
	unsigned spins = 0;
	while (atomic_load(&c->shm->arrived) < want && !atomic_load(&c->shm->aborted))
		pause_a_bit(&spins);
	c->barriers++;
}

NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId *id)
{
	if (id == NULL) {
		nccl_set_error("ncclGetUniqueId: NULL id");
		return ncclInvalidArgument;
	}
	uint64_t rnd = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, &rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
		rnd = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (fd >= 0)
		close(fd);
	memset(id, 0, sizeof(*id));
	snprintf(id->internal, sizeof(id->internal), ID_PREFIX "/simnccl-%d-%016llx", (int)getpid(),
	         (unsigned long long)rnd);
	return ncclSuccess;
}

static int id_ok(const ncclUniqueId *id)
{
	return !strncmp(id->internal, ID_PREFIX, strlen(ID_PREFIX)) &&
	       memchr(id->internal, '\0', sizeof(id->internal));
}

static ncclResult_t join(struct ncclComm *c, const ncclUniqueId *id)
{
	const char *name = id->internal + strlen(ID_PREFIX);
	c->shm_bytes = sizeof(struct simnccl_shm) + (size_t)c->nranks * SIMNCCL_CHUNK;
	int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0) {
		nccl_set_error("ncclCommInitRank: shm_open %s: %s", name, strerror(errno));
		return ncclSystemError;
	}
	/* Every rank sizes it the same; growing is idempotent. */
	if (ftruncate(fd, (off_t)c->shm_bytes)) {
		nccl_set_error("ncclCommInitRank: ftruncate: %s", strerror(errno));
		close(fd);
		return ncclSystemError;
	}
	c->shm = mmap(NULL, c->shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c->shm == MAP_FAILED) {
		c->shm = NULL;
		nccl_set_error("ncclCommInitRank: mmap: %s", strerror(errno));
		return ncclSystemError;
	}
	/* The first rank to arrive sets the header; a fresh segment is zero. */
	uint64_t none = 0;
	struct simnccl_shm *h = c->shm;
	if (__atomic_compare_exchange_n(&h->magic, &none, SHM_MAGIC, 0, __ATOMIC_ACQ_REL,
	                                __ATOMIC_ACQUIRE))
		__atomic_store_n(&h->nranks, c->nranks, __ATOMIC_RELEASE);
	unsigned spins = 0;
	while (!__atomic_load_n(&h->nranks, __ATOMIC_ACQUIRE))
		pause_a_bit(&spins);
	if (__atomic_load_n(&h->nranks, __ATOMIC_ACQUIRE) != c->nranks) {
		nccl_set_error("ncclCommInitRank: rank %d says %d ranks, another said %d", c->rank,
		               c->nranks, h->nranks);
		return ncclInvalidUsage;
	}
	atomic_fetch_add(&h->joined, 1);
	spins = 0;
	while (atomic_load(&h->joined) < c->nranks)
		pause_a_bit(&spins);
	nccl_barrier(c);
	if (c->rank == 0)
		shm_unlink(name);
	return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank)
{
	if (out == NULL || nranks < 1 || rank < 0 || rank >= nranks) {
		nccl_set_error("ncclCommInitRank: rank %d of %d ranks", rank, nranks);
		return ncclInvalidArgument;
	}
	*out = NULL;
	if (!id_ok(&id)) {
		nccl_set_error("ncclCommInitRank: not a unique id from ncclGetUniqueId");
		return ncclInvalidArgument;
	}
	ncclResult_t r = nccl_setup();
	if (r != ncclSuccess)
		return r;
	struct ncclComm *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return ncclSystemError;
	c->rank = rank;
	c->nranks = nranks;
	CUdevice dev = 0;
	nccl_drv.ctx_get_device(&dev);
	c->device = (int)dev;
	r = join(c, &id);
	if (r != ncclSuccess) {
		if (c->shm)
			munmap(c->shm, c->shm_bytes);
		free(c);
		return r;
	}
	*out = c;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t *comm, int nranks, ncclUniqueId commId,
         int rank)
{
	return init_rank(comm, nranks, commId, rank);
}

NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t *comm, int nranks, ncclUniqueId commId,
         int rank, ncclConfig_t *config)
{
	/* Non-blocking communicators (config->blocking = 0) are not
	 * simulated: initialization completes before returning, which a
	 * non-blocking caller also accepts (ncclCommGetAsyncError: success). */
	(void)config;
	return init_rank(comm, nranks, commId, rank);
}

NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t *comm, int ndev, const int *devlist)
{
	/* One process per device: only a single-device communicator here. */
	if (comm == NULL || ndev != 1 || (devlist && devlist[0] != 0)) {
		nccl_set_error("ncclCommInitAll: the simulated device is one device");
		return ncclInvalidArgument;
	}
	ncclUniqueId id;
	ncclResult_t r = pncclGetUniqueId(&id);
	return r != ncclSuccess ? r : init_rank(comm, 1, id, 0);
}

static ncclResult_t release(ncclComm_t comm)
{
	if (comm == NULL)
		return ncclInvalidArgument;
	munmap(comm->shm, comm->shm_bytes);
	free(comm);
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm)
{
	return comm ? ncclSuccess : ncclInvalidArgument;
}

NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm)
{
	return release(comm);
}

NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm)
{
	if (comm)
		atomic_store(&comm->shm->aborted, 1);
	return release(comm);
}

NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t *asyncError)
{
	if (comm == NULL || asyncError == NULL)
		return ncclInvalidArgument;
	*asyncError = atomic_load(&comm->shm->aborted) ? ncclRemoteError : ncclSuccess;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int *count)
{
	if (comm == NULL || count == NULL)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int *device)
{
	if (comm == NULL || device == NULL)
		return ncclInvalidArgument;
	*device = comm->device;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int *rank)
{
	if (comm == NULL || rank == NULL)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}
