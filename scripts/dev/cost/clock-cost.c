/* What one clock reading costs on this CPU: clock_gettime(CLOCK_MONOTONIC_RAW)
 * (the vDSO call), rdtsc and rdtscp, each 10 million times in a row, three
 * passes (the first warms up). fabdiag's latency samples each hold about one
 * reading's cost (crates/clock/src/raw_counter.rs). Not a test.
 *
 * usage: gcc -O2 -o /tmp/clock-cost scripts/dev/cost/clock-cost.c && taskset -c 1 /tmp/clock-cost */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
	struct timespec ts;
	volatile unsigned long long sink = 0;
	const int n = 10000000;

	for (int pass = 0; pass < 3; pass++) {
		double a = mono_ns();
		for (int i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
			sink += ts.tv_nsec;
		}
		double b = mono_ns();
		for (int i = 0; i < n; i++)
			sink += __rdtsc();
		double c = mono_ns();
		for (int i = 0; i < n; i++) {
			unsigned int aux;
			sink += __rdtscp(&aux);
		}
		double d = mono_ns();
		printf("pass %d: clock_gettime(CLOCK_MONOTONIC_RAW) %.1f ns, rdtsc %.1f ns, rdtscp %.1f ns\n",
		       pass, (b - a) / n, (c - b) / n, (d - c) / n);
	}
	return 0;
}
