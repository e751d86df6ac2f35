//! Raw declarations of the C shim (`shim.c`). Nothing here is safe to call
//! directly; `endpoint` and `discovery` wrap every function. This module
//! must not grow logic: it mirrors the shim one-to-one.

use std::os::raw::{c_char, c_int, c_long, c_void};

/// Declares types the shim only ever hands over by pointer: zero-sized,
/// `#[repr(C)]`, never made or read in Rust (the Rustonomicon's opaque
/// struct pattern).
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {
        $(
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

opaque!(FiInfo, Fid, FidFabric, FidDomain, FidCq, FidAv, FidEp, FidMr);

#[repr(C)]
pub struct Hints {
    pub caps: u64,
    pub tx_op_flags: u64,
    pub prov_name: *const c_char,
    pub domain_name: *const c_char,
}

#[repr(C)]
pub struct InfoView {
    pub prov_name: *const c_char,
    pub fabric_name: *const c_char,
    pub domain_name: *const c_char,
    pub caps: u64,
    pub mr_mode: u64,
    pub inject_size: u64,
    pub tx_size: u64,
    pub rx_size: u64,
    pub max_msg_size: u64,
    pub mr_key_size: u64,
    pub addr_format: u64,
    pub tx_op_flags: u64,
    pub data_progress: u32,
    pub needs_context: u32,
}

/// Mirrors `struct fdg_nic_view` in shim.c (fabdiag's own struct).
#[repr(C)]
pub struct NicView {
    pub name: *const c_char,
    pub driver: *const c_char,
    pub has_pci: u32,
    pub pci_domain: u16,
    pub pci_bus: u8,
    pub pci_device: u8,
    pub pci_function: u8,
    pub has_link: u32,
    pub link_state: u32,
    pub link_speed: u64,
    pub link_mtu: u64,
    pub link_address: *const c_char,
    pub network_type: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct RawCompletion {
    pub context: u64,
    pub flags: u64,
    pub len: u64,
}

extern "C" {
    pub fn fdg_load(path: *const c_char, err: *mut c_char, errlen: usize) -> c_int;
    pub fn fdg_lib_version() -> u32;
    pub fn fdg_strerror(err: c_int) -> *const c_char;
    pub fn fdg_getinfo(h: *const Hints, out: *mut *mut FiInfo) -> c_int;
    pub fn fdg_freeinfo(info: *mut FiInfo);
    pub fn fdg_info_next(info: *const FiInfo) -> *mut FiInfo;
    pub fn fdg_info_view(info: *const FiInfo, v: *mut InfoView);
    pub fn fdg_nic_view(info: *const FiInfo, v: *mut NicView) -> c_int;
    pub fn fdg_close(fid: *mut Fid) -> c_int;
    pub fn fdg_fabric(info: *mut FiInfo, fabric: *mut *mut FidFabric) -> c_int;
    pub fn fdg_domain(f: *mut FidFabric, info: *mut FiInfo, d: *mut *mut FidDomain) -> c_int;
    pub fn fdg_cq_open(d: *mut FidDomain, size: usize, cq: *mut *mut FidCq) -> c_int;
    pub fn fdg_av_open(d: *mut FidDomain, av: *mut *mut FidAv) -> c_int;
    pub fn fdg_endpoint(
        d: *mut FidDomain,
        info: *mut FiInfo,
        cq: *mut FidCq,
        av: *mut FidAv,
        ep: *mut *mut FidEp,
        selective: *mut c_int,
    ) -> c_int;
    pub fn fdg_fabric_fid(f: *mut FidFabric) -> *mut Fid;
    pub fn fdg_domain_fid(d: *mut FidDomain) -> *mut Fid;
    pub fn fdg_cq_fid(c: *mut FidCq) -> *mut Fid;
    pub fn fdg_av_fid(a: *mut FidAv) -> *mut Fid;
    pub fn fdg_ep_fid(e: *mut FidEp) -> *mut Fid;
    pub fn fdg_mr_fid(m: *mut FidMr) -> *mut Fid;
    #[allow(clippy::too_many_arguments)]
    pub fn fdg_mr_reg(
        d: *mut FidDomain,
        ep: *mut FidEp,
        bind_ep: c_int,
        buf: *mut c_void,
        len: usize,
        requested_key: u64,
        mr: *mut *mut FidMr,
        desc: *mut *mut c_void,
        key: *mut u64,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn fdg_mr_reg_hmem(
        d: *mut FidDomain,
        ep: *mut FidEp,
        bind_ep: c_int,
        buf: *mut c_void,
        len: usize,
        iface: c_int,
        device: c_int,
        device_only: c_int,
        requested_key: u64,
        mr: *mut *mut FidMr,
        desc: *mut *mut c_void,
        key: *mut u64,
    ) -> c_int;
    pub fn fdg_getname(ep: *mut FidEp, addr: *mut c_void, len: *mut usize) -> c_int;
    pub fn fdg_av_insert(av: *mut FidAv, addr: *const c_void, fi_addr: *mut u64) -> c_int;
    pub fn fdg_av_straddr(av: *mut FidAv, addr: *const c_void, buf: *mut c_char, len: *mut usize);
    #[allow(clippy::too_many_arguments)]
    pub fn fdg_write(
        ep: *mut FidEp,
        buf: *mut c_void,
        len: usize,
        desc: *mut c_void,
        dest: u64,
        raddr: u64,
        rkey: u64,
        flags: u64,
        context: *mut c_void,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn fdg_read(
        ep: *mut FidEp,
        buf: *mut c_void,
        len: usize,
        desc: *mut c_void,
        src: u64,
        raddr: u64,
        rkey: u64,
        flags: u64,
        context: *mut c_void,
    ) -> c_int;
    pub fn fdg_send(
        ep: *mut FidEp,
        buf: *mut c_void,
        len: usize,
        desc: *mut c_void,
        dest: u64,
        flags: u64,
        context: *mut c_void,
    ) -> c_int;
    pub fn fdg_inject(ep: *mut FidEp, buf: *mut c_void, len: usize, dest: u64) -> c_int;
    pub fn fdg_recv(ep: *mut FidEp, buf: *mut c_void, len: usize, desc: *mut c_void, context: *mut c_void) -> c_int;
    pub fn fdg_cq_read(cq: *mut FidCq, out: *mut RawCompletion, max: usize) -> c_long;
    pub fn fdg_cq_readerr(
        cq: *mut FidCq,
        err: *mut c_int,
        prov_errno: *mut c_int,
        flags: *mut u64,
        context: *mut u64,
        buf: *mut c_char,
        buflen: usize,
    ) -> c_int;
    pub fn fdg_const(which: c_int) -> u64;
    pub fn fdg_atomic_value(table: c_int, name: *const c_char, out: *mut c_int) -> c_int;
    pub fn fdg_atomic_valid(ep: *mut FidEp, kind: c_int, t: c_int, o: c_int, count: *mut usize) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn fdg_atomic(
        ep: *mut FidEp,
        kind: c_int,
        t: c_int,
        o: c_int,
        buf: *mut c_void,
        desc: *mut c_void,
        cmp: *mut c_void,
        cmp_desc: *mut c_void,
        res: *mut c_void,
        res_desc: *mut c_void,
        dest: u64,
        raddr: u64,
        rkey: u64,
        flags: u64,
        context: *mut c_void,
    ) -> c_int;
}
