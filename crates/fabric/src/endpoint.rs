//! One reliable-datagram endpoint and everything it needs, as RAII handles.
//!
//! `Endpoint` owns the fabric, domain, CQ, AV, endpoint and the registered
//! host buffers. Operations name buffers by `RegionId` and are bounds-checked,
//! so no safe call can make the provider touch memory that is not a live,
//! registered buffer: the buffers are dropped only after every handle that
//! could still reach them is closed. Never prints.

use crate::contexts::LentContexts;
use crate::discovery::InfoList;
use crate::watch::{CallCount, CallWatcher, DataCall};
use crate::{consts, ffi, FabricError, Memory};
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

/// Index of a registered buffer of this endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionId(pub usize);

/// Index of a peer inserted in this endpoint's address vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerId(u64);

impl PeerId {
    /// A peer by its address-vector index (`insert_peer` returns real
    /// ones; stand-in endpoints in tests take any).
    pub fn from_index(index: u64) -> PeerId {
        PeerId(index)
    }
}

/// What a peer needs to read or write one of our buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteRegion {
    /// Base to add offsets to: a virtual address (FI_MR_VIRT_ADDR) or 0.
    pub addr: u64,
    pub key: u64,
    pub len: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpFlags {
    /// Hand the payload to the provider at post time (FI_INJECT); the closest
    /// libfabric notion to CXI's Immediate Data Commands.
    pub inject: bool,
    /// Ask for no completion entry: for an injected send whose delivery the
    /// peer will confirm anyway. Honoured only with `inject` (the buffer is
    /// then free at once) and where the endpoint has selective completion;
    /// `Endpoint::completes` says whether an operation will complete.
    pub silent: bool,
}

/// Which libfabric atomic call: fi_atomic, fi_fetch_atomic (old value
/// returned) or fi_compare_atomic (compare operand, old value returned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    Plain,
    Fetch,
    Compare,
}

/// One atomic element: libfabric's own datatype and op values (from
/// `atomic_datatype` and `atomic_op`), and the element size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicSpec {
    pub kind: AtomicKind,
    pub datatype: AtomicValue,
    pub op: AtomicValue,
    pub size: u64,
}

/// A libfabric enum value (`enum fi_datatype` or `enum fi_op`), only made
/// by looking a name up in the headers fabdiag was built against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicValue(i32);

fn atomic_value(table: i32, name: &str) -> Result<AtomicValue, FabricError> {
    let c = std::ffi::CString::new(name).map_err(|_| FabricError::Bounds(format!("bad libfabric name {name:?}")))?;
    let mut v = 0;
    // SAFETY: c is NUL-terminated and outlives the call; v is a local the
    // shim writes on success; the lookup touches no libfabric object.
    let rc = unsafe { ffi::fdg_atomic_value(table, c.as_ptr(), &mut v) };
    if rc == 0 {
        Ok(AtomicValue(v))
    } else {
        Err(FabricError::Bounds(format!("libfabric's headers have no {name}")))
    }
}

/// libfabric's value of the datatype named e.g. "FI_UINT64".
pub fn atomic_datatype(name: &str) -> Result<AtomicValue, FabricError> {
    atomic_value(0, name)
}

/// libfabric's value of the atomic op named e.g. "FI_SUM".
pub fn atomic_op(name: &str) -> Result<AtomicValue, FabricError> {
    atomic_value(1, name)
}

/// Where an atomic's operands and result live in one local region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicOperands {
    pub region: RegionId,
    pub operand: u64,
    /// Compare operand (compare kind only).
    pub compare: u64,
    /// Where the old value lands (fetch and compare kinds).
    pub result: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posted {
    Queued,
    /// The transmit or receive queue is full: poll completions, then retry.
    Busy,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// The caller's tag given when posting.
    pub context: u64,
    /// Bytes received (receives only).
    pub len: u64,
    pub is_recv: bool,
}

struct Handle(*mut ffi::Fid);

impl Handle {
    fn close(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the fid is open and closed once; its children were
            // closed before (Endpoint::drop orders the closes).
            unsafe { ffi::fdg_close(self.0) };
            self.0 = ptr::null_mut();
        }
    }
}

struct Region {
    buf: Memory,
    mr: Handle,
    desc: *mut c_void,
    key: u64,
}

pub struct Endpoint {
    // Raw handles for calls; `Handle`s below own the lifetimes.
    ep: *mut ffi::FidEp,
    cq: *mut ffi::FidCq,
    av: *mut ffi::FidAv,
    domain: *mut ffi::FidDomain,
    regions: Vec<Region>,
    ep_h: Handle,
    av_h: Handle,
    cq_h: Handle,
    domain_h: Handle,
    fabric_h: Handle,
    virt_addr: bool,
    mr_endpoint: bool,
    provider: String,
    domain_name: String,
    inject_size: u64,
    tx_size: u64,
    rx_size: u64,
    delivery_complete: bool,
    /// Addresses are NUL-terminated strings of varying length (FI_ADDR_STR).
    string_address: bool,
    /// Transmits are bound with FI_SELECTIVE_COMPLETION.
    selective: bool,
    /// Contexts lent to the operations that complete, where the provider
    /// requires a struct fi_context per operation (FI_CONTEXT) or a test
    /// asked (`open_lending_contexts`); None: operations carry their tags.
    contexts: Option<LentContexts>,
    scratch: Vec<ffi::RawCompletion>,
    /// Entries into and returns from data calls, for a `CallWatcher`.
    calls: Arc<CallCount>,
    leak: bool,
    hot: HotConsts,
}

/// The header constants the posting and polling paths use, read once at
/// open: each read is a call into the shim, and the send path used three
/// per operation (seen in callgrind: 14 instructions in the shim plus the
/// calls, per operation).
#[derive(Clone, Copy)]
struct HotConsts {
    completion: u64,
    inject: u64,
    delivery_complete: u64,
    recv: u64,
    eagain: i32,
}

impl HotConsts {
    fn read() -> HotConsts {
        HotConsts {
            completion: consts::completion(),
            inject: consts::inject(),
            delivery_complete: consts::delivery_complete(),
            recv: consts::recv(),
            eagain: consts::eagain(),
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if self.leak {
            // the lent contexts too: the provider may still write them
            std::mem::forget(std::mem::take(&mut self.regions));
            std::mem::forget(self.contexts.take());
            return;
        }
        // MRs first (they may be bound to the endpoint), then the endpoint,
        // then what it was bound to, then the buffers (dropped with the Vec).
        for r in &mut self.regions {
            r.mr.close();
        }
        self.ep_h.close();
        self.av_h.close();
        self.cq_h.close();
        self.domain_h.close();
        self.fabric_h.close();
        self.regions.clear();
    }
}

fn check(call: &'static str, rc: i32) -> Result<(), FabricError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(FabricError::call(call, rc))
    }
}

impl Endpoint {
    /// Opens entry `index` of `list` and registers `buffers` with it
    /// (device memory through FI_HMEM).
    pub fn open(list: &InfoList, index: usize, buffers: Vec<Memory>) -> Result<Self, FabricError> {
        Self::open_with(list, index, buffers, None)
    }

    /// `open`, lending every operation that completes a context of
    /// fabdiag's own, as a provider with FI_CONTEXT requires, whether or
    /// not this one asks: `slots` of them (0: as many as the provider's
    /// queues). How machines without such a provider test that path.
    pub fn open_lending_contexts(
        list: &InfoList,
        index: usize,
        buffers: Vec<Memory>,
        slots: usize,
    ) -> Result<Self, FabricError> {
        Self::open_with(list, index, buffers, Some(slots))
    }

    fn open_with(
        list: &InfoList,
        index: usize,
        buffers: Vec<Memory>,
        lend: Option<usize>,
    ) -> Result<Self, FabricError> {
        let info = list
            .raw(index)
            .ok_or_else(|| FabricError::Bounds(format!("no provider entry {index}")))?;
        let pi = list
            .get(index)
            .cloned()
            .ok_or_else(|| FabricError::Bounds(format!("no provider entry {index}")))?;
        if pi.mr_key_size > 8 {
            return Err(FabricError::Unsupported {
                provider: pi.provider.clone(),
                what: format!("{}-byte raw memory keys", pi.mr_key_size),
            });
        }
        let mut e = Endpoint {
            ep: ptr::null_mut(),
            cq: ptr::null_mut(),
            av: ptr::null_mut(),
            domain: ptr::null_mut(),
            regions: Vec::new(),
            ep_h: Handle(ptr::null_mut()),
            av_h: Handle(ptr::null_mut()),
            cq_h: Handle(ptr::null_mut()),
            domain_h: Handle(ptr::null_mut()),
            fabric_h: Handle(ptr::null_mut()),
            virt_addr: pi.mr_mode & consts::mr_virt_addr() != 0,
            mr_endpoint: pi.mr_mode & consts::mr_endpoint() != 0,
            provider: pi.provider.clone(),
            domain_name: pi.domain.clone(),
            inject_size: pi.inject_size,
            tx_size: pi.tx_size.max(1),
            rx_size: pi.rx_size.max(1),
            delivery_complete: pi.delivery_complete,
            string_address: pi.string_address,
            selective: false,
            contexts: match lend {
                Some(n) if n > 0 => Some(LentContexts::new(n, n)),
                _ if pi.needs_context || lend.is_some() => {
                    Some(LentContexts::new(context_slots(pi.tx_size), context_slots(pi.rx_size)))
                }
                _ => None,
            },
            scratch: vec![ffi::RawCompletion::default(); 64],
            calls: CallCount::new(&pi.provider),
            leak: false,
            hot: HotConsts::read(),
        };
        let mut fabric = ptr::null_mut();
        // SAFETY: info is a live entry of `list`; fabric receives a new
        // object which e.fabric_h owns from here on (closed on any error).
        check("fi_fabric", unsafe { ffi::fdg_fabric(info, &mut fabric) })?;
        // SAFETY: fabric was just opened successfully.
        e.fabric_h = Handle(unsafe { ffi::fdg_fabric_fid(fabric) });
        // SAFETY: fabric and info are live; the domain is owned by domain_h.
        check("fi_domain", unsafe { ffi::fdg_domain(fabric, info, &mut e.domain) })?;
        // SAFETY: the domain was just opened.
        e.domain_h = Handle(unsafe { ffi::fdg_domain_fid(e.domain) });
        // (psm3 gives both as u64::MAX: no limit of its own)
        let cq_size = e.tx_size.saturating_add(e.rx_size).min(1 << 20) as usize;
        // SAFETY: domain is live; the CQ is owned by cq_h.
        check("fi_cq_open", unsafe { ffi::fdg_cq_open(e.domain, cq_size, &mut e.cq) })?;
        // SAFETY: the CQ was just opened.
        e.cq_h = Handle(unsafe { ffi::fdg_cq_fid(e.cq) });
        // SAFETY: domain is live; the AV is owned by av_h.
        check("fi_av_open", unsafe { ffi::fdg_av_open(e.domain, &mut e.av) })?;
        // SAFETY: the AV was just opened.
        e.av_h = Handle(unsafe { ffi::fdg_av_fid(e.av) });
        let mut selective = 0;
        // SAFETY: domain, info, cq and av are live; selective is a local the
        // shim writes; on failure the shim closes the half-made endpoint
        // itself and leaves ep null.
        check("fi_endpoint", unsafe {
            ffi::fdg_endpoint(e.domain, info, e.cq, e.av, &mut e.ep, &mut selective)
        })?;
        e.selective = selective != 0;
        // SAFETY: the endpoint was just opened and enabled.
        e.ep_h = Handle(unsafe { ffi::fdg_ep_fid(e.ep) });
        // host bytes registered, this buffer's included, for a
        // registration that fails at the locked-memory limit
        let mut pinned = 0u64;
        for (i, buf) in buffers.into_iter().enumerate() {
            let mut mr = ptr::null_mut();
            let mut desc = ptr::null_mut();
            let mut key = 0u64;
            let (call, rc) = match &buf {
                // SAFETY: buf is a live mapping of buf.len() bytes that this
                // Endpoint keeps until after the MR is closed (see Drop).
                Memory::Host(h) => ("fi_mr_reg", unsafe {
                    ffi::fdg_mr_reg(
                        e.domain,
                        e.ep,
                        i32::from(e.mr_endpoint),
                        h.as_ptr().cast(),
                        h.len(),
                        i as u64 + 1,
                        &mut mr,
                        &mut desc,
                        &mut key,
                    )
                }),
                // SAFETY: the device allocation of d.len() bytes lives in
                // this Endpoint until after the MR is closed (see Drop); the
                // provider reaches it through the GPU runtime, not the CPU.
                Memory::Device(d) => ("fi_mr_regattr (FI_HMEM)", unsafe {
                    ffi::fdg_mr_reg_hmem(
                        e.domain,
                        e.ep,
                        i32::from(e.mr_endpoint),
                        d.address() as *mut c_void,
                        d.len() as usize,
                        d.iface().code(),
                        d.device(),
                        i32::from(d.device_only()),
                        i as u64 + 1,
                        &mut mr,
                        &mut desc,
                        &mut key,
                    )
                }),
            };
            if rc == -libc::ENOSYS || rc == -libc::EOPNOTSUPP {
                if let Memory::Device(d) = &buf {
                    // a libfabric built without this GPU interface, or one
                    // built with it that could not start it here (a CUDA
                    // build whose libcudart.so the loader cannot find):
                    // only its start-up log tells which, and doctor reads it
                    return Err(FabricError::NoGpu(format!(
                        "this libfabric cannot register {} memory ({}): it was built without that interface, or cannot start it here (fabdiag doctor says which; a CUDA build needs the toolkit's libcudart.so on LD_LIBRARY_PATH); to build one with it, scripts/build-libfabric-cuda.sh, then point FABDIAG_LIBFABRIC at it and check with fi_info -c FI_HMEM",
                        d.iface().name(),
                        FabricError::call(call, rc)
                    )));
                }
            }
            if let Memory::Host(h) = &buf {
                pinned += h.len() as u64;
                if rc != 0 {
                    return Err(FabricError::registration(call, rc, pinned, crate::lockable_bytes()));
                }
            }
            check(call, rc)?;
            // SAFETY: mr was just registered.
            let fid = unsafe { ffi::fdg_mr_fid(mr) };
            e.regions.push(Region {
                buf,
                mr: Handle(fid),
                desc,
                key,
            });
        }
        Ok(e)
    }

    /// From now on, dropping this endpoint leaves every handle open and
    /// every buffer mapped, for good: for a process about to exit after a
    /// failed run. Closing an rxm/tcp endpoint whose peer stopped answering
    /// mid-connection can crash inside libfabric 1.17 (SIGSEGV in fi_close,
    /// seen in fabdiag's fault tests); leaking cannot, and the provider may
    /// keep touching the buffers because they stay mapped.
    pub fn leak_on_drop(&mut self) {
        self.leak = true;
    }

    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// Lets `w` see a data call of this endpoint that does not return.
    pub fn watched_by(&self, w: &CallWatcher) {
        w.add(&self.calls);
    }

    /// Says how many bytes the batch now starting may have in flight at
    /// once (a watcher weighs a held call by it: see crate::watch).
    pub fn expect_work(&self, bytes: u64) {
        self.calls.expect_work(bytes);
    }

    /// Test hook: this endpoint's `nth` data call from now on (1: the
    /// next) stays inside for `hold`, or never returns (None) as psm3's
    /// fi_writemsg does when its peer is gone; for testing what watches
    /// for that. Before `watched_by`.
    pub fn stall_data_call(&mut self, nth: u64, hold: Option<Duration>) -> Result<(), FabricError> {
        Arc::get_mut(&mut self.calls)
            .map(|c| c.stall_after(nth, hold))
            .ok_or_else(|| FabricError::Bounds("the stall test hook must be set before the endpoint is watched".into()))
    }

    pub fn domain(&self) -> &str {
        &self.domain_name
    }

    /// Largest payload the provider accepts with FI_INJECT.
    pub fn inject_size(&self) -> u64 {
        self.inject_size
    }

    pub fn tx_depth(&self) -> u64 {
        self.tx_size
    }

    pub fn rx_depth(&self) -> u64 {
        self.rx_size
    }

    /// True when completions mean the data reached the target.
    pub fn delivery_complete(&self) -> bool {
        self.delivery_complete
    }

    /// This endpoint's raw address, to send to the peer.
    pub fn name(&self) -> Result<Vec<u8>, FabricError> {
        let mut buf = vec![0u8; 256];
        let mut len = buf.len();
        // SAFETY: ep is live; buf has `len` writable bytes.
        let rc = unsafe { ffi::fdg_getname(self.ep, buf.as_mut_ptr().cast(), &mut len) };
        if rc != 0 && len > buf.len() {
            buf.resize(len, 0);
            // SAFETY: as above with the size the provider asked for.
            check("fi_getname", unsafe {
                ffi::fdg_getname(self.ep, buf.as_mut_ptr().cast(), &mut len)
            })?;
        } else {
            check("fi_getname", rc)?;
        }
        buf.truncate(len);
        Ok(buf)
    }

    /// A printable form of a raw address (fi_av_straddr).
    pub fn address_string(&self, raw: &[u8]) -> String {
        let mut out = vec![0 as c_char; 256];
        let mut len = out.len();
        // SAFETY: av is live; raw is a provider address we got from
        // fi_getname (ours or the peer's); out has len writable bytes and the
        // shim NUL-terminates within it.
        unsafe { ffi::fdg_av_straddr(self.av, raw.as_ptr().cast(), out.as_mut_ptr(), &mut len) };
        if let Some(last) = out.last_mut() {
            *last = 0;
        }
        // SAFETY: out is NUL-terminated (forced above).
        unsafe { CStr::from_ptr(out.as_ptr()) }.to_string_lossy().into_owned()
    }

    /// Adds a peer's raw address. The bytes come from the network, so they
    /// are checked first against what the provider will read from them.
    pub fn insert_peer(&mut self, raw: &[u8]) -> Result<PeerId, FabricError> {
        let own = self.name()?;
        check_peer_address(raw, own.len(), self.string_address, &self.provider)?;
        let scoped = (!self.string_address)
            .then(|| link_local_on_own_link(raw, &own))
            .flatten();
        let raw = scoped.as_deref().unwrap_or(raw);
        let mut a = 0u64;
        // SAFETY: av is live; raw holds at least one address of this
        // provider's format: as many bytes as ours, or for string addresses
        // a NUL terminator within the slice (checked above), so the provider
        // reads nothing past it.
        check("fi_av_insert", unsafe {
            ffi::fdg_av_insert(self.av, raw.as_ptr().cast(), &mut a)
        })?;
        Ok(PeerId(a))
    }

    pub fn region_len(&self, id: RegionId) -> u64 {
        self.regions.get(id.0).map_or(0, |r| r.buf.len())
    }

    /// Our own buffer's bytes, when it is host memory.
    pub fn region(&self, id: RegionId) -> Option<&[u8]> {
        self.regions.get(id.0).and_then(|r| r.buf.host())
    }

    /// Our own buffer, to write operands between batches (never while an
    /// operation that reads it is in flight); host memory only.
    pub fn region_mut(&mut self, id: RegionId) -> Option<&mut [u8]> {
        self.regions.get_mut(id.0).and_then(|r| r.buf.host_mut())
    }

    /// Our own buffer of either kind (device memory is copied through its
    /// GPU runtime), between batches.
    pub fn memory(&self, id: RegionId) -> Option<&Memory> {
        self.regions.get(id.0).map(|r| &r.buf)
    }

    pub fn memory_mut(&mut self, id: RegionId) -> Option<&mut Memory> {
        self.regions.get_mut(id.0).map(|r| &mut r.buf)
    }

    /// What the peer needs to address our buffer `id`.
    pub fn remote_region(&self, id: RegionId) -> Option<RemoteRegion> {
        self.regions.get(id.0).map(|r| RemoteRegion {
            addr: if self.virt_addr { r.buf.address() } else { 0 },
            key: r.key,
            len: r.buf.len(),
        })
    }

    fn local(&self, id: RegionId, off: u64, len: u64) -> Result<(*mut c_void, *mut c_void), FabricError> {
        let r = self.regions.get(id.0).ok_or_else(|| FabricError::no_region(id.0))?;
        if off.checked_add(len).is_none_or(|end| end > r.buf.len()) {
            return Err(FabricError::Bounds(format!(
                "local range {off}+{len} exceeds region of {} bytes",
                r.buf.len()
            )));
        }
        let at = match &r.buf {
            // SAFETY: off + len <= buffer length (checked above).
            Memory::Host(h) => unsafe { h.as_ptr().add(off as usize) }.cast(),
            // a device address: handed to the provider, never dereferenced here
            Memory::Device(d) => (d.address() + off) as *mut c_void,
        };
        Ok((at, r.desc))
    }

    fn remote(rem: &RemoteRegion, off: u64, len: u64) -> Result<u64, FabricError> {
        if off.checked_add(len).is_none_or(|end| end > rem.len) {
            return Err(FabricError::Bounds(format!(
                "remote range {off}+{len} exceeds the peer's region of {} bytes",
                rem.len
            )));
        }
        Ok(rem.addr + off)
    }

    /// Will an operation posted with `f` leave a completion entry?
    pub fn completes(&self, f: OpFlags) -> bool {
        !(f.silent && f.inject && self.selective)
    }

    fn flags(&self, f: OpFlags) -> u64 {
        let mut flags = if self.completes(f) { self.hot.completion } else { 0 };
        if f.inject {
            flags |= self.hot.inject;
        }
        if self.delivery_complete {
            flags |= self.hot.delivery_complete;
        }
        flags
    }

    /// The context to post an operation tagged `tag` with, and whether it
    /// is a slot lent for it: the tag itself, unless the provider requires
    /// FI_CONTEXT and the operation will complete. None: every slot is in
    /// flight, so the operation waits as for a full queue.
    fn op_context(&mut self, tag: u64, completes: bool, recv: bool) -> Option<(*mut c_void, bool)> {
        match &mut self.contexts {
            Some(c) if completes => c.take(tag, recv).map(|p| (p, true)),
            _ => Some((tag as *mut c_void, false)),
        }
    }

    /// `posted` for an operation posted with `op_context`'s answer: a slot
    /// lent to an operation the provider did not take is free again.
    fn posted_with(
        &mut self,
        call: &'static str,
        rc: i32,
        (context, lent): (*mut c_void, bool),
    ) -> Result<Posted, FabricError> {
        if rc != 0 && lent {
            if let Some(c) = &mut self.contexts {
                c.give_back(context);
            }
        }
        self.posted(call, rc)
    }

    fn posted(&self, call: &'static str, rc: i32) -> Result<Posted, FabricError> {
        if rc == 0 {
            Ok(Posted::Queued)
        } else if -rc == self.hot.eagain {
            Ok(Posted::Busy)
        } else {
            Err(FabricError::call(call, rc))
        }
    }

    /// Writes `len` bytes of local region `id` at `off` into the peer's region.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        id: RegionId,
        off: u64,
        len: u64,
        peer: PeerId,
        rem: &RemoteRegion,
        roff: u64,
        f: OpFlags,
        context: u64,
    ) -> Result<Posted, FabricError> {
        let (buf, desc) = self.local(id, off, len)?;
        let raddr = Self::remote(rem, roff, len)?;
        let flags = self.flags(f);
        let Some(ctx) = self.op_context(context, self.completes(f), false) else {
            return Ok(Posted::Busy);
        };
        let ep = self.ep;
        // SAFETY: buf..buf+len lies in a registered buffer owned by self and
        // kept alive until the endpoint is closed; ep is live; the remote
        // range was bounds-checked against what the peer advertised; a lent
        // context is ours until its completion is read.
        let rc = self.calls.around(DataCall::Write, || unsafe {
            ffi::fdg_write(ep, buf, len as usize, desc, peer.0, raddr, rem.key, flags, ctx.0)
        });
        self.posted_with("fi_writemsg", rc, ctx)
    }

    /// Reads `len` bytes from the peer's region into local region `id`.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        id: RegionId,
        off: u64,
        len: u64,
        peer: PeerId,
        rem: &RemoteRegion,
        roff: u64,
        context: u64,
    ) -> Result<Posted, FabricError> {
        let (buf, desc) = self.local(id, off, len)?;
        let raddr = Self::remote(rem, roff, len)?;
        let flags = consts::completion();
        let Some(ctx) = self.op_context(context, true, false) else {
            return Ok(Posted::Busy);
        };
        let ep = self.ep;
        // SAFETY: as in write(); the provider writes into buf..buf+len,
        // which is registered, in bounds and owned by self.
        let rc = self.calls.around(DataCall::Read, || unsafe {
            ffi::fdg_read(ep, buf, len as usize, desc, peer.0, raddr, rem.key, flags, ctx.0)
        });
        self.posted_with("fi_readmsg", rc, ctx)
    }

    /// Sends `len` bytes (0 allowed) of local region `id` at `off`.
    #[allow(clippy::too_many_arguments)]
    pub fn send(
        &mut self,
        id: RegionId,
        off: u64,
        len: u64,
        peer: PeerId,
        f: OpFlags,
        context: u64,
    ) -> Result<Posted, FabricError> {
        let (buf, desc) = self.local(id, off, len)?;
        if !self.completes(f) {
            let ep = self.ep;
            // SAFETY: buf..buf+len is in a buffer owned by self; an injected
            // payload is copied before fi_inject returns.
            let rc = self.calls.around(DataCall::Inject, || unsafe {
                ffi::fdg_inject(ep, buf, len as usize, peer.0)
            });
            return self.posted("fi_inject", rc);
        }
        let flags = self.flags(f);
        let Some(ctx) = self.op_context(context, true, false) else {
            return Ok(Posted::Busy);
        };
        let ep = self.ep;
        // SAFETY: buf..buf+len is in a registered buffer owned by self; a
        // lent context is ours until its completion is read.
        let rc = self.calls.around(DataCall::Send, || unsafe {
            ffi::fdg_send(ep, buf, len as usize, desc, peer.0, flags, ctx.0)
        });
        self.posted_with("fi_sendmsg", rc, ctx)
    }

    /// Posts a receive of up to `len` bytes into local region `id` at `off`.
    pub fn recv(&mut self, id: RegionId, off: u64, len: u64, context: u64) -> Result<Posted, FabricError> {
        let (buf, desc) = self.local(id, off, len)?;
        let Some(ctx) = self.op_context(context, true, true) else {
            return Ok(Posted::Busy);
        };
        let ep = self.ep;
        // SAFETY: buf..buf+len is in a registered buffer owned by self and
        // outlives the endpoint, so a late delivery cannot reach freed
        // memory; a lent context likewise (it is dropped with self).
        let rc = self.calls.around(DataCall::Recv, || unsafe {
            ffi::fdg_recv(ep, buf, len as usize, desc, ctx.0)
        });
        self.posted_with("fi_recv", rc, ctx)
    }

    /// A provider defect that would crash the process on this atomic,
    /// although the provider says it supports it. One list, checked before
    /// any such operation is posted; each entry was seen here.
    pub fn known_atomic_defect(&self, spec: &AtomicSpec) -> Option<&'static str> {
        let rxd = self.provider.split(';').any(|p| p == "ofi_rxd");
        let v117 = crate::library_version_parts().is_ok_and(|v| v == (1, 17));
        if rxd && v117 && spec.kind != AtomicKind::Plain {
            return Some("fetching and compare atomics crash libfabric 1.17's ofi_rxd (SIGSEGV inside the provider)");
        }
        None
    }

    /// A provider defect that crashes a process holding both ends of a
    /// test (`--local`) once both ends send to each other more than the
    /// bytes returned, with the reason. libfabric 2.5's rewritten shm
    /// (2.5.0, 2.6.0 and its main branch of 2026-11 here; 2.4.0 and before
    /// do not) dereferences a bad command pointer in `smr_progress_cmd`:
    /// two shm endpoints of one process, each sending 8 KiB to the other
    /// once, are enough in a plain C program (docs/known-defects.md).
    /// Between two processes the same traffic runs.
    pub fn known_same_process_defect(&self) -> Option<(u64, &'static str)> {
        let shm = self.provider.split(';').any(|p| p == "shm");
        let from_2_5 = crate::library_version_parts().is_ok_and(|v| v >= (2, 5));
        (shm && from_2_5).then_some((
            4096,
            "libfabric 2.5 and later's shm crashes (SIGSEGV inside the provider) when two endpoints of one \
             process both send over 4096 B to each other; run the server and the client as two processes \
             (the same command without --local, once as the server and once with 127.0.0.1), or keep -s at \
             4096 or below",
        ))
    }

    /// Does the provider support this atomic (fi_*atomicvalid)?
    pub fn atomic_valid(&self, spec: &AtomicSpec) -> Result<bool, FabricError> {
        let kind = spec.kind as i32;
        let mut count = 0usize;
        // SAFETY: ep is live; count points to a local the shim writes.
        let rc = unsafe { ffi::fdg_atomic_valid(self.ep, kind, spec.datatype.0, spec.op.0, &mut count) };
        if rc == 0 {
            Ok(count > 0)
        } else if rc < 0
            && [
                consts::enodata(),
                38, /* ENOSYS */
                95, /* EOPNOTSUPP */
                22, /* EINVAL */
            ]
            .contains(&-rc)
        {
            Ok(false)
        } else {
            Err(FabricError::call("fi_atomicvalid", rc))
        }
    }

    /// Posts one atomic on the peer's region at `roff`.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic(
        &mut self,
        spec: &AtomicSpec,
        ops: &AtomicOperands,
        peer: PeerId,
        rem: &RemoteRegion,
        roff: u64,
        f: OpFlags,
        context: u64,
    ) -> Result<Posted, FabricError> {
        let n = spec.size;
        let (buf, desc) = self.local(ops.region, ops.operand, n)?;
        let (cmp, cmp_desc) = match spec.kind {
            AtomicKind::Compare => self.local(ops.region, ops.compare, n)?,
            _ => (ptr::null_mut(), ptr::null_mut()),
        };
        let (res, res_desc) = match spec.kind {
            AtomicKind::Plain => (ptr::null_mut(), ptr::null_mut()),
            _ => self.local(ops.region, ops.result, n)?,
        };
        let raddr = Self::remote(rem, roff, n)?;
        let mut flags = self.flags(OpFlags {
            inject: f.inject && spec.kind == AtomicKind::Plain,
            silent: false,
        });
        if spec.kind != AtomicKind::Plain {
            // a fetched value arrives with the completion anyway
            flags &= !consts::delivery_complete();
        }
        let Some(ctx) = self.op_context(context, true, false) else {
            return Ok(Posted::Busy);
        };
        let ep = self.ep;
        // SAFETY: buf, cmp and res point into registered buffers owned by
        // self, each with `n` bytes in bounds (checked by local()); the
        // remote range was checked against the peer's advertised region.
        let rc = self.calls.around(DataCall::Atomic, || unsafe {
            ffi::fdg_atomic(
                ep,
                spec.kind as i32,
                spec.datatype.0,
                spec.op.0,
                buf,
                desc,
                cmp,
                cmp_desc,
                res,
                res_desc,
                peer.0,
                raddr,
                rem.key,
                flags,
                ctx.0,
            )
        });
        self.posted_with("fi_atomicmsg", rc, ctx)
    }

    /// Reads up to `out.len()` completions, driving progress. An error
    /// completion is returned as `FabricError::Completion`.
    pub fn poll(&mut self, out: &mut [Completion]) -> Result<usize, FabricError> {
        let max = out.len().min(self.scratch.len());
        let (cq, out_ptr, calls) = (self.cq, self.scratch.as_mut_ptr(), &self.calls);
        // SAFETY: cq is live; scratch has at least `max` entries.
        let n = calls.around(DataCall::CqRead, || unsafe { ffi::fdg_cq_read(cq, out_ptr, max) });
        if n >= 0 {
            let n = n as usize;
            let recv = self.hot.recv;
            for (o, s) in out.iter_mut().zip(&self.scratch[..n]) {
                let context = match &mut self.contexts {
                    None => s.context,
                    Some(c) => c.complete(s.context).ok_or_else(|| {
                        FabricError::Bounds(format!(
                            "provider '{}' returned a completion for no operation in flight (context {:#x})",
                            self.provider, s.context
                        ))
                    })?,
                };
                *o = Completion {
                    context,
                    len: s.len,
                    is_recv: s.flags & recv != 0,
                };
            }
            return Ok(n);
        }
        let n = n as i32;
        if -n != consts::eavail() {
            return Err(FabricError::call("fi_cq_read", n));
        }
        let (mut err, mut perr, mut flags, mut context) = (0, 0, 0u64, 0u64);
        let mut text = [0 as c_char; 256];
        // SAFETY: cq is live; outputs point to locals; text has its length.
        let rc = unsafe {
            ffi::fdg_cq_readerr(
                self.cq,
                &mut err,
                &mut perr,
                &mut flags,
                &mut context,
                text.as_mut_ptr(),
                text.len(),
            )
        };
        check("fi_cq_readerr", rc)?;
        // the failed operation is over: its slot is free
        if let Some(c) = &mut self.contexts {
            c.complete(context);
        }
        // SAFETY: the shim NUL-terminates text (snprintf).
        let detail = unsafe { CStr::from_ptr(text.as_ptr()) }.to_string_lossy().into_owned();
        let op = if flags & consts::recv() != 0 {
            "receive"
        } else if flags & consts::read() != 0 {
            "RMA read"
        } else if flags & consts::write() != 0 {
            "RMA write"
        } else if flags & consts::send() != 0 {
            "send"
        } else {
            "operation"
        };
        let base = crate::strerror(err);
        let msg = if detail.is_empty() || detail == base {
            base
        } else {
            format!("{base}: {detail}")
        };
        Err(FabricError::Completion {
            op: op.into(),
            code: err,
            prov_errno: perr,
            msg,
        })
    }
}

/// What a provider reads from a peer's address. Fixed-size formats (sockaddr,
/// cxi) read as many bytes as our own address has. String addresses
/// (FI_ADDR_STR: shm) are read up to their NUL, and their length differs
/// between endpoints: shm's holds the process id, so a 4-digit and a 5-digit
/// pid give 18 and 19 bytes. Equal lengths would refuse a real peer there.
/// A peer's link-local IPv6 socket address, made reachable from here.
/// Its interface (scope id) is the peer's own interface number, which
/// means nothing on this host (connect fails with EINVAL); a link-local
/// peer is reachable only on the link this endpoint is bound to, so it
/// takes our own address's scope. None when either is not a link-local
/// sockaddr_in6, or ours has no scope: the peer's bytes are used as sent.
fn link_local_on_own_link(peer: &[u8], own: &[u8]) -> Option<Vec<u8>> {
    // struct sockaddr_in6: family (2, native order), port (2), flowinfo
    // (4), address (16), scope id (4)
    const ADDR: std::ops::Range<usize> = 8..24;
    const SCOPE: std::ops::Range<usize> = 24..28;
    let link_local_in6 = |a: &[u8]| {
        a.len() >= SCOPE.end
            && u16::from_ne_bytes([a[0], a[1]]) == libc::AF_INET6 as u16
            && <[u8; 16]>::try_from(&a[ADDR]).is_ok_and(|ip| std::net::Ipv6Addr::from(ip).is_unicast_link_local())
    };
    if !link_local_in6(peer) || !link_local_in6(own) || own[SCOPE].iter().all(|&b| b == 0) {
        return None;
    }
    let mut fixed = peer.to_vec();
    fixed[SCOPE].copy_from_slice(&own[SCOPE]);
    Some(fixed)
}

/// Slots to lend a queue of `size` entries when the provider requires
/// FI_CONTEXT: one per entry, up to 16,384 (psm3 gives u64::MAX, no limit
/// of its own; fabdiag never has more in flight: a list is at most 16,382
/// operations and its receives two more).
fn context_slots(size: u64) -> usize {
    size.min(1 << 14) as usize
}

fn check_peer_address(raw: &[u8], own_len: usize, string_address: bool, provider: &str) -> Result<(), FabricError> {
    if string_address {
        return match raw.iter().position(|&b| b == 0) {
            Some(0) => Err(FabricError::Bounds(format!(
                "peer fabric address for provider {provider} is empty"
            ))),
            Some(_) => Ok(()),
            None => Err(FabricError::Bounds(format!(
                "peer fabric address for provider {provider} is not a terminated string ({} bytes)",
                raw.len()
            ))),
        };
    }
    if raw.len() < own_len {
        return Err(FabricError::Bounds(format!(
            "peer fabric address is {} bytes, provider {provider} needs {own_len}",
            raw.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::link_local_on_own_link;

    /// A sockaddr_in6 as a provider's fi_getname gives it.
    fn in6(addr: [u16; 8], scope: u32) -> Vec<u8> {
        let mut a = Vec::new();
        a.extend_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        a.extend_from_slice(&4000u16.to_be_bytes());
        a.extend_from_slice(&[0; 4]);
        addr.iter().for_each(|s| a.extend_from_slice(&s.to_be_bytes()));
        a.extend_from_slice(&scope.to_ne_bytes());
        a
    }

    #[test]
    fn a_link_local_peer_takes_our_interface_and_nothing_else_changes() {
        let (peer, own) = (
            in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 2], 7),
            in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 1], 3),
        );
        assert_eq!(
            link_local_on_own_link(&peer, &own),
            Some(in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 2], 3))
        );
        // a routed peer, a peer seen through a routed address of ours, an
        // IPv4 peer, and ours without an interface: the peer's bytes stand
        let global = in6([0xfd00, 0, 0, 0, 0, 0, 0, 2], 0);
        assert_eq!(link_local_on_own_link(&global, &own), None);
        assert_eq!(link_local_on_own_link(&peer, &global), None);
        assert_eq!(
            link_local_on_own_link(&peer, &in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 1], 0)),
            None
        );
        let mut v4 = vec![0u8; 16];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        assert_eq!(link_local_on_own_link(&v4, &own), None);
        assert_eq!(link_local_on_own_link(&peer[..20], &own), None, "too short to be one");
    }
}
