//! One reliable-datagram endpoint and everything it needs, as RAII handles.
//!
//! `Endpoint` owns the fabric, domain, CQ, AV, endpoint and the registered
//! host buffers. Operations name buffers by `RegionId` and are bounds-checked,
//! so no safe call can make the provider touch memory that is not a live,
//! registered buffer: the buffers are dropped only after every handle that
//! could still reach them is closed. Never prints. `open` opens one and
//! registers its buffers; `ops` posts data operations and reads
//! completions; `atomic` holds atomics by libfabric's own values;
//! `address` is this endpoint's address and its peers'.

mod address;
mod atomic;
mod open;
mod ops;
mod prepared;

pub use address::PeerId;
pub use atomic::{atomic_datatype, atomic_op, AtomicKind, AtomicOperands, AtomicSpec, AtomicValue};
pub use ops::{Completion, OpFlags, Posted, RemoteRegion};
pub use prepared::Prepared;

use crate::contexts::LentContexts;
use crate::held_calls::{CallCount, CallWatcher};
use crate::{consts, ffi, FabricError, Memory};
use std::os::raw::c_void;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

/// Index of a registered buffer of this endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionId(pub usize);

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
    /// Never removed before the endpoint is dropped (a `Prepared` points
    /// into them).
    regions: Vec<Region>,
    /// Names this endpoint to the operations prepared on it.
    serial: u64,
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
    /// `poll` gives up the CPU (sched_yield) when the queue is empty.
    yield_empty: bool,
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

    /// From now on, a `poll` that finds the queue empty lets any other
    /// thread ready to run on this CPU have it before returning (as
    /// fabtests' `-c yield`): where busy ranks outnumber cores, a spinning
    /// waiter would hold its CPU for a whole scheduler slice while the
    /// thread it waits on, or another rank's, cannot run.
    pub fn yield_when_empty(&mut self) {
        self.yield_empty = true;
    }

    /// Lets `w` see a data call of this endpoint that does not return.
    pub fn watched_by(&self, w: &CallWatcher) {
        w.add(&self.calls);
    }

    /// Says how many bytes the batch now starting may have in flight at
    /// once (a watcher weighs a held call by it: see crate::held_calls).
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

    pub fn rx_depth(&self) -> u64 {
        self.rx_size
    }

    /// True when completions mean the data reached the target.
    pub fn delivery_complete(&self) -> bool {
        self.delivery_complete
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
}
