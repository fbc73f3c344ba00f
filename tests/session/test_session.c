/*
 * test_session.c — session/'s dispatch by state, in process: each op goes
 * to the profiler (DETECT, PROFILE) or to replay (PLAN, RUN), or nowhere
 * (OFF, DONE), and what they answer moves the state; the two hot-path
 * flags follow the state (docs/architecture.md, "The session's states");
 * FAILED gives every op and allocation replay's error; a forked child is
 * OFF.  The profiler and replay are faked below (their calls recorded,
 * their answers set by each test); alloc, acquire and core are the real
 * ones, and no test reaches the driver.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../alloc/alloc.h"
#include "../../session/internal.h"

/* ---- the fake profiler and replay ---------------------------------------- */

static struct {
	enum prof_step step;         /* what prof_op answers */
	enum replay_verdict verdict; /* what replay_op_begin answers */
	int prof_ops, prof_afters, prof_restarts, publishes, finishes, recuts, puts;
	size_t cut; /* what prof_better_boundary answers */
	int replay_begins, replay_ends, replay_starts;
	CUresult after_rc, end_rc;
	int lock_held_in_after; /* the session's lock was held in prof_op_after */
	struct remat_profile profile;
} fk;

enum prof_step prof_op(struct remat_op *op)
{
	fk.prof_ops++;
	op->pos = 0;
	return fk.step;
}

void prof_op_after(struct remat_op *op, CUresult rc)
{
	(void)op;
	fk.prof_afters++;
	fk.after_rc = rc;
	fk.lock_held_in_after = pthread_mutex_trylock(&session.lock) != 0;
	if (!fk.lock_held_in_after)
		pthread_mutex_unlock(&session.lock);
}

struct remat_profile *prof_finish(int64_t *first_iter)
{
	fk.finishes++;
	*first_iter = 3;
	return &fk.profile;
}

void prof_publish(struct remat_profile *p, const char *dir, void (*done)(int, uint64_t))
{
	(void)p, (void)dir, (void)done;
	fk.publishes++;
}

void prof_restart(void)
{
	fk.prof_restarts++;
}

size_t prof_better_boundary(const struct remat_profile *p, int64_t *now, int64_t *best)
{
	(void)p;
	*now = 100;
	*best = 10;
	return fk.cut;
}

int prof_recut(size_t shift)
{
	(void)shift;
	return ++fk.recuts == 1; /* once */
}

void prof_profile_put(struct remat_profile *p)
{
	(void)p;
	fk.puts++;
}

size_t prof_period(void)
{
	return 100;
}

int64_t prof_baseline_peak(const struct remat_profile *p)
{
	(void)p;
	return 1 << 20;
}

int64_t prof_live_bytes(void)
{
	return 0;
}

enum replay_verdict replay_op_begin(struct remat_op *op)
{
	(void)op;
	fk.replay_begins++;
	return fk.verdict;
}

void replay_op_end(struct remat_op *op, CUresult rc)
{
	(void)op;
	fk.replay_ends++;
	fk.end_rc = rc;
}

CUresult replay_error(void)
{
	return CUDA_ERROR_ILLEGAL_ADDRESS;
}

void replay_start(struct remat_profile *p, int64_t budget, int64_t level, int64_t first_iter,
                  const struct replay_hooks *hooks)
{
	(void)p, (void)budget, (void)level, (void)first_iter, (void)hooks;
	fk.replay_starts++;
}

/* Called on paths these tests do not take. */
void prof_alloc(CUdeviceptr p, size_t size, size_t rounded, int small, int stack)
{
	(void)p, (void)size, (void)rounded, (void)small, (void)stack;
}
void prof_free(CUdeviceptr p)
{
	(void)p;
}
void prof_function_name(void *func, const char *name, int is_kernel)
{
	(void)func, (void)name, (void)is_kernel;
}
void prof_graph_forget(CUgraphExec exec)
{
	(void)exec;
}
void prof_graph_opaque(CUgraphExec exec)
{
	(void)exec;
}
void prof_graph_read(CUgraphExec exec, CUgraph g)
{
	(void)exec, (void)g;
}
const struct remat_graph_refs *prof_graph_refs(CUgraphExec exec)
{
	(void)exec;
	return NULL;
}
int prof_kernel_params(void *func, const uint32_t (**param)[2], size_t *nparams)
{
	(void)func, (void)param, (void)nparams;
	return 0;
}
void prof_own_work(int on)
{
	(void)on;
}
void prof_publish_join(void) {}
void prof_reshaped(void) {}
void prof_shutdown(void) {}
void prof_swap_copies(uint32_t n)
{
	(void)n;
}
void replay_alloc(CUdeviceptr p, size_t size)
{
	(void)p, (void)size;
}
void replay_alloc_before(void) {}
void replay_free(CUdeviceptr p)
{
	(void)p;
}
double replay_offload_measure(void)
{
	return 0;
}
void replay_reshape(void) {}
void replay_shutdown(void) {}

/* ---- helpers ------------------------------------------------------------ */

static void no_init(void) {}

static int setup(void **state)
{
	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.profile.refs = 1;
	remat_cfg.mode = REMAT_MODE_TRACE;
	session.failure = CUDA_SUCCESS;
	session_set_state(SESSION_DETECT);
	return 0;
}

static CUresult op(CUresult real_rc)
{
	struct remat_op o = {.kind = REMAT_OP_KERNEL, .func = (void *)0x10};
	CUresult r = session_op_begin(&o);
	if (r == CUDA_SUCCESS)
		session_op_end(&o, real_rc);
	return r;
}

static int lock_free(void)
{
	if (pthread_mutex_trylock(&session.lock))
		return 0;
	pthread_mutex_unlock(&session.lock);
	return 1;
}

/* ---- tests ---------------------------------------------------------------- */

/* The flags of every state, as docs/architecture.md lists them. */
static void test_flags_follow_state(void **state)
{
	(void)state;
	static const struct {
		enum session_state s;
		int active, watch;
	} want[] = {
	    {SESSION_OFF, 0, 0},    {SESSION_DETECT, 1, 1}, {SESSION_PROFILE, 1, 1},
	    {SESSION_PLAN, 1, 1},   {SESSION_RUN, 1, 1},    {SESSION_DONE, 1, 0},
	    {SESSION_FAILED, 1, 1},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		session_set_state(want[i].s);
		assert_int_equal(remat_session_active, want[i].active);
		assert_int_equal(remat_session_watch, want[i].watch);
	}
	/* DONE after the allocator swapped something: every op is checked. */
	session_set_state(SESSION_DONE);
	remat_alloc_swap_armed = 1;
	session_update_watch();
	assert_int_equal(remat_session_watch, 1);
	remat_alloc_swap_armed = 0;
	session_update_watch();
	assert_int_equal(remat_session_watch, 0);
}

/* Detecting: the profiler sees the op; recording holds the lock across
 * the real call and gets its result after. */
static void test_detect_and_record(void **state)
{
	(void)state;
	fk.step = PROF_DETECTING;
	assert_int_equal(op(CUDA_SUCCESS), CUDA_SUCCESS);
	assert_int_equal(fk.prof_ops, 1);
	assert_int_equal(fk.prof_afters, 0);
	assert_int_equal(session.state, SESSION_DETECT);
	fk.step = PROF_RECORD;
	struct remat_op o = {.kind = REMAT_OP_KERNEL};
	assert_int_equal(session_op_begin(&o), CUDA_SUCCESS);
	assert_int_equal(session.state, SESSION_PROFILE);
	assert_false(lock_free()); /* held across the real call */
	session_op_end(&o, CUDA_ERROR_LAUNCH_FAILED);
	assert_true(lock_free());
	assert_int_equal(fk.prof_afters, 1);
	assert_int_equal(fk.after_rc, CUDA_ERROR_LAUNCH_FAILED);
	assert_true(fk.lock_held_in_after);
	/* a profile dropped (an op differed): detecting again */
	fk.step = PROF_DETECTING;
	op(CUDA_SUCCESS);
	assert_int_equal(session.state, SESSION_DETECT);
}

/* The profile complete in trace mode: published, done; in run mode also
 * handed to replay, waiting for a plan. */
static void test_profile_complete(void **state)
{
	(void)state;
	fk.step = PROF_COMPLETE;
	op(CUDA_SUCCESS);
	assert_int_equal(fk.finishes, 1);
	assert_int_equal(fk.publishes, 1);
	assert_int_equal(fk.replay_starts, 0);
	assert_int_equal(session.state, SESSION_DONE);
	assert_int_equal(remat_session_watch, 0);
	op(CUDA_SUCCESS);
	assert_int_equal(fk.prof_ops, 1); /* DONE: nobody is asked */

	setup(NULL);
	remat_cfg.mode = REMAT_MODE_RUN;
	remat_cfg.budget = (struct remat_budget){.bytes = 1 << 19};
	fk.step = PROF_COMPLETE;
	fk.verdict = REPLAY_CONTINUE;
	op(CUDA_SUCCESS);
	assert_int_equal(fk.replay_starts, 1);
	assert_int_equal(session.state, SESSION_PLAN);
	assert_int_equal(fk.replay_begins, 1); /* the op that completed it is replay's first */
	assert_int_equal(fk.profile.refs, 2);  /* the writer and replay hold it */
	remat_cfg.mode = REMAT_MODE_TRACE;
	fk.step = PROF_GIVE_UP;
	session_set_state(SESSION_DETECT);
	op(CUDA_SUCCESS);
	assert_int_equal(session.state, SESSION_DONE);
}

/* The profile's data flow shows a better boundary: the profile is put
 * back, nothing published, detecting again; the second time (once per
 * search) the profile stands. */
static void test_profile_recut(void **state)
{
	(void)state;
	fk.step = PROF_COMPLETE;
	fk.cut = 5;
	op(CUDA_SUCCESS);
	assert_int_equal(fk.recuts, 1);
	assert_int_equal(fk.puts, 1);
	assert_int_equal(fk.publishes, 0);
	assert_int_equal(session.state, SESSION_DETECT);
	op(CUDA_SUCCESS);
	assert_int_equal(fk.recuts, 2);
	assert_int_equal(fk.publishes, 1);
	assert_int_equal(session.state, SESSION_DONE);
}

/* Run mode: replay's verdict on each op. */
static void test_replay_verdicts(void **state)
{
	(void)state;
	session_set_state(SESSION_RUN);
	fk.verdict = REPLAY_EVICT_AFTER;
	assert_int_equal(op(CUDA_ERROR_NOT_READY), CUDA_SUCCESS);
	assert_int_equal(fk.replay_ends, 1);
	assert_int_equal(fk.end_rc, CUDA_ERROR_NOT_READY);
	assert_true(lock_free());
	fk.verdict = REPLAY_CONTINUE;
	op(CUDA_SUCCESS);
	assert_int_equal(fk.replay_ends, 1);
	assert_int_equal(fk.prof_ops, 0);
	fk.verdict = REPLAY_REPROFILE;
	op(CUDA_SUCCESS);
	assert_int_equal(session.state, SESSION_DETECT);
	assert_int_equal(fk.prof_restarts, 1);
	session_set_state(SESSION_PLAN);
	fk.verdict = REPLAY_STOP;
	op(CUDA_SUCCESS);
	assert_int_equal(session.state, SESSION_DONE);
}

/* A rebuild that failed for good: the op does not run, and every later op
 * and allocation gets the same error without reaching replay. */
static void test_failed_is_sticky(void **state)
{
	(void)state;
	session_set_state(SESSION_RUN);
	fk.verdict = REPLAY_FAIL;
	struct remat_op o = {.kind = REMAT_OP_KERNEL};
	assert_int_equal(session_op_begin(&o), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(session.state, SESSION_FAILED);
	assert_true(lock_free());
	assert_int_equal(op(CUDA_SUCCESS), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(fk.replay_begins, 1);
	CUdeviceptr p = 0;
	assert_int_equal(session_alloc(&p, 4096, NULL, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(p, 0);
	assert_int_equal(remat_session_watch, 1);
}

/* OFF: pass-through, nobody is asked. */
static void test_off_passes_through(void **state)
{
	(void)state;
	session_set_state(SESSION_OFF);
	fk.step = PROF_RECORD;
	assert_int_equal(op(CUDA_SUCCESS), CUDA_SUCCESS);
	assert_int_equal(fk.prof_ops + fk.replay_begins, 0);
	assert_true(lock_free());
}

/* A forked child passes through (the fork handler start.c registers, run
 * here as a child of a process started in trace mode): flags clear, the
 * profiler never asked. */
static void test_fork_child_is_off(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = session.state != SESSION_OFF || remat_session_active ||
		          remat_session_watch || !session.forked;
		fk.step = PROF_RECORD;
		bad |= op(CUDA_SUCCESS) != CUDA_SUCCESS || fk.prof_ops;
		_exit(bad);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(session.state, SESSION_DETECT); /* the parent's is its own */
}

int main(int argc, char **argv)
{
	/* The constructor registers the fork handler in trace or run mode
	 * only: run again with REMAT_MODE=trace when it was not. */
	const char *mode = getenv("REMAT_MODE");
	if (!mode || strcmp(mode, "trace")) {
		(void)argc;
		setenv("REMAT_MODE", "trace", 1);
		setenv("REMAT_LOG", "0", 1);
		execv("/proc/self/exe", argv);
		return 1;
	}
	/* Lazy init done, as if the driver were usable: no test calls it. */
	pthread_once(&session.ready_once, no_init);
	session.ready_status = 0;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_flags_follow_state, setup),
	    cmocka_unit_test_setup(test_detect_and_record, setup),
	    cmocka_unit_test_setup(test_profile_complete, setup),
	    cmocka_unit_test_setup(test_profile_recut, setup),
	    cmocka_unit_test_setup(test_replay_verdicts, setup),
	    cmocka_unit_test_setup(test_failed_is_sticky, setup),
	    cmocka_unit_test_setup(test_off_passes_through, setup),
	    cmocka_unit_test_setup(test_fork_child_is_off, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
