/* Preloaded (LD_PRELOAD) into fabdiag: every thread the process starts
 * (pthread_create) first gives up its share of the fd table
 * (unshare(CLONE_FILES)) and runs on a copy, so the thread that started
 * them, the measuring one, is again the table's only user. The kernel then
 * looks its fds up without taking a reference on each file (fdget's
 * single-owner path), the way it does for a single-threaded fi_pingpong.
 * An experiment, not a fix: a copied table keeps open every fd it held
 * until the thread ends, and fds opened later are in one table only.
 * Used by scripts/dev/cost/fdtable-cost.sh; not a test. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *unshared(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	unshare(CLONE_FILES);
	return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start *s;

	if (!real)
		real = (__typeof__(real))dlsym(RTLD_NEXT, "pthread_create");
	s = malloc(sizeof *s);
	if (!s)
		return real(t, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	return real(t, attr, unshared, s);
}
