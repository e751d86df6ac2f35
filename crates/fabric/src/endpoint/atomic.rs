//! Atomics by libfabric's own datatype and op values, looked up by name
//! in the headers fabdiag was built against, and posted on an open
//! endpoint (fi_atomic, fi_fetch_atomic, fi_compare_atomic).

use super::address::PeerId;
use super::ops::{OpFlags, Posted, RemoteRegion};
use super::{Endpoint, RegionId};
use crate::held_calls::DataCall;
use crate::{consts, ffi, FabricError};
use std::ptr;

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

impl Endpoint {
    /// A provider defect that would crash the process on this atomic,
    /// although the provider says it supports it (`crate::defects`).
    pub fn known_atomic_defect(&self, spec: &AtomicSpec) -> Option<&'static str> {
        crate::defects::atomic(&self.provider, spec.kind != AtomicKind::Plain)
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
}
