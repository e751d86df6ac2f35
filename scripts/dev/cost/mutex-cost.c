/* What glibc's single-threaded path for pthread mutexes is worth on this
 * CPU: a lock and an unlock of an uncontended private mutex, N times,
 * first in a process with one thread (glibc then takes and gives the lock
 * with plain stores), then with a second thread that only sleeps (locked
 * atomic instructions each way). libfabric's tcp and rxm providers take
 * some seventy such locks a round trip, and fabdiag's process always has
 * its helper threads. Prints nanoseconds per lock and unlock, each way,
 * best of three. Not a test.
 * build: cc -O2 -pthread -o /tmp/mutex-cost scripts/dev/cost/mutex-cost.c
 * usage: taskset -c 1 /tmp/mutex-cost [N (50000000)] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* best of three passes of n lock/unlock pairs, ns a pair */
static double pairs(long n)
{
    double best = 1e18;
    for (int pass = 0; pass < 3; pass++) {
        double a = now_ns();
        for (long i = 0; i < n; i++) {
            pthread_mutex_lock(&lock);
            __asm__ volatile("" ::: "memory");
            pthread_mutex_unlock(&lock);
        }
        double d = (now_ns() - a) / n;
        if (d < best)
            best = d;
    }
    return best;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50000000;
    if (n <= 0) {
        fprintf(stderr, "mutex-cost: N must be a positive count\n");
        return 1;
    }
    double one = pairs(n);
    int was_single = __libc_single_threaded;
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, NULL) != 0) {
        fprintf(stderr, "mutex-cost: no second thread\n");
        return 1;
    }
    double two = pairs(n);
    printf("lock+unlock, ns: one thread %.2f (glibc single-threaded: %s), two threads %.2f, difference %.2f\n",
           one, was_single ? "yes" : "no", two, two - one);
    return 0;
}
