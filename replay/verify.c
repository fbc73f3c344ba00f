/*
 * verify.c — REMAT_VERIFY=1: one iteration applies the plan's rebuilds
 * without evicting anything.  Before each op with rebuild steps, every
 * live buffer the plan would rebuild there is copied to the host, the
 * steps run in place (the buffer is still there, so the replay overwrites
 * it with what the rebuild would produce), and the result is compared
 * bitwise with the copy.  A buffer whose rebuild differs gets its original
 * content back and is excluded; the plan is then made again without the
 * excluded buffers.  Cost: two device-to-host copies of each rebuilt
 * buffer and a context synchronization per position with steps, once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/driver.h"
#include "../core/grow.h"
#include "../core/log.h"
#include "internal.h"

/* Kept across plans (the engine is reset at each): the buffers
 * verification excluded so far, and whether the plan in use was verified. */
static struct replay_verify {
	int32_t *excluded;
	int nexcluded;
	size_t capexcluded;
	int verified;
} verify_state;

int replay_verify_wanted(void)
{
	return remat_cfg.verify && !verify_state.verified;
}

int replay_verify_exclude(int32_t b)
{
	for (int i = 0; i < verify_state.nexcluded; i++)
		if (verify_state.excluded[i] == b)
			return 0;
	if (REMAT_GROW(verify_state.excluded, verify_state.nexcluded, verify_state.capexcluded))
		return 0;
	verify_state.excluded[verify_state.nexcluded++] = b;
	return 1;
}

static void exclude(int32_t b, int32_t pos, uint64_t off)
{
	if (!replay_verify_exclude(b))
		return;
	remat_log(REMAT_LOG_INFO,
	          "verify: buffer %d rebuilt before op %d differs from the original at byte %llu; "
	          "excluded",
	          b, pos, (unsigned long long)off);
}

void replay_verify_begin(int32_t pos, CUstream s)
{
	const struct pl_plan *pl = replay_engine.plan;
	uint32_t s0 = pl->step_off[pos], s1 = pl->step_off[pos + 1];
	if (s0 == s1)
		return;
	/* The live buffers rebuilt here, and their content now. */
	int32_t ids[64];
	uint8_t *orig[64];
	int n = 0;
	remat_drv.cuCtxSynchronize();
	for (uint32_t i = s0; i < s1 && n < 64; i++) {
		int32_t b = pl->steps[i].arg;
		/* a rebuild's map, or a prefetch (its copy comes back in place) */
		if ((pl->steps[i].kind != PL_STEP_MAP && pl->steps[i].kind != PL_STEP_PREFETCH) ||
		    !replay_engine.live[b])
			continue;
		const struct prof_buf *u = &replay_engine.profile->bufs[b];
		uint8_t *h = malloc(u->size);
		if (!h || remat_drv.cuMemcpyDtoH(h, u->addr, u->size) != CUDA_SUCCESS) {
			free(h);
			continue;
		}
		ids[n] = b;
		orig[n++] = h;
	}
	/* A buffer released again at this position that no replay here reads
	 * was mapped only to take a side output (a memset across regions): it
	 * is live only because nothing is evicted in this iteration, so its
	 * original goes back, and it is no rebuild that could differ.  One a
	 * replay reads is an intermediate of the rebuild and is checked. */
	uint8_t transient[64] = {0};
	for (int k = 0; k < n; k++) {
		for (uint32_t i = s0; i < s1 && !transient[k]; i++)
			transient[k] =
			    pl->steps[i].kind == PL_STEP_RELEASE && pl->steps[i].arg == ids[k];
		for (uint32_t i = s0; i < s1 && transient[k]; i++) {
			if (pl->steps[i].kind != PL_STEP_REPLAY)
				continue;
			const struct prof_op *o = &replay_engine.profile->ops[pl->steps[i].arg];
			for (size_t r = 0; r < o->nreads && transient[k]; r++)
				transient[k] = o->reads[r] != ids[k];
		}
	}
	replay_steps(pos, s, 2, pos);
	remat_drv.cuCtxSynchronize();
	int restored = 0;
	for (int k = 0; k < n; k++) {
		const struct prof_buf *u = &replay_engine.profile->bufs[ids[k]];
		uint8_t *h = malloc(u->size);
		if (h && remat_drv.cuMemcpyDtoH(h, u->addr, u->size) == CUDA_SUCCESS) {
			if (memcmp(h, orig[k], u->size)) {
				uint64_t off = 0;
				while (off < u->size && h[off] == orig[k][off])
					off++;
				if (!transient[k])
					exclude(ids[k], pos, off);
				/* The op about to run reads the original. */
				remat_drv.cuMemcpyHtoD(u->addr, orig[k], u->size);
				restored = 1;
			}
		}
		free(h);
		free(orig[k]);
	}
	/* A copy from pageable memory may return before it lands, and the
	 * program's streams need not wait for the legacy stream. */
	if (restored)
		remat_drv.cuCtxSynchronize();
}

/* The verification iteration is over: keep the plan, or plan again
 * without the buffers whose rebuild differs. */
void replay_verify_end_iteration(void)
{
	verify_state.verified = 1;
	if (!verify_state.nexcluded) {
		remat_warn("verify: every planned rebuild is bit-identical and nothing reads what "
		           "the plan takes off the device; the plan is applied from the next "
		           "iteration");
		return;
	}
	char list[512];
	int w = 0;
	for (int i = 0; i < verify_state.nexcluded && w < (int)sizeof(list) - 16; i++)
		w += snprintf(list + w, sizeof(list) - (size_t)w, "%s%d", i ? "," : "",
		              verify_state.excluded[i]);
	remat_warn("verify: %d buffer(s) rebuild differently or are read off the device (%s); "
	           "planning again without them",
	           verify_state.nexcluded, list);
	replay_plan_drop();
	verify_state.verified = 0; /* the new plan is verified too */
	if (replay_engine.hooks.replan(verify_state.excluded, verify_state.nexcluded))
		replay_no_plan();
}
