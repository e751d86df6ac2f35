/*
 * fabdiag's whole contact surface with libfabric.
 *
 * libfabric's data path is made of `static inline` functions that jump
 * through per-object ops tables, so Rust cannot call it by symbol. This shim
 * compiles those inline calls against the real headers (the compiler lays
 * out every struct, nothing is mirrored by hand in Rust) and exposes plain
 * functions over opaque pointers and small fabdiag-owned structs.
 *
 * The library itself is opened with dlopen so that the fabdiag binary starts
 * (and explains itself) on machines without libfabric. Only the handful of
 * exported entry points are resolved; everything else is reached through the
 * ops tables of objects those entry points return.
 *
 * This file must not keep any state besides the resolved entry points, and
 * must not print.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#define FDG_API_VERSION FI_VERSION(1, 12)

typedef int (*getinfo_fn)(uint32_t, const char *, const char *, uint64_t,
			  const struct fi_info *, struct fi_info **);
typedef void (*freeinfo_fn)(struct fi_info *);
typedef struct fi_info *(*dupinfo_fn)(const struct fi_info *);
typedef int (*fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **, void *);
typedef const char *(*strerror_fn)(int);
typedef uint32_t (*version_fn)(void);

static struct {
	void *lib;
	getinfo_fn getinfo;
	freeinfo_fn freeinfo;
	dupinfo_fn dupinfo;
	fabric_fn fabric;
	strerror_fn strerror;
	version_fn version;
} fdg;

/* Returns 0, or -1 with a reason in err. Idempotent. */
int fdg_load(const char *path, char *err, size_t errlen)
{
	void *lib;

	if (fdg.lib)
		return 0;
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, errlen, "%s", dlerror());
		return -1;
	}
#define RESOLVE(field, sym)                                                   \
	do {                                                                  \
		*(void **)&fdg.field = dlsym(lib, sym);                       \
		if (!fdg.field) {                                             \
			snprintf(err, errlen, "%s has no symbol %s", path, sym); \
			dlclose(lib);                                         \
			memset(&fdg, 0, sizeof(fdg));                         \
			return -1;                                            \
		}                                                             \
	} while (0)
	RESOLVE(getinfo, "fi_getinfo");
	RESOLVE(freeinfo, "fi_freeinfo");
	RESOLVE(dupinfo, "fi_dupinfo");
	RESOLVE(fabric, "fi_fabric");
	RESOLVE(strerror, "fi_strerror");
	RESOLVE(version, "fi_version");
#undef RESOLVE
	fdg.lib = lib;
	return 0;
}

uint32_t fdg_lib_version(void) { return fdg.version(); }
const char *fdg_strerror(int err) { return fdg.strerror(err); }

/* ---- discovery ---------------------------------------------------------- */

struct fdg_hints {
	uint64_t caps;
	uint64_t tx_op_flags;
	const char *prov_name; /* NULL: any */
	const char *domain_name; /* NULL: any */
};

int fdg_getinfo(const struct fdg_hints *h, struct fi_info **out)
{
	struct fi_info *hints = fdg.dupinfo(NULL);
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = h->caps;
	/* fabdiag lends every operation that completes a struct fi_context2
	 * where the provider asks for one (contexts.rs); no prefix space */
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_ENDPOINT;
	/* device memory must be registered as such (fi_mr(3), FI_MR_HMEM) */
	if (h->caps & FI_HMEM)
		hints->domain_attr->mr_mode |= FI_MR_HMEM;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->tx_attr->op_flags = h->tx_op_flags;
	/* fi_freeinfo frees these, so they must be heap copies */
	if (h->prov_name)
		hints->fabric_attr->prov_name = strdup(h->prov_name);
	if (h->domain_name)
		hints->domain_attr->name = strdup(h->domain_name);
	ret = fdg.getinfo(FDG_API_VERSION, NULL, NULL, 0, hints, out);
	fdg.freeinfo(hints);
	return ret;
}

void fdg_freeinfo(struct fi_info *info) { fdg.freeinfo(info); }
struct fi_info *fdg_info_next(const struct fi_info *i) { return i->next; }

/* Every scalar fabdiag reads from an fi_info, in one flat struct. */
struct fdg_info_view {
	const char *prov_name;
	const char *fabric_name;
	const char *domain_name;
	uint64_t caps;
	uint64_t mr_mode;
	uint64_t inject_size;
	uint64_t tx_size;
	uint64_t rx_size;
	uint64_t max_msg_size;
	uint64_t mr_key_size;
	uint64_t addr_format;
	uint64_t tx_op_flags;
	uint32_t data_progress; /* 1 auto, 2 manual */
	uint32_t needs_context; /* FI_CONTEXT or FI_CONTEXT2 in any mode */
};

/* contexts.rs lends 64 bytes per operation */
_Static_assert(sizeof(struct fi_context2) <= 64, "fi_context2 grew");

void fdg_info_view(const struct fi_info *i, struct fdg_info_view *v)
{
	memset(v, 0, sizeof(*v));
	v->prov_name = i->fabric_attr ? i->fabric_attr->prov_name : NULL;
	v->fabric_name = i->fabric_attr ? i->fabric_attr->name : NULL;
	v->domain_name = i->domain_attr ? i->domain_attr->name : NULL;
	v->caps = i->caps;
	v->mr_mode = i->domain_attr ? (uint64_t)i->domain_attr->mr_mode : 0;
	v->mr_key_size = i->domain_attr ? i->domain_attr->mr_key_size : 0;
	v->data_progress = i->domain_attr ? (uint32_t)i->domain_attr->data_progress : 0;
	v->inject_size = i->tx_attr ? i->tx_attr->inject_size : 0;
	v->tx_size = i->tx_attr ? i->tx_attr->size : 0;
	v->tx_op_flags = i->tx_attr ? i->tx_attr->op_flags : 0;
	v->rx_size = i->rx_attr ? i->rx_attr->size : 0;
	v->needs_context = ((i->mode | (i->tx_attr ? i->tx_attr->mode : 0) |
			     (i->rx_attr ? i->rx_attr->mode : 0)) &
			    (FI_CONTEXT | FI_CONTEXT2)) != 0;
	v->max_msg_size = i->ep_attr ? i->ep_attr->max_msg_size : 0;
	v->addr_format = i->addr_format;
}

/*
 * The NIC behind an entry (fi_nic(3)), where the provider fills it in:
 * verbs, efa and cxi do; libfabric 1.17's tcp, udp and shm leave it NULL.
 * Returns 0 when there is no fi_nic, 1 when v holds it. Strings live as
 * long as the fi_info list.
 */
struct fdg_nic_view {
	const char *name;	  /* device_attr->name: "mlx5_0", "cxi0" */
	const char *driver;
	uint32_t has_pci;
	uint16_t pci_domain;
	uint8_t pci_bus, pci_device, pci_function;
	uint32_t has_link;
	uint32_t link_state;	  /* 0 unknown, 1 down, 2 up (enum fi_link_state) */
	uint64_t link_speed;	  /* bits per second; 0: not given */
	uint64_t link_mtu;
	const char *link_address;
	const char *network_type; /* "InfiniBand", "Ethernet" */
};

int fdg_nic_view(const struct fi_info *i, struct fdg_nic_view *v)
{
	const struct fid_nic *n = i->nic;

	memset(v, 0, sizeof(*v));
	if (!n)
		return 0;
	if (n->device_attr) {
		v->name = n->device_attr->name;
		v->driver = n->device_attr->driver;
	}
	if (n->bus_attr && n->bus_attr->bus_type == FI_BUS_PCI) {
		v->has_pci = 1;
		v->pci_domain = n->bus_attr->attr.pci.domain_id;
		v->pci_bus = n->bus_attr->attr.pci.bus_id;
		v->pci_device = n->bus_attr->attr.pci.device_id;
		v->pci_function = n->bus_attr->attr.pci.function_id;
	}
	if (n->link_attr) {
		v->has_link = 1;
		v->link_state = (uint32_t)n->link_attr->state;
		v->link_speed = (uint64_t)n->link_attr->speed;
		v->link_mtu = (uint64_t)n->link_attr->mtu;
		v->link_address = n->link_attr->address;
		v->network_type = n->link_attr->network_type;
	}
	return 1;
}

/* ---- object lifetime ---------------------------------------------------- */

int fdg_close(struct fid *fid) { return fi_close(fid); }

int fdg_fabric(struct fi_info *info, struct fid_fabric **fabric)
{
	return fdg.fabric(info->fabric_attr, fabric, NULL);
}

int fdg_domain(struct fid_fabric *fabric, struct fi_info *info,
	       struct fid_domain **domain)
{
	return fi_domain(fabric, info, domain, NULL);
}

int fdg_cq_open(struct fid_domain *domain, size_t size, struct fid_cq **cq)
{
	struct fi_cq_attr attr = {
		.size = size,
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_NONE,
	};
	return fi_cq_open(domain, &attr, cq, NULL);
}

int fdg_av_open(struct fid_domain *domain, struct fid_av **av)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .count = 4 };
	return fi_av_open(domain, &attr, av, NULL);
}

/* Opens the endpoint and binds it to the CQ (both directions) and AV.
 * Transmits are bound with FI_SELECTIVE_COMPLETION where the provider
 * takes it, so an operation posted without FI_COMPLETION leaves no CQ
 * entry; *selective says whether it did. */
int fdg_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_cq *cq, struct fid_av *av, struct fid_ep **ep,
		 int *selective)
{
	int ret = fi_endpoint(domain, info, ep, NULL);

	if (ret)
		return ret;
	/* receives always complete (selective applies to the direction it is
	 * bound with, and fi_recv carries no FI_COMPLETION of its own) */
	*selective = 1;
	ret = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (ret) {
		*selective = 0;
		ret = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT);
	}
	if (!ret)
		ret = fi_ep_bind(*ep, &cq->fid, FI_RECV);
	if (!ret)
		ret = fi_ep_bind(*ep, &av->fid, 0);
	if (!ret)
		ret = fi_enable(*ep);
	if (ret) {
		fi_close(&(*ep)->fid);
		*ep = NULL;
	}
	return ret;
}

struct fid *fdg_fabric_fid(struct fid_fabric *f) { return &f->fid; }
struct fid *fdg_domain_fid(struct fid_domain *d) { return &d->fid; }
struct fid *fdg_cq_fid(struct fid_cq *c) { return &c->fid; }
struct fid *fdg_av_fid(struct fid_av *a) { return &a->fid; }
struct fid *fdg_ep_fid(struct fid_ep *e) { return &e->fid; }
struct fid *fdg_mr_fid(struct fid_mr *m) { return &m->fid; }

/* Binds an endpoint-bound MR (FI_MR_ENDPOINT) and reads its desc and key;
 * closes it on failure. */
static int fdg_mr_finish(struct fid_ep *ep, int bind_ep, struct fid_mr **mr,
			 void **desc, uint64_t *key)
{
	int ret;

	if (bind_ep) {
		ret = fi_mr_bind(*mr, &ep->fid, 0);
		if (!ret)
			ret = fi_mr_enable(*mr);
		if (ret) {
			fi_close(&(*mr)->fid);
			*mr = NULL;
			return ret;
		}
	}
	*desc = fi_mr_desc(*mr);
	*key = fi_mr_key(*mr);
	return 0;
}

#define FDG_MR_ACCESS (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | \
		       FI_SEND | FI_RECV)

/* Registers [buf, buf+len) for local and remote read/write. When the domain
 * wants endpoint-bound MRs (FI_MR_ENDPOINT) the MR is bound and enabled. */
int fdg_mr_reg(struct fid_domain *domain, struct fid_ep *ep, int bind_ep,
	       void *buf, size_t len, uint64_t requested_key,
	       struct fid_mr **mr, void **desc, uint64_t *key)
{
	int ret = fi_mr_reg(domain, buf, len, FDG_MR_ACCESS, 0, requested_key,
			    0, mr, NULL);

	if (ret)
		return ret;
	return fdg_mr_finish(ep, bind_ep, mr, desc, key);
}

/* The same for device memory (fi_mr(3) FI_HMEM): fi_mr_regattr with the
 * memory interface (0 system, 1 CUDA, 2 ROCr, 3 Level Zero) and the
 * device; device_only adds FI_HMEM_DEVICE_ONLY (memory from the runtime's
 * device allocation: shm then moves it between processes through the
 * runtime's IPC rather than copies through host memory). */
int fdg_mr_reg_hmem(struct fid_domain *domain, struct fid_ep *ep, int bind_ep,
		    void *buf, size_t len, int iface, int device,
		    int device_only, uint64_t requested_key,
		    struct fid_mr **mr, void **desc, uint64_t *key)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_mr_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FDG_MR_ACCESS;
	attr.requested_key = requested_key;
	switch (iface) {
	case 0:
		attr.iface = FI_HMEM_SYSTEM;
		break;
	case 1:
		attr.iface = FI_HMEM_CUDA;
		attr.device.cuda = device;
		break;
	case 2:
		attr.iface = FI_HMEM_ROCR;
		break;
	case 3:
		attr.iface = FI_HMEM_ZE;
		attr.device.ze = device;
		break;
	default:
		return -FI_EINVAL;
	}
	ret = fi_mr_regattr(domain, &attr, device_only ? FI_HMEM_DEVICE_ONLY : 0, mr);
	if (ret)
		return ret;
	return fdg_mr_finish(ep, bind_ep, mr, desc, key);
}

/* ---- addressing --------------------------------------------------------- */

int fdg_getname(struct fid_ep *ep, void *addr, size_t *len)
{
	return fi_getname(&ep->fid, addr, len);
}

int fdg_av_insert(struct fid_av *av, const void *addr, uint64_t *fi_addr)
{
	fi_addr_t a = FI_ADDR_UNSPEC;
	int n = fi_av_insert(av, addr, 1, &a, 0, NULL);

	*fi_addr = a;
	if (n == 1)
		return 0;
	return n < 0 ? n : -FI_EADDRNOTAVAIL;
}

void fdg_av_straddr(struct fid_av *av, const void *addr, char *buf,
		    size_t *len)
{
	fi_av_straddr(av, addr, buf, len);
}

/* ---- data path ---------------------------------------------------------- */

/* context values let the CQ reader tell ours apart without per-op state */
int fdg_write(struct fid_ep *ep, void *buf, size_t len, void *desc,
	      uint64_t dest, uint64_t raddr, uint64_t rkey, uint64_t flags,
	      void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_rma_iov riov = { .addr = raddr, .len = len, .key = rkey };
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.rma_iov = &riov, .rma_iov_count = 1, .context = context,
	};
	return (int)fi_writemsg(ep, &msg, flags);
}

int fdg_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
	     uint64_t src, uint64_t raddr, uint64_t rkey, uint64_t flags,
	     void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_rma_iov riov = { .addr = raddr, .len = len, .key = rkey };
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = src,
		.rma_iov = &riov, .rma_iov_count = 1, .context = context,
	};
	return (int)fi_readmsg(ep, &msg, flags);
}

int fdg_send(struct fid_ep *ep, void *buf, size_t len, void *desc,
	     uint64_t dest, uint64_t flags, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = len ? 1 : 0,
		.addr = dest, .context = context,
	};
	return (int)fi_sendmsg(ep, &msg, flags);
}

/* A send that leaves no completion: fi_inject is the provider's own short
 * path for it (shm's skips the message descriptor and flag handling that
 * fi_sendmsg goes through). */
int fdg_inject(struct fid_ep *ep, void *buf, size_t len, uint64_t dest)
{
	return (int)fi_inject(ep, buf, len, dest);
}

int fdg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
	     void *context)
{
	return (int)fi_recv(ep, buf, len, desc, FI_ADDR_UNSPEC, context);
}

struct fdg_completion {
	uint64_t context;
	uint64_t flags;
	uint64_t len;
};

/* Returns the number of entries read, 0 when empty, or a negative error.
 * -FI_EAVAIL means an error entry is waiting: call fdg_cq_readerr. */
long fdg_cq_read(struct fid_cq *cq, struct fdg_completion *out, size_t max)
{
	struct fi_cq_data_entry e[64];
	ssize_t n, i;

	if (max > 64)
		max = 64;
	n = fi_cq_read(cq, e, max);
	if (n == -FI_EAGAIN)
		return 0;
	for (i = 0; i < n; i++) {
		out[i].context = (uint64_t)(uintptr_t)e[i].op_context;
		out[i].flags = e[i].flags;
		out[i].len = e[i].len;
	}
	return (long)n;
}

/* Fills a readable description of the pending error entry. */
int fdg_cq_readerr(struct fid_cq *cq, int *err, int *prov_errno,
		   uint64_t *flags, uint64_t *context, char *buf, size_t buflen)
{
	struct fi_cq_err_entry e;
	ssize_t n;
	const char *s;

	memset(&e, 0, sizeof(e));
	n = fi_cq_readerr(cq, &e, 0);
	if (n < 0)
		return (int)n;
	*err = e.err;
	*prov_errno = e.prov_errno;
	*flags = e.flags;
	*context = (uint64_t)(uintptr_t)e.op_context;
	s = fi_cq_strerror(cq, e.prov_errno, e.err_data, NULL, 0);
	snprintf(buf, buflen, "%s", s ? s : "");
	return 0;
}

/* ---- atomics ------------------------------------------------------------ */

/* libfabric's atomic datatypes and ops by name, so the Rust side passes
 * libfabric's own enum values and never an index that must match a table
 * here. */
struct fdg_named {
	const char *name;
	int value;
};
#define NAMED(x) { #x, (int)(x) }
static const struct fdg_named fdg_datatypes[] = {
	NAMED(FI_INT8), NAMED(FI_UINT8), NAMED(FI_INT16), NAMED(FI_UINT16),
	NAMED(FI_INT32), NAMED(FI_UINT32), NAMED(FI_INT64), NAMED(FI_UINT64),
	NAMED(FI_FLOAT), NAMED(FI_DOUBLE), NAMED(FI_FLOAT_COMPLEX),
	NAMED(FI_DOUBLE_COMPLEX), NAMED(FI_LONG_DOUBLE),
	NAMED(FI_LONG_DOUBLE_COMPLEX), NAMED(FI_INT128), NAMED(FI_UINT128),
};
static const struct fdg_named fdg_ops[] = {
	NAMED(FI_MIN), NAMED(FI_MAX), NAMED(FI_SUM), NAMED(FI_PROD),
	NAMED(FI_LOR), NAMED(FI_LAND), NAMED(FI_BOR), NAMED(FI_BAND),
	NAMED(FI_LXOR), NAMED(FI_BXOR), NAMED(FI_ATOMIC_READ),
	NAMED(FI_ATOMIC_WRITE), NAMED(FI_CSWAP), NAMED(FI_CSWAP_NE),
	NAMED(FI_CSWAP_LE), NAMED(FI_CSWAP_LT), NAMED(FI_CSWAP_GE),
	NAMED(FI_CSWAP_GT), NAMED(FI_MSWAP),
};
#undef NAMED

/* table 0: datatypes, 1: ops. Returns 0 and the value, or -FI_ENOENT. */
int fdg_atomic_value(int table, const char *name, int *out)
{
	const struct fdg_named *t = table ? fdg_ops : fdg_datatypes;
	size_t n = table ? sizeof(fdg_ops) / sizeof(fdg_ops[0])
			 : sizeof(fdg_datatypes) / sizeof(fdg_datatypes[0]);
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(t[i].name, name) == 0) {
			*out = t[i].value;
			return 0;
		}
	}
	return -FI_ENOENT;
}

/* kind: 0 fi_atomicvalid, 1 fi_fetch_atomicvalid, 2 fi_compare_atomicvalid;
 * t and o are libfabric's enum values.
 * Returns 0 with *count > 0 when supported, a negative error otherwise. */
int fdg_atomic_valid(struct fid_ep *ep, int kind, int t, int o, size_t *count)
{
	enum fi_datatype dt = (enum fi_datatype)t;
	enum fi_op op = (enum fi_op)o;

	*count = 0;
	switch (kind) {
	case 0: return fi_atomicvalid(ep, dt, op, count);
	case 1: return fi_fetch_atomicvalid(ep, dt, op, count);
	default: return fi_compare_atomicvalid(ep, dt, op, count);
	}
}

/* One element. kind as above; t and o are libfabric's enum values;
 * cmp/res may be NULL when the kind needs none. */
int fdg_atomic(struct fid_ep *ep, int kind, int t, int o, void *buf,
	       void *desc, void *cmp, void *cmp_desc, void *res,
	       void *res_desc, uint64_t dest, uint64_t raddr, uint64_t rkey,
	       uint64_t flags, void *context)
{
	struct fi_ioc ioc = { .addr = buf, .count = 1 };
	struct fi_ioc cioc = { .addr = cmp, .count = 1 };
	struct fi_ioc rioc = { .addr = res, .count = 1 };
	struct fi_rma_ioc rma = { .addr = raddr, .count = 1, .key = rkey };
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .context = context,
	};
	msg.datatype = (enum fi_datatype)t;
	msg.op = (enum fi_op)o;
	switch (kind) {
	case 0:
		return (int)fi_atomicmsg(ep, &msg, flags);
	case 1:
		return (int)fi_fetch_atomicmsg(ep, &msg, &rioc, &res_desc, 1, flags);
	default:
		return (int)fi_compare_atomicmsg(ep, &msg, &cioc, &cmp_desc, 1,
						 &rioc, &res_desc, 1, flags);
	}
}

/* Constants the Rust side needs, read from the headers rather than copied. */
uint64_t fdg_const(int which)
{
	switch (which) {
	case 0: return FI_MSG;
	case 1: return FI_RMA;
	case 2: return FI_READ;
	case 3: return FI_WRITE;
	case 4: return FI_SEND;
	case 5: return FI_RECV;
	case 6: return FI_REMOTE_READ;
	case 7: return FI_REMOTE_WRITE;
	case 8: return FI_INJECT;
	case 9: return FI_COMPLETION;
	case 10: return FI_DELIVERY_COMPLETE;
	case 11: return FI_TRANSMIT_COMPLETE;
	case 12: return FI_MR_VIRT_ADDR;
	case 13: return FI_MR_ENDPOINT;
	case 14: return FI_MR_LOCAL;
	case 15: return FI_MR_PROV_KEY;
	case 16: return FI_ENODATA;
	case 17: return FI_EAGAIN;
	case 18: return FI_EAVAIL;
	case 19: return FI_ENOSYS;
	case 20: return FI_EOPNOTSUPP;
	case 21: return FI_MR_RAW;
	case 22: return FI_MR_HMEM;
	case 23: return FI_ATOMIC;
	case 24: return FI_HMEM;
	case 25: return FI_ADDR_STR;
	default: return 0;
	}
}
