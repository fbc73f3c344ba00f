#!/bin/sh
# The dlsym hook keeps RTLD_NEXT working for the caller (glibc resolves it
# from the return address: our forward must be a tail jump), hands out our
# cuGetProcAddress when asked by name (not in a forked child), and the
# constructor prints nothing.
. tests/e2e/trace_lib.sh
cat >"$tmp/next.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	/* From the program, the object after it is the preloaded libremat. */
	void *p = dlsym(RTLD_NEXT, "cudaFreeAsync");
	Dl_info d;
	printf("%s\n", p && dladdr(p, &d) ? d.dli_fname : "none");
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	void *g = h ? dlsym(h, "cuGetProcAddress_v2") : NULL;
	printf("%s\n", g && dladdr(g, &d) ? d.dli_fname : "none");
	fflush(stdout);
	/* A forked child is an inert pass-through: the real driver's entry. */
	pid_t pid = fork();
	if (pid == 0) {
		g = h ? dlsym(h, "cuGetProcAddress_v2") : NULL;
		printf("%s\n", g && dladdr(g, &d) ? d.dli_fname : "none");
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
C
cc -o "$tmp/next" "$tmp/next.c" -ldl || fail "cannot compile the probe"
LD_PRELOAD="$PRELOAD" REMAT_MODE=trace "$SIMRUN" "$tmp/next" >"$tmp/next.out" 2>"$tmp/next.err" ||
	fail "probe exited $?"
[ "$(sed -n 1p "$tmp/next.out")" = "$LIB" ] || fail "RTLD_NEXT from the program: $(cat "$tmp/next.out")"
[ "$(sed -n 2p "$tmp/next.out")" = "$LIB" ] || fail "dlsym(libcuda, cuGetProcAddress_v2): $(cat "$tmp/next.out")"
sed -n 3p "$tmp/next.out" | grep -q "simcuda/libcuda.so.1" || fail "forked child not inert: $(cat "$tmp/next.out")"
# Pass-through: the real driver's entry point is handed out untouched.
LD_PRELOAD="$PRELOAD" "$SIMRUN" "$tmp/next" >"$tmp/pt.out" 2>&1 || fail "probe exited $?"
sed -n 2p "$tmp/pt.out" | grep -q "simcuda/libcuda.so.1" || fail "pass-through dlsym: $(cat "$tmp/pt.out")"
[ ! -s "$tmp/next.err" ] || fail "output from libremat: $(cat "$tmp/next.err")"
# No CUDA at all: nothing printed, not even with a bad value.
LD_PRELOAD="$PRELOAD" REMAT_BUDGET=bad true 2>"$tmp/true.err" || fail "true failed"
[ ! -s "$tmp/true.err" ] || fail "the constructor printed: $(cat "$tmp/true.err")"
echo "PASS: dlsym hook and RTLD_NEXT"
