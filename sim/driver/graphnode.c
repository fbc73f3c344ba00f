/*
 * graphnode.c — reading a graph node by node, as libraries and libremat
 * do to see what a graph will touch: cuGraphNodeGetType and the per-type
 * getters (kernel, memcpy, memset, host, event record and wait, memory
 * allocation and free nodes), a kernel node's launch attributes, and an
 * executable graph's instantiation flags.  A node is the op its graph
 * keeps (graph.c); pointers it hands out (kernelParams) live as long as
 * the graph.
 */
#include "module.h"

#include <cupti_activity.h>
#include <string.h>

static CUresult node_of(CUgraphNode h, const struct sim_op **out)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!handle_is(h, H_GRAPHNODE))
		return CUDA_ERROR_INVALID_VALUE;
	*out = (const struct sim_op *)h;
	return CUDA_SUCCESS;
}

static CUgraphNodeType type_of(const struct sim_op *op)
{
	switch (op->kind) {
	case OP_KERNEL:
		return CU_GRAPH_NODE_TYPE_KERNEL;
	case OP_MEMCPY:
		return CU_GRAPH_NODE_TYPE_MEMCPY;
	case OP_MEMSET:
		return CU_GRAPH_NODE_TYPE_MEMSET;
	case OP_HOSTFN:
		return CU_GRAPH_NODE_TYPE_HOST;
	case OP_RECORD:
		return op->u.ev.event ? CU_GRAPH_NODE_TYPE_EVENT_RECORD : CU_GRAPH_NODE_TYPE_EMPTY;
	case OP_WAIT:
		return op->u.ev.event ? CU_GRAPH_NODE_TYPE_WAIT_EVENT : CU_GRAPH_NODE_TYPE_EMPTY;
	case OP_ALLOC:
		return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
	case OP_FREE:
		return CU_GRAPH_NODE_TYPE_MEM_FREE;
	default:
		return CU_GRAPH_NODE_TYPE_EMPTY;
	}
}

static CUresult get_type(CUgraphNode h, CUgraphNodeType *type)
{
	const struct sim_op *op;
	CUresult r = node_of(h, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (type == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*type = type_of(op);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	cuGraphNodeGetType_params p = {hNode, type};
	API_CALL(cuGraphNodeGetType, &p, get_type(hNode, type));
}

/* The node of kind `kind`, or CUDA_ERROR_INVALID_VALUE for another type. */
static CUresult typed(CUgraphNode h, CUgraphNodeType want, const struct sim_op **out)
{
	CUresult r = node_of(h, out);
	if (r == CUDA_SUCCESS && type_of(*out) != want)
		r = CUDA_ERROR_INVALID_VALUE;
	return r;
}

static CUresult kernel_params(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_KERNEL, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_func *f = op->u.kernel.fn;
	memset(out, 0, sizeof(*out));
	/* A node made from a CUkernel launch names the kernel and, as func,
	 * the function it is in the current context. */
	out->func = (CUfunction)(f->is_kernel ? f->as_function : f);
	out->kern = f->is_kernel ? (CUkernel)f : NULL;
	out->gridDimX = op->u.kernel.grid.x;
	out->gridDimY = op->u.kernel.grid.y;
	out->gridDimZ = op->u.kernel.grid.z;
	out->blockDimX = op->u.kernel.block.x;
	out->blockDimY = op->u.kernel.block.y;
	out->blockDimZ = op->u.kernel.block.z;
	out->sharedMemBytes = op->u.kernel.smem;
	out->kernelParams = op->u.kernel.args;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
                                                      CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	cuGraphKernelNodeGetParams_v2_params p = {hNode, nodeParams};
	API_CALL(cuGraphKernelNodeGetParams_v2, &p, kernel_params(hNode, nodeParams));
}

static CUresult kernel_attribute(CUgraphNode h, CUkernelNodeAttrID id, CUkernelNodeAttrValue *v)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_KERNEL, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (v == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	const struct sim_launch_attrs *a = &op->u.kernel.attrs;
	memset(v, 0, sizeof(*v));
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
		v->cooperative = a->cooperative;
		return CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		v->clusterDim.x = a->cluster[0];
		v->clusterDim.y = a->cluster[1];
		v->clusterDim.z = a->cluster[2];
		return CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		v->priority = a->priority;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

EXPORT CUresult CUDAAPI cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                      CUkernelNodeAttrValue *value_out)
{
	cuGraphKernelNodeGetAttribute_params p = {hNode, attr, value_out};
	API_CALL(cuGraphKernelNodeGetAttribute, &p, kernel_attribute(hNode, attr, value_out));
}

static CUresult memcpy_params(CUgraphNode h, CUDA_MEMCPY3D *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_MEMCPY, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	int k = op->u.copy.kind;
	bool src_dev = k == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD || k == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	bool dst_dev = k == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD || k == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	memset(out, 0, sizeof(*out));
	out->srcMemoryType = src_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
	out->dstMemoryType = dst_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
	if (src_dev)
		out->srcDevice = (CUdeviceptr)(uintptr_t)op->u.copy.src;
	else
		out->srcHost = op->u.copy.src;
	if (dst_dev)
		out->dstDevice = (CUdeviceptr)(uintptr_t)op->u.copy.dst;
	else
		out->dstHost = op->u.copy.dst;
	out->WidthInBytes = out->srcPitch = out->dstPitch = op->u.copy.bytes;
	out->Height = out->srcHeight = out->dstHeight = 1;
	out->Depth = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
	cuGraphMemcpyNodeGetParams_params p = {hNode, nodeParams};
	API_CALL(cuGraphMemcpyNodeGetParams, &p, memcpy_params(hNode, nodeParams));
}

static CUresult memset_params(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_MEMSET, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	memset(out, 0, sizeof(*out));
	out->dst = (CUdeviceptr)(uintptr_t)op->u.set.dst;
	out->value = op->u.set.value;
	out->elementSize = op->u.set.elem;
	out->width = op->u.set.count;
	out->height = 1;
	out->pitch = op->u.set.count * op->u.set.elem;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode,
                                                   CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
	cuGraphMemsetNodeGetParams_params p = {hNode, nodeParams};
	API_CALL(cuGraphMemsetNodeGetParams, &p, memset_params(hNode, nodeParams));
}

static CUresult host_params(CUgraphNode h, CUDA_HOST_NODE_PARAMS *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_HOST, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	out->fn = op->u.host.fn;
	out->userData = op->u.host.data;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode,
                                                 CUDA_HOST_NODE_PARAMS *nodeParams)
{
	cuGraphHostNodeGetParams_params p = {hNode, nodeParams};
	API_CALL(cuGraphHostNodeGetParams, &p, host_params(hNode, nodeParams));
}

static CUresult event_of_node(CUgraphNode h, CUgraphNodeType want, CUevent *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, want, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUevent)op->u.ev.event;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
	cuGraphEventRecordNodeGetEvent_params p = {hNode, event_out};
	API_CALL(cuGraphEventRecordNodeGetEvent, &p,
	         event_of_node(hNode, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_out));
}

EXPORT CUresult CUDAAPI cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
	cuGraphEventWaitNodeGetEvent_params p = {hNode, event_out};
	API_CALL(cuGraphEventWaitNodeGetEvent, &p,
	         event_of_node(hNode, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_out));
}

static CUresult alloc_params(CUgraphNode h, CUDA_MEM_ALLOC_NODE_PARAMS *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_MEM_ALLOC, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	memset(out, 0, sizeof(*out));
	out->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	out->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	out->bytesize = gmem_size(op->u.mem.graph);
	out->dptr = (CUdeviceptr)op->u.mem.addr;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
                                                     CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
	cuGraphMemAllocNodeGetParams_params p = {hNode, params_out};
	API_CALL(cuGraphMemAllocNodeGetParams, &p, alloc_params(hNode, params_out));
}

static CUresult free_params(CUgraphNode h, CUdeviceptr *out)
{
	const struct sim_op *op;
	CUresult r = typed(h, CU_GRAPH_NODE_TYPE_MEM_FREE, &op);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUdeviceptr)op->u.mem.addr;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
	cuGraphMemFreeNodeGetParams_params p = {hNode, dptr_out};
	API_CALL(cuGraphMemFreeNodeGetParams, &p, free_params(hNode, dptr_out));
}

static CUresult exec_flags(CUgraphExec h, cuuint64_t *flags)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!handle_is(h, H_GRAPHEXEC) || flags == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = ((const struct sim_graph *)h)->flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
	cuGraphExecGetFlags_params p = {hGraphExec, flags};
	API_CALL(cuGraphExecGetFlags, &p, exec_flags(hGraphExec, flags));
}
