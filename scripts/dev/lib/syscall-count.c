/* Preloaded (LD_PRELOAD) into fabdiag or a peer: counts the calls the
 * round trip makes through libc (poll, epoll_wait, the socket sends and
 * receives, read, write) at full speed, where strace would slow every one
 * of them, and at exit appends one line to the file SYSCALL_COUNT_OUT
 * names (stderr without it):
 *   COMM poll=N poll_ready=N epoll=N recv=N send=N read=N write=N
 * Divided by the iterations, the counts say how many calls a round trip
 * makes, and the run's time over the polls what one pass of the polling
 * loop costs. Used by scripts/dev/cost/fdtable-cost.sh; not a test. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned long n_poll, n_ready, n_epoll, n_recv, n_send, n_read, n_write;

#define COUNT(c) __atomic_add_fetch(&(c), 1, __ATOMIC_RELAXED)
/* the next definition of `name` (libc's), looked up once */
#define REAL(name) \
	static __typeof__(name) *real; \
	if (!real) \
		real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	REAL(poll);
	int r = real(fds, n, timeout);
	COUNT(n_poll);
	if (r > 0)
		COUNT(n_ready);
	return r;
}

int epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
	REAL(epoll_wait);
	COUNT(n_epoll);
	return real(ep, ev, max, timeout);
}

ssize_t recv(int s, void *b, size_t l, int f)
{
	REAL(recv);
	COUNT(n_recv);
	return real(s, b, l, f);
}

ssize_t recvfrom(int s, void *b, size_t l, int f, struct sockaddr *a, socklen_t *al)
{
	REAL(recvfrom);
	COUNT(n_recv);
	return real(s, b, l, f, a, al);
}

ssize_t recvmsg(int s, struct msghdr *m, int f)
{
	REAL(recvmsg);
	COUNT(n_recv);
	return real(s, m, f);
}

ssize_t send(int s, const void *b, size_t l, int f)
{
	REAL(send);
	COUNT(n_send);
	return real(s, b, l, f);
}

ssize_t sendto(int s, const void *b, size_t l, int f, const struct sockaddr *a, socklen_t al)
{
	REAL(sendto);
	COUNT(n_send);
	return real(s, b, l, f, a, al);
}

ssize_t sendmsg(int s, const struct msghdr *m, int f)
{
	REAL(sendmsg);
	COUNT(n_send);
	return real(s, m, f);
}

ssize_t read(int fd, void *b, size_t l)
{
	REAL(read);
	COUNT(n_read);
	return real(fd, b, l);
}

ssize_t write(int fd, const void *b, size_t l)
{
	REAL(write);
	COUNT(n_write);
	return real(fd, b, l);
}

__attribute__((destructor)) static void report(void)
{
	char comm[64] = "?";
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	const char *path = getenv("SYSCALL_COUNT_OUT");
	FILE *out = path ? fopen(path, "a") : NULL;
	fprintf(out ? out : stderr,
		"%s poll=%lu poll_ready=%lu epoll=%lu recv=%lu send=%lu read=%lu write=%lu\n",
		comm, n_poll, n_ready, n_epoll, n_recv, n_send, n_read, n_write);
	if (out)
		fclose(out);
}
