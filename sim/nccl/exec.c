/*
 * exec.c — a launch of the simulated NCCL's kernel, on the stream's
 * worker: each collective in turn, through the communicator's segment in
 * rounds of at most one chunk per rank.  A round: every rank copies its
 * part into its slot, barrier, every rank reads what it needs from the
 * slots (a reduction adds rank 0's, then rank 1's, ...: the same bits on
 * every rank), barrier (so the slots may be written again).
 */
#include "nccl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t nccl_type_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8:
	case ncclUint8:
		return 1;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32:
		return 4;
	case ncclInt64:
	case ncclUint64:
	case ncclFloat64:
		return 8;
	default:
		return 0; /* 16- and 8-bit floats are not simulated */
	}
}

#define REDUCE_LOOP(T)                                                                             \
	do {                                                                                       \
		T *d = (T *)dst;                                                                   \
		const T *s = (const T *)src;                                                       \
		for (size_t i = 0; i < n; i++)                                                     \
			switch (op) {                                                              \
			case ncclProd:                                                             \
				d[i] = (T)(d[i] * s[i]);                                           \
				break;                                                             \
			case ncclMax:                                                              \
				d[i] = d[i] > s[i] ? d[i] : s[i];                                  \
				break;                                                             \
			case ncclMin:                                                              \
				d[i] = d[i] < s[i] ? d[i] : s[i];                                  \
				break;                                                             \
			default: /* sum, and average before its division */                        \
				d[i] = (T)(d[i] + s[i]);                                           \
			}                                                                          \
	} while (0)

/* dst op= src over n elements. */
static void reduce(void *dst, const void *src, size_t n, int type, int op)
{
	switch (type) {
	case ncclInt8:
		REDUCE_LOOP(int8_t);
		break;
	case ncclUint8:
		REDUCE_LOOP(uint8_t);
		break;
	case ncclInt32:
		REDUCE_LOOP(int32_t);
		break;
	case ncclUint32:
		REDUCE_LOOP(uint32_t);
		break;
	case ncclInt64:
		REDUCE_LOOP(int64_t);
		break;
	case ncclUint64:
		REDUCE_LOOP(uint64_t);
		break;
	case ncclFloat32:
		REDUCE_LOOP(float);
		break;
	default:
		REDUCE_LOOP(double);
		break;
	}
}

#define DIVIDE(T)                                                                                  \
	do {                                                                                       \
		T *d = (T *)dst;                                                                   \
		for (size_t i = 0; i < n; i++)                                                     \
			d[i] = (T)(d[i] / (T)nranks);                                              \
	} while (0)

static void average(void *dst, size_t n, int type, int nranks)
{
	switch (type) {
	case ncclInt8:
		DIVIDE(int8_t);
		break;
	case ncclUint8:
		DIVIDE(uint8_t);
		break;
	case ncclInt32:
		DIVIDE(int32_t);
		break;
	case ncclUint32:
		DIVIDE(uint32_t);
		break;
	case ncclInt64:
		DIVIDE(int64_t);
		break;
	case ncclUint64:
		DIVIDE(uint64_t);
		break;
	case ncclFloat32:
		DIVIDE(float);
		break;
	default:
		DIVIDE(double);
		break;
	}
}

/* dst = the reduction over ranks of their slots' first n elements. */
static void reduce_slots(struct ncclComm *c, void *dst, size_t n, const struct simnccl_op *op)
{
	size_t bytes = n * nccl_type_size(op->dtype);
	memcpy(dst, nccl_slot(c, 0), bytes);
	for (int r = 1; r < c->nranks; r++)
		reduce(dst, nccl_slot(c, r), n, op->dtype, op->redop);
	if (op->redop == ncclAvg)
		average(dst, n, op->dtype, c->nranks);
}

static void run_op(struct ncclComm *c, const struct simnccl_op *op)
{
	size_t es = nccl_type_size(op->dtype), per = SIMNCCL_CHUNK / es;
	unsigned char *send = (unsigned char *)(uintptr_t)op->send;
	unsigned char *recv = (unsigned char *)(uintptr_t)op->recv;
	int me = c->rank, n = c->nranks;
	switch (op->coll) {
	case SIMNCCL_ALL_REDUCE:
	case SIMNCCL_REDUCE:
		for (size_t at = 0; at < op->count; at += per) {
			size_t k = op->count - at < per ? op->count - at : per;
			memcpy(nccl_slot(c, me), send + at * es, k * es);
			nccl_barrier(c);
			if (op->coll == SIMNCCL_ALL_REDUCE || me == op->root)
				reduce_slots(c, recv + at * es, k, op);
			nccl_barrier(c);
		}
		break;
	case SIMNCCL_ALL_GATHER:
		for (size_t at = 0; at < op->count; at += per) {
			size_t k = op->count - at < per ? op->count - at : per;
			memcpy(nccl_slot(c, me), send + at * es, k * es);
			nccl_barrier(c);
			for (int r = 0; r < n; r++)
				memcpy(recv + ((size_t)r * op->count + at) * es, nccl_slot(c, r),
				       k * es);
			nccl_barrier(c);
		}
		break;
	case SIMNCCL_REDUCE_SCATTER:
		/* For each rank's block in turn: every rank offers its part. */
		for (int t = 0; t < n; t++)
			for (size_t at = 0; at < op->count; at += per) {
				size_t k = op->count - at < per ? op->count - at : per;
				memcpy(nccl_slot(c, me), send + ((size_t)t * op->count + at) * es,
				       k * es);
				nccl_barrier(c);
				if (me == t)
					reduce_slots(c, recv + at * es, k, op);
				nccl_barrier(c);
			}
		break;
	case SIMNCCL_BROADCAST:
		for (size_t at = 0; at < op->count; at += per) {
			size_t k = op->count - at < per ? op->count - at : per;
			if (me == op->root)
				memcpy(nccl_slot(c, me), send + at * es, k * es);
			nccl_barrier(c);
			memmove(recv + at * es, nccl_slot(c, op->root), k * es);
			nccl_barrier(c);
		}
		break;
	}
}

void nccl_run(const struct simnccl_args *args)
{
	struct ncclComm *c = args->comm;
	for (uint32_t i = 0; i < args->nops && i < SIMNCCL_MAX_OPS; i++)
		run_op(c, &args->ops[i]);
}
