/* signals.c: the crawl command's signals, taken by a thread of their own.
 * SIGINT, SIGTERM and SIGALRM (--deadline) are blocked before the first
 * thread starts, so that every thread inherits the mask, and one thread
 * waits for them with sigwait: what they do then runs as plain code on
 * that thread, not in a handler that interrupts whichever thread the
 * kernel picked (under ThreadSanitizer, a coroutine's fiber whose handler
 * may never run). A model learns of the cancellation from the core. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

/* The crawl and report a signal acts on: set and read under the lock, so
 * that once signals_watch has let go of them the thread never touches
 * them again (the caller then frees them). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct crawl *the_crawl;
static struct report *the_report;
static atomic_int interrupted;

static void taken(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGALRM);
}

/* SIGINT, SIGTERM: the first one cancels the crawl, which then prints what
 * it has; a second SIGINT ends the process at once, after the rows that
 * are final. SIGALRM: --deadline. */
static void *signal_main(void *arg)
{
    sigset_t set;
    taken(&set);
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) != 0)
            continue;
        pthread_mutex_lock(&lock);
        if (sig == SIGALRM) {
            if (the_crawl)
                crawl_cancel(the_crawl, CRAWL_CANCEL_DEADLINE);
        } else {
            int before = atomic_exchange(&interrupted, sig);
            if (before && sig == SIGINT) {
                report_emergency_flush(the_report);
                _exit(130);
            }
            if (the_crawl)
                crawl_cancel(the_crawl, CRAWL_CANCEL_SIGNAL);
        }
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

void signals_block(void)
{
    sigset_t set;
    taken(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    /* A closed output pipe shows up as EPIPE from the writes instead. */
    signal(SIGPIPE, SIG_IGN);
}

void signals_default(void)
{
    sigset_t set;
    taken(&set);
    /* Blocked, they were taken even where the shell that started crawl in
     * the background ignores them; so they are here too. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int signals_start(void)
{
    pthread_t tid;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&tid, &attr, signal_main, NULL);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

void signals_watch(struct crawl *c, struct report *rep)
{
    pthread_mutex_lock(&lock);
    the_report = rep;
    the_crawl = c;
    /* A signal taken before there was a crawl to cancel. */
    if (c && atomic_load(&interrupted))
        crawl_cancel(c, CRAWL_CANCEL_SIGNAL);
    pthread_mutex_unlock(&lock);
}

int signals_caught(void)
{
    return atomic_load(&interrupted);
}

atomic_int *signals_flag(void)
{
    return &interrupted;
}
