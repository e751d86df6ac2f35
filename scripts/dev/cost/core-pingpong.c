/* Cache-line round trip between two CPUs: two threads, pinned to the
 * CPUs named, take turns writing one shared word, N round trips; prints
 * nanoseconds per round trip. Nothing else runs: what it measures is how
 * far apart the two CPUs are now (same core, same L3, across L3s), which
 * on a VM is where the hypervisor has put the two vCPUs.
 * usage: core-pingpong [cpu_a (0)] [cpu_b (1)] [round trips (200000)] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long word;
static long rounds;

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0) {
        fprintf(stderr, "core-pingpong: cannot run on CPU %d\n", cpu);
        exit(1);
    }
}

static void *echo(void *arg) {
    pin(*(int *)arg);
    for (long i = 0; i < rounds; i++) {
        while (atomic_load_explicit(&word, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&word, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int a = argc > 1 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    rounds = argc > 3 ? atol(argv[3]) : 200000;
    pthread_t t;
    pin(a);
    if (pthread_create(&t, NULL, echo, &b) != 0) {
        fprintf(stderr, "core-pingpong: no thread\n");
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < rounds; i++) {
        atomic_store_explicit(&word, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&word, memory_order_acquire) != 2 * i + 2)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    printf("%.1f\n", ns / rounds);
    return 0;
}
