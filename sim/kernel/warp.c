/*
 * warp.c — warp-synchronous operations (__shfl*_sync, __ballot_sync,
 * __any_sync, __all_sync, __syncwarp, __activemask) with a warp's real
 * semantics: the lanes named in the mask meet, the other warps of the block
 * do not wait for them, and a warp may split into groups with disjoint
 * masks.  What a GPU leaves undefined is either refused with a message
 * (a lane outside its own mask, lanes that disagree on the operation or
 * the mask, a width that is not a power of two) or made visible (a
 * shuffle from a lane that is not taking part returns SIMCUDA_WARP_JUNK).
 * Shuffle lane arithmetic follows the PTX shfl.sync definition.
 */
#include "block.h"

#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

const char *simk_op_name(unsigned op)
{
	static const char *const names[] = {
	    [SIMCUDA_WARP_SYNC] = "__syncwarp",
	    [SIMCUDA_WARP_SHFL_IDX] = "__shfl_sync",
	    [SIMCUDA_WARP_SHFL_UP] = "__shfl_up_sync",
	    [SIMCUDA_WARP_SHFL_DOWN] = "__shfl_down_sync",
	    [SIMCUDA_WARP_SHFL_XOR] = "__shfl_xor_sync",
	    [SIMCUDA_WARP_BALLOT] = "__ballot_sync",
	    [SIMCUDA_WARP_ANY] = "__any_sync",
	    [SIMCUDA_WARP_ALL] = "__all_sync",
	};
	if (op == LANE_ACTIVEMASK)
		return "__activemask";
	return op < sizeof names / sizeof names[0] ? names[op] : "an unknown warp operation";
}

void simk_lanes_str(char *buf, size_t len, unsigned mask)
{
	size_t at = (size_t)snprintf(buf, len, "lane%s", (mask & (mask - 1)) ? "s" : "");
	const char *sep = " ";
	for (unsigned l = 0; l < WARP_LANES && at < len; l++) {
		if (!(mask >> l & 1) || (l && (mask >> (l - 1) & 1)))
			continue;
		unsigned end = l;
		while (end + 1 < WARP_LANES && (mask >> (end + 1) & 1))
			end++;
		at += end > l ? (size_t)snprintf(buf + at, len - at, "%s%u-%u", sep, l, end)
		              : (size_t)snprintf(buf + at, len - at, "%s%u", sep, l);
		sep = ",";
	}
}

static int is_shuffle(unsigned op)
{
	return op >= SIMCUDA_WARP_SHFL_IDX && op <= SIMCUDA_WARP_SHFL_XOR;
}

void simk_warps_reset(struct grid_run *r, unsigned n)
{
	for (unsigned w = 0; w * WARP_LANES < n; w++) {
		unsigned lanes = n - w * WARP_LANES;
		struct warp_state *ws = &r->warps[w];
		ws->present = lanes >= WARP_LANES ? ~0u : (1u << lanes) - 1u;
		ws->done = ws->blocked = ws->leaders = ws->activemask = 0;
	}
}

/* Lanes that will never arrive: past the block's end, or returned. */
static unsigned gone(const struct warp_state *ws)
{
	return ~ws->present | ws->done;
}

/* The source lane of a shuffle, or -1 when the lane keeps its own value
 * (PTX: j = ...; if (!pval) j = lane). */
static int shuffle_source(unsigned op, unsigned lane, int arg, int width)
{
	unsigned seg = (unsigned)(WARP_LANES - (unsigned)width); /* c[12:8] */
	unsigned b = (unsigned)arg & 31u;
	unsigned max_lane = (lane & seg) | (op == SIMCUDA_WARP_SHFL_UP ? 0u : 31u & ~seg);
	unsigned min_lane = lane & seg;
	switch (op) {
	case SIMCUDA_WARP_SHFL_IDX:
		return (int)(min_lane | (b & ~seg));
	case SIMCUDA_WARP_SHFL_UP:
		return (int)lane - (int)b >= (int)max_lane ? (int)(lane - b) : -1;
	case SIMCUDA_WARP_SHFL_DOWN:
		return lane + b <= max_lane ? (int)(lane + b) : -1;
	default: /* SIMCUDA_WARP_SHFL_XOR */
		return (lane ^ b) <= max_lane ? (int)(lane ^ b) : -1;
	}
}

/* All lanes of `group` (lane bits of the warp whose ops start at `op`)
 * arrived: each gets its result. */
static void compute(struct lane_op *ops, unsigned group)
{
	unsigned votes = 0;
	for (unsigned l = 0; l < WARP_LANES; l++)
		if ((group >> l & 1) && ops[l].value)
			votes |= 1u << l;
	for (unsigned l = 0; l < WARP_LANES; l++) {
		if (!(group >> l & 1))
			continue;
		struct lane_op *o = &ops[l];
		switch (o->op) {
		case SIMCUDA_WARP_BALLOT:
			o->result = votes;
			break;
		case SIMCUDA_WARP_ANY:
			o->result = votes != 0;
			break;
		case SIMCUDA_WARP_ALL:
			o->result = votes == group;
			break;
		case SIMCUDA_WARP_SYNC:
			o->result = 0;
			break;
		default: {
			int src = shuffle_source(o->op, l, o->arg, o->width);
			if (src < 0)
				o->result = o->value;
			else if (group >> src & 1)
				o->result = ops[src].value;
			else
				o->result = SIMCUDA_WARP_JUNK; /* undefined on a GPU */
		}
		}
	}
}

/* Completes the group led by `leader` of warp w if every lane its mask
 * names has arrived or is gone. */
static void try_complete(struct grid_run *r, unsigned w, unsigned leader)
{
	struct warp_state *ws = &r->warps[w];
	struct warp_group *g = &ws->group[leader];
	if (g->mask & ~gone(ws) & ~g->members)
		return;
	compute(&r->lanes[w * WARP_LANES], g->members);
	for (unsigned l = 0; l < WARP_LANES; l++)
		if (g->members >> l & 1)
			r->state[w * WARP_LANES + l] = T_READY;
	ws->blocked &= ~g->members;
	ws->leaders &= ~(1u << leader);
}

/* __activemask waiters of warp w learn who came (to the same call site)
 * once no lane of the warp that could still join is running. */
static void settle_activemask(struct grid_run *r, unsigned w)
{
	struct warp_state *ws = &r->warps[w];
	unsigned first = w * WARP_LANES, waiting = ws->activemask;
	if (!waiting || (ws->blocked | ~ws->present) != ~0u)
		return;
	while (waiting) {
		int site = r->lanes[first + (unsigned)__builtin_ctz(waiting)].arg;
		unsigned group = 0;
		for (unsigned l = 0; l < WARP_LANES; l++)
			if ((waiting >> l & 1) && r->lanes[first + l].arg == site)
				group |= 1u << l;
		for (unsigned l = 0; l < WARP_LANES; l++)
			if (group >> l & 1) {
				r->lanes[first + l].result = group;
				r->state[first + l] = T_READY;
			}
		waiting &= ~group;
	}
	ws->blocked &= ~ws->activemask;
	ws->activemask = 0;
}

void simk_warp_left(struct grid_run *r, unsigned t, int returned)
{
	unsigned w = t / WARP_LANES, bit = 1u << (t % WARP_LANES);
	struct warp_state *ws = &r->warps[w];
	ws->blocked |= bit;
	if (returned) {
		ws->done |= bit;
		/* Groups whose masks name it may now be complete. */
		for (unsigned pending = ws->leaders; pending; pending &= pending - 1)
			try_complete(r, w, (unsigned)__builtin_ctz(pending));
	}
	settle_activemask(r, w);
}

void simk_warp_ready(struct grid_run *r, unsigned t)
{
	r->warps[t / WARP_LANES].blocked &= ~(1u << (t % WARP_LANES));
}

/* The group lane `lane` of warp w joins with its operation: lanes named in
 * each other's masks must be in the same operation with the same mask
 * ("all non-exited threads named in mask must execute the same intrinsic
 * with the same mask"); returns the group's leader. */
static unsigned join(struct grid_run *r, unsigned w, unsigned lane, const struct lane_op *mine)
{
	struct warp_state *ws = &r->warps[w];
	unsigned bit = 1u << lane;
	for (unsigned pending = ws->leaders; pending; pending &= pending - 1) {
		unsigned leader = (unsigned)__builtin_ctz(pending);
		struct warp_group *g = &ws->group[leader];
		if (g->op == mine->op && g->mask == mine->mask) {
			g->members |= bit;
			return leader;
		}
		if ((g->mask & bit) || (mine->mask & g->members)) {
			unsigned other = (unsigned)__builtin_ctz(g->members);
			simk_fatal(r,
			           "warp %u: lane %u calls %s(mask 0x%08x) while lane %u waits in "
			           "%s(mask 0x%08x)",
			           w, lane, simk_op_name(mine->op), mine->mask, other,
			           simk_op_name(g->op), g->mask);
		}
	}
	ws->group[lane] = (struct warp_group){.op = mine->op, .mask = mine->mask, .members = bit};
	ws->leaders |= bit;
	return lane;
}

static void check_call(const struct grid_run *r, unsigned me, const struct lane_op *o)
{
	unsigned lane = me % WARP_LANES;
	if (o->op > SIMCUDA_WARP_ALL)
		simk_fatal(r, "unknown warp operation %u", o->op);
	if (!(o->mask >> lane & 1))
		simk_fatal(r,
		           "thread %u calls %s with mask 0x%08x, which leaves out its own lane %u",
		           me, simk_op_name(o->op), o->mask, lane);
	if (is_shuffle(o->op) &&
	    (o->width < 1 || o->width > (int)WARP_LANES || (o->width & (o->width - 1))))
		simk_fatal(r, "thread %u calls %s with width %d (a power of two from 1 to 32)", me,
		           simk_op_name(o->op), o->width);
}

/* A block of one thread may run as a plain loop: its lone lane completes
 * every warp operation on arrival. */
static unsigned long long lone_lane(const struct grid_run *r, struct lane_op *o)
{
	check_call(r, 0, o);
	compute(o, 1);
	return o->result;
}

EXPORT unsigned long long simcuda_warp(enum simcuda_warp_op op, unsigned mask,
                                       unsigned long long value, int arg, int width)
{
	struct grid_run *r = simk_run;
	struct lane_op mine = {.op = op, .mask = mask, .arg = arg, .width = width, .value = value};
	if (r == NULL)
		simk_fatal(NULL, "%s called outside a kernel", simk_op_name(op));
	if (!r->fibered) {
		if (r->block_threads == 1)
			return lone_lane(r, &mine);
		simk_fatal(r, "calls %s but is not marked as synchronizing (synchronizes is 0)",
		           simk_op_name(op));
	}
	unsigned me = r->current, w = me / WARP_LANES;
	check_call(r, me, &mine);
	r->lanes[me] = mine;
	r->state[me] = T_WARP;
	r->warps[w].blocked |= 1u << (me % WARP_LANES);
	try_complete(r, w, join(r, w, me % WARP_LANES, &mine));
	if (r->state[me] != T_READY) {
		settle_activemask(r, w);
		simk_block(r);
	}
	return r->lanes[me].result;
}

EXPORT unsigned simcuda_activemask(int site)
{
	struct grid_run *r = simk_run;
	if (r == NULL)
		simk_fatal(NULL, "__activemask called outside a kernel");
	if (!r->fibered) {
		if (r->block_threads == 1)
			return 1;
		simk_fatal(r, "calls __activemask but is not marked as synchronizing "
		              "(synchronizes is 0)");
	}
	unsigned me = r->current, w = me / WARP_LANES, bit = 1u << (me % WARP_LANES);
	r->lanes[me] = (struct lane_op){.op = LANE_ACTIVEMASK, .arg = site};
	r->state[me] = T_WARP;
	r->warps[w].blocked |= bit;
	r->warps[w].activemask |= bit;
	settle_activemask(r, w);
	if (r->state[me] != T_READY)
		simk_block(r);
	return (unsigned)r->lanes[me].result;
}
