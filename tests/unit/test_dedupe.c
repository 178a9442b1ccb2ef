/* Unit tests for the crawl's digest set (lib/dedupe.c): the first claim
 * of a digest is the first and the later ones find it, by kind and by all
 * 20 bytes; a full set still knows what it holds and turns the rest away;
 * processes forked after it claim in the one set, each digest first once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dedupe.h"

/* A digest made from n, its first 8 bytes from n and k, the rest from n. */
static void md_of(unsigned n, unsigned k, unsigned char md[DIGEST_LEN])
{
    for (int i = 0; i < DIGEST_LEN; i++)
        md[i] = (unsigned char)((i < 8 ? k * 131 + n : n) * 2654435761u >> (i % 4 * 8));
}

static void test_the_first_claim_is_first_and_the_next_finds_it(void **state)
{
    struct dedupe *s = dedupe_new(64, 4096);
    unsigned char md[DIGEST_LEN];
    struct dedupe_first got = { 0 };
    assert_non_null(s);
    md_of(1, 1, md);
    struct dedupe_first a = { "http://a/1", "2026-01-02T03:04:05.000006Z", "<urn:uuid:x>" };
    assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &a, &got), DEDUPE_FIRST);
    struct dedupe_first b = { "http://b/2", NULL, NULL };
    assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &b, &got), DEDUPE_SEEN);
    assert_string_equal(got.uri, "http://a/1");
    assert_string_equal(got.date, "2026-01-02T03:04:05.000006Z");
    assert_string_equal(got.id, "<urn:uuid:x>");
    /* The other kind of the same bytes is another entry. */
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, md, &b, &got), DEDUPE_FIRST);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, md, &a, &got), DEDUPE_SEEN);
    assert_string_equal(got.uri, "http://b/2");
    assert_string_equal(got.date, "");
    assert_string_equal(got.id, "");
    assert_int_equal(dedupe_held(s), 2);
    assert_int_equal(dedupe_refused(s), 0);
    dedupe_free(s);
}

static void test_two_digests_with_the_same_first_8_bytes_are_two(void **state)
{
    struct dedupe *s = dedupe_new(64, 4096);
    unsigned char m1[DIGEST_LEN], m2[DIGEST_LEN];
    struct dedupe_first got, f1 = { .uri = "http://one/" }, f2 = { .uri = "http://two/" };
    md_of(1, 7, m1);
    md_of(2, 7, m2);
    memcpy(m2, m1, 8);          /* the same key, the same slot to start from */
    assert_memory_not_equal(m1, m2, DIGEST_LEN);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m1, &f1, &got), DEDUPE_FIRST);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m2, &f2, &got), DEDUPE_FIRST);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m2, &f1, &got), DEDUPE_SEEN);
    assert_string_equal(got.uri, "http://two/");
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m1, &f2, &got), DEDUPE_SEEN);
    assert_string_equal(got.uri, "http://one/");
    dedupe_free(s);
}

static void test_a_full_set_knows_what_it_holds_and_turns_the_rest_away(void **state)
{
    struct dedupe *s = dedupe_new(4, 4096);
    unsigned char md[DIGEST_LEN];
    struct dedupe_first got, f = { .uri = "http://h/" };
    for (unsigned i = 0; i < 4; i++) {
        md_of(i, i, md);
        assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &f, &got), DEDUPE_FIRST);
    }
    md_of(4, 4, md);
    assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &f, &got), DEDUPE_UNKNOWN);
    assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &f, &got), DEDUPE_UNKNOWN);
    for (unsigned i = 0; i < 4; i++) {
        md_of(i, i, md);
        assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &f, &got), DEDUPE_SEEN);
    }
    assert_int_equal(dedupe_held(s), 4);
    assert_int_equal(dedupe_refused(s), 2);
    dedupe_free(s);
}

static void test_texts_past_the_arena_keep_the_first_first_and_the_next_unknown(void **state)
{
    /* Room for one record of a 40-byte URL, not two. */
    struct dedupe *s = dedupe_new(16, 96);
    unsigned char m1[DIGEST_LEN], m2[DIGEST_LEN];
    struct dedupe_first got, f = { .uri = "http://example.com/a/page/forty/bytes/x" };
    md_of(1, 1, m1);
    md_of(2, 2, m2);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m1, &f, &got), DEDUPE_FIRST);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m2, &f, &got), DEDUPE_FIRST);
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m1, &f, &got), DEDUPE_SEEN);
    /* The second's texts had no room: never taken for another's. */
    assert_int_equal(dedupe_claim(s, DEDUPE_BODY, m2, &f, &got), DEDUPE_UNKNOWN);
    assert_int_equal(dedupe_refused(s), 1);
    dedupe_free(s);
}

#define FORKED_N 2000

/* What the children of the fork test saw, in memory they share with it. */
struct seen_by {
    atomic_int firsts[FORKED_N];    /* DEDUPE_FIRST answers for digest i */
    int first_by[FORKED_N];         /* which child had it */
    int seen_from[2][FORKED_N];     /* the claimer child w's DEDUPE_SEEN named, or -1 */
};

static void claim_all(struct dedupe *s, struct seen_by *t, int w)
{
    unsigned char md[DIGEST_LEN];
    char uri[64];
    for (unsigned k = 0; k < FORKED_N; k++) {
        unsigned i = w ? FORKED_N - 1 - k : k;     /* from both ends: they meet */
        struct dedupe_first f = { uri, "d", "id" }, got;
        snprintf(uri, sizeof uri, "http://w%d/%u", w, i);
        md_of(i, i, md);
        int r = dedupe_claim(s, DEDUPE_PAYLOAD, md, &f, &got);
        t->seen_from[w][i] = -1;
        if (r == DEDUPE_FIRST) {
            t->first_by[i] = w;
            atomic_fetch_add(&t->firsts[i], 1);
        } else if (r == DEDUPE_SEEN) {
            unsigned j;
            int by;
            if (sscanf(got.uri, "http://w%d/%u", &by, &j) == 2 && j == i)
                t->seen_from[w][i] = by;
        }
    }
}

static void test_forked_processes_claim_each_digest_first_once_in_one_set(void **state)
{
    struct dedupe *s = dedupe_new(2 * FORKED_N, 1 << 20);
    struct seen_by *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_non_null(s);
    assert_true(t != MAP_FAILED);
    pid_t pid[2];
    for (int w = 0; w < 2; w++) {
        if ((pid[w] = fork()) == 0) {
            claim_all(s, t, w);
            _exit(0);
        }
        assert_true(pid[w] > 0);
    }
    for (int w = 0; w < 2; w++) {
        int st;
        assert_int_equal(waitpid(pid[w], &st, 0), pid[w]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    unsigned char md[DIGEST_LEN];
    for (unsigned i = 0; i < FORKED_N; i++) {
        if (atomic_load(&t->firsts[i]) != 1)
            fail_msg("digest %u was first %d times", i, atomic_load(&t->firsts[i]));
        int other = !t->first_by[i];
        if (t->seen_from[other][i] != t->first_by[i])
            fail_msg("digest %u: child %d saw it as child %d's, not child %d's", i, other,
                     t->seen_from[other][i], t->first_by[i]);
        /* And the parent sees the same set. */
        struct dedupe_first f = { .uri = "http://parent/" }, got;
        char want[64];
        md_of(i, i, md);
        assert_int_equal(dedupe_claim(s, DEDUPE_PAYLOAD, md, &f, &got), DEDUPE_SEEN);
        snprintf(want, sizeof want, "http://w%d/%u", t->first_by[i], i);
        assert_string_equal(got.uri, want);
    }
    assert_int_equal(dedupe_held(s), FORKED_N);
    munmap(t, sizeof *t);
    dedupe_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_first_claim_is_first_and_the_next_finds_it),
        cmocka_unit_test(test_two_digests_with_the_same_first_8_bytes_are_two),
        cmocka_unit_test(test_a_full_set_knows_what_it_holds_and_turns_the_rest_away),
        cmocka_unit_test(test_texts_past_the_arena_keep_the_first_first_and_the_next_unknown),
        cmocka_unit_test(test_forked_processes_claim_each_digest_first_once_in_one_set),
    };
    return cmocka_run_group_tests_name("dedupe", tests, NULL, NULL);
}
