/* Preloaded (LD_PRELOAD) into a single-threaded benchmark such as
 * fi_pingpong, makes it a multi-threaded process: one more thread that
 * sleeps for the process's life and does nothing else. Nothing on the
 * round trip changes but what a second thread changes: glibc's cancellable
 * system call wrappers (send, recv, poll, read, write) take their
 * multi-threaded path, and the kernel's fd table is shared, so each fd
 * lookup takes a reference. Built with -DUNSHARE_FILES, the thread first
 * gives up its share of the fd table (unshare(CLONE_FILES)), which leaves
 * glibc's part alone. Built with -DASYNC_OFF, the main thread then turns
 * its own cancellation off and asynchronous (pthread_setcancelstate
 * DISABLE, pthread_setcanceltype ASYNCHRONOUS): glibc's wrappers find the
 * type already asynchronous and skip their atomic updates, which leaves
 * the fd table's part alone. Used by scripts/dev/cost/threads-cost.sh; not a
 * test. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int started;

static void *idle(void *arg)
{
    (void)arg;
#ifdef UNSHARE_FILES
    unshare(CLONE_FILES);
#endif
    pthread_mutex_lock(&lock);
    started = 1;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
    for (;;)
        pause();
    return NULL;
}

/* the thread is running (and, with UNSHARE_FILES, has its own fd table)
 * before main() opens anything */
__attribute__((constructor)) static void start_idle_thread(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0)
        return;
    pthread_detach(t);
    pthread_mutex_lock(&lock);
    while (!started)
        pthread_cond_wait(&ready, &lock);
    pthread_mutex_unlock(&lock);
#ifdef ASYNC_OFF
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
#endif
}
