//! Atomic memory operations, transport-neutral: the originals' op, CSWAP
//! and type names and validity rules (spec §3.4), the one table that maps
//! them onto libfabric atomics, the operand scheme that makes every
//! operation change the target where possible (§3.4.1, adapted to
//! libfabric's semantics), and a simulator that predicts the target's final
//! value after N iterations, so a run can verify what the fabric did.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AmoOp {
    Min,
    Max,
    Sum,
    Lor,
    Land,
    Bor,
    Band,
    Lxor,
    Bxor,
    Swap,
    Cswap,
    Axor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CswapOp {
    Eq,
    Ne,
    Le,
    Lt,
    Ge,
    Gt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AmoType {
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Float,
    Double,
    FloatComplex,
    DoubleComplex,
    Uint128,
}

pub const OPS: [AmoOp; 12] = [
    AmoOp::Min,
    AmoOp::Max,
    AmoOp::Sum,
    AmoOp::Lor,
    AmoOp::Land,
    AmoOp::Bor,
    AmoOp::Band,
    AmoOp::Lxor,
    AmoOp::Bxor,
    AmoOp::Swap,
    AmoOp::Cswap,
    AmoOp::Axor,
];
pub const CSWAP_OPS: [CswapOp; 6] = [
    CswapOp::Eq,
    CswapOp::Ne,
    CswapOp::Le,
    CswapOp::Lt,
    CswapOp::Ge,
    CswapOp::Gt,
];
pub const TYPES: [AmoType; 13] = [
    AmoType::Int8,
    AmoType::Uint8,
    AmoType::Int16,
    AmoType::Uint16,
    AmoType::Int32,
    AmoType::Uint32,
    AmoType::Int64,
    AmoType::Uint64,
    AmoType::Float,
    AmoType::Double,
    AmoType::FloatComplex,
    AmoType::DoubleComplex,
    AmoType::Uint128,
];

impl AmoOp {
    pub fn name(self) -> &'static str {
        [
            "MIN", "MAX", "SUM", "LOR", "LAND", "BOR", "BAND", "LXOR", "BXOR", "SWAP", "CSWAP", "AXOR",
        ][self as usize]
    }

    /// Case-insensitive, as the originals.
    pub fn parse(s: &str) -> Option<Self> {
        OPS.into_iter().find(|o| o.name().eq_ignore_ascii_case(s))
    }
}

impl CswapOp {
    pub fn name(self) -> &'static str {
        ["EQ", "NE", "LE", "LT", "GE", "GT"][self as usize]
    }

    pub fn parse(s: &str) -> Option<Self> {
        CSWAP_OPS.into_iter().find(|o| o.name().eq_ignore_ascii_case(s))
    }
}

impl AmoType {
    pub fn name(self) -> &'static str {
        [
            "INT8",
            "UINT8",
            "INT16",
            "UINT16",
            "INT32",
            "UINT32",
            "INT64",
            "UINT64",
            "FLOAT",
            "DOUBLE",
            "FLOAT_COMPLEX",
            "DOUBLE_COMPLEX",
            "UINT128",
        ][self as usize]
    }

    pub fn parse(s: &str) -> Option<Self> {
        TYPES.into_iter().find(|t| t.name().eq_ignore_ascii_case(s))
    }

    /// Bytes per element (spec §3.4).
    /// libfabric's name for this type (`enum fi_datatype`).
    pub fn fi_name(self) -> String {
        format!("FI_{}", self.name())
    }

    pub fn size(self) -> u64 {
        match self {
            AmoType::Int8 | AmoType::Uint8 => 1,
            AmoType::Int16 | AmoType::Uint16 => 2,
            AmoType::Int32 | AmoType::Uint32 | AmoType::Float => 4,
            AmoType::Int64 | AmoType::Uint64 | AmoType::Double | AmoType::FloatComplex => 8,
            AmoType::DoubleComplex | AmoType::Uint128 => 16,
        }
    }

    fn int_bits(self) -> Option<(u32, bool)> {
        match self {
            AmoType::Int8 => Some((8, true)),
            AmoType::Uint8 => Some((8, false)),
            AmoType::Int16 => Some((16, true)),
            AmoType::Uint16 => Some((16, false)),
            AmoType::Int32 => Some((32, true)),
            AmoType::Uint32 => Some((32, false)),
            AmoType::Int64 => Some((64, true)),
            AmoType::Uint64 => Some((64, false)),
            AmoType::Uint128 => Some((128, false)),
            _ => None,
        }
    }
}

/// The originals' op/type rules and message (spec §3.4).
pub fn validate(op: AmoOp, cswap: CswapOp, ty: AmoType) -> Result<(), String> {
    use AmoOp::*;
    let ok = match ty {
        AmoType::Float | AmoType::Double => !matches!(op, Lor | Land | Bor | Band | Lxor | Bxor | Axor),
        AmoType::FloatComplex | AmoType::DoubleComplex => {
            matches!(op, Sum | Swap) || (op == Cswap && matches!(cswap, CswapOp::Eq | CswapOp::Ne))
        }
        AmoType::Uint128 => op == Cswap && cswap == CswapOp::Eq,
        _ => true,
    };
    if ok {
        Ok(())
    } else if op == Cswap {
        Err(format!(
            "Invalid Op and Type combination: {} {} {}",
            op.name(),
            cswap.name(),
            ty.name()
        ))
    } else {
        Err(format!("Invalid Op and Type combination: {} {}", op.name(), ty.name()))
    }
}

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

/// One element of any type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// Integers, as bits in the type's width.
    Int(u128),
    F32(f32),
    F64(f64),
    C32(f32, f32),
    C64(f64, f64),
}

impl Val {
    pub fn encode(self, ty: AmoType, out: &mut [u8]) {
        let n = ty.size() as usize;
        match self {
            Val::Int(v) => out[..n].copy_from_slice(&v.to_le_bytes()[..n]),
            Val::F32(f) => out[..4].copy_from_slice(&f.to_le_bytes()),
            Val::F64(f) => out[..8].copy_from_slice(&f.to_le_bytes()),
            Val::C32(a, b) => {
                out[..4].copy_from_slice(&a.to_le_bytes());
                out[4..8].copy_from_slice(&b.to_le_bytes());
            }
            Val::C64(a, b) => {
                out[..8].copy_from_slice(&a.to_le_bytes());
                out[8..16].copy_from_slice(&b.to_le_bytes());
            }
        }
    }

    pub fn decode(ty: AmoType, b: &[u8]) -> Val {
        let f32_at = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let f64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            f64::from_le_bytes(a)
        };
        match ty {
            AmoType::Float => Val::F32(f32_at(0)),
            AmoType::Double => Val::F64(f64_at(0)),
            AmoType::FloatComplex => Val::C32(f32_at(0), f32_at(4)),
            AmoType::DoubleComplex => Val::C64(f64_at(0), f64_at(8)),
            _ => {
                let n = ty.size() as usize;
                let mut a = [0u8; 16];
                a[..n].copy_from_slice(&b[..n]);
                Val::Int(u128::from_le_bytes(a))
            }
        }
    }

    /// Bitwise identity (so NaN == NaN and -0.0 != 0.0 here).
    pub fn same(self, other: Val, ty: AmoType) -> bool {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        self.encode(ty, &mut a);
        other.encode(ty, &mut b);
        a == b
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v:#x}"),
            Val::F32(x) => write!(f, "{x:e}"),
            Val::F64(x) => write!(f, "{x:e}"),
            Val::C32(a, b) => write!(f, "{a:e}{b:+e}i"),
            Val::C64(a, b) => write!(f, "{a:e}{b:+e}i"),
        }
    }
}

fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn sext(v: u128, bits: u32, signed: bool) -> i128 {
    if !signed || bits >= 128 {
        return v as i128;
    }
    let shift = 128 - bits;
    ((v << shift) as i128) >> shift
}

/// Compare a and b in the type's order (integers signed or not).
fn cmp(ty: AmoType, a: Val, b: Val) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => {
            let (bits, signed) = ty.int_bits()?;
            Some(if signed {
                sext(x, bits, true).cmp(&sext(y, bits, true))
            } else {
                x.cmp(&y)
            })
        }
        (Val::F32(x), Val::F32(y)) => x.partial_cmp(&y),
        (Val::F64(x), Val::F64(y)) => x.partial_cmp(&y),
        _ => None,
    }
}

fn truthy(v: Val) -> bool {
    match v {
        Val::Int(x) => x != 0,
        Val::F32(x) => x != 0.0,
        Val::F64(x) => x != 0.0,
        Val::C32(a, b) => a != 0.0 || b != 0.0,
        Val::C64(a, b) => a != 0.0 || b != 0.0,
    }
}

fn int(ty: AmoType, v: Val) -> u128 {
    let bits = ty.int_bits().map_or(128, |b| b.0);
    match v {
        Val::Int(x) => x & mask(bits),
        _ => 0,
    }
}

fn from_bool(b: bool) -> Val {
    Val::Int(u128::from(b))
}

/// libfabric's semantics of `op` on one element (fi_atomic(3)):
/// `buf` is the operand, `cmp` the compare operand (compare ops only).
pub fn apply(ty: AmoType, op: FiOp, addr: Val, buf: Val, cmp_v: Val) -> Val {
    use std::cmp::Ordering::*;
    let m = mask(ty.int_bits().map_or(128, |b| b.0));
    match op {
        FiOp::Min => {
            if cmp(ty, buf, addr) == Some(Less) {
                buf
            } else {
                addr
            }
        }
        FiOp::Max => {
            if cmp(ty, buf, addr) == Some(Greater) {
                buf
            } else {
                addr
            }
        }
        FiOp::Sum => match (addr, buf) {
            (Val::Int(a), Val::Int(b)) => Val::Int(a.wrapping_add(b) & m),
            (Val::F32(a), Val::F32(b)) => Val::F32(a + b),
            (Val::F64(a), Val::F64(b)) => Val::F64(a + b),
            (Val::C32(a, b), Val::C32(c, d)) => Val::C32(a + c, b + d),
            (Val::C64(a, b), Val::C64(c, d)) => Val::C64(a + c, b + d),
            _ => addr,
        },
        FiOp::Lor => from_bool(truthy(addr) || truthy(buf)),
        FiOp::Land => from_bool(truthy(addr) && truthy(buf)),
        FiOp::Lxor => from_bool(truthy(addr) != truthy(buf)),
        FiOp::Bor => Val::Int(int(ty, addr) | int(ty, buf)),
        FiOp::Band => Val::Int(int(ty, addr) & int(ty, buf)),
        FiOp::Bxor => Val::Int(int(ty, addr) ^ int(ty, buf)),
        FiOp::AtomicWrite => buf,
        FiOp::Cswap | FiOp::CswapNe => {
            let eq = cmp_v.same(addr, ty) || cmp(ty, cmp_v, addr) == Some(Equal);
            if eq == (op == FiOp::Cswap) {
                buf
            } else {
                addr
            }
        }
        FiOp::CswapLe | FiOp::CswapLt | FiOp::CswapGe | FiOp::CswapGt => {
            let o = cmp(ty, cmp_v, addr);
            let hit = match op {
                FiOp::CswapLe => matches!(o, Some(Less | Equal)),
                FiOp::CswapLt => o == Some(Less),
                FiOp::CswapGe => matches!(o, Some(Greater | Equal)),
                _ => o == Some(Greater),
            };
            if hit {
                buf
            } else {
                addr
            }
        }
        FiOp::Mswap => {
            let k = int(ty, cmp_v);
            Val::Int((int(ty, buf) & k) | (int(ty, addr) & !k & m))
        }
    }
}

fn small(ty: AmoType, n: i8) -> Val {
    match ty {
        AmoType::Float => Val::F32(n as f32),
        AmoType::Double => Val::F64(n as f64),
        AmoType::FloatComplex => Val::C32(n as f32, n as f32),
        AmoType::DoubleComplex => Val::C64(n as f64, n as f64),
        _ => Val::Int((n as i128 as u128) & mask(ty.int_bits().map_or(128, |b| b.0))),
    }
}

fn extreme(ty: AmoType, max: bool) -> Val {
    match ty {
        AmoType::Float => Val::F32(if max { f32::MAX } else { -f32::MAX }),
        AmoType::Double => Val::F64(if max { f64::MAX } else { -f64::MAX }),
        _ => {
            let (bits, signed) = ty.int_bits().unwrap_or((64, false));
            let v: u128 = match (max, signed) {
                (true, true) => mask(bits - 1),
                (false, true) => 1u128 << (bits - 1),
                (true, false) => mask(bits),
                (false, false) => 0,
            };
            Val::Int(v)
        }
    }
}

/// One step toward `down` (lower) or up, in the type's own precision. (The
/// original stepped floats in double precision and rounded back to
/// FLT_MAX, so FLOAT MIN/MAX never changed the target, spec §3.4.1.)
fn step(ty: AmoType, v: Val, down: bool) -> Val {
    match v {
        Val::F32(x) => Val::F32(next_f32(x, down)),
        Val::F64(x) => Val::F64(next_f64(x, down)),
        Val::Int(x) => {
            let m = mask(ty.int_bits().map_or(128, |b| b.0));
            Val::Int(if down {
                x.wrapping_sub(1) & m
            } else {
                x.wrapping_add(1) & m
            })
        }
        other => other,
    }
}

fn next_f32(x: f32, down: bool) -> f32 {
    if x.is_nan() || x.is_infinite() {
        return x;
    }
    let b = x.to_bits();
    let toward_zero = (x > 0.0) == down;
    if x == 0.0 {
        return if down { -f32::from_bits(1) } else { f32::from_bits(1) };
    }
    f32::from_bits(if toward_zero { b - 1 } else { b + 1 })
}

fn next_f64(x: f64, down: bool) -> f64 {
    if x.is_nan() || x.is_infinite() {
        return x;
    }
    let b = x.to_bits();
    let toward_zero = (x > 0.0) == down;
    if x == 0.0 {
        return if down { -f64::from_bits(1) } else { f64::from_bits(1) };
    }
    f64::from_bits(if toward_zero { b - 1 } else { b + 1 })
}

/// The operands of one iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operands {
    pub op1: Val,
    /// Compare operand (CSWAP) or mask (AXOR); unused otherwise.
    pub op2: Val,
}

/// The whole plan for a run: initial target, operands and their updates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scheme {
    pub ty: AmoType,
    pub op: AmoOp,
    pub cswap: CswapOp,
    pub fi_op: FiOp,
    pub initial_target: Val,
    pub first: Operands,
}

impl Scheme {
    pub fn new(op: AmoOp, cswap: CswapOp, ty: AmoType) -> Scheme {
        let (fi_op, _) = libfabric_op(op, cswap, false);
        let zero = small(ty, 0);
        let (target, op1, op2) = match op {
            AmoOp::Min => (extreme(ty, true), step(ty, extreme(ty, true), true), zero),
            AmoOp::Max => (extreme(ty, false), step(ty, extreme(ty, false), false), zero),
            AmoOp::Sum | AmoOp::Lor | AmoOp::Lxor | AmoOp::Bxor => (zero, small(ty, 1), zero),
            AmoOp::Land => (small(ty, 1), zero, zero),
            AmoOp::Bor => (zero, small(ty, 1), zero),
            AmoOp::Band => {
                let all = Val::Int(mask(ty.int_bits().map_or(64, |b| b.0)));
                (all, Val::Int(int(ty, all) & !1), zero)
            }
            AmoOp::Swap => (zero, small(ty, 1), zero),
            AmoOp::Cswap => match cswap {
                CswapOp::Eq | CswapOp::Le | CswapOp::Ge => (small(ty, 2), small(ty, 1), small(ty, 2)),
                CswapOp::Lt => (small(ty, 3), small(ty, 1), zero),
                CswapOp::Ne | CswapOp::Gt => (zero, small(ty, 1), small(ty, 3)),
            },
            // masked swap under mask 3, op1 alternating 1 <-> 2
            AmoOp::Axor => (zero, small(ty, 1), small(ty, 3)),
        };
        Scheme {
            ty,
            op,
            cswap,
            fi_op,
            initial_target: target,
            first: Operands { op1, op2 },
        }
    }

    /// The operands after one more iteration.
    pub fn next(&self, o: Operands) -> Operands {
        let ty = self.ty;
        let is_int = ty.int_bits().is_some() && ty != AmoType::Uint128;
        let alt = |v: Val| {
            if v.same(small(ty, 1), ty) {
                small(ty, 2)
            } else {
                small(ty, 1)
            }
        };
        match self.op {
            AmoOp::Min => Operands {
                op1: step(ty, o.op1, true),
                ..o
            },
            AmoOp::Max => Operands {
                op1: step(ty, o.op1, false),
                ..o
            },
            AmoOp::Bor | AmoOp::Band => {
                let m = mask(ty.int_bits().map_or(64, |b| b.0));
                Operands {
                    op1: Val::Int((int(ty, o.op1) << 1) & m),
                    ..o
                }
            }
            AmoOp::Swap | AmoOp::Axor => Operands { op1: alt(o.op1), ..o },
            AmoOp::Cswap => {
                let op2 = if is_int && matches!(self.cswap, CswapOp::Eq | CswapOp::Le | CswapOp::Ge) {
                    alt(o.op2)
                } else {
                    o.op2
                };
                Operands { op1: alt(o.op1), op2 }
            }
            _ => o,
        }
    }

    /// The target's value after `n` iterations hit it.
    pub fn expected(&self, n: u64) -> Val {
        let mut t = self.initial_target;
        let mut o = self.first;
        for _ in 0..n {
            t = apply(self.ty, self.fi_op, t, o.op1, o.op2);
            o = self.next(o);
        }
        t
    }
}

/// The verdict on one target buffer after a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Verification {
    /// Which side's memory was checked: "client" or "server".
    pub target: String,
    pub iterations: u64,
    pub slots: u64,
    pub ok: bool,
    pub expected: String,
    /// The first wrong value found, or the expected one when all agree.
    pub actual: String,
    pub wrong_slots: u64,
    /// How long the target polled for late operations before judging.
    pub settle_us: u64,
}

/// Compares every slot (`stride` bytes apart) against the prediction.
pub fn verify(s: &Scheme, target: &str, memory: &[u8], slots: u64, stride: u64, iterations: u64) -> Verification {
    verify_value(s.ty, s.expected(iterations), target, memory, slots, stride, iterations)
}

/// As `verify`, with the expected value already computed (the simulation
/// is O(iterations); a caller polling memory computes it once).
pub fn verify_value(
    ty: AmoType,
    want: Val,
    target: &str,
    memory: &[u8],
    slots: u64,
    stride: u64,
    iterations: u64,
) -> Verification {
    let mut wrong = 0;
    let mut first_bad = None;
    for i in 0..slots {
        let off = (i * stride) as usize;
        let Some(b) = memory.get(off..off + ty.size() as usize) else {
            wrong += 1;
            continue;
        };
        let got = Val::decode(ty, b);
        if !got.same(want, ty) {
            wrong += 1;
            first_bad.get_or_insert(got);
        }
    }
    Verification {
        target: target.into(),
        iterations,
        slots,
        ok: wrong == 0,
        expected: want.to_string(),
        actual: first_bad.unwrap_or(want).to_string(),
        wrong_slots: wrong,
        settle_us: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Scheme {
        /// How many of the first `n` iterations change the target.
        pub fn changes(&self, n: u64) -> u64 {
            let mut t = self.initial_target;
            let mut o = self.first;
            let mut c = 0;
            for _ in 0..n {
                let t2 = apply(self.ty, self.fi_op, t, o.op1, o.op2);
                if !t2.same(t, self.ty) {
                    c += 1;
                }
                t = t2;
                o = self.next(o);
            }
            c
        }
    }

    #[test]
    fn names_and_rules() {
        assert_eq!(AmoOp::parse("cswap"), Some(AmoOp::Cswap));
        assert_eq!(AmoType::parse("double_complex"), Some(AmoType::DoubleComplex));
        assert_eq!(CswapOp::parse("Gt"), Some(CswapOp::Gt));
        assert_eq!(AmoOp::parse("PROD"), None);
        assert!(
            validate(AmoOp::Bor, CswapOp::Eq, AmoType::Float).unwrap_err()
                == "Invalid Op and Type combination: BOR FLOAT"
        );
        assert_eq!(
            validate(AmoOp::Cswap, CswapOp::Lt, AmoType::FloatComplex).unwrap_err(),
            "Invalid Op and Type combination: CSWAP LT FLOAT_COMPLEX"
        );
        assert!(validate(AmoOp::Cswap, CswapOp::Eq, AmoType::Uint128).is_ok());
        assert!(validate(AmoOp::Swap, CswapOp::Eq, AmoType::Uint128).is_err());
        assert!(validate(AmoOp::Min, CswapOp::Eq, AmoType::DoubleComplex).is_err());
        for t in TYPES.into_iter().take(8) {
            for o in OPS {
                assert!(validate(o, CswapOp::Gt, t).is_ok(), "integers allow every op");
            }
        }
        assert_eq!(
            TYPES.iter().map(|t| t.size()).collect::<Vec<_>>(),
            vec![1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16, 16]
        );
    }

    #[test]
    fn libfabric_semantics() {
        let t = AmoType::Int8;
        let v = |n: i8| small(t, n);
        assert_eq!(apply(t, FiOp::Min, v(5), v(-3), v(0)), v(-3), "signed compare");
        assert_eq!(
            apply(AmoType::Uint8, FiOp::Min, Val::Int(5), Val::Int(0xff), Val::Int(0)),
            Val::Int(5)
        );
        assert_eq!(apply(t, FiOp::Sum, v(127), v(1), v(0)), v(-128), "wraps in the type");
        assert_eq!(apply(t, FiOp::Lxor, v(1), v(1), v(0)), v(0));
        assert_eq!(apply(t, FiOp::CswapLt, v(3), v(1), v(0)), v(1), "0 < 3: swap");
        assert_eq!(apply(t, FiOp::CswapGt, v(3), v(1), v(0)), v(3), "0 > 3 fails");
        assert_eq!(
            apply(t, FiOp::Mswap, Val::Int(0b1100), Val::Int(0b0101), Val::Int(0b0011)),
            Val::Int(0b1101)
        );
    }

    #[test]
    fn every_valid_combination_changes_the_target() {
        for ty in TYPES {
            for op in OPS {
                for cs in CSWAP_OPS {
                    if validate(op, cs, ty).is_err() || (op != AmoOp::Cswap && cs != CswapOp::Eq) {
                        continue;
                    }
                    let s = Scheme::new(op, cs, ty);
                    let changed = s.changes(8);
                    // LOR and LAND saturate after one step; so do compares
                    // on types whose compare operand cannot alternate
                    assert!(
                        changed >= 1,
                        "{} {} {}: never changes the target",
                        op.name(),
                        cs.name(),
                        ty.name()
                    );
                    let always = matches!(
                        op,
                        AmoOp::Min | AmoOp::Max | AmoOp::Sum | AmoOp::Lxor | AmoOp::Bxor | AmoOp::Swap | AmoOp::Axor
                    ) || (op == AmoOp::Cswap && ty.int_bits().is_some() && ty != AmoType::Uint128);
                    if always {
                        assert_eq!(changed, 8, "{} {} {}", op.name(), cs.name(), ty.name());
                    }
                }
            }
        }
    }

    #[test]
    fn predictions_and_a_check_that_can_fail() {
        let s = Scheme::new(AmoOp::Sum, CswapOp::Eq, AmoType::Uint64);
        assert_eq!(s.expected(10000), Val::Int(10000), "a SUM of ones counts exactly");
        let s = Scheme::new(AmoOp::Sum, CswapOp::Eq, AmoType::DoubleComplex);
        assert_eq!(s.expected(3), Val::C64(3.0, 3.0));
        let s = Scheme::new(AmoOp::Min, CswapOp::Eq, AmoType::Float);
        assert_eq!(s.expected(2), Val::F32(next_f32(next_f32(f32::MAX, true), true)));
        // memory holding 5 slots after 7 iterations
        let s = Scheme::new(AmoOp::Sum, CswapOp::Eq, AmoType::Int32);
        let mut mem = vec![0u8; 5 * 64];
        for i in 0..5 {
            s.expected(7).encode(AmoType::Int32, &mut mem[i * 64..]);
        }
        assert!(verify(&s, "server", &mem, 5, 64, 7).ok);
        // the wrong expectation (8 iterations) must fail, naming both values
        let v = verify(&s, "server", &mem, 5, 64, 8);
        assert!(!v.ok);
        assert_eq!(
            (v.expected.as_str(), v.actual.as_str(), v.wrong_slots),
            ("0x8", "0x7", 5)
        );
        let s = Scheme::new(AmoOp::Cswap, CswapOp::Eq, AmoType::Uint128);
        assert_eq!(s.expected(1), Val::Int(1));
        let mut b = [0u8; 16];
        Val::Int(u128::MAX - 1).encode(AmoType::Uint128, &mut b);
        assert_eq!(Val::decode(AmoType::Uint128, &b), Val::Int(u128::MAX - 1));
    }
}
