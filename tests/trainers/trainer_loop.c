/*
 * trainer_loop.c — the run both programs share: device, stream and
 * cuBLAS setup, the iteration loop (gradient accumulation, staged
 * inputs, optional backward thread, loss read back) and the final
 * checksum.  Each program plugs in its model through struct trainer_model;
 * keeping one copy keeps the CUDA call order of mlp and gpt alike, which
 * the libremat tests' recorded traces depend on.
 */
#include "trainer.h"

#include <stdio.h>

int trainer_run(const struct trainer_opts *o, const struct trainer_model *m)
{
	RT(cudaSetDevice(0));
	RT(cudaFree(0)); /* creates the primary context */
	RT(cudaStreamCreateWithFlags(m->stream, cudaStreamNonBlocking));
	cudaStream_t s = *m->stream;
	alloc_setup(o->alloc, o->alloc_stats, s);
	if (o->pool_tail)
		pool_fill_tails();
	m->load_kernels();
	blas_check(cublasCreate(m->blas), "cublasCreate");
	blas_check(cublasSetStream(*m->blas, s), "cublasSetStream");
	if (o->blas_workspace) {
		/* Allocated once and kept, as PyTorch keeps a handle's workspace
		 * from its caching allocator. */
		void *ws = dev_alloc(o->blas_workspace, "the cuBLAS workspace");
		blas_check(cublasSetWorkspace(*m->blas, ws, o->blas_workspace),
		           "cublasSetWorkspace");
	}
	int rc = m->init();
	if (rc)
		return rc;

	/* cudaMemset is asynchronous to the host and runs on the legacy stream,
	 * which the non-blocking compute stream does not wait for. */
	RT(cudaDeviceSynchronize());
	dist_init(o, s);
	dist_broadcast_params(m->params, *m->nparams);

	size_t in_bytes = (size_t)o->batch * m->sample_bytes;
	void *input = dev_alloc(in_bytes, "the input batch");
	float *loss_dev = dev_alloc(sizeof(float), "the loss");
	*m->loss = loss_dev;
	struct stager st;
	stager_init(&st, s, in_bytes, o->pinned);
	dev_record_stream(input, st.copy); /* the copy stream writes it */
	float *loss_host = host_alloc(sizeof(float), o->pinned);

	for (int it = 0; it < o->iters; it++) {
		int B = trainer_batch(o, it);
		*m->batch = B;
		RT(cudaMemsetAsync(loss_dev, 0, sizeof(float), s));
		param_zero_grads(m->params, *m->nparams, s);
		for (int micro = 0; micro < o->accum; micro++) {
			/* Each rank its own shard of the data. */
			m->make_batch(stager_host(&st), B, it, micro + dist_rank() * 100003);
			stager_send(&st, input, (size_t)B * m->sample_bytes);
			m->forward(input, B);
			if (o->bwd_thread)
				run_on_thread(m->backward, NULL);
			else
				m->backward(NULL);
			stager_consumed(&st);
		}
		dist_average_grads(m->params, *m->nparams);
		m->step(it + 1);
		RT(cudaMemcpyAsync(loss_host, loss_dev, sizeof(float), cudaMemcpyDeviceToHost, s));
		RT(cudaStreamSynchronize(s));
		printf("iter %d loss %a\n", it, (double)*loss_host);
		if (o->pool_tail == it + 1)
			printf("pool tail %016llx\n", pool_tail_digest());
		fflush(stdout);
	}
	printf("checksum %016llx\n", (unsigned long long)params_checksum(
	                                 m->params, *m->nparams, m->extra, m->extra_n, m->n_extra));
	dist_finish();
	stager_destroy(&st);
	blas_check(cublasDestroy(*m->blas), "cublasDestroy");
	host_free(loss_host, o->pinned);
	alloc_finish();
	return 0;
}

void adam_launch(const struct kernel *k, struct param *p, float lr, float b1, float b2, float eps,
                 float wd, int decoupled, int step, cudaStream_t s)
{
	void *a[] = {&p->w, &p->g, &p->m, &p->v, &p->n,      &lr,
	             &b1,   &b2,   &eps,  &wd,   &decoupled, &step};
	launch1d(k, p->n, 256, s, a);
}
