/*
 * fault.c — a touch of device memory that is not mapped (freed, unmapped
 * by cuMemUnmap, or never allocated) faults loudly, naming what touched
 * it, the way a GPU reports an illegal address:
 *
 *   simcuda: fault: kernel 'name' on stream 3 touched unmapped device address 0x...
 *
 * Faults outside the device range go to whichever handler was installed
 * before ours (ASan's, the program's, or the default action).
 */
#include "driver.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fault_op {
	const char *kind;
	const char *name;
	uint32_t stream;
};

static __thread struct fault_op current;
static struct sigaction old_segv, old_bus;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

void fault_set_op(const char *kind, const char *name, uint32_t stream_id)
{
	current.kind = kind;
	current.name = name;
	current.stream = stream_id;
}

/* Async-signal-safe formatting: no stdio in a fault handler. */
static size_t put(char *buf, size_t at, size_t cap, const char *s)
{
	while (s && *s && at + 1 < cap)
		buf[at++] = *s++;
	return at;
}

static size_t put_num(char *buf, size_t at, size_t cap, uint64_t v, unsigned base)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n && at + 1 < cap)
		buf[at++] = tmp[--n];
	return at;
}

static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction) {
			old->sa_sigaction(sig, si, uc);
			return;
		}
	} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	/* Default action: returning re-executes the access, which now dies
	 * the ordinary way. */
	signal(sig, SIG_DFL);
}

/* "simcuda: fault: kernel 'name' on stream 3 touched <what> 0x..." */
static void report(uintptr_t a, const char *what)
{
	char buf[512];
	size_t n = put(buf, 0, sizeof(buf), "simcuda: fault: ");
	if (current.kind) {
		n = put(buf, n, sizeof(buf), current.kind);
		n = put(buf, n, sizeof(buf), " '");
		n = put(buf, n, sizeof(buf), current.name);
		n = put(buf, n, sizeof(buf), "' on stream ");
		n = put_num(buf, n, sizeof(buf), current.stream, 10);
	} else {
		/* A GPU's memory is not host memory: host code may not touch
		 * it, mapped or not. */
		n = put(buf, n, sizeof(buf), "host code");
	}
	n = put(buf, n, sizeof(buf), " touched ");
	n = put(buf, n, sizeof(buf), what);
	n = put(buf, n, sizeof(buf), " 0x");
	n = put_num(buf, n, sizeof(buf), a, 16);
	n = put(buf, n, sizeof(buf), "\n");
	ssize_t w = write(2, buf, n);
	(void)w;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	if (!dev_addr(a)) {
		/* Not device memory: say which op did it, if one was running
		 * (a bad pointer in a kernel), then let the previous handler
		 * report the rest. */
		if (current.kind)
			report(a, "an invalid address");
		chain(sig, si, uc);
		return;
	}
	report(a, "unmapped device address");
	/* abort() is async-signal-safe; make sure SIGABRT ends the process
	 * even if the program catches it. */
	signal(SIGABRT, SIG_DFL);
	abort();
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
}

void fault_install(void)
{
	pthread_once(&install_once, install);
}

/* Stream workers run kernels on fiber stacks that may overflow into a
 * guard page: the handler needs a stack of its own. */
void *fault_thread_init(void)
{
	size_t size = 64 * 1024;
	stack_t ss = {.ss_sp = malloc(size), .ss_size = size, .ss_flags = 0};
	if (ss.ss_sp)
		sigaltstack(&ss, NULL);
	return ss.ss_sp;
}

void fault_thread_fini(void *stack)
{
	stack_t ss = {.ss_flags = SS_DISABLE};
	sigaltstack(&ss, NULL);
	free(stack);
}
