/* Reproduces a libfabric shm defect without fabdiag (docs/known-defects.md):
 * two shm endpoints of one process (each its own fabric, domain, AV and CQ;
 * one thread) each post a receive and send SIZE bytes to the other, ITER
 * times. libfabric 2.5.0 and later crash (SIGSEGV in smr_progress_cmd)
 * above 4096 B; 2.4.0 and before, and 1.17, print "ok".
 *
 *   cc -o /tmp/repro scripts/dev/demos/repro-shm-same-process.c -lfabric    # the system's
 *   cc -o /tmp/repro scripts/dev/demos/repro-shm-same-process.c -I$P/include \
 *      -L$P/lib -Wl,-rpath,$P/lib -lfabric                          # a build at $P
 *   /tmp/repro 8192 10
 */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s: %d %s\n", #x, _r, fi_strerror(-_r)); exit(1);} } while (0)
struct side { struct fid_fabric *f; struct fid_domain *d; struct fid_ep *ep; struct fid_av *av; struct fid_cq *cq; char *buf; struct fid_mr *mr; fi_addr_t peer; char name[256]; size_t nl; };
static struct fi_info *info;
static void open_side(struct side *s, size_t size) {
	struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av = { .type = FI_AV_TABLE };
	CHK(fi_fabric(info->fabric_attr, &s->f, NULL));
	CHK(fi_domain(s->f, info, &s->d, NULL));
	CHK(fi_endpoint(s->d, info, &s->ep, NULL));
	CHK(fi_cq_open(s->d, &cq, &s->cq, NULL));
	CHK(fi_av_open(s->d, &av, &s->av, NULL));
	CHK(fi_ep_bind(s->ep, &s->cq->fid, FI_SEND | FI_RECV));
	CHK(fi_ep_bind(s->ep, &s->av->fid, 0));
	CHK(fi_enable(s->ep));
	s->nl = sizeof(s->name);
	CHK(fi_getname(&s->ep->fid, s->name, &s->nl));
	s->buf = calloc(2, size);
	CHK(fi_mr_reg(s->d, s->buf, 2 * size, FI_SEND | FI_RECV, 0, 0, 0, &s->mr, NULL));
}
static int wait_cq(struct side *s) {
	struct fi_cq_entry e;
	ssize_t n = fi_cq_read(s->cq, &e, 1);
	if (n == 1) return 1;
	if (n != -FI_EAGAIN) { fprintf(stderr, "cq %zd\n", n); exit(1); }
	return 0;
}
int main(int argc, char **argv) {
	size_t size = argc > 1 ? strtoul(argv[1], 0, 0) : 8192;
	int iter = argc > 2 ? atoi(argv[2]) : 10;
	struct fi_info *h = fi_allocinfo();
	struct side a, b;
	h->caps = FI_MSG; h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->fabric_attr->prov_name = strdup("shm");
	CHK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info));
	open_side(&a, size); open_side(&b, size);
	CHK(fi_av_insert(a.av, b.name, 1, &a.peer, 0, NULL) != 1);
	CHK(fi_av_insert(b.av, a.name, 1, &b.peer, 0, NULL) != 1);
	for (int i = 0; i < iter; i++) {
		int done = 0;
		CHK(fi_recv(a.ep, a.buf + size, size, fi_mr_desc(a.mr), FI_ADDR_UNSPEC, NULL));
		CHK(fi_recv(b.ep, b.buf + size, size, fi_mr_desc(b.mr), FI_ADDR_UNSPEC, NULL));
		ssize_t r;
		while ((r = fi_send(a.ep, a.buf, size, fi_mr_desc(a.mr), a.peer, NULL)) == -FI_EAGAIN)
			done += wait_cq(&a) + wait_cq(&b);
		CHK((int)r);
		while ((r = fi_send(b.ep, b.buf, size, fi_mr_desc(b.mr), b.peer, NULL)) == -FI_EAGAIN)
			done += wait_cq(&a) + wait_cq(&b);
		CHK((int)r);
		while (done < 4) done += wait_cq(&a) + wait_cq(&b);
	}
	printf("%s: %d bidirectional exchanges of %zu B on one process: ok\n", fi_tostr(&(uint32_t){fi_version()}, FI_TYPE_VERSION), iter, size);
	return 0;
}
