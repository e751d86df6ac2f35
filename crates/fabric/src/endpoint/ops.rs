//! Data operations on an open endpoint: writes, reads, sends and
//! receives posted on registered regions by `RegionId`, every range
//! bounds-checked, contexts lent where the provider requires them, and
//! completions read back (an error completion as `FabricError`).

use super::address::PeerId;
use super::{check, Endpoint, RegionId};
use crate::held_calls::DataCall;
use crate::{consts, ffi, FabricError, Memory};
use std::ffi::CStr;
use std::os::raw::{c_char, c_long, c_void};

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

impl Endpoint {
    /// A provider defect that crashes a process holding both ends of a
    /// test once both send more than the bytes returned, with the reason
    /// (`crate::defects`).
    pub fn known_same_process_defect(&self) -> Option<(u64, &'static str)> {
        crate::defects::same_process(&self.provider)
    }

    /// What the peer needs to address our buffer `id`.
    pub fn remote_region(&self, id: RegionId) -> Option<RemoteRegion> {
        self.regions.get(id.0).map(|r| RemoteRegion {
            addr: if self.virt_addr { r.buf.address() } else { 0 },
            key: r.key,
            len: r.buf.len(),
        })
    }

    pub(super) fn local(&self, id: RegionId, off: u64, len: u64) -> Result<(*mut c_void, *mut c_void), FabricError> {
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

    pub(super) fn remote(rem: &RemoteRegion, off: u64, len: u64) -> Result<u64, FabricError> {
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

    pub(super) fn flags(&self, f: OpFlags) -> u64 {
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
    pub(super) fn op_context(&mut self, tag: u64, completes: bool, recv: bool) -> Option<(*mut c_void, bool)> {
        match &mut self.contexts {
            Some(c) if completes => c.take(tag, recv).map(|p| (p, true)),
            _ => Some((tag as *mut c_void, false)),
        }
    }

    /// `posted` for an operation posted with `op_context`'s answer: a slot
    /// lent to an operation the provider did not take is free again.
    pub(super) fn posted_with(
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

    pub(super) fn posted(&self, call: &'static str, rc: i32) -> Result<Posted, FabricError> {
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
    pub fn send(
        &mut self,
        id: RegionId,
        off: u64,
        len: u64,
        peer: PeerId,
        f: OpFlags,
        context: u64,
    ) -> Result<Posted, FabricError> {
        let p = self.prepare(id, off, len, f)?;
        self.post_send(&p, peer, context)
    }

    /// Posts a receive of up to `len` bytes into local region `id` at `off`.
    pub fn recv(&mut self, id: RegionId, off: u64, len: u64, context: u64) -> Result<Posted, FabricError> {
        let p = self.prepare(id, off, len, OpFlags::default())?;
        self.post_recv(&p, context)
    }

    /// Reads up to `out.len()` completions, driving progress. An error
    /// completion is returned as `FabricError::Completion`.
    ///
    /// Inlined into the caller's wait, with an empty queue (a busy wait's
    /// usual answer) returning before anything else: providers that look
    /// at their sockets only every so many polls (psm3's sockets HAL:
    /// every 10 to 20) see a message that many of our polls late, so what
    /// an empty poll costs here is paid again in every latency.
    #[inline]
    pub fn poll(&mut self, out: &mut [Completion]) -> Result<usize, FabricError> {
        let max = out.len().min(self.scratch.len());
        let (cq, out_ptr, calls) = (self.cq, self.scratch.as_mut_ptr(), &self.calls);
        // SAFETY: cq is live; scratch has at least `max` entries.
        let n = calls.around(DataCall::CqRead, || unsafe { ffi::fdg_cq_read(cq, out_ptr, max) });
        if n == 0 {
            if self.yield_empty {
                std::thread::yield_now();
            }
            return Ok(0);
        }
        self.took(n, out)
    }

    /// `poll`'s completions (`n` of them, or the error `n` says), out of
    /// line: the empty poll's path stays short.
    #[inline(never)]
    fn took(&mut self, n: c_long, out: &mut [Completion]) -> Result<usize, FabricError> {
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
