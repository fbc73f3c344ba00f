/*
 * test_containers.c — core/'s containers against plain reference models:
 * the growable array (grow.h), the hash table (map.h), the binary
 * searches (search.h) and the parameter words (param_words.h), with the
 * allocations failing where they can (realloc and calloc are wrapped at
 * link time: -Wl,--wrap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../core/grow.h"
#include "../../core/map.h"
#include "../../core/param_words.h"
#include "../../core/search.h"

/* ---- allocation failure --------------------------------------------------- */

static int fail_next; /* the next realloc or calloc of core/ returns NULL */

void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n)
{
	if (fail_next) {
		fail_next = 0;
		return NULL;
	}
	return __real_realloc(p, n);
}
void *__wrap_calloc(size_t n, size_t size)
{
	if (fail_next) {
		fail_next = 0;
		return NULL;
	}
	return __real_calloc(n, size);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- grow.h ---------------------------------------------------------------- */

struct pair {
	uint64_t a;
	uint32_t b;
};

static void test_grow_appends(void **state)
{
	(void)state;
	struct pair *v = NULL;
	size_t n = 0, cap = 0, reallocs = 0;
	for (uint32_t i = 0; i < 10000; i++) {
		size_t before = cap;
		assert_int_equal(REMAT_GROW(v, n, cap), 0);
		assert_true(cap > n);
		if (cap != before) {
			reallocs++;
			assert_true(before == 0 ? cap == 16 : cap == 2 * before); /* doubling */
		}
		v[n++] = (struct pair){(uint64_t)i * 3, i};
	}
	assert_int_equal(reallocs, 11); /* 16 .. 16384 */
	for (uint32_t i = 0; i < n; i++)
		assert_true(v[i].a == (uint64_t)i * 3 && v[i].b == i);
	free(v);
}

static void test_grow_reserve(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0, none = 0;
	assert_int_equal(REMAT_RESERVE(v, none, cap), 0); /* nothing needed */
	assert_null(v);
	assert_int_equal(REMAT_RESERVE(v, 100, cap), 0);
	assert_int_equal(cap, 128);
	int *same = v;
	assert_int_equal(REMAT_RESERVE(v, 128, cap), 0);
	assert_ptr_equal(v, same);
	assert_int_equal(cap, 128);
	free(v);
}

static void test_grow_out_of_memory(void **state)
{
	(void)state;
	int *v = NULL;
	size_t n = 0, cap = 0;
	for (; n < 16; n++) {
		assert_int_equal(REMAT_GROW(v, n, cap), 0);
		v[n] = (int)n;
	}
	int *old = v;
	fail_next = 1;
	assert_int_equal(REMAT_GROW(v, n, cap), -1);
	assert_int_equal(fail_next, 0); /* realloc was asked */
	assert_ptr_equal(v, old);
	assert_int_equal(cap, 16);
	/* Sizes that cannot be: refused before any realloc. */
	assert_int_equal(REMAT_RESERVE(v, SIZE_MAX / 2, cap), -1);
	assert_int_equal(REMAT_RESERVE(v, SIZE_MAX, cap), -1);
	assert_ptr_equal(v, old);
	assert_int_equal(cap, 16);
	/* And then it grows as if nothing happened. */
	assert_int_equal(REMAT_GROW(v, n, cap), 0);
	v[n++] = 16;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i], (int)i);
	free(v);
}

/* ---- map.h ----------------------------------------------------------------- */

struct rec {
	uint64_t key;
	uint64_t value;
	int32_t tag;
};

#define NKEYS 3000

static uint64_t key_of(size_t i)
{
	/* Aligned addresses, as the runtime's keys are, in a few clusters. */
	return 0x7f0000000000ULL + (uint64_t)(i % 7) * (1ULL << 32) + (uint64_t)(i / 7 + 1) * 512;
}

/* The map holds exactly the keys with present[i], each with its value. */
static void check_map(const struct remat_map *m, const uint8_t *present)
{
	size_t want = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		struct rec *r = remat_map_find(m, key_of(i));
		if (present[i]) {
			want++;
			assert_non_null(r);
			assert_true(r->key == key_of(i) && r->value == i * 11 &&
			            r->tag == (int32_t)i);
		} else {
			assert_null(r);
		}
	}
	assert_int_equal(m->n, want);
	uint8_t *seen = calloc(NKEYS, 1);
	size_t it = 0, walked = 0;
	for (struct rec *r; (r = remat_map_next(m, &it));) {
		assert_true(r->tag >= 0 && r->tag < NKEYS && present[r->tag] && !seen[r->tag]);
		seen[r->tag] = 1;
		walked++;
	}
	assert_int_equal(walked, want);
	free(seen);
}

static void put(struct remat_map *m, size_t i)
{
	struct rec *r = remat_map_insert(m, key_of(i));
	assert_non_null(r);
	r->value = i * 11;
	r->tag = (int32_t)i;
}

static void test_map_model(void **state)
{
	(void)state;
	struct remat_map m = REMAT_MAP_INIT(struct rec);
	uint8_t present[NKEYS] = {0};
	assert_null(remat_map_find(&m, key_of(0))); /* empty, no slots yet */
	assert_int_equal(remat_map_remove(&m, key_of(0), NULL), -1);
	for (int round = 0; round < 20000; round++) {
		size_t i = next_rand() % NKEYS;
		if (next_rand() % 3) {
			put(&m, i);
			present[i] = 1;
		} else {
			struct rec out = {0};
			int rc = remat_map_remove(&m, key_of(i), &out);
			assert_int_equal(rc, present[i] ? 0 : -1);
			if (!rc)
				assert_true(out.key == key_of(i) && out.value == i * 11);
			present[i] = 0;
		}
		if (round % 4000 == 0)
			check_map(&m, present);
	}
	check_map(&m, present);
	assert_true(m.cap >= 256 && (m.cap & (m.cap - 1)) == 0 && m.n * 4 <= m.cap * 3);
	/* Emptied one by one: every removal keeps the rest findable. */
	for (size_t i = 0; i < NKEYS; i++)
		if (present[i]) {
			assert_int_equal(remat_map_remove(&m, key_of(i), NULL), 0);
			present[i] = 0;
			if (i % 500 == 0)
				check_map(&m, present);
		}
	assert_int_equal(m.n, 0);
	remat_map_clear(&m);
	assert_null(m.slot);
}

static void test_map_insert_existing_and_zero(void **state)
{
	(void)state;
	struct remat_map m = REMAT_MAP_INIT(struct rec);
	assert_null(remat_map_insert(&m, 0)); /* 0 marks empty slots: no key */
	struct rec *r = remat_map_insert(&m, 42);
	assert_non_null(r);
	assert_true(r->key == 42 && r->value == 0 && r->tag == 0); /* zeroed */
	r->value = 7;
	assert_ptr_equal(remat_map_insert(&m, 42), r);
	assert_int_equal(r->value, 7);
	assert_int_equal(m.n, 1);
	assert_null(remat_map_find(&m, 0));
	assert_int_equal(remat_map_remove(&m, 0, NULL), -1);
	/* A key removed and inserted again starts zeroed. */
	assert_int_equal(remat_map_remove(&m, 42, NULL), 0);
	r = remat_map_insert(&m, 42);
	assert_true(r->key == 42 && r->value == 0);
	remat_map_clear(&m);
}

static void test_map_out_of_memory(void **state)
{
	(void)state;
	struct remat_map m = REMAT_MAP_INIT(struct rec);
	uint8_t present[NKEYS] = {0};
	fail_next = 1; /* the first slots */
	assert_null(remat_map_insert(&m, key_of(0)));
	assert_int_equal(fail_next, 0);
	assert_true(m.n == 0 && m.cap == 0);
	/* Fill to the growth point, then fail the growth. */
	size_t i = 0;
	for (; (m.n + 1) * 4 <= m.cap * 3 || !m.cap; i++) {
		put(&m, i);
		present[i] = 1;
	}
	size_t cap = m.cap;
	fail_next = 1;
	assert_null(remat_map_insert(&m, key_of(i)));
	assert_int_equal(fail_next, 0);
	assert_int_equal(m.cap, cap);
	check_map(&m, present); /* as it was */
	put(&m, i);
	present[i] = 1;
	assert_int_equal(m.cap, 2 * cap);
	check_map(&m, present);
	remat_map_clear(&m);
}

/* ---- search.h -------------------------------------------------------------- */

struct span {
	uint64_t start, size;
};

static uint64_t u64_key(const void *arr, size_t i)
{
	return ((const uint64_t *)arr)[i];
}
static uint64_t span_start(const void *arr, size_t i)
{
	return ((const struct span *)arr)[i].start;
}
static uint64_t span_end(const void *arr, size_t i)
{
	const struct span *s = (const struct span *)arr + i;
	return s->start + s->size;
}

static void test_search_keys(void **state)
{
	(void)state;
	uint64_t v[64];
	for (int round = 0; round < 300; round++) {
		size_t n = next_rand() % 64;
		uint64_t k = next_rand() % 4;
		for (size_t i = 0; i < n; i++)
			v[i] = k += next_rand() % 3; /* duplicates included */
		for (uint64_t x = 0; x < k + 3; x++) {
			size_t from = 0, after = 0, key = n;
			while (from < n && v[from] < x)
				from++;
			while (after < n && v[after] <= x)
				after++;
			for (size_t i = 0; i < n; i++)
				if (v[i] == x) {
					key = i;
					break;
				}
			assert_int_equal(remat_search_from(v, n, u64_key, x), from);
			assert_int_equal(remat_search_after(v, n, u64_key, x), after);
			assert_int_equal(remat_search_key(v, n, u64_key, x), key);
		}
	}
	assert_int_equal(remat_search_from(NULL, 0, u64_key, 5), 0);
	assert_int_equal(remat_search_after(NULL, 0, u64_key, 5), 0);
	uint64_t top[2] = {1, UINT64_MAX};
	assert_int_equal(remat_search_after(top, 2, u64_key, UINT64_MAX), 2);
	assert_int_equal(remat_search_key(top, 2, u64_key, UINT64_MAX), 1);
}

/* Signed keys keep signed order: every search over int32_t values, negative
 * ones included, finds what a linear scan finds. */
static void test_search_signed(void **state)
{
	(void)state;
	const int32_t v[] = {INT32_MIN, -7, -1, -1, 0, 3, 3, 9, INT32_MAX};
	const size_t n = sizeof(v) / sizeof(v[0]);
	const int32_t xs[] = {INT32_MIN, -8, -7, -2, -1, 0, 1, 3, 4, 9, 10, INT32_MAX};
	assert_true(remat_key_signed(-1) < remat_key_signed(0));
	assert_true(remat_key_signed(INT64_MIN) < remat_key_signed(INT64_MAX));
	for (size_t k = 0; k < sizeof(xs) / sizeof(xs[0]); k++) {
		int32_t x = xs[k];
		size_t from = 0, after = 0;
		while (from < n && v[from] < x)
			from++;
		while (after < n && v[after] <= x)
			after++;
		uint64_t key = remat_key_signed(x);
		assert_int_equal(remat_search_from(v, n, remat_key_i32, key), from);
		assert_int_equal(remat_search_after(v, n, remat_key_i32, key), after);
		assert_int_equal(remat_search_key(v, n, remat_key_i32, key),
		                 from < n && v[from] == x ? from : n);
	}
}

static void test_search_ranges(void **state)
{
	(void)state;
	struct span s[40];
	for (int round = 0; round < 300; round++) {
		size_t n = next_rand() % 40;
		uint64_t at = next_rand() % 5;
		for (size_t i = 0; i < n; i++) {
			s[i] = (struct span){at, 1 + next_rand() % 4};
			at += s[i].size + next_rand() % 3; /* gaps, or none */
		}
		for (uint64_t x = 0; x < at + 2; x++) {
			size_t holding = n, from = n;
			for (size_t i = n; i-- > 0;) {
				if (s[i].start <= x && x < s[i].start + s[i].size)
					holding = i;
				if (s[i].start + s[i].size > x)
					from = i;
			}
			assert_int_equal(remat_range_holding(s, n, span_start, span_end, x),
			                 holding);
			assert_int_equal(remat_range_from(s, n, span_end, x), from);
		}
	}
}

/* ---- param_words.h --------------------------------------------------------- */

static void test_words_packed(void **state)
{
	(void)state;
	uint8_t buf[30];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)i;
	struct remat_words it = remat_words_packed(buf, sizeof(buf));
	uint64_t v, off, want;
	for (uint64_t k = 0; k < 3; k++) { /* 3 whole words; the 6-byte tail is none */
		assert_int_equal(remat_words_next(&it, &v, &off), 1);
		memcpy(&want, buf + 8 * k, 8);
		assert_true(off == 8 * k && v == want);
	}
	assert_int_equal(remat_words_next(&it, &v, &off), 0);
	assert_int_equal(remat_words_next(&it, &v, &off), 0);
	it = remat_words_packed(NULL, 64); /* no buffer passed */
	assert_int_equal(remat_words_next(&it, &v, &off), 0);
	it = remat_words_packed(buf, 7);
	assert_int_equal(remat_words_next(&it, &v, &off), 0);
}

static void test_words_params(void **state)
{
	(void)state;
	/* int at 0, pointer at 8, int at 16, a 20-byte struct at 20 (aligned
	 * words: 24 and 32 of it), a 4-byte tail at 40, a pointer at 48. */
	uint32_t a = 1, c = 3, tail = 9;
	uint64_t b = 0x1000, f = 0x2000;
	uint8_t st[20];
	for (size_t i = 0; i < sizeof(st); i++)
		st[i] = (uint8_t)(0xa0 + i);
	void *params[] = {&a, &b, &c, st, &tail, &f};
	const uint32_t layout[][2] = {{0, 4}, {8, 8}, {16, 4}, {20, 20}, {40, 4}, {48, 8}};
	struct remat_words it = remat_words_params(params, layout, 6);
	uint64_t v, off, w24, w32;
	memcpy(&w24, st + 4, 8);
	memcpy(&w32, st + 12, 8);
	const uint64_t want[][2] = {{8, 0x1000}, {24, w24}, {32, w32}, {48, 0x2000}};
	for (size_t k = 0; k < 4; k++) {
		assert_int_equal(remat_words_next(&it, &v, &off), 1);
		assert_int_equal(off, want[k][0]);
		assert_int_equal(v, want[k][1]);
	}
	assert_int_equal(remat_words_next(&it, &v, &off), 0);
	it = remat_words_params(NULL, NULL, 0); /* a kernel without parameters */
	assert_int_equal(remat_words_next(&it, &v, &off), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow_appends),
	    cmocka_unit_test(test_grow_reserve),
	    cmocka_unit_test(test_grow_out_of_memory),
	    cmocka_unit_test(test_map_model),
	    cmocka_unit_test(test_map_insert_existing_and_zero),
	    cmocka_unit_test(test_map_out_of_memory),
	    cmocka_unit_test(test_search_keys),
	    cmocka_unit_test(test_search_signed),
	    cmocka_unit_test(test_search_ranges),
	    cmocka_unit_test(test_words_packed),
	    cmocka_unit_test(test_words_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
