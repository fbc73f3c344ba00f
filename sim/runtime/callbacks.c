/*
 * callbacks.c — the frame around every runtime call: lazy init, CUPTI
 * runtime-domain enter/exit callbacks, correlation ids, last error.
 */
#include "rt.h"

/* Runtime calls do not nest today, but a callback may call the runtime:
 * only the outermost call marks the driver's outer correlation id, so the
 * activity of a launch carries the id of the call the application made. */
static __thread int tl_depth;

static void fire(const struct rt_call *c, CUpti_ApiCallbackSite site, const cudaError_t *ret)
{
	const struct simcuda_hooks *h = rt.exp->hooks();
	if (h && h->api)
		h->api(CUPTI_CB_DOMAIN_RUNTIME_API, c->cbid, site, c->name, c->params, ret,
		       c->correlation_id, c->symbol);
}

cudaError_t rt_enter(struct rt_call *c, CUpti_CallbackId cbid, const char *name, const void *params,
                     const char *symbol, enum rt_need need)
{
	rt_init_once();
	c->cbid = cbid;
	c->name = name;
	c->params = params;
	c->symbol = symbol;
	c->correlation_id = 0;
	c->outermost = tl_depth == 0;
	c->keep_last_error = 0;
	tl_depth++;
	if (rt.exp) {
		c->correlation_id = rt.exp->new_correlation_id();
		fire(c, CUPTI_API_ENTER, NULL);
		if (c->outermost)
			rt.exp->set_outer_correlation(c->correlation_id);
	}
	if (rt.init_error != cudaSuccess)
		return rt.init_error;
	if (need == RT_CONTEXT) {
		int dev = rt_current_device();
		cudaError_t e = rt_sticky_error(dev);
		return e != cudaSuccess ? e : rt_bind_context(dev);
	}
	return cudaSuccess;
}

cudaError_t rt_exit(struct rt_call *c, cudaError_t err)
{
	tl_depth--;
	if (!c->keep_last_error)
		rt_record_error(err);
	if (rt.exp) {
		if (c->outermost)
			rt.exp->set_outer_correlation(0);
		fire(c, CUPTI_API_EXIT, &err);
	}
	return err;
}
