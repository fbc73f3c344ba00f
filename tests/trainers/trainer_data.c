/* trainer_data.c — deterministic host data, the input pipeline on a second
 * stream, parameters with their optimizer state, the checksum, and the
 * helper thread of --bwd-thread. */
#include "trainer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

float rng_uniform(uint64_t *s)
{
	return (float)(rng_next(s) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

void *host_alloc(size_t bytes, int pinned)
{
	void *p = NULL;
	if (pinned)
		RT(cudaMallocHost(&p, bytes));
	else if ((p = malloc(bytes)) == NULL) {
		fprintf(stderr, "%s: out of host memory (%zu bytes)\n", trainer_prog, bytes);
		exit(2);
	}
	return p;
}

void host_free(void *p, int pinned)
{
	if (pinned)
		RT(cudaFreeHost(p));
	else
		free(p);
}

void stager_init(struct stager *st, cudaStream_t compute, size_t cap, int pinned)
{
	memset(st, 0, sizeof *st);
	st->compute = compute;
	st->cap = cap;
	st->pinned = pinned;
	RT(cudaStreamCreateWithFlags(&st->copy, cudaStreamNonBlocking));
	RT(cudaEventCreateWithFlags(&st->copied, cudaEventDisableTiming));
	RT(cudaEventCreateWithFlags(&st->consumed, cudaEventDisableTiming));
	st->host = host_alloc(cap, pinned);
	/* Nothing consumed yet: the first copy need not wait. */
	RT(cudaEventRecord(st->consumed, compute));
}

void *stager_host(struct stager *st)
{
	/* The previous copy may still be reading the staging buffer. */
	RT(cudaEventSynchronize(st->copied));
	return st->host;
}

void stager_send(struct stager *st, void *dst, size_t bytes)
{
	RT(cudaStreamWaitEvent(st->copy, st->consumed, 0));
	RT(cudaMemcpyAsync(dst, st->host, bytes, cudaMemcpyHostToDevice, st->copy));
	RT(cudaEventRecord(st->copied, st->copy));
	RT(cudaStreamWaitEvent(st->compute, st->copied, 0));
}

void stager_consumed(struct stager *st)
{
	RT(cudaEventRecord(st->consumed, st->compute));
}

void stager_destroy(struct stager *st)
{
	RT(cudaStreamSynchronize(st->copy));
	host_free(st->host, st->pinned);
	RT(cudaEventDestroy(st->copied));
	RT(cudaEventDestroy(st->consumed));
	RT(cudaStreamDestroy(st->copy));
}

void param_init(struct param *p, const char *name, int n, float scale, float fill, uint64_t *rng)
{
	size_t bytes = (size_t)n * sizeof(float);
	p->name = name;
	p->n = n;
	p->w = dev_alloc(bytes, name);
	p->g = dev_alloc(bytes, "a gradient");
	p->m = dev_alloc(bytes, "an Adam moment");
	p->v = dev_alloc(bytes, "an Adam moment");
	float *host = malloc(bytes);
	if (host == NULL) {
		fprintf(stderr, "%s: out of host memory (%zu bytes)\n", trainer_prog, bytes);
		exit(2);
	}
	for (int i = 0; i < n; i++)
		host[i] = scale != 0.0f ? scale * rng_uniform(rng) : fill;
	RT(cudaMemcpy(p->w, host, bytes, cudaMemcpyHostToDevice));
	free(host);
	RT(cudaMemset(p->g, 0, bytes));
	RT(cudaMemset(p->m, 0, bytes));
	RT(cudaMemset(p->v, 0, bytes));
}

void param_zero_grads(struct param *ps, int n, cudaStream_t s)
{
	for (int i = 0; i < n; i++)
		RT(cudaMemsetAsync(ps[i].g, 0, (size_t)ps[i].n * sizeof(float), s));
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t hash_device(uint64_t h, const float *dev, int n)
{
	size_t bytes = (size_t)n * sizeof(float);
	float *host = malloc(bytes);
	if (host == NULL) {
		fprintf(stderr, "%s: out of host memory (%zu bytes)\n", trainer_prog, bytes);
		exit(2);
	}
	RT(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
	h = fnv1a(h, host, bytes);
	free(host);
	return h;
}

uint64_t params_checksum(const struct param *ps, int n, float *const *extra, const int *extra_n,
                         int n_extra)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < n; i++)
		h = hash_device(h, ps[i].w, ps[i].n);
	for (int i = 0; i < n_extra; i++)
		h = hash_device(h, extra[i], extra_n[i]);
	return h;
}

struct thread_job {
	void (*fn)(void *);
	void *arg;
};

static void *thread_main(void *p)
{
	struct thread_job *job = p;
	/* A new host thread has no current context until it binds a device;
	 * the driver-API launches below need one. */
	RT(cudaSetDevice(0));
	job->fn(job->arg);
	return NULL;
}

void run_on_thread(void (*fn)(void *), void *arg)
{
	struct thread_job job = {fn, arg};
	pthread_t t;
	int e = pthread_create(&t, NULL, thread_main, &job);
	if (e != 0) {
		fprintf(stderr, "%s: cannot start the backward thread: %s\n", trainer_prog,
		        strerror(e));
		exit(2);
	}
	pthread_join(t, NULL);
}
