/*
 * param_words.h — the 8-byte words at the 8-aligned offsets of a kernel's
 * packed parameters: where its pointers are, as the profiler's reference
 * scan, the swap net and the replay's unplanned-access check read them.
 * One iterator over the two forms a launch passes its parameters in: one
 * packed buffer (cuLaunchKernel's `extra`, or a copy recorded packed), or
 * the kernelParams array with each parameter's offset and size in the
 * packed layout.  Inline: the replay checks every launch with it.
 */
#ifndef REMAT_CORE_PARAM_WORDS_H
#define REMAT_CORE_PARAM_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct remat_words {
	const uint8_t *buf; /* the packed buffer, or the parameter being read */
	uint64_t w, end;    /* the next word's offset in the packed layout, and where buf ends */
	uint64_t base;      /* buf's offset in the packed layout */
	void *const *params;
	const uint32_t (*layout)[2]; /* per parameter: offset, size */
	size_t j, nparams;           /* the next parameter to read */
};

/* The words of a packed buffer of len bytes. */
static inline struct remat_words remat_words_packed(const void *buf, size_t len)
{
	return (struct remat_words){.buf = buf, .end = buf ? len : 0};
}

/* The words of the nparams parameters params[j], laid out at layout[j]. */
static inline struct remat_words remat_words_params(void *const *params,
                                                    const uint32_t (*layout)[2], size_t nparams)
{
	return (struct remat_words){.params = params, .layout = layout, .nparams = nparams};
}

/* The next word in *v and its offset in the packed parameters in *off:
 * 1, or 0 at the end. */
static inline int remat_words_next(struct remat_words *it, uint64_t *v, uint64_t *off)
{
	while (it->w + 8 > it->end) {
		if (it->j == it->nparams)
			return 0;
		uint32_t o = it->layout[it->j][0], size = it->layout[it->j][1];
		it->buf = it->params[it->j++];
		it->base = o;
		it->w = (o + 7) & ~(uint64_t)7;
		it->end = (uint64_t)o + size;
	}
	memcpy(v, it->buf + (it->w - it->base), 8);
	*off = it->w;
	it->w += 8;
	return 1;
}

#endif
