/*
 * stack.c — the call stack of an allocation, so the trace can tell the
 * user which line of their program allocated each buffer.  Symbolizing is
 * the slow part (libunwind reads the ELF symbol tables), so frames are
 * cached by instruction pointer; only new IPs cost a lookup.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/map.h"
#include "internal.h"

#define MAX_FRAMES 16

struct frame {
	uint64_t ip; /* the map's key */
	char *text;  /* NULL: one of libremat's own frames, skipped */
};

/* The frames seen, by return address, and where libremat is loaded. */
static struct prof_stacks {
	struct remat_map frames; /* records of struct frame */
	uintptr_t self_base;
} sk = {REMAT_MAP_INIT(struct frame), 0};

static void self(void)
{
	Dl_info di;
	if (dladdr((void *)&self, &di))
		sk.self_base = (uintptr_t)di.dli_fbase;
}

static struct frame *add(uintptr_t ip, unw_cursor_t *c)
{
	struct frame *f = remat_map_insert(&sk.frames, ip);
	if (!f)
		return NULL;
	Dl_info di = {0};
	int have = dladdr((void *)ip, &di);
	if (have && (uintptr_t)di.dli_fbase == sk.self_base)
		return f; /* ours: text stays NULL */
	const char *obj = have && di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
	obj = obj ? obj + 1 : (have && di.dli_fname && *di.dli_fname ? di.dli_fname : "?");
	char name[256], text[400];
	unw_word_t off = 0;
	if (unw_get_proc_name(c, name, sizeof(name), &off) == 0)
		snprintf(text, sizeof(text), "%s+0x%lx (%s)", name, (unsigned long)off, obj);
	else
		snprintf(text, sizeof(text), "0x%lx (%s)",
		         (unsigned long)(ip - (have ? (uintptr_t)di.dli_fbase : 0)), obj);
	f->text = strdup(text);
	return f;
}

size_t prof_stack_capture(char ***frames)
{
	*frames = NULL;
	if (!sk.self_base)
		self();
	unw_context_t ctx;
	unw_cursor_t c;
	if (unw_getcontext(&ctx) || unw_init_local(&c, &ctx))
		return 0;
	char *out[MAX_FRAMES];
	size_t k = 0;
	while (k < MAX_FRAMES && unw_step(&c) > 0) {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) || !ip)
			break;
		struct frame *f = remat_map_find(&sk.frames, ip);
		if (!f)
			f = add((uintptr_t)ip, &c);
		if (f && f->text)
			out[k++] = f->text;
	}
	if (!k)
		return 0;
	char **v = malloc(k * sizeof(*v));
	if (!v)
		return 0;
	for (size_t i = 0; i < k; i++)
		v[i] = strdup(out[i]);
	*frames = v;
	return k;
}
