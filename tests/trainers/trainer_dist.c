/*
 * trainer_dist.c — data parallelism over processes (--ranks N), the way
 * torch.nn.parallel.DistributedDataParallel runs: torchrun starts one
 * process per rank and says which in RANK (LOCAL_RANK on one machine);
 * rank 0 makes the NCCL unique id and hands it over through the
 * rendezvous directory (as torch hands it over through its store); every
 * rank trains on its own shard of the data; the parameters are broadcast
 * from rank 0 once, and before every optimizer step the gradients are
 * averaged across ranks: one group of all-reduces on a communication
 * stream that waits for the backward pass, the optimizer waiting for it.
 */
#include "trainer.h"

#include <errno.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
	int rank, ranks;
	ncclComm_t comm;
	cudaStream_t compute, comm_stream;
	cudaEvent_t ready, done;
} D = {.ranks = 1};

static void nccl_check(ncclResult_t r, const char *call)
{
	if (r == ncclSuccess)
		return;
	fprintf(stderr, "%s: %s failed: %s (%s)\n", trainer_prog, call, ncclGetErrorString(r),
	        ncclGetLastError(D.comm));
	exit(2);
}
#define NC(call) nccl_check((call), #call)

static int env_int(const char *name, int fallback)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : fallback;
}

/* Rank 0 writes the id under a temporary name and renames it in place;
 * the others wait for it (two minutes at most). */
static void rendezvous(const char *dir, ncclUniqueId *id)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/nccl-id", dir);
	if (D.rank == 0) {
		NC(ncclGetUniqueId(id));
		snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
		FILE *f = fopen(tmp, "wb");
		if (!f || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) || rename(tmp, path)) {
			fprintf(stderr, "%s: cannot write %s: %s\n", trainer_prog, path,
			        strerror(errno));
			exit(2);
		}
		return;
	}
	for (int tries = 0; tries < 120000; tries++) {
		FILE *f = fopen(path, "rb");
		if (f) {
			size_t n = fread(id, sizeof(*id), 1, f);
			fclose(f);
			if (n == 1)
				return;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "%s: rank %d: no %s from rank 0 after two minutes\n", trainer_prog, D.rank,
	        path);
	exit(2);
}

void dist_init(const struct trainer_opts *o, cudaStream_t compute)
{
	D.ranks = o->ranks;
	if (D.ranks == 1)
		return;
	D.rank = env_int("RANK", env_int("LOCAL_RANK", -1));
	int world = env_int("WORLD_SIZE", D.ranks);
	if (D.rank < 0 || D.rank >= D.ranks || world != D.ranks) {
		fprintf(
		    stderr,
		    "%s: --ranks %d needs RANK (or LOCAL_RANK) in [0, %d) and WORLD_SIZE %d, as "
		    "torchrun sets them\n",
		    trainer_prog, D.ranks, D.ranks, D.ranks);
		exit(1);
	}
	ncclUniqueId id;
	rendezvous(o->rendezvous, &id);
	NC(ncclCommInitRank(&D.comm, D.ranks, id, D.rank));
	D.compute = compute;
	RT(cudaStreamCreateWithFlags(&D.comm_stream, cudaStreamNonBlocking));
	RT(cudaEventCreateWithFlags(&D.ready, cudaEventDisableTiming));
	RT(cudaEventCreateWithFlags(&D.done, cudaEventDisableTiming));
}

int dist_rank(void)
{
	return D.rank;
}

void dist_broadcast_params(struct param *ps, int n)
{
	if (D.ranks == 1)
		return;
	NC(ncclGroupStart());
	for (int i = 0; i < n; i++)
		NC(ncclBroadcast(ps[i].w, ps[i].w, (size_t)ps[i].n, ncclFloat32, 0, D.comm,
		                 D.compute));
	NC(ncclGroupEnd());
}

void dist_average_grads(struct param *ps, int n)
{
	if (D.ranks == 1)
		return;
	RT(cudaEventRecord(D.ready, D.compute));
	RT(cudaStreamWaitEvent(D.comm_stream, D.ready, 0));
	NC(ncclGroupStart());
	for (int i = 0; i < n; i++)
		NC(ncclAllReduce(ps[i].g, ps[i].g, (size_t)ps[i].n, ncclFloat32, ncclAvg, D.comm,
		                 D.comm_stream));
	NC(ncclGroupEnd());
	RT(cudaEventRecord(D.done, D.comm_stream));
	RT(cudaStreamWaitEvent(D.compute, D.done, 0));
}

void dist_finish(void)
{
	if (D.ranks == 1)
		return;
	RT(cudaStreamSynchronize(D.comm_stream));
	NC(ncclCommDestroy(D.comm));
	RT(cudaStreamDestroy(D.comm_stream));
	RT(cudaEventDestroy(D.ready));
	RT(cudaEventDestroy(D.done));
}
