/* coro.c: stackful coroutines on mmap'd stacks, each its own or shared.
 *
 * The switch itself is a few instructions of assembly (coro_switch.S) on
 * x86-64 and aarch64, and makecontext/swapcontext elsewhere or when built
 * with -DCORO_UCONTEXT. Under AddressSanitizer and ThreadSanitizer every
 * switch is announced to the sanitizer, which would otherwise take the new
 * stack for a wild pointer (ASan) or mix up two coroutines' histories (TSan). */
#include "coro.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(CORO_UCONTEXT) || !(defined(__x86_64__) || defined(__aarch64__))
#define CORO__UC 1
#include <ucontext.h>
#endif

#include "sanitizers.h"

#if CRAWL_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if CRAWL_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* The byte coro_paint fills a stack with; not 0, which stacks hold a lot. */
#define CORO__PAINT 0xa5u

struct coro_stack {
    char *base;                 /* lowest usable byte; the guard page is just below */
    size_t size;                /* usable bytes, a whole number of pages */
    coro *owner;                /* whose frames are on it: running, or parked in place */
};

struct coro {
    /* asm: the stack pointer saved when this coroutine switched away.
     * ucontext: the ucontext_t it saved, which lives on its own stack. */
    void *ctx;
    void *back;                 /* the resumer's ctx, the same way, while this one runs */
    coro_fn fn;
    void *arg;
    void *transfer;             /* the pointer crossing the current switch */
    void *data;                 /* the user's */
    char *stack;                /* lowest usable byte; the guard page is just below */
    size_t stack_size;          /* usable bytes, a whole number of pages */
    unsigned char status;       /* enum coro_status */
    bool started;               /* its function has been entered since new/reset */
    bool painted;
    coro_stack *shared;         /* the stack it takes turns on, or NULL */
    unsigned char *save;        /* shared: its live frames while it is parked */
    size_t save_len;            /* shared: bytes from ctx to the top of the stack */
    size_t save_cap;
#if CRAWL_ASAN
    const void *caller_bottom;  /* the resumer's stack, for the switch back */
    size_t caller_size;
#endif
#if CRAWL_TSAN
    void *fiber;
    void *caller_fiber;
#endif
};

/* Each thread runs its own coroutines, so "the current one" is per thread.
 * A coroutine never moves to another thread, so a compiler caching this
 * variable's address across a switch is harmless. */
static _Thread_local coro *coro__cur;

static void coro__main(coro *co) __attribute__((noreturn));

/* ---- the switch, per backend -------------------------------------------- */

#ifndef CORO__UC

void coro__switch(void **save_sp, void *load_sp) __attribute__((visibility("hidden")));
void coro__trampoline(void) __attribute__((visibility("hidden")));

/* Words of the frame coro__arm lays out (see below). */
#if defined(__x86_64__)
#define CORO__FRAME_WORDS 10
#else
#define CORO__FRAME_WORDS 22
#endif

/* Lays out the top of co's stack as if it had switched away at the entry of
 * coro__trampoline, which then calls coro__main(co). Writes only the top
 * few dozen bytes, so a fresh coroutine costs one resident page; on a
 * shared stack, it writes them to co's parked copy instead. */
static void coro__arm(coro *co)
{
    uintptr_t f[CORO__FRAME_WORDS];
    char *top = co->stack + co->stack_size;
#if defined(__x86_64__)
    /* 8 words popped by coro__switch (control words, r15..r12, rbx, rbp,
     * return address), then 2 zero words: after its ret, rsp is 16-byte
     * aligned as the trampoline's call needs, with a null "return address"
     * above for anyone walking the stack. */
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    memset(f, 0, sizeof f);
    /* A new coroutine starts with its creator's rounding mode and
     * exception masks, as a new thread does. */
    f[0] = (uintptr_t)mxcsr | (uintptr_t)fpucw << 32;
    f[3] = (uintptr_t)coro__main;       /* r13 */
    f[4] = (uintptr_t)co;               /* r12 */
    f[7] = (uintptr_t)coro__trampoline; /* return address */
#elif defined(__aarch64__)
    /* 20 words restored by coro__switch (x19..x30, d8..d15), then 2 zero
     * words to keep sp 16-byte aligned. x29 = 0 ends frame chains. */
    memset(f, 0, sizeof f);
    f[0] = (uintptr_t)co;               /* x19 */
    f[1] = (uintptr_t)coro__main;       /* x20 */
    f[11] = (uintptr_t)coro__trampoline; /* x30 */
#endif
    co->ctx = top - sizeof f;
    if (co->shared != NULL) {
        /* The stack may hold another coroutine's frames: the frame waits
         * with the rest of this one's parked stack (coro_new_on made room). */
        memcpy(co->save, f, sizeof f);
        co->save_len = sizeof f;
    } else {
        memcpy(co->ctx, f, sizeof f);
    }
}

#else /* CORO__UC */

/* The ucontext is built at the first resume, on the resumer's stack, so
 * that nothing is written at creation and the control block stays small. */
static void coro__arm(coro *co)
{
    co->ctx = NULL;
}

/* makecontext passes only ints portably; the resumer has already made the
 * coroutine current, so the entry point finds it there. */
static void coro__uc_main(void)
{
    coro__main(coro__cur);
}

#endif

/* Switches from the resumer into co; returns when co yields or finishes. */
static void coro__enter(coro *co)
{
#if CRAWL_ASAN
    void *fake_stack;
    __sanitizer_start_switch_fiber(&fake_stack, co->stack, co->stack_size);
#endif
#if CRAWL_TSAN
    /* A TSan fiber is a whole thread state (some 850 KB and several
     * mappings), so it exists only from the first resume until death. */
    if (co->fiber == NULL)
        co->fiber = __tsan_create_fiber(0);
    co->caller_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(co->fiber, 0);
#endif
#ifndef CORO__UC
    coro__switch(&co->back, co->ctx);
#else
    ucontext_t back;
    /* ASan's swapcontext interceptor clears the shadow of the target's
     * uc_stack, which swapcontext itself never fills in: give it none. */
    back.uc_stack.ss_sp = NULL;
    back.uc_stack.ss_size = 0;
    co->back = &back;
    if (co->ctx == NULL) {
        ucontext_t init;
        /* getcontext fails only on an invalid pointer. */
        (void)getcontext(&init);
        init.uc_stack.ss_sp = co->stack;
        init.uc_stack.ss_size = co->stack_size;
        init.uc_link = NULL;
        makecontext(&init, coro__uc_main, 0);
        swapcontext(&back, &init);
    } else {
        swapcontext(&back, co->ctx);
    }
#endif
#if CRAWL_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
#endif
#if CRAWL_TSAN
    /* Destroyed from outside: a fiber cannot destroy itself. */
    if (co->status == CORO_DEAD) {
        __tsan_destroy_fiber(co->fiber);
        co->fiber = NULL;
    }
#endif
}

/* Switches from the running coroutine co back to its resumer; returns when
 * co is resumed again. */
static void coro__leave(coro *co)
{
#if CRAWL_ASAN
    void *fake_stack;
    __sanitizer_start_switch_fiber(&fake_stack, co->caller_bottom, co->caller_size);
#endif
#if CRAWL_TSAN
    __tsan_switch_to_fiber(co->caller_fiber, 0);
#endif
#ifndef CORO__UC
    coro__switch(&co->ctx, co->back);
#else
    ucontext_t here;
    here.uc_stack.ss_sp = NULL;
    here.uc_stack.ss_size = 0;
    co->ctx = &here;
    swapcontext(&here, co->back);
#endif
#if CRAWL_ASAN
    /* The next resumer may be another coroutine, on another stack. */
    __sanitizer_finish_switch_fiber(fake_stack, &co->caller_bottom, &co->caller_size);
#endif
}

/* Leaves co for good: its function has returned. */
static void coro__leave_dead(coro *co) __attribute__((noreturn));
static void coro__leave_dead(coro *co)
{
#if CRAWL_ASAN
    /* NULL: this stack is abandoned, so ASan may drop its fake frames. */
    __sanitizer_start_switch_fiber(NULL, co->caller_bottom, co->caller_size);
#endif
#if CRAWL_TSAN
    __tsan_switch_to_fiber(co->caller_fiber, 0);
#endif
#ifndef CORO__UC
    coro__switch(&co->ctx, co->back);
#else
    setcontext(co->back);
#endif
    abort(); /* nothing resumes a dead coroutine */
}

/* Every coroutine starts here, on its own stack. */
static void coro__main(coro *co)
{
#if CRAWL_ASAN
    __sanitizer_finish_switch_fiber(NULL, &co->caller_bottom, &co->caller_size);
#endif
    co->fn(co->arg);
    co->status = CORO_DEAD;
    co->transfer = NULL;
    coro__leave_dead(co);
}

/* ---- the API ------------------------------------------------------------ */

/* A dead or suspended coroutine leaves ASan's poison on the redzones of the
 * frames it never returned from; whoever reuses the memory next (this
 * coroutine after a reset, or a new mapping at the same address) must not
 * trip over it. */
static void coro__unpoison(coro *co)
{
#if CRAWL_ASAN
    /* A shared stack may hold the live frames of the coroutine running. */
    if (co->shared == NULL)
        __asan_unpoison_memory_region(co->stack, co->stack_size);
#else
    (void)co;
#endif
}

/* Maps a stack of *size bytes (0: the default; rounded up to pages, the
 * result stored back) with a guard page below; returns its lowest usable
 * byte, or NULL with errno set. */
static char *coro__map(size_t *size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = *size == 0 ? CORO_STACK_DEFAULT : *size;
    void *map;

    if (n > SIZE_MAX / 2) {
        errno = EINVAL;
        return NULL;
    }
    n = (n + page - 1) / page * page;
    /* NORESERVE: a stack is mostly never touched, so it should not count
     * against overcommit either; pages become resident only when used. */
    map = mmap(NULL, n + page, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    /* Stacks grow down: an overflow runs into this page and faults
     * instead of silently writing over whatever is mapped below. */
    if (mprotect(map, page, PROT_NONE) != 0) {
        int saved = errno;
        munmap(map, n + page);
        errno = saved;
        return NULL;
    }
    *size = n;
    return (char *)map + page;
}

static void coro__unmap(char *stack, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    munmap(stack - page, size + page);
}

coro *coro_new(coro_fn fn, void *arg, size_t stack_size)
{
    coro *co;

    if (fn == NULL) {
        errno = EINVAL;
        return NULL;
    }
    co = calloc(1, sizeof *co);
    if (co == NULL)
        return NULL;
    if ((co->stack = coro__map(&stack_size)) == NULL) {
        int saved = errno;
        free(co);
        errno = saved;
        return NULL;
    }
    co->stack_size = stack_size;
    co->fn = fn;
    co->arg = arg;
    co->status = CORO_SUSPENDED;
    coro__arm(co);
    return co;
}

coro_stack *coro_stack_new(size_t size)
{
    coro_stack *s = calloc(1, sizeof *s);

    if (s == NULL)
        return NULL;
    if ((s->base = coro__map(&size)) == NULL) {
        int saved = errno;
        free(s);
        errno = saved;
        return NULL;
    }
    s->size = size;
    return s;
}

void coro_stack_free(coro_stack *s)
{
    if (s == NULL)
        return;
    assert(s->owner == NULL);
    coro__unmap(s->base, s->size);
    free(s);
}

/* Room a parked copy starts with: the initial frame, and the frames of a
 * coroutine that waits a call or two deep (176 bytes for crawl's fetch on
 * x86-64), so that most never grow it. */
#define CORO__SAVE_MIN 256

coro *coro_new_on(coro_fn fn, void *arg, coro_stack *s)
{
    if (fn == NULL || s == NULL) {
        errno = EINVAL;
        return NULL;
    }
#ifdef CORO__UC
    /* The saved ucontext lives on the coroutine's stack, at a place this
     * file does not know, so parking could not find the live part. */
    return coro_new(fn, arg, s->size);
#else
    coro *co = calloc(1, sizeof *co);
    if (co == NULL)
        return NULL;
    co->save_cap = CORO__SAVE_MIN;
    if ((co->save = malloc(co->save_cap)) == NULL) {
        free(co);
        return NULL;
    }
    co->shared = s;
    co->stack = s->base;
    co->stack_size = s->size;
    co->fn = fn;
    co->arg = arg;
    co->status = CORO_SUSPENDED;
    coro__arm(co);
    return co;
#endif
}

/* Shared stacks: puts co's parked frames back where they ran. */
static void coro__unpark(coro *co)
{
    char *top = co->stack + co->stack_size;
#if CRAWL_ASAN
    /* The coroutine that ran here last left the poison of its redzones. */
    __asan_unpoison_memory_region(top - co->save_len, co->save_len);
#endif
    memcpy(top - co->save_len, co->save, co->save_len);
}

/* Shared stacks: copies the live frames of co, which has just yielded, off
 * the stack: from the stack pointer it saved up to the top. Returns 0, or
 * -ENOMEM when there is no room for them; then they stay where they are,
 * and the stack stays co's until it runs again. */
static int coro__park(coro *co)
{
    char *top = co->stack + co->stack_size;
    size_t len = (size_t)(top - (char *)co->ctx);

    if (len > co->save_cap) {
        size_t cap = co->save_cap;
        while (cap < len)
            cap *= 2;
        unsigned char *p = malloc(cap); /* not realloc: the old copy is stale */
        if (p == NULL)
            return -ENOMEM;
        free(co->save);
        co->save = p;
        co->save_cap = cap;
    }
#if CRAWL_ASAN
    /* The parked frames' redzones are poisoned on the stack. */
    __asan_unpoison_memory_region(co->ctx, len);
#endif
    memcpy(co->save, co->ctx, len);
    co->save_len = len;
    return 0;
}

int coro_reset(coro *co, coro_fn fn, void *arg)
{
    if (co == NULL || fn == NULL || co->status == CORO_RUNNING ||
        (co->status == CORO_SUSPENDED && co->started))
        return -EINVAL;
    coro__unpoison(co);
    co->fn = fn;
    co->arg = arg;
    co->transfer = NULL;
    co->status = CORO_SUSPENDED;
    co->started = false;
    coro__arm(co);
    return 0;
}

void coro_free(coro *co)
{
    if (co == NULL)
        return;
    assert(co->status != CORO_RUNNING);
    coro__unpoison(co);
#if CRAWL_TSAN
    if (co->fiber != NULL)
        __tsan_destroy_fiber(co->fiber);
#endif
    if (co->shared != NULL) {
        if (co->shared->owner == co)    /* parked in place */
            co->shared->owner = NULL;
        free(co->save);
    } else {
        coro__unmap(co->stack, co->stack_size);
    }
    free(co);
}

void *coro_resume(coro *co, void *value, int *err)
{
    coro *prev;
    coro_stack *s;

    if (co == NULL || co->status != CORO_SUSPENDED) {
        if (err != NULL)
            *err = -EINVAL;
        return NULL;
    }
    s = co->shared;
    if (s != NULL && s->owner != NULL && s->owner != co) {
        if (err != NULL)
            *err = -EBUSY;
        return NULL;
    }
    if (err != NULL)
        *err = 0;
    if (s != NULL) {
        if (s->owner != co)
            coro__unpark(co);
        s->owner = co;
    }
    /* The resumer stays RUNNING while co runs: it cannot be resumed from
     * inside co, which would switch into a stack that is in use. */
    prev = coro__cur;
    co->status = CORO_RUNNING;
    co->started = true;
    co->transfer = value;
    coro__cur = co;
    coro__enter(co);
    coro__cur = prev;
    if (s != NULL && (co->status == CORO_DEAD || coro__park(co) == 0))
        s->owner = NULL;
    return co->transfer;
}

void *coro_yield(void *value)
{
    coro *co = coro__cur;

    if (co == NULL)
        return NULL;
    co->transfer = value;
    co->status = CORO_SUSPENDED;
    coro__leave(co);
    return co->transfer;
}

coro *coro_current(void)
{
    return coro__cur;
}

enum coro_status coro_status(const coro *co)
{
    return (enum coro_status)co->status;
}

void coro_set_data(coro *co, void *data)
{
    co->data = data;
}

void *coro_data(const coro *co)
{
    return co->data;
}

size_t coro_stack_size(const coro *co)
{
    return co->stack_size;
}

int coro_paint(coro *co)
{
    if (co == NULL || co->status != CORO_SUSPENDED || co->started || co->shared != NULL)
        return -EINVAL;
    coro__unpoison(co);
    memset(co->stack, CORO__PAINT, co->stack_size);
    coro__arm(co); /* the paint went over the initial frame */
    co->painted = true;
    return 0;
}

/* Reads the raw stack, including bytes ASan may have poisoned as redzones
 * of frames that are still live: the read is deliberate. */
#if CRAWL_ASAN
__attribute__((no_sanitize_address))
#endif
size_t coro_stack_used(const coro *co)
{
    const unsigned char *p, *end;

    if (co == NULL || !co->painted)
        return 0;
    p = (const unsigned char *)co->stack;
    end = p + co->stack_size;
    while (p < end && *p == CORO__PAINT)
        p++;
    return (size_t)(end - p);
}

size_t coro_stack_resident(const coro *co)
{
    /* mincore wants one byte per page; a fixed buffer walked in chunks
     * keeps this free of allocation for stacks of any size. */
    unsigned char vec[256];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = co->stack_size / page, done = 0, resident = 0;

    if (co->shared != NULL)
        return co->save_cap;

    while (done < pages) {
        size_t n = pages - done < sizeof vec ? pages - done : sizeof vec;
        if (mincore(co->stack + done * page, n * page, vec) != 0)
            return 0;
        for (size_t i = 0; i < n; i++)
            resident += vec[i] & 1;
        done += n;
    }
    return resident * page;
}

const char *coro_backend(void)
{
#if defined(CORO__UC)
    return "ucontext";
#elif defined(__x86_64__)
    return "asm-x86_64";
#else
    return "asm-aarch64";
#endif
}
