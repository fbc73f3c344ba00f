/*
 * cooperative_groups/reduce.h — cg::reduce over a static tile for the
 * simulated device: the butterfly the toolkit's shuffle path uses
 * (out = op(out, shfl_xor(out, m)) for m = N/2 ... 1), so every lane of
 * the tile gets the same bits.  See ../cooperative_groups.h.
 */
#ifndef SIMCUDA_COOPERATIVE_GROUPS_REDUCE_H
#define SIMCUDA_COOPERATIVE_GROUPS_REDUCE_H

#include <cooperative_groups.h>

namespace cooperative_groups
{

template <unsigned N, typename P, typename T, typename Op>
static inline T reduce(const thread_block_tile<N, P> &group, T val, Op op)
{
	for (unsigned mask = N >> 1; mask > 0; mask >>= 1)
		val = op(val, group.shfl_xor(val, mask));
	return val;
}

} // namespace cooperative_groups

#endif
