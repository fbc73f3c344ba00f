/*
 * test_boundary.c — the boundary by data flow (profiler/boundary.c): the
 * cut with the least data live across it, on a profile as llm.c's was
 * first cut (issue 31): after the loss read back, every activation live
 * across the boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../profiler/profiler.h"

enum { W, G, A, X, L, NBUF };

struct spec {
	int32_t reads[3], writes[2], partial[1];
};

/* The cut prof_better_boundary finds in the profile of the n ops of sp
 * (-1 ends each list), and the bytes live across op 0 and across it. */
static size_t better(const struct spec *sp, size_t n, int64_t *now, int64_t *best)
{
	static const uint64_t sizes[NBUF] = {100, 100, 1000, 10, 1}; /* W G A X L */
	static struct prof_op ops[8];
	static struct prof_buf bufs[NBUF];
	assert_true(n <= 8);
	for (size_t k = 0; k < n; k++) {
		struct prof_op *o = &ops[k];
		*o = (struct prof_op){0};
		o->reads = (int32_t *)sp[k].reads;
		o->writes = (int32_t *)sp[k].writes;
		o->partial = (int32_t *)sp[k].partial;
		while (o->nreads < 3 && sp[k].reads[o->nreads] >= 0)
			o->nreads++;
		while (o->nwrites < 2 && sp[k].writes[o->nwrites] >= 0)
			o->nwrites++;
		o->npartial = sp[k].partial[0] >= 0;
	}
	for (int b = 0; b < NBUF; b++)
		bufs[b] = (struct prof_buf){.size = sizes[b]};
	struct remat_profile p = {.ops = ops, .nops = n, .bufs = bufs, .nbufs = NBUF};
	return prof_better_boundary(&p, now, best);
}

/* Profiled from after the loss read back: zero the gradient, backward,
 * the step, forward, the loss, its copy to the host.  Across op 0 live
 * the activation A (read by backward), W and the input X: 1110 bytes;
 * across op 3 (before forward) W and X: 110.  So the iteration begins at
 * op 3. */
static void test_cut_before_forward(void **state)
{
	(void)state;
	static const struct spec sp[] = {
	    {{-1}, {G, -1}, {-1}},       /* memset G */
	    {{A, W, -1}, {G, -1}, {-1}}, /* backward */
	    {{G, W, -1}, {W, -1}, {-1}}, /* the step: W updated in place */
	    {{W, X, -1}, {A, -1}, {-1}}, /* forward */
	    {{A, -1}, {L, -1}, {-1}},    /* the loss */
	    {{L, -1}, {-1}, {-1}},       /* to the host */
	};
	int64_t now, best;
	assert_int_equal(better(sp, 6, &now, &best), 3);
	assert_int_equal(now, 1110);
	assert_int_equal(best, 110);
}

/* Already cut before forward: nothing better (the same profile from op
 * 3 on); and a cut that saves less than half is not worth a profile. */
static void test_good_cut_stays(void **state)
{
	(void)state;
	static const struct spec sp[] = {
	    {{W, X, -1}, {A, -1}, {-1}}, {{A, -1}, {L, -1}, {-1}},    {{L, -1}, {-1}, {-1}},
	    {{-1}, {G, -1}, {-1}},       {{A, W, -1}, {G, -1}, {-1}}, {{G, W, -1}, {W, -1}, {-1}},
	};
	int64_t now, best;
	assert_int_equal(better(sp, 6, &now, &best), 0);
	assert_int_equal(now, 110);
	/* A partial write needs what it leaves: G accumulated, not zeroed,
	 * lives across every cut. */
	static const struct spec acc[] = {
	    {{W, X, -1}, {A, -1}, {-1}},
	    {{A, W, -1}, {G, -1}, {G}},
	    {{G, W, -1}, {W, -1}, {-1}},
	};
	assert_int_equal(better(acc, 3, &now, &best), 0);
	assert_int_equal(now, 210);
	assert_int_equal(best, 210);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cut_before_forward),
	    cmocka_unit_test(test_good_cut_stays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
