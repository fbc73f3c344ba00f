/*
 * delta.c — which buffers each op of the profiled iteration wrote, which
 * bytes it changed, and whether its writes depend on what was there: every
 * buffer a kernel or graph launch references is copied to the host before
 * and after it (copies, not hashes: the proofs need the bytes), and a
 * kernel runs again from perturbed content (data words only by default:
 * a kernel that synchronizes through memory must not spin) to prove its
 * writes blind and bytes past its tensors unread, its first results put
 * back.  docs/trace-format.md ("How the profiler proves writes, reads and
 * regions") says how; regions.c uses the result.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

struct op_delta {
	struct prof_change *chg; /* what it changed */
	uint32_t n;
	size_t cap;
	struct prof_change *src; /* what a copy reads */
	uint32_t nsrc;
	size_t cap_src;
	struct prof_change *unread; /* proven not read (unread.c) */
	uint32_t nunread;
	int blind; /* -1 unknown, 0 changes known */
};

/* The changes of the profile's ops, and the host copies of the op being
 * recorded. */
static struct prof_delta {
	struct op_delta *deltas;
	size_t ndeltas;
	size_t snapped; /* the op whose host copies before it are complete */
	int proofs;     /* REMAT_WRITE_PROOF for this profile (proof_guard.c may switch it off) */
	/* Host copies of the current op's buffers before it ran, by slot in
	 * its read list, in prof_host_room's room. */
	uint8_t **pre;
	size_t cap_pre;
	/* After it (slot by slot), then room for one buffer: the proofs'
	 * (the same room, past pre's) */
	uint8_t *post, *again;
	/* The proofs' bytes of one buffer: those tested, those wanted */
	uint8_t *mask, *wanted;
	size_t mask_cap, wanted_cap;
	/* The op before's host copies after it (its room stays readable while
	 * this op's fills the other): what a buffer held when this op began,
	 * unless something else ran in between.  prev_k: that op, SIZE_MAX
	 * when none can be trusted. */
	size_t prev_k, prev_n, prev_cap;
	struct prev_post {
		int32_t id;
		uint8_t *post;
	} * prev;
	int lost;                    /* a proof could not put back what the op left */
	unsigned long long launches; /* the proofs' second launches */
} dl = {.snapped = SIZE_MAX, .prev_k = SIZE_MAX};

void prof_delta_drop(void)
{
	for (size_t k = 0; k < dl.ndeltas; k++) {
		free(dl.deltas[k].chg);
		free(dl.deltas[k].src);
		free(dl.deltas[k].unread);
	}
	free(dl.deltas);
	dl.deltas = NULL;
	dl.ndeltas = 0;
	prof_unread_reset();
	/* The host copies' room goes too: twice what one op references. */
	prof_host_copy_report(dl.launches);
	dl.launches = 0;
	prof_host_room_free();
	free(dl.pre);
	dl.pre = NULL;
	dl.cap_pre = 0;
	free(dl.prev);
	dl.prev = NULL;
	dl.prev_n = dl.prev_cap = 0;
	dl.prev_k = SIZE_MAX;
	free(dl.mask);
	free(dl.wanted);
	dl.post = dl.again = dl.mask = dl.wanted = NULL;
	dl.mask_cap = dl.wanted_cap = 0;
}

int prof_delta_begin(size_t nops)
{
	prof_delta_drop();
	dl.proofs = remat_cfg.write_proof;
	if (dl.proofs != REMAT_PROOF_OFF && prof_guard_begin())
		dl.proofs = REMAT_PROOF_OFF;
	dl.deltas = calloc(nops ? nops : 1, sizeof(*dl.deltas));
	if (!dl.deltas)
		return -1;
	dl.ndeltas = nops;
	for (size_t k = 0; k < nops; k++)
		dl.deltas[k].blind = -1; /* until its changes are known */
	return 0;
}

const struct prof_change *prof_delta_changes(size_t k, uint32_t *n, int *blind)
{
	if (k >= dl.ndeltas) {
		*n = 0;
		*blind = -1;
		return NULL;
	}
	*n = dl.deltas[k].n;
	*blind = dl.deltas[k].blind;
	return dl.deltas[k].chg;
}

const struct prof_change *prof_delta_source(size_t k, uint32_t *n)
{
	*n = k < dl.ndeltas ? dl.deltas[k].nsrc : 0;
	return k < dl.ndeltas ? dl.deltas[k].src : NULL;
}

const struct prof_change *prof_delta_unread(size_t k, uint32_t *n)
{
	*n = k < dl.ndeltas ? dl.deltas[k].nunread : 0;
	return k < dl.ndeltas ? dl.deltas[k].unread : NULL;
}

static void add_change(struct op_delta *d, int32_t buf, uint64_t lo, uint64_t hi, int blind)
{
	if (REMAT_GROW(d->chg, d->n, d->cap)) {
		d->blind = -1; /* incomplete: regions.c falls back to whole buffers */
		return;
	}
	d->chg[d->n++] = (struct prof_change){buf, lo, hi, blind};
}

void prof_delta_range(size_t k, int32_t buf, uint64_t lo, uint64_t hi, int write)
{
	if (k >= dl.ndeltas || hi <= lo)
		return;
	prof_unread_cut(buf, lo);
	prof_unread_cut(buf, hi);
	struct op_delta *d = &dl.deltas[k];
	if (d->blind < 0 && !d->n && !d->nsrc)
		d->blind = 0; /* a copy or a set: exactly its ranges */
	if (write) {
		add_change(d, buf, lo, hi, 1);
		return;
	}
	if (REMAT_GROW(d->src, d->nsrc, d->cap_src)) {
		d->blind = -1;
		return;
	}
	d->src[d->nsrc++] = (struct prof_change){buf, lo, hi, 0};
}

static int grow(uint8_t **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *q = realloc(*p, n);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* The loops below run over whole allocations for every kernel (a
 * program's own pool is one allocation), and a sanitizer checks every
 * access: they read eight bytes at a time wherever the answer is the same
 * for all eight. */
#define ONES 0x0101010101010101ull
static uint64_t load8(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

/* The first index from i below n where a and b differ, or n. */
static uint64_t first_diff(const uint8_t *a, const uint8_t *b, uint64_t i, uint64_t n)
{
	while (i + 256 <= n && !memcmp(a + i, b + i, 256))
		i += 256;
	while (i + 8 <= n && load8(a + i) == load8(b + i))
		i += 8;
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* The first index from i below n where a and b agree, or n. */
static uint64_t first_same(const uint8_t *a, const uint8_t *b, uint64_t i, uint64_t n)
{
	for (; i + 8 <= n; i += 8) {
		uint64_t x = load8(a + i) ^ load8(b + i);
		if ((x - ONES) & ~x & (ONES << 7))
			break; /* a zero byte: they agree somewhere in these eight */
	}
	while (i < n && a[i] != b[i])
		i++;
	return i;
}

/* Runs of differing bytes closer than this go in one copy: a copy's fixed
 * cost (1 us on the simulated clock) is that of some 50 KB over PCIe. */
#define PUT_GAP ((uint64_t)64 << 10)

/* Writes to the device at dev what want holds where it differs from have,
 * the device's content: a proof perturbs and puts back a few tensors of an
 * allocation of many (llm.c's activations are one), not all of it.  0, or
 * -1 when a copy failed. */
static int put_changed(uint64_t dev, const uint8_t *want, const uint8_t *have, uint64_t size)
{
	uint64_t i = first_diff(want, have, 0, size);
	while (i < size) {
		uint64_t j = first_same(want, have, i, size), next;
		while ((next = first_diff(want, have, j, size)) < size && next - j < PUT_GAP)
			j = first_same(want, have, next, size);
		if (prof_host_copy((uint8_t *)(uintptr_t)want + i, dev + i, j - i, 0) !=
		    CUDA_SUCCESS)
			return -1;
		i = next;
	}
	return 0;
}

static int evictable(const struct prof_live *b)
{
	return !b->small && b->size;
}

uint32_t prof_delta_before(size_t k, const struct prof_op *o, struct prof_live *const *pb)
{
	if (k >= dl.ndeltas)
		return 0;
	dl.deltas[k].blind = -1;
	size_t total = 0, biggest = 0;
	for (size_t r = 0; r < o->nreads; r++) {
		size_t size = pb[o->reads[r]]->size;
		total += size;
		biggest = size > biggest ? size : biggest;
	}
	/* before, after, and the proofs' one buffer */
	uint8_t *room = prof_host_room((int)(k & 1), 2 * total + biggest);
	if (!room || REMAT_RESERVE(dl.pre, o->nreads, dl.cap_pre) ||
	    grow(&dl.mask, &dl.mask_cap, biggest) || grow(&dl.wanted, &dl.wanted_cap, biggest))
		return 0;
	uint32_t copies = 0;
	size_t off = 0;
	/* Device memory changes only by ops (and a collective in flight): the
	 * op just before left a buffer as its copy after it shows. */
	int follows = dl.prev_k == k - 1 && k && !prof_collective_in_flight();
	for (size_t r = 0; r < o->nreads; r++) {
		const struct prof_live *b = pb[o->reads[r]];
		uint8_t *shown = NULL; /* the op before's copy after it */
		for (size_t q = 0; follows && q < dl.prev_n; q++)
			if (dl.prev[q].id == o->reads[r])
				shown = dl.prev[q].post;
		dl.pre[r] = shown ? shown : room + off;
		off += b->size;
		if (shown || !b->size)
			continue;
		if (prof_host_copy(dl.pre[r], b->addr, b->size, 1) != CUDA_SUCCESS)
			return copies;
		copies++;
	}
	dl.post = room + total;
	dl.again = dl.post + total;
	dl.snapped = k; /* the snapshots are complete */
	return copies;
}

uint64_t prof_delta_next_ref(const struct prof_op *o, int32_t buf, uint64_t off, uint64_t end)
{
	for (size_t r = 0; r < o->nrefs; r++)
		if (o->refs[r].buf == buf && o->refs[r].off > off && o->refs[r].off < end)
			end = o->refs[r].off;
	return end;
}

/* Op k once more, as the program issued it. */
static CUresult relaunch(size_t k, const struct prof_op *o, const struct remat_op *op)
{
	dl.launches++;
	prof_cupti_tls.internal = 1;
	prof_guard_enter(k, o->name);
	CUresult r = prof_launch_as(o, op, op->stream, op->params, op->extra);
	if (r == CUDA_SUCCESS)
		r = prof_guard_wait(op->stream, k, o->name);
	prof_guard_leave();
	prof_cupti_tls.internal = 0;
	return r;
}

int64_t prof_delta_via(const struct prof_op *o, int32_t buf, uint64_t off, size_t *ref)
{
	int64_t from = -1;
	for (size_t r = 0; r < o->nrefs; r++)
		if (o->refs[r].buf == buf && o->refs[r].off <= off &&
		    (int64_t)o->refs[r].off > from) {
			from = (int64_t)o->refs[r].off;
			*ref = r;
		}
	return from;
}

/* The unit of a proof a change belongs to: the reference it went through
 * (the nearest pointer at or below it), or BELOW_ALL for a change below
 * every pointer into its buffer (or past the first 256 references). */
#define BELOW_ALL  (-2)
#define EVERY_UNIT (-1)
#define UNREAD     (-3) /* not a unit: the ranges of the proof of unread bytes */
#define MASK_REFS  256
static long change_unit(const struct prof_op *o, const struct prof_change *c)
{
	size_t via = 0;
	int64_t from = prof_delta_via(o, c->buf, c->lo, &via);
	return from >= 0 && via < MASK_REFS ? (long)via : BELOW_ALL;
}

/* The bytes op k's proof sets to the complement of what the op left: from
 * each pointer a change went through (the nearest at or below it) up to
 * the op's next pointer into the buffer or its end, so that bytes written
 * with the value they had are tested too; changes below every pointer
 * alone.  Only the changes of `unit` (EVERY_UNIT: all of them).  Marks
 * them in m (per byte of the buffer). */
static void proof_mask(const struct op_delta *d, const struct prof_op *o, int32_t buf,
                       uint64_t size, uint8_t *m, int tested, long unit)
{
	memset(m, 0, size);
	if (!tested)
		return;
	if (unit == UNREAD) { /* the proof of unread bytes: its ranges */
		for (uint32_t i = 0; i < d->nunread; i++)
			if (d->unread[i].buf == buf)
				memset(m + d->unread[i].lo, 1, d->unread[i].hi - d->unread[i].lo);
		return;
	}
	uint8_t out[MASK_REFS]; /* per reference: a change went through it */
	size_t nrefs = o->nrefs < sizeof(out) ? o->nrefs : sizeof(out);
	memset(out, 0, nrefs);
	for (uint32_t c = 0; c < d->n; c++) {
		if (d->chg[c].buf != buf)
			continue;
		long u = change_unit(o, &d->chg[c]);
		if (unit != EVERY_UNIT && u != unit)
			continue;
		if (u >= 0)
			out[u] = 1;
		else
			memset(m + d->chg[c].lo, 1, d->chg[c].hi - d->chg[c].lo);
	}
	for (size_t r = 0; r < nrefs; r++) {
		if (!out[r] || o->refs[r].off >= size)
			continue;
		uint64_t lo = o->refs[r].off, hi = size;
		for (size_t q = 0; q < nrefs; q++)
			if (o->refs[q].buf == buf && o->refs[q].off > lo && o->refs[q].off < hi)
				hi = o->refs[q].off;
		memset(m + lo, 1, hi - lo);
	}
	/* Changes past the next pointer (a write that crossed it) are tested
	 * as they are. */
	for (uint32_t c = 0; c < d->n; c++)
		if (d->chg[c].buf == buf && !m[d->chg[c].hi - 1] &&
		    (unit == EVERY_UNIT || change_unit(o, &d->chg[c]) == unit))
			memset(m + d->chg[c].lo, 1, d->chg[c].hi - d->chg[c].lo);
}

/* REMAT_WRITE_PROOF=data (the default): which tested bytes the second
 * launch may really perturb.  A kernel that synchronizes its blocks through
 * memory spins on a counter, a flag, or a work queue's index or pointer:
 * words that hold a small integer (zero, a count, -1) or a device address.
 * Set to anything else such a word can keep a GPU spinning forever (the
 * cuBLASLt GEMM on the H100); left as the kernel first saw it, the second
 * launch runs there as the first did.  So a word is perturbed only when
 * what it held before the kernel looked like data: any other 32-bit value,
 * which is what floats of every width and packed halves look like (and a
 * zero beside data the kernel writes: keep_data_words).  The
 * rest of the tested bytes start from their content before the op and are
 * simply not proven: a change there stays an update.  A kernel that spins
 * on a word holding something else (a float used as a flag, a host
 * address) is not covered; REMAT_WRITE_PROOF=0 is for such a program. */
static int data_word(uint32_t w)
{
	return w >= 1u << 24 && w < 0xff000000u;
}

/* What a word held (content at addr): 0 zero, 1 data, 2 a small integer
 * or the low half of a device address. */
static int word_class(const uint8_t *content, uint64_t addr, uint64_t i, uint64_t size)
{
	uint32_t w;
	memcpy(&w, content + i, 4);
	if (!w)
		return 0;
	if (!data_word(w))
		return 2;
	if ((addr + i) % 8)
		return 1;
	/* The low half of an address (its high half is a small integer, never
	 * data); the buffer's last word has no high half after it. */
	if (i + 8 > size)
		return 1;
	uint64_t v = load8(content + i);
	return v >> 47 == 0 && v >> 32 && prof_live_find(v) ? 2 : 1;
}

/* Clears keep (bytes [0, size) of a buffer at addr; before and after its
 * content before and after the op, after NULL when unknown) wherever a
 * word may not be perturbed, and at partial words.  A word that held data
 * is perturbed.  A zero is perturbed only inside a 256-byte block (the
 * alignment of cudaMalloc and of cuBLAS's workspace partitions) where the
 * op may write data (a data word after it among the tested bytes) and
 * that holds no small integer or address before the op or after it: a
 * counter the op takes up from zero holds a count after it, and a
 * semaphore array it leaves zeroed sits beside no data the op writes,
 * where the zeros past the diagonal of a causal softmax's row do.  The
 * data need not change: the softmax's first row (1, then zeros, in every
 * iteration) is written as it was, and with its zeros untested the whole
 * output was a partial write whose rebuild needs the content before it
 * (the arena at 50% recomputed twice its iteration). */
static void keep_data_words(uint8_t *keep, const uint8_t *before, const uint8_t *after,
                            uint64_t addr, uint64_t size)
{
	uint64_t i = 0;
	for (; i < size && (addr + i) % 4; i++)
		keep[i] = 0;
	while (i + 4 <= size) {
		uint64_t end = i + (256 - (addr + i) % 256);
		if (end > size)
			end = size - (size - i) % 4;
		int writes_data = 0, other = 0, any = 0;
		for (uint64_t w = i; w < end; w += 4) {
			uint32_t m;
			memcpy(&m, keep + w, 4);
			any |= m != 0;
		}
		for (uint64_t w = i; any && after && w < end && !other; w += 4) {
			int c = word_class(before, addr, w, size),
			    d = word_class(after, addr, w, size);
			uint32_t m;
			memcpy(&m, keep + w, 4);
			other = c == 2 || d == 2;
			writes_data |= d == 1 && m != 0;
		}
		int zeros = writes_data && !other;
		for (uint64_t w = i; any && w < end; w += 4) {
			int c = word_class(before, addr, w, size);
			if (c != 1 && !(c == 0 && zeros))
				memset(keep + w, 0, 4);
		}
		i = end;
	}
	for (; i < size; i++)
		keep[i] = 0;
}

/* The tested bytes of buffer slot r into mask and, before the data words
 * are kept (REMAT_WRITE_PROOF=data), into wanted: a change in wanted that
 * mask leaves out is reported as an update. */
static void tested_bytes(const struct op_delta *d, const struct prof_op *o, size_t r,
                         const struct prof_live *b, const uint8_t *after, int tested, long unit)
{
	proof_mask(d, o, o->reads[r], b->size, dl.mask, tested, unit);
	memcpy(dl.wanted, dl.mask, b->size);
	/* The unread ranges are already cut to what may be perturbed
	 * (data_runs): all of a range passing is what makes it unread. */
	if (dl.proofs == REMAT_PROOF_DATA && unit != UNREAD)
		keep_data_words(dl.mask, dl.pre[r], after, b->addr, b->size);
}

/* The second run's content of a buffer (size bytes) into again: the
 * complement of what the op left (after) at the tested bytes (mask), its
 * content before the op (before) elsewhere.  1 when that is what the op
 * left. */
static int perturb(uint64_t size, const uint8_t *before, const uint8_t *after)
{
	int same = 1;
	uint64_t i = 0;
	for (; i + 8 <= size; i += 8) {
		uint64_t m = load8(dl.mask + i) * 0xff, p = load8(after + i);
		uint64_t w = (~p & m) | (load8(before + i) & ~m);
		memcpy(dl.again + i, &w, sizeof(w));
		same &= w == p;
	}
	for (; i < size; i++) {
		dl.again[i] = dl.mask[i] ? (uint8_t)~after[i] : before[i];
		same &= dl.again[i] == after[i];
	}
	return same;
}

/* Buffer buf (size bytes) after the second run (again) against after the
 * first (after) and before it (before): 0 when what the op wrote depends on
 * what it overwrote; else 1, with the bytes it wrote among the tested ones
 * appended to *out, blind, and its changes among the untested words of
 * wanted as they were found, unproven. */
static int second_run_agrees(struct op_delta *out, int32_t buf, uint64_t size,
                             const uint8_t *before, const uint8_t *after, long unit)
{
	for (uint64_t i = 0; i < size;) {
		if (i + 8 <= size && !load8(dl.wanted + i) &&
		    load8(dl.again + i) == load8(after + i)) {
			i += 8; /* untested and as the first run left it */
			continue;
		}
		uint8_t canary = (uint8_t)~after[i];
		/* A byte the first run changed must be written again: left as
		 * the canary, the op added to it something too small to show on
		 * the canary's value (a float made huge). */
		int changed = before[i] != after[i];
		if (dl.again[i] != after[i] && (!dl.mask[i] || dl.again[i] != canary || changed))
			return 0; /* depends on what it overwrote */
		/* Changes among the words left as they were (not data) are
		 * reported, unproven, as they were found. */
		if (!dl.mask[i] && dl.wanted[i] && unit != UNREAD && changed) {
			uint64_t j = i + 1;
			while (j < size && !dl.mask[j] && dl.wanted[j] && before[j] != after[j] &&
			       dl.again[j] == after[j])
				j++;
			add_change(out, buf, i, j, 0);
			i = j;
			continue;
		}
		if (!dl.mask[i] || dl.again[i] != after[i]) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j + 8 <= size && load8(dl.mask + j) == ONES &&
		       load8(dl.again + j) == load8(after + j))
			j += 8;
		while (j < size && dl.mask[j] && dl.again[j] == after[j])
			j++;
		add_change(out, buf, i, j, 1);
		i = j;
	}
	return 1;
}

/* One run of the proof: every referenced buffer as it was before the op,
 * except the tested bytes of buffer `only` (of every buffer with changes
 * when -1), set to the complement of what the op left there; the op once
 * more; then everything must read back as the op left it, but for tested
 * bytes it does not write, which keep the complement.  The op's results
 * are put back either way.  1: passed, the bytes it wrote in what was
 * tested appended to *out; 0: failed; -1: the second run failed. */
static int proof_run(size_t k, struct prof_op *o, const struct remat_op *op,
                     struct prof_live *const *pb, uint8_t **posts, int32_t only, long unit,
                     struct op_delta *out)
{
	const struct op_delta *d = &dl.deltas[k];
	int ok = 1;
	for (size_t r = 0; r < o->nreads && ok; r++) {
		const struct prof_live *b = pb[o->reads[r]];
		if (!posts[r])
			continue;
		tested_bytes(d, o, r, b, posts[r], only < 0 || only == o->reads[r], unit);
		/* The device holds what the op left (posts[r]): only the bytes
		 * that differ are written, none when nothing does (another
		 * stream may use the buffer). */
		if (!perturb(b->size, dl.pre[r], posts[r]))
			ok = put_changed(b->addr, dl.again, posts[r], b->size) == 0;
	}
	/* The copies are complete (prof_host_copy): the second run sees them. */
	CUresult rc = ok ? relaunch(k, o, op) : CUDA_ERROR_UNKNOWN;
	ok = rc == CUDA_SUCCESS;
	int lost = 0;
	for (size_t r = 0; r < o->nreads; r++) {
		const struct prof_live *b = pb[o->reads[r]];
		if (!posts[r])
			continue;
		int read = ok && prof_host_copy(dl.again, b->addr, b->size, 1) == CUDA_SUCCESS;
		ok &= read;
		tested_bytes(d, o, r, b, posts[r], only < 0 || only == o->reads[r], unit);
		if (ok)
			ok =
			    second_run_agrees(out, o->reads[r], b->size, dl.pre[r], posts[r], unit);
		/* Put back what the second run changed; all of it when its
		 * content could not be read. */
		if (read ? put_changed(b->addr, posts[r], dl.again, b->size) != 0
		         : prof_host_copy(posts[r], b->addr, b->size, 0) != CUDA_SUCCESS)
			lost++;
	}
	/* After a failed second run the context is gone (the program gets the
	 * device error at its next call): one message is enough. */
	dl.lost |= lost != 0;
	if (lost && rc == CUDA_SUCCESS)
		remat_log(
		    REMAT_LOG_ERROR,
		    "write sets: %d buffer(s) could not be put back after op %zu's second run",
		    lost, k);
	if (rc != CUDA_SUCCESS) {
		remat_log(REMAT_LOG_INFO,
		          "write sets: op %zu (%s) could not be run again (CUDA error %d): its "
		          "writes count as reads",
		          k, o->name, (int)rc);
		return -1;
	}
	return ok && out->blind >= 0;
}

/* Whether the n changes of one buffer went through more than one unit. */
static int several_units(const struct prof_op *o, const struct prof_change *c, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (change_unit(o, &c[i]) != change_unit(o, &c[0]))
			return 1;
	return 0;
}

static int cmp_change(const void *a, const void *b)
{
	const struct prof_change *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The proof for the changes [c, e) of one buffer, a pointer (unit) at a
 * time, the rest of the buffer and the others starting from their content
 * before the op: in one allocation holding several tensors (a program's
 * own pool) a kernel that updates one in place (running statistics) and
 * overwrites another is then still proven blind on the second.  Appends
 * to *next the buffer's changes in order of offset, each unit's proven
 * writes blind, the others' changes as they were; 0, or -1 when the
 * second run failed. */
static int prove_units(size_t k, struct prof_op *o, const struct remat_op *op,
                       struct prof_live *const *pb, uint8_t **posts, uint32_t c, uint32_t e,
                       struct op_delta *next)
{
	const struct op_delta *d = &dl.deltas[k];
	struct op_delta got = {0};
	long *unit = malloc((e - c) * sizeof(*unit));
	uint8_t seen[MASK_REFS + 1] = {0}; /* per unit (BELOW_ALL last): it has changes */
	if (!unit)
		return 0; /* the changes stay unproven */
	for (uint32_t i = c; i < e; i++) {
		unit[i - c] = change_unit(o, &d->chg[i]);
		seen[unit[i - c] < 0 ? MASK_REFS : unit[i - c]] = 1;
	}
	int rc = 0;
	for (long u = 0; u <= MASK_REFS && rc == 0 && got.blind >= 0; u++) {
		if (!seen[u])
			continue;
		long which = u == MASK_REFS ? BELOW_ALL : u;
		struct op_delta one = {0};
		int r = proof_run(k, o, op, pb, posts, d->chg[c].buf, which, &one);
		if (r < 0)
			rc = -1;
		for (uint32_t x = 0; r == 1 && x < one.n; x++)
			add_change(&got, one.chg[x].buf, one.chg[x].lo, one.chg[x].hi,
			           one.chg[x].blind);
		for (uint32_t j = c; r != 1 && j < e; j++)
			if (unit[j - c] == which)
				add_change(&got, d->chg[j].buf, d->chg[j].lo, d->chg[j].hi, 0);
		free(one.chg);
	}
	free(unit);
	/* A write that crossed the next pointer is tested with both units:
	 * overlapping answers are not one buffer's changes; keep them all
	 * unproven then. */
	int clean = rc == 0 && got.blind >= 0;
	if (clean) {
		qsort(got.chg, got.n, sizeof(*got.chg), cmp_change);
		for (uint32_t x = 1; x < got.n && clean; x++)
			clean = got.chg[x].lo >= got.chg[x - 1].hi;
	}
	for (uint32_t x = 0; clean && x < got.n; x++)
		add_change(next, got.chg[x].buf, got.chg[x].lo, got.chg[x].hi, got.chg[x].blind);
	for (uint32_t j = c; !clean && j < e; j++)
		add_change(next, d->chg[j].buf, d->chg[j].lo, d->chg[j].hi, 0);
	free(got.chg);
	return rc;
}

/* The proof for op k: all its written buffers at once, and when that
 * fails (an update in place among them), each on its own, the others
 * starting from their content before the op, and a buffer that fails
 * alone a pointer at a time (prove_units).  What passes has its changes
 * replaced by every byte the op writes there, marked blind. */
static void prove_blind(size_t k, struct prof_op *o, const struct remat_op *op,
                        struct prof_live *const *pb, uint8_t **posts)
{
	struct op_delta *d = &dl.deltas[k], all = {0};
	int r = proof_run(k, o, op, pb, posts, -1, EVERY_UNIT, &all);
	if (r == 1) {
		free(d->chg);
		d->chg = all.chg;
		d->n = all.n;
		d->cap = all.cap;
		return;
	}
	free(all.chg);
	if (r < 0)
		return;
	int nbufs = 0;
	for (uint32_t c = 0; c < d->n; c++)
		nbufs += !c || d->chg[c].buf != d->chg[c - 1].buf;
	struct op_delta next = {0};
	for (uint32_t c = 0; c < d->n && next.blind >= 0;) {
		int32_t buf = d->chg[c].buf;
		uint32_t e = c;
		while (e < d->n && d->chg[e].buf == buf)
			e++;
		struct op_delta one = {0};
		/* With one buffer, the run of all of them was its run. */
		int here = r < 0       ? -1
		           : nbufs > 1 ? proof_run(k, o, op, pb, posts, buf, EVERY_UNIT, &one)
		                       : 0;
		if (here < 0)
			r = -1;
		if (here == 1) {
			for (uint32_t i = 0; i < one.n; i++)
				add_change(&next, buf, one.chg[i].lo, one.chg[i].hi,
				           one.chg[i].blind);
		} else if (here == 0 && several_units(o, d->chg + c, e - c)) {
			r = prove_units(k, o, op, pb, posts, c, e, &next);
		} else {
			for (uint32_t i = c; i < e; i++)
				add_change(&next, buf, d->chg[i].lo, d->chg[i].hi, 0);
		}
		free(one.chg);
		c = e;
	}
	if (next.blind < 0) {
		free(next.chg);
		return;
	}
	free(d->chg);
	d->chg = next.chg;
	d->n = next.n;
	d->cap = next.cap;
}

/* One op's proof of unread bytes: what every test of it needs. */
struct unread_ctx {
	size_t k;
	struct prof_op *o;
	const struct remat_op *op;
	struct prof_live *const *pb;
	uint8_t **posts;
};

/* One run of the proof of unread bytes over the n ranges: they are set to
 * their complement, everything else the op references starts from its
 * content before the op, the op runs once more, and everything must read
 * back as the first run left it, the ranges unwritten.  1: its output does
 * not depend on them; 0: it does; -1: the second run failed. */
static int unread_run(const struct unread_ctx *u, struct prof_change *ranges, uint32_t n)
{
	struct op_delta *d = &dl.deltas[u->k], wrote = {0};
	d->unread = ranges; /* what proof_mask tests */
	d->nunread = n;
	int r = proof_run(u->k, u->o, u->op, u->pb, u->posts, -1, UNREAD, &wrote);
	d->unread = NULL;
	d->nunread = 0;
	free(wrote.chg);
	return r < 0 ? -1 : r == 1 && !wrote.n;
}

/* REMAT_WRITE_PROOF=data: the ranges of the proof of unread bytes cut to
 * the words the second run may perturb, since what passes is claimed
 * unread as a whole: data words, a zero beside data in its 256-byte block
 * (keep_data_words over the whole buffer: a word is judged with its
 * neighbours); never a zero in a block of zeros (gradients zeroed for the
 * next step, padding token ids): an index array holds zeros, and a kernel
 * that does read one would index with the complement and fault.  Replaces
 * *cand; the number of runs. */
static uint32_t data_runs(const struct unread_ctx *u, struct prof_change **cand, uint32_t n)
{
	struct op_delta runs = {0};
	for (uint32_t c = 0; c < n; c++) {
		const struct prof_change *x = &(*cand)[c];
		size_t r = 0;
		while (r < u->o->nreads && u->o->reads[r] != x->buf)
			r++;
		if (r == u->o->nreads || !dl.pre[r] || x->hi > u->pb[x->buf]->size)
			continue;
		uint64_t size = u->pb[x->buf]->size, addr = u->pb[x->buf]->addr;
		memset(dl.wanted, 0, size);
		memset(dl.wanted + x->lo, 1, x->hi - x->lo);
		/* The op does not change these bytes: before is after. */
		keep_data_words(dl.wanted, dl.pre[r], dl.pre[r], addr, size);
		for (uint64_t i = x->lo; i < x->hi;) {
			uint64_t j = i;
			while (j < x->hi && dl.wanted[j])
				j++;
			if (j > i)
				add_change(&runs, x->buf, i, j, 0);
			i = j + 1;
		}
	}
	free(*cand);
	*cand = NULL;
	if (runs.blind < 0) {
		free(runs.chg);
		return 0;
	}
	*cand = runs.chg;
	return runs.n;
}

/* Tests the n ranges of cand (taken: freed here) in one second launch,
 * cut to what may be perturbed by default; when they pass, what was
 * perturbed replaces *best.  1 passed, 0 failed, -1 the second run failed. */
static int unread_test(const struct unread_ctx *u, struct prof_change *cand, uint32_t n,
                       struct op_delta *best)
{
	if (n && dl.proofs == REMAT_PROOF_DATA)
		n = data_runs(u, &cand, n);
	int r = n ? unread_run(u, cand, n) : 0;
	if (r != 1) {
		free(cand);
		return r;
	}
	free(best->chg);
	best->chg = cand;
	best->n = best->cap = n;
	return 1;
}

/* unread_test of one range (copied). */
static int unread_one(const struct unread_ctx *u, struct prof_change c, struct op_delta *best)
{
	struct prof_change *one = malloc(sizeof(*one));
	if (!one)
		return -1;
	*one = c;
	return unread_test(u, one, 1, best);
}

#define UNREAD_SEARCH 12  /* second launches per pointer */
#define UNREAD_ALIGN  256 /* cudaMalloc's alignment, and a pool's */

/* A pointer's range failed: the kernel reads some of it.  A kernel reads
 * from its pointer on (a tensor, several laid out one after the other), so
 * the bytes it does not read are a tail (a tail of a passing tail passes,
 * so when the last 256 bytes fail, all do: one launch says so for a
 * kernel that reads to the range's end, most of llm.c's).  Regions are cut
 * where pointers, copies and sets begin, all known ahead (unread.c), so
 * the tail is looked for at those cuts first, by bisection.  Past the last
 * cut, or with none, at the smallest 256-byte-aligned offset, to within
 * the range's length / 2^12, with what is left of the launches: a later
 * op may write or read whole what begins there.  *best: what passed. */
static int unread_search(const struct unread_ctx *u, struct prof_change c, struct op_delta *best)
{
	uint64_t last = (c.hi - 1) - (c.hi - 1) % UNREAD_ALIGN;
	int r = last > c.lo ? unread_one(u, (struct prof_change){c.buf, last, c.hi, 0}, best) : 0;
	if (r != 1)
		return r < 0 ? -1 : 0;
	const uint64_t *at;
	uint32_t lo = 0, hi = prof_unread_cuts_in(c.buf, c.lo, c.hi, &at), m = hi;
	int tries = 1;
	for (; lo < hi && tries < UNREAD_SEARCH; tries++) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((r = unread_one(u, (struct prof_change){c.buf, at[mid], c.hi, 0}, best)) < 0)
			return -1;
		if (r == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < hi || lo < m)
		return 0; /* the launches ran out, or a cut passed */
	if (m)
		c.lo = at[m - 1]; /* every cut failed: the tail is past the last */
	uint64_t base = c.lo - c.lo % UNREAD_ALIGN;
	uint64_t flo = 1, fhi = (c.hi - base + UNREAD_ALIGN - 1) / UNREAD_ALIGN;
	for (; flo < fhi && tries < UNREAD_SEARCH; tries++) {
		uint64_t mid = flo + (fhi - flo) / 2;
		struct prof_change tail = {c.buf, base + mid * UNREAD_ALIGN, c.hi, 0};
		if ((r = unread_one(u, tail, best)) < 0)
			return -1;
		if (r == 1)
			fhi = mid;
		else
			flo = mid + 1;
	}
	return 0;
}

/* The proof of unread bytes for op k (unread.c chooses the bytes): all
 * its pointers' ranges in one run; when that fails, each on its own (one
 * pointer that reads past its tensor, a GEMM given the first of several,
 * fails the run of all), and for one that fails alone the tail of its
 * range it does not read (unread_search).  What passes is no read of the op's, even where a
 * pointer's reach takes it in (regions.c); the rest of the bytes a pointer
 * can reach stay reads. */
static void prove_unread(const struct unread_ctx *u)
{
	struct op_delta *d = &dl.deltas[u->k], kept = {0};
	struct prof_change *cand;
	uint32_t n = prof_unread_ranges(u->o, u->pb, d->chg, d->n, &cand);
	struct prof_change *copy = n ? malloc(n * sizeof(*copy)) : NULL;
	int r = copy ? (memcpy(copy, cand, n * sizeof(*copy)), unread_test(u, copy, n, &kept)) : -1;
	for (uint32_t c = 0; r == 0 && c < n; c++) {
		struct op_delta one = {0};
		int r1 = n > 1 ? unread_one(u, cand[c], &one) : 0;
		if (r1 == 0)
			r1 = unread_search(u, cand[c], &one);
		for (uint32_t i = 0; i < one.n; i++)
			add_change(&kept, one.chg[i].buf, one.chg[i].lo, one.chg[i].hi, 0);
		free(one.chg);
		if (r1 < 0)
			break;
	}
	free(cand);
	d->unread = kept.n && kept.blind >= 0 ? kept.chg : NULL;
	d->nunread = d->unread ? kept.n : 0;
	if (!d->unread)
		free(kept.chg);
}

/* Host copies after the op of every buffer it references (posts[r], into
 * post, with room for the proofs after them); each one whose content
 * changed is among its writes.  The number of copies, or -1 when one
 * failed or there was no room. */
static int snap_after(struct prof_op *o, struct prof_live *const *pb, uint8_t **posts)
{
	size_t off = 0;
	int copies = 0;
	for (size_t r = 0; r < o->nreads; r++) {
		const struct prof_live *b = pb[o->reads[r]];
		posts[r] = NULL;
		if (!b->size)
			continue;
		posts[r] = dl.post + off;
		off += b->size;
		if (prof_host_copy(posts[r], b->addr, b->size, 1) != CUDA_SUCCESS)
			return -1;
		copies++;
		if (memcmp(posts[r], dl.pre[r], b->size))
			prof_op_wrote(o, o->reads[r]);
	}
	return copies;
}

/* Kernel op k's changes: in each buffer that can be evicted, the runs of
 * bytes that differ after it. */
static void find_changes(size_t k, const struct prof_op *o, struct prof_live *const *pb,
                         uint8_t *const *posts)
{
	struct op_delta *d = &dl.deltas[k];
	for (size_t r = 0; r < o->nreads; r++) {
		const struct prof_live *b = pb[o->reads[r]];
		for (uint64_t i = 0; posts[r] && evictable(b) && i < b->size;) {
			i = first_diff(posts[r], dl.pre[r], i, b->size);
			if (i == b->size)
				break;
			/* A run of changed bytes ends at the next pointer: what
			 * lies past it went through that one (the regions' reach,
			 * the proof a pointer at a time). */
			uint64_t stop = prof_delta_next_ref(o, o->reads[r], i, b->size);
			uint64_t j = first_same(posts[r], dl.pre[r], i, stop);
			add_change(d, o->reads[r], i, j, 0);
			i = j;
		}
	}
}

/* Op k's copies after it (posts, by slot of its reads; NULL: none to
 * trust) for op k + 1's before it. */
static void remember_posts(size_t k, const struct prof_op *o, uint8_t *const *posts)
{
	dl.prev_k = SIZE_MAX;
	if (!posts || REMAT_RESERVE(dl.prev, o->nreads, dl.prev_cap))
		return;
	for (size_t r = 0; r < o->nreads; r++)
		dl.prev[r] = (struct prev_post){o->reads[r], posts[r]};
	dl.prev_n = o->nreads;
	dl.prev_k = k;
}

uint32_t prof_delta_after(size_t k, struct prof_op *o, const struct remat_op *op,
                          struct prof_live *const *pb)
{
	int kernel = o->kind == REMAT_OP_KERNEL;
	for (size_t r = 0; kernel && r < o->nrefs; r++)
		prof_unread_cut(o->refs[r].buf, o->refs[r].off);
	uint8_t *stack[64], **posts = o->nreads <= 64 ? stack : calloc(o->nreads, sizeof(*posts));
	int copies = k < dl.ndeltas && dl.snapped == k && posts ? snap_after(o, pb, posts) : -1;
	dl.snapped = SIZE_MAX;
	dl.lost = 0;
	/* What it wrote is not known: all it references may have changed. */
	for (size_t r = 0; copies < 0 && r < o->nreads; r++)
		prof_op_wrote(o, o->reads[r]);
	if (copies >= 0 && kernel) {
		struct op_delta *d = &dl.deltas[k];
		d->blind = 0; /* known from here on, unless something fails */
		find_changes(k, o, pb, posts);
		/* REMAT_WRITE_PROOF=0: no second launch; every change is then
		 * an update of what was there (saves less). */
		if (d->blind >= 0 && d->n && o->replayable && dl.proofs != REMAT_PROOF_OFF)
			prove_blind(k, o, op, pb, posts);
		/* Where a blind write through a pointer ends (its last run),
		 * as regions.c may cut there; the ends of a strided or permuted
		 * write's thousands of runs are no tensor's end (and would make
		 * the search for an unread tail bisect among them). */
		for (uint32_t c = 0; d->blind >= 0 && c < d->n; c++)
			if (d->chg[c].blind &&
			    (c + 1 == d->n || d->chg[c + 1].buf != d->chg[c].buf ||
			     change_unit(o, &d->chg[c + 1]) != change_unit(o, &d->chg[c])))
				prof_unread_cut(d->chg[c].buf, d->chg[c].hi);
		/* The same switch: both proofs launch the kernel once more with
		 * bytes it may read set to what it never saw. */
		if (d->blind >= 0 && o->replayable && dl.proofs != REMAT_PROOF_OFF)
			prove_unread(&(struct unread_ctx){k, o, op, pb, posts});
	}
	remember_posts(k, o, copies >= 0 && !dl.lost ? posts : NULL);
	if (posts != stack)
		free(posts);
	return copies > 0 ? (uint32_t)copies : 0;
}
