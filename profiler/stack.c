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

#include "internal.h"

#define MAX_FRAMES 16

struct frame {
	uintptr_t ip;
	char *text; /* NULL: one of libremat's own frames, skipped */
};

/* The frames seen, by return address, and where libremat is loaded. */
static struct prof_stacks {
	struct frame *cache;
	size_t cap, n;
	uintptr_t self_base;
} sk;

static void self(void)
{
	Dl_info di;
	if (dladdr((void *)&self, &di))
		sk.self_base = (uintptr_t)di.dli_fbase;
}

static struct frame *lookup(uintptr_t ip)
{
	if (!sk.cap)
		return NULL;
	size_t j = (size_t)((ip * 0x9e3779b97f4a7c15ULL) >> 20) & (sk.cap - 1);
	while (sk.cache[j].ip && sk.cache[j].ip != ip)
		j = (j + 1) & (sk.cap - 1);
	return &sk.cache[j];
}

static struct frame *add(uintptr_t ip, unw_cursor_t *c)
{
	if ((sk.n + 1) * 2 > sk.cap) {
		size_t oc = sk.cap;
		struct frame *old = sk.cache;
		sk.cap = sk.cap ? sk.cap * 2 : 1024;
		sk.cache = calloc(sk.cap, sizeof(*sk.cache));
		if (!sk.cache) {
			sk.cache = old;
			sk.cap = oc;
			return NULL;
		}
		for (size_t i = 0; i < oc; i++)
			if (old[i].ip)
				*lookup(old[i].ip) = old[i];
		free(old);
	}
	struct frame *f = lookup(ip);
	f->ip = ip;
	sk.n++;
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
		struct frame *f = lookup((uintptr_t)ip);
		if (!f || !f->ip)
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
