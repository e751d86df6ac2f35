//! The one table that maps the originals' ops onto libfabric's atomics:
//! which `FI_*` op and which call (`fi_atomic`, `fi_fetch_atomic`,
//! `fi_compare_atomic`) run each. Names only; the FFI crate maps them to
//! libfabric's values.

use super::catalog::{AmoOp, CswapOp};
use serde::Serialize;

/// The libfabric operation a CXI op becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FiOp {
    Min,
    Max,
    Sum,
    Lor,
    Land,
    Bor,
    Band,
    Lxor,
    Bxor,
    AtomicWrite,
    Cswap,
    CswapNe,
    CswapLe,
    CswapLt,
    CswapGe,
    CswapGt,
    Mswap,
}

/// Which libfabric call carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FiCall {
    /// fi_atomic: no result.
    Atomic,
    /// fi_fetch_atomic: the old value comes back.
    Fetch,
    /// fi_compare_atomic: compare operand; always returns the old value.
    Compare,
}

impl FiOp {
    pub fn name(self) -> &'static str {
        [
            "FI_MIN",
            "FI_MAX",
            "FI_SUM",
            "FI_LOR",
            "FI_LAND",
            "FI_BOR",
            "FI_BAND",
            "FI_LXOR",
            "FI_BXOR",
            "FI_ATOMIC_WRITE",
            "FI_CSWAP",
            "FI_CSWAP_NE",
            "FI_CSWAP_LE",
            "FI_CSWAP_LT",
            "FI_CSWAP_GE",
            "FI_CSWAP_GT",
            "FI_MSWAP",
        ][self as usize]
    }
}

impl FiCall {
    pub fn name(self) -> &'static str {
        match self {
            FiCall::Atomic => "fi_atomic",
            FiCall::Fetch => "fi_fetch_atomic",
            FiCall::Compare => "fi_compare_atomic",
        }
    }
}

/// THE mapping of the originals' atomics onto libfabric (also in the README).
/// SWAP is an atomic write; the CSWAP conditions are libfabric's compare
/// ops, which always return the old value (a "non-fetching" CSWAP simply
/// ignores it); AXOR has no libfabric equivalent and runs as FI_MSWAP, a
/// masked swap (addr = (buf & mask) | (addr & ~mask)), as the CXI provider
/// itself maps FI_MSWAP onto AXOR.
pub fn libfabric_op(op: AmoOp, cswap: CswapOp, fetching: bool) -> (FiOp, FiCall) {
    let plain = if fetching { FiCall::Fetch } else { FiCall::Atomic };
    match op {
        AmoOp::Min => (FiOp::Min, plain),
        AmoOp::Max => (FiOp::Max, plain),
        AmoOp::Sum => (FiOp::Sum, plain),
        AmoOp::Lor => (FiOp::Lor, plain),
        AmoOp::Land => (FiOp::Land, plain),
        AmoOp::Bor => (FiOp::Bor, plain),
        AmoOp::Band => (FiOp::Band, plain),
        AmoOp::Lxor => (FiOp::Lxor, plain),
        AmoOp::Bxor => (FiOp::Bxor, plain),
        AmoOp::Swap => (FiOp::AtomicWrite, plain),
        AmoOp::Cswap => (
            match cswap {
                CswapOp::Eq => FiOp::Cswap,
                CswapOp::Ne => FiOp::CswapNe,
                CswapOp::Le => FiOp::CswapLe,
                CswapOp::Lt => FiOp::CswapLt,
                CswapOp::Ge => FiOp::CswapGe,
                CswapOp::Gt => FiOp::CswapGt,
            },
            FiCall::Compare,
        ),
        AmoOp::Axor => (FiOp::Mswap, FiCall::Compare),
    }
}
