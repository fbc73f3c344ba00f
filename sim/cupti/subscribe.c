/*
 * subscribe.c — the callback API: one subscriber, per-callback enables.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "cupti_int.h"

#define MAX_CBID 1024
_Static_assert(CUPTI_DRIVER_TRACE_CBID_SIZE <= MAX_CBID, "driver cbids");
_Static_assert(CUPTI_RUNTIME_TRACE_CBID_SIZE <= MAX_CBID, "runtime cbids");

struct CUpti_Subscriber_st {
	CUpti_CallbackFunc callback;
	void *userdata;
	char name[CUPTI_SUBSCRIBER_NAME_MAX_LEN + 1];
	_Atomic unsigned char enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
};

/* Like the real CUPTI, one subscriber per process. */
static struct CUpti_Subscriber_st the_subscriber;
static _Atomic(struct CUpti_Subscriber_st *) active; /* what hooks deliver to */
static atomic_int claimed;                           /* the slot is taken */

/* Number of callback ids of each domain; 0 for domains without ids. */
static unsigned domain_size(CUpti_CallbackDomain d)
{
	switch (d) {
	case CUPTI_CB_DOMAIN_DRIVER_API:
		return CUPTI_DRIVER_TRACE_CBID_SIZE;
	case CUPTI_CB_DOMAIN_RUNTIME_API:
		return CUPTI_RUNTIME_TRACE_CBID_SIZE;
	case CUPTI_CB_DOMAIN_RESOURCE:
		return CUPTI_CBID_RESOURCE_SIZE;
	case CUPTI_CB_DOMAIN_SYNCHRONIZE:
		return CUPTI_CBID_SYNCHRONIZE_SIZE;
	case CUPTI_CB_DOMAIN_NVTX:
		return CUPTI_CBID_NVTX_SIZE;
	case CUPTI_CB_DOMAIN_STATE:
		return CUPTI_CBID_STATE_SIZE;
	default:
		return 0;
	}
}

int cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	struct CUpti_Subscriber_st *s = atomic_load_explicit(&active, memory_order_acquire);
	return s && (unsigned)domain < CUPTI_CB_DOMAIN_SIZE && cbid < MAX_CBID &&
	       atomic_load_explicit(&s->enabled[domain][cbid], memory_order_relaxed);
}

void cupti_deliver_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const CUpti_CallbackData *data)
{
	struct CUpti_Subscriber_st *s = atomic_load_explicit(&active, memory_order_acquire);
	if (s && s->callback)
		s->callback(s->userdata, domain, cbid, data);
}

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                             void *userdata, CUpti_SubscriberParams *params)
{
	if (!subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	CUptiResult r = cupti_init();
	if (r != CUPTI_SUCCESS)
		return r;
	/* Claim the one slot first, fill it, then publish it: hooks on other
	 * threads never see a half-made subscriber. */
	int unclaimed = 0;
	if (!atomic_compare_exchange_strong(&claimed, &unclaimed, 1)) {
		if (params && params->oldSubscriberName && params->oldSubscriberSize)
			snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s",
			         the_subscriber.name[0] ? the_subscriber.name : "CUPTI");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
		for (unsigned i = 0; i < MAX_CBID; i++)
			atomic_store_explicit(&the_subscriber.enabled[d][i], 0,
			                      memory_order_relaxed);
	the_subscriber.callback = callback;
	the_subscriber.userdata = userdata;
	the_subscriber.name[0] = 0;
	if (params && params->subscriberName)
		snprintf(the_subscriber.name, sizeof(the_subscriber.name), "%s",
		         params->subscriberName);
	atomic_store_explicit(&active, &the_subscriber, memory_order_release);
	*subscriber = &the_subscriber;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                        CUpti_CallbackFunc callback, void *userdata)
{
	return subscribe(subscriber, callback, userdata, NULL);
}

CUPTI_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                           CUpti_CallbackFunc callback, void *userdata,
                                           CUpti_SubscriberParams *pParams)
{
	return subscribe(subscriber, callback, userdata, pParams);
}

static int valid(CUpti_SubscriberHandle s)
{
	return s && s == &the_subscriber && atomic_load(&active) == s;
}

CUPTI_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	if (!valid(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	cupti_drop_subscriber();
	return CUPTI_SUCCESS;
}

void cupti_drop_subscriber(void)
{
	atomic_store(&active, NULL);
	atomic_store(&claimed, 0);
}

CUPTI_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!valid(subscriber) || cbid >= domain_size(domain))
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&subscriber->enabled[domain][cbid], enable ? 1 : 0);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
                                               CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!enable || !valid(subscriber) || cbid >= domain_size(domain))
		return CUPTI_ERROR_INVALID_PARAMETER;
	*enable = atomic_load(&subscriber->enabled[domain][cbid]);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain)
{
	unsigned n = domain_size(domain);
	if (!valid(subscriber) || !n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (unsigned i = 0; i < n; i++)
		atomic_store(&subscriber->enabled[domain][i], enable ? 1 : 0);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	if (!valid(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
		if (domain_size((CUpti_CallbackDomain)d))
			cuptiEnableDomain(enable, subscriber, (CUpti_CallbackDomain)d);
	return CUPTI_SUCCESS;
}
