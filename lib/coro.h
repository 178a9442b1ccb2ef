/* coro.h: stackful coroutines, one thread at a time.
 *
 * A coroutine runs a function on its own mmap'd stack (with a guard page
 * below it) and switches with its resumer through coro_resume/coro_yield,
 * passing one pointer each way, as Lua's coroutines do. Coroutines belong to
 * the thread that created them: resume them only from that thread. */
#ifndef CRAWL_CORO_H
#define CRAWL_CORO_H

#include <stddef.h>

typedef struct coro coro;
typedef void (*coro_fn)(void *arg);

enum coro_status {
    CORO_SUSPENDED,   /* created and not started, or stopped in coro_yield */
    CORO_RUNNING,     /* the current coroutine, or one that resumed another */
    CORO_DEAD         /* its function returned */
};

#define CORO_STACK_DEFAULT (64 * 1024)

/* Returns a suspended coroutine that runs fn(arg) when first resumed, on a
 * stack of stack_size bytes (rounded up to whole pages; 0 means
 * CORO_STACK_DEFAULT) plus one guard page; NULL with errno set on failure.
 * The caller owns it and frees it with coro_free. */
coro *coro_new(coro_fn fn, void *arg, size_t stack_size);

/* A stack that coroutines take turns on. Only the coroutine running on it
 * uses it; when one yields, the live part of its stack (its frames, often a
 * few hundred bytes) is copied to the heap, and copied back when it is
 * resumed. A suspended coroutine then costs that copy instead of at least
 * one resident page and a mapping of its own, and making one costs no
 * system call: the shape for many coroutines that each wait in one shallow
 * place. The price: a copy of the live frames at every switch, and
 * pointers into a suspended coroutine's stack are not valid (its frames
 * are elsewhere until it runs again). */
typedef struct coro_stack coro_stack;

/* Returns a shared stack of size bytes (rounded up to whole pages; 0 means
 * CORO_STACK_DEFAULT) plus a guard page, or NULL with errno set. The caller
 * frees it with coro_stack_free once every coroutine on it is freed. */
coro_stack *coro_stack_new(size_t size);
void coro_stack_free(coro_stack *s);

/* Returns a suspended coroutine that runs fn(arg) on the shared stack s,
 * or NULL with errno set; freed with coro_free. While one coroutine of s
 * runs (or has resumed another), resuming a second one of s fails with
 * -EBUSY. With the ucontext backend, which keeps its saved context on the
 * stack, the coroutine gets a stack of its own of s's size instead. */
coro *coro_new_on(coro_fn fn, void *arg, coro_stack *s);

/* Rearms a dead or never-started coroutine to run fn(arg), keeping its stack,
 * so that a free list of coroutines avoids an mmap per task. Returns 0, or
 * -EINVAL if co is suspended inside its function or running. */
int coro_reset(coro *co, coro_fn fn, void *arg);

/* Frees co and its stack. A suspended coroutine is dropped where it stands:
 * nothing on its stack is unwound. Freeing the running coroutine is a bug. */
void coro_free(coro *co);

/* Switches to co and returns when it yields (the value it passed to
 * coro_yield) or finishes (NULL). value is what co's pending coro_yield
 * returns; ignored on the first resume. Sets *err (if not NULL) to 0, or to
 * -EINVAL when co is not suspended or -EBUSY when its shared stack is in
 * use, in which case nothing happens. */
void *coro_resume(coro *co, void *value, int *err);

/* Suspends the running coroutine and returns to its resumer, handing it
 * value; returns the value of the coro_resume that wakes it again. Calling
 * it outside a coroutine is a bug (it returns NULL and does nothing). */
void *coro_yield(void *value);

/* Returns the coroutine running on this thread, or NULL on a thread's own
 * stack. */
coro *coro_current(void);

/* Returns co's status. */
enum coro_status coro_status(const coro *co);

/* User data: a pointer the caller may hang on a coroutine. */
void  coro_set_data(coro *co, void *data);
void *coro_data(const coro *co);

/* Returns the usable stack size of co in bytes. */
size_t coro_stack_size(const coro *co);

/* Fills co's stack with a known pattern, so that coro_stack_used can later
 * tell how deep it went. Only for a coroutine that is not started (it touches
 * every page of the stack) and has a stack of its own. Returns 0 or
 * -EINVAL. */
int coro_paint(coro *co);

/* Returns the deepest stack use of a painted coroutine in bytes (the stack's
 * high-water mark, over every run since coro_paint, resets included), or 0
 * when it was not painted. */
size_t coro_stack_used(const coro *co);

/* Returns how many bytes of co's stack are resident in memory now (mincore),
 * the real memory cost of its stack; 0 on failure. For a coroutine on a
 * shared stack: the bytes its saved copy holds. */
size_t coro_stack_resident(const coro *co);

/* Returns the name of the context switch in use: "asm-x86_64",
 * "asm-aarch64" or "ucontext". */
const char *coro_backend(void);

#endif
