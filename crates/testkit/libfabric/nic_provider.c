/*
 * fdgnic: a libfabric provider for tests that lists domains with the NIC
 * attributes of fi_nic(3) filled in, as verbs, efa and cxi fill them on
 * real hardware, so that fabdiag's reading of them runs through the real
 * libfabric (fi_getinfo, fi_dupinfo, fi_freeinfo) on a machine with none
 * of those NICs. libfabric 1.17 loads it from FI_PROVIDER_PATH as
 * libfdgnic-fi.so (fi_provider(7), "dl" providers).
 *
 * What it lists comes from FDGNIC_DOMAINS, a comma-separated list of
 *   NAME                               a domain with no fi_nic (as tcp)
 *   NAME=STATE:GBPS:MTU[:PCI]          STATE up, down or unknown;
 *                                      PCI as 0000:3b:00.0
 * It offers messaging only (FI_MSG) on FI_EP_RDM, answers nothing else,
 * and cannot open a fabric: a test of discovery, not of traffic.
 *
 * Built by fabdiag_testkit::nic_provider; never shipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#define CAPS (FI_MSG | FI_SEND | FI_RECV)

static int nic_close(struct fid *fid);
static int nic_control(struct fid *fid, int command, void *arg);

static int nic_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	return -FI_ENOSYS;
}

static int nic_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}

static struct fi_ops nic_ops = {
	.size = sizeof(struct fi_ops),
	.close = nic_close,
	.bind = nic_bind,
	.control = nic_control,
	.ops_open = nic_ops_open,
};

/* One allocation per fid_nic and its attributes, freed by nic_close. */
struct nic {
	struct fid_nic nic;
	struct fi_device_attr device;
	struct fi_bus_attr bus;
	struct fi_link_attr link;
};

static struct nic *nic_alloc(const char *name)
{
	struct nic *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->nic.fid.fclass = FI_CLASS_NIC;
	n->nic.fid.ops = &nic_ops;
	n->nic.device_attr = &n->device;
	n->nic.bus_attr = &n->bus;
	n->nic.link_attr = &n->link;
	n->device.name = strdup(name);
	n->device.driver = strdup("fdgnic");
	n->link.network_type = strdup("Ethernet");
	n->link.address = strdup("02:00:00:00:00:01");
	return n;
}

static int nic_close(struct fid *fid)
{
	struct nic *n = (struct nic *)fid;

	free(n->device.name);
	free(n->device.driver);
	free(n->link.network_type);
	free(n->link.address);
	free(n);
	return 0;
}

/* fi_dupinfo asks for a copy with FI_DUP */
static int nic_control(struct fid *fid, int command, void *arg)
{
	struct nic *n = (struct nic *)fid, *copy;

	if (command != FI_DUP)
		return -FI_ENOSYS;
	copy = nic_alloc(n->device.name);
	if (!copy)
		return -FI_ENOMEM;
	copy->bus = n->bus;
	copy->link.mtu = n->link.mtu;
	copy->link.speed = n->link.speed;
	copy->link.state = n->link.state;
	*(struct fid_nic **)arg = &copy->nic;
	return 0;
}

/* "up:400:4096:0000:3b:00.0" after the '=' */
static int nic_parse(struct nic *n, const char *spec)
{
	char state[16];
	unsigned long long gbps, mtu;
	unsigned dom, bus, dev, fn;
	int used = 0;

	if (sscanf(spec, "%15[a-z]:%llu:%llu%n", state, &gbps, &mtu, &used) != 3)
		return -FI_EINVAL;
	if (!strcmp(state, "up"))
		n->link.state = FI_LINK_UP;
	else if (!strcmp(state, "down"))
		n->link.state = FI_LINK_DOWN;
	else
		n->link.state = FI_LINK_UNKNOWN;
	/* fi_nic(3): "The active link data rate, given in bits per second" */
	n->link.speed = (size_t)(gbps * 1000000000ULL);
	n->link.mtu = (size_t)mtu;
	if (spec[used] == ':' &&
	    sscanf(spec + used + 1, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
		n->bus.bus_type = FI_BUS_PCI;
		n->bus.attr.pci.domain_id = (uint16_t)dom;
		n->bus.attr.pci.bus_id = (uint8_t)bus;
		n->bus.attr.pci.device_id = (uint8_t)dev;
		n->bus.attr.pci.function_id = (uint8_t)fn;
	}
	return 0;
}

static struct fi_info *entry(const char *item)
{
	struct fi_info *i = fi_allocinfo();
	const char *eq = strchr(item, '=');
	size_t len = eq ? (size_t)(eq - item) : strlen(item);
	struct nic *n;

	if (!i)
		return NULL;
	i->caps = CAPS;
	i->addr_format = FI_SOCKADDR_IN;
	i->ep_attr->type = FI_EP_RDM;
	i->ep_attr->protocol = FI_PROTO_UNSPEC;
	i->ep_attr->max_msg_size = 1 << 20;
	i->tx_attr->caps = CAPS;
	i->tx_attr->size = 64;
	i->tx_attr->inject_size = 64;
	i->rx_attr->caps = CAPS;
	i->rx_attr->size = 64;
	i->domain_attr->name = strndup(item, len);
	i->domain_attr->threading = FI_THREAD_DOMAIN;
	i->domain_attr->data_progress = FI_PROGRESS_AUTO;
	i->domain_attr->control_progress = FI_PROGRESS_AUTO;
	i->fabric_attr->name = strdup("fdgnic");
	if (eq) {
		n = nic_alloc(i->domain_attr->name);
		if (!n || nic_parse(n, eq + 1)) {
			if (n)
				nic_close(&n->nic.fid);
			fi_freeinfo(i);
			return NULL;
		}
		i->nic = &n->nic;
	}
	return i;
}

static int fdgnic_getinfo(uint32_t version, const char *node,
			  const char *service, uint64_t flags,
			  const struct fi_info *hints, struct fi_info **info)
{
	const char *list = getenv("FDGNIC_DOMAINS");
	struct fi_info *head = NULL, **tail = &head;
	char *copy, *item, *save = NULL;

	(void)version;
	(void)node;
	(void)service;
	(void)flags;
	*info = NULL;
	if (hints && (hints->caps & ~CAPS))
		return -FI_ENODATA;
	if (hints && hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_RDM)
		return -FI_ENODATA;
	copy = strdup(list && *list ? list : "fdgnic0=up:100:4096");
	if (!copy)
		return -FI_ENOMEM;
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		const char *want = hints && hints->domain_attr ?
					   hints->domain_attr->name : NULL;
		size_t len = strcspn(item, "=");

		if (want && (strlen(want) != len || strncmp(want, item, len)))
			continue;
		*tail = entry(item);
		if (!*tail) {
			free(copy);
			fi_freeinfo(head);
			return -FI_EINVAL;
		}
		tail = &(*tail)->next;
	}
	free(copy);
	*info = head;
	return head ? 0 : -FI_ENODATA;
}

static int fdgnic_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
			 void *context)
{
	(void)attr;
	(void)fabric;
	(void)context;
	return -FI_ENOSYS;
}

static void fdgnic_cleanup(void) {}

static struct fi_provider fdgnic = {
	.version = FI_VERSION(1, 0),
	.fi_version = FI_VERSION(1, 17),
	.name = "fdgnic",
	.getinfo = fdgnic_getinfo,
	.fabric = fdgnic_fabric,
	.cleanup = fdgnic_cleanup,
};

__attribute__((visibility("default"))) struct fi_provider *fi_prov_ini(void)
{
	return &fdgnic;
}
