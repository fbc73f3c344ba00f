/*
 * release.c — freeing a profile: the trace writer and replay share it, and
 * the last of them to let go frees it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void prof_profile_release(struct remat_profile *t)
{
	for (size_t i = 0; i < t->nbufs; i++) {
		for (size_t k = 0; k < t->bufs[i].nsite; k++)
			free(t->bufs[i].site[k]);
		free(t->bufs[i].site);
	}
	for (size_t i = 0; i < t->nkernels; i++) {
		free(t->kernels[i].name);
		free(t->kernels[i].param);
	}
	for (size_t i = 0; i < t->nops; i++) {
		free(t->ops[i].refs);
		free(t->ops[i].reads);
		free(t->ops[i].writes);
		free(t->ops[i].partial);
		free(t->ops[i].attrs);
	}
	free(t->bufs);
	free(t->kernels);
	free(t->ops);
	free(t->params);
	free(t->cmdline);
	free(t->streams);
	free(t->shared);
	memset(t, 0, sizeof(*t));
}

void prof_profile_put(struct remat_profile *p)
{
	if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		prof_profile_release(p);
		free(p);
	}
}
