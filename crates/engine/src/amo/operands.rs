//! The operand scheme that makes every operation change the target where
//! possible (§3.4.1, adapted to libfabric's semantics), the prediction of
//! the target after N iterations, and the check of what the fabric left.

use super::catalog::{AmoOp, AmoType, CswapOp};
use super::mapping::{libfabric_op, FiOp};
use super::value::{apply, int, mask, Val};
use serde::Serialize;

pub(super) fn small(ty: AmoType, n: i8) -> Val {
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
/// FLT_MAX, so FLOAT MIN/MAX never changed the target, originals §3.4.1.)
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

pub(super) fn next_f32(x: f32, down: bool) -> f32 {
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

pub(super) fn next_f64(x: f64, down: bool) -> f64 {
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
