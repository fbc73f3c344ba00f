/*
 * fiber.c — fibers for blocks whose kernel calls __syncthreads.
 *
 * A block of up to 1024 threads becomes that many fibers on the worker
 * thread; a barrier is a switch back to the scheduler.  glibc swapcontext
 * makes a sigprocmask syscall per switch, far too slow for a barrier in a
 * loop, so x86-64 gets a hand-written switch that saves only what the SysV
 * ABI says a callee must preserve; other architectures use ucontext.
 */
#include "fiber.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Room for deep kernel code and local arrays; only touched pages cost. */
#define FIBER_STACK (256u << 10)
#define MAX_FIBERS  1024u

#if defined(__x86_64__) && !defined(SIMCUDA_FIBER_UCONTEXT)

struct fiber {
	void *sp;
	char *stack;
};

/* Saves the callee-saved registers plus MXCSR and the x87 control word on
 * the current stack, stores the stack pointer in *save, and resumes the
 * stack `to` the same way in reverse. */
void simk_switch(void **save, void *to);
__asm__(".text\n"
        ".globl simk_switch\n"
        ".hidden simk_switch\n"
        ".type simk_switch,@function\n"
        "simk_switch:\n"
        "\tpushq %rbp\n"
        "\tpushq %rbx\n"
        "\tpushq %r12\n"
        "\tpushq %r13\n"
        "\tpushq %r14\n"
        "\tpushq %r15\n"
        "\tsubq $8, %rsp\n"
        "\tstmxcsr (%rsp)\n"
        "\tfnstcw 4(%rsp)\n"
        "\tmovq %rsp, (%rdi)\n"
        "\tmovq %rsi, %rsp\n"
        "\tldmxcsr (%rsp)\n"
        "\tfldcw 4(%rsp)\n"
        "\taddq $8, %rsp\n"
        "\tpopq %r15\n"
        "\tpopq %r14\n"
        "\tpopq %r13\n"
        "\tpopq %r12\n"
        "\tpopq %rbx\n"
        "\tpopq %rbp\n"
        "\tret\n"
        ".size simk_switch, .-simk_switch\n"
        /* First code a fresh fiber runs: r13 = function, r12 = argument; the
         * function never returns (it switches away for good). */
        ".globl simk_fiber_start\n"
        ".hidden simk_fiber_start\n"
        ".type simk_fiber_start,@function\n"
        "simk_fiber_start:\n"
        "\tmovq %r12, %rdi\n"
        "\tcallq *%r13\n"
        "\tud2\n"
        ".size simk_fiber_start, .-simk_fiber_start\n");
void simk_fiber_start(void);

static __thread void *sched_sp;

void fiber_init(struct fiber *pool, unsigned i, void (*fn)(void *), void *arg)
{
	uintptr_t top = ((uintptr_t)pool[i].stack + FIBER_STACK) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)(top - 80);
	/* Layout popped by simk_switch: control words, r15, r14, r13, r12,
	 * rbx, rbp, return address; rsp is then 16-byte aligned as a call
	 * site requires. */
	sp[0] = 0x1f80 | ((uint64_t)0x037f << 32);
	sp[1] = 0;
	sp[2] = 0;
	sp[3] = (uint64_t)(uintptr_t)fn;
	sp[4] = (uint64_t)(uintptr_t)arg;
	sp[5] = 0;
	sp[6] = 0;
	sp[7] = (uint64_t)(uintptr_t)simk_fiber_start;
	pool[i].sp = sp;
}

void fiber_enter(struct fiber *pool, unsigned i)
{
	simk_switch(&sched_sp, pool[i].sp);
}

void fiber_yield(struct fiber *pool, unsigned i)
{
	simk_switch(&pool[i].sp, sched_sp);
}

void fiber_switch(struct fiber *pool, unsigned i, unsigned j)
{
	simk_switch(&pool[i].sp, pool[j].sp);
}

#else /* portable fallback */

#include <ucontext.h>

struct fiber {
	ucontext_t uc;
	char *stack;
};

static __thread ucontext_t sched_uc;

static void fiber_trampoline(unsigned fh, unsigned fl, unsigned ah, unsigned al)
{
	void (*fn)(void *) = (void (*)(void *))(((uintptr_t)fh << 32) | fl);
	fn((void *)(((uintptr_t)ah << 32) | al));
	abort(); /* a finished fiber switches away and is never resumed */
}

void fiber_init(struct fiber *pool, unsigned i, void (*fn)(void *), void *arg)
{
	getcontext(&pool[i].uc);
	pool[i].uc.uc_stack.ss_sp = pool[i].stack;
	pool[i].uc.uc_stack.ss_size = FIBER_STACK;
	pool[i].uc.uc_link = NULL;
	/* makecontext passes int arguments; split the pointer in two. */
	uintptr_t a = (uintptr_t)arg, f = (uintptr_t)fn;
	makecontext(&pool[i].uc, (void (*)(void))fiber_trampoline, 4, (unsigned)(f >> 32),
	            (unsigned)f, (unsigned)(a >> 32), (unsigned)a);
}

void fiber_enter(struct fiber *pool, unsigned i)
{
	swapcontext(&sched_uc, &pool[i].uc);
}

void fiber_yield(struct fiber *pool, unsigned i)
{
	swapcontext(&pool[i].uc, &sched_uc);
}

void fiber_switch(struct fiber *pool, unsigned i, unsigned j)
{
	swapcontext(&pool[i].uc, &pool[j].uc);
}

#endif

/* Stack sets are shared by all threads: a set is taken for one launch and
 * given back after it, so their number (and the guard-page mappings they
 * cost) follows how many fibered launches run at once, not how many
 * streams the program ever created. */
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fiber *free_pools[64];
static unsigned nfree;

static struct fiber *pool_create(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size_t)MAX_FIBERS * FIBER_STACK;
	char *mem = mmap(NULL, span, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct fiber *pool = calloc(MAX_FIBERS, sizeof(*pool));
	if (mem == MAP_FAILED || pool == NULL) {
		fprintf(stderr, "simcuda: cannot map fiber stacks\n");
		free(pool);
		if (mem != MAP_FAILED)
			munmap(mem, span);
		return NULL;
	}
	for (unsigned i = 0; i < MAX_FIBERS; i++) {
		pool[i].stack = mem + (size_t)i * FIBER_STACK;
		/* A guard page below each stack turns an overflow into a
		 * fault instead of silently corrupting the neighbour. */
		mprotect(pool[i].stack, page, PROT_NONE);
	}
	return pool;
}

struct fiber *fiber_pool(unsigned count)
{
	if (count > MAX_FIBERS)
		return NULL;
	pthread_mutex_lock(&pools_lock);
	struct fiber *pool = nfree ? free_pools[--nfree] : NULL;
	pthread_mutex_unlock(&pools_lock);
	return pool ? pool : pool_create();
}

void fiber_pool_release(struct fiber *pool)
{
	pthread_mutex_lock(&pools_lock);
	if (nfree < sizeof(free_pools) / sizeof(free_pools[0])) {
		free_pools[nfree++] = pool;
		pool = NULL;
	}
	pthread_mutex_unlock(&pools_lock);
	if (pool) {
		munmap(pool[0].stack, (size_t)MAX_FIBERS * FIBER_STACK);
		free(pool);
	}
}
