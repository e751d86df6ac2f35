//! Sends and receives checked once and posted many times. A latency loop
//! posts the same range with the same flags every round trip, so the range
//! check, the descriptor lookup and the flags are worked out by `prepare`,
//! and posting is the provider call and little else (callgrind showed the
//! checks at about a third of fabdiag's own instructions per round trip).
//! A `Prepared` never outlives what it points into: it names its endpoint
//! by serial, any other endpoint refuses it, and an endpoint's regions are
//! never removed before the endpoint is dropped.

use super::address::PeerId;
use super::ops::{OpFlags, Posted};
use super::{Endpoint, RegionId};
use crate::held_calls::DataCall;
use crate::{ffi, FabricError};
use std::os::raw::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// Serials of opened endpoints; 0 is never given.
static SERIALS: AtomicU64 = AtomicU64::new(1);

/// A serial no other endpoint of this process has.
pub(super) fn next_serial() -> u64 {
    SERIALS.fetch_add(1, Ordering::Relaxed)
}

/// One range of a registered region with its flags, checked once by
/// `Endpoint::prepare`; posted by `send_prepared` or `recv_prepared` of
/// the same endpoint.
#[derive(Clone, Copy, Debug)]
pub struct Prepared {
    serial: u64,
    buf: *mut c_void,
    desc: *mut c_void,
    len: usize,
    flags: u64,
    completes: bool,
}

impl Endpoint {
    /// Checks `len` bytes of region `id` at `off` once, for operations
    /// posted with `f`.
    pub fn prepare(&self, id: RegionId, off: u64, len: u64, f: OpFlags) -> Result<Prepared, FabricError> {
        let (buf, desc) = self.local(id, off, len)?;
        Ok(Prepared {
            serial: self.serial,
            buf,
            desc,
            len: len as usize,
            flags: self.flags(f),
            completes: self.completes(f),
        })
    }

    fn check_prepared(&self, p: &Prepared) -> Result<(), FabricError> {
        if p.serial == self.serial {
            Ok(())
        } else {
            Err(foreign())
        }
    }

    /// Sends the prepared range (injected, with no completion entry, where
    /// it was prepared so).
    pub fn send_prepared(&mut self, p: &Prepared, peer: PeerId, context: u64) -> Result<Posted, FabricError> {
        self.check_prepared(p)?;
        self.post_send(p, peer, context)
    }

    /// `send_prepared` of a `Prepared` this endpoint has just made (no
    /// serial to check: `send` prepares and posts in one call).
    pub(super) fn post_send(&mut self, p: &Prepared, peer: PeerId, context: u64) -> Result<Posted, FabricError> {
        let ep = self.ep;
        if !p.completes {
            // SAFETY: p.buf..+len lies in a buffer owned by this endpoint
            // (checked by prepare; regions live until drop); an injected
            // payload is copied before fi_inject returns.
            let rc = self.calls.around(DataCall::Inject, || unsafe {
                ffi::fdg_inject(ep, p.buf, p.len, peer.0)
            });
            return self.posted("fi_inject", rc);
        }
        let Some(ctx) = self.op_context(context, true, false) else {
            return Ok(Posted::Busy);
        };
        // SAFETY: p.buf..+len is in a registered buffer owned by this
        // endpoint (prepare checked it; regions live until drop); a lent
        // context is ours until its completion is read.
        let rc = self.calls.around(DataCall::Send, || unsafe {
            ffi::fdg_send(ep, p.buf, p.len, p.desc, peer.0, p.flags, ctx.0)
        });
        self.posted_with("fi_sendmsg", rc, ctx)
    }

    /// Posts a receive into the prepared range.
    pub fn recv_prepared(&mut self, p: &Prepared, context: u64) -> Result<Posted, FabricError> {
        self.check_prepared(p)?;
        self.post_recv(p, context)
    }

    /// `recv_prepared` of a `Prepared` this endpoint has just made.
    pub(super) fn post_recv(&mut self, p: &Prepared, context: u64) -> Result<Posted, FabricError> {
        let Some(ctx) = self.op_context(context, true, true) else {
            return Ok(Posted::Busy);
        };
        let ep = self.ep;
        // SAFETY: p.buf..+len is in a registered buffer owned by this
        // endpoint that outlives it, so a late delivery cannot reach freed
        // memory; a lent context likewise (it is dropped with self).
        let rc = self.calls.around(DataCall::Recv, || unsafe {
            ffi::fdg_recv(ep, p.buf, p.len, p.desc, ctx.0)
        });
        self.posted_with("fi_recv", rc, ctx)
    }
}

#[cold]
fn foreign() -> FabricError {
    FabricError::Bounds("an operation prepared on another endpoint".into())
}
