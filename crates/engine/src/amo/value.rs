//! Values of any atomic type and what one libfabric atomic does to a
//! target (`apply`), as the simulator that predicts a target's final value
//! computes it. Pure arithmetic.

use super::catalog::AmoType;
use super::mapping::FiOp;
use std::fmt;

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

pub(super) fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

pub(super) fn sext(v: u128, bits: u32, signed: bool) -> i128 {
    if !signed || bits >= 128 {
        return v as i128;
    }
    let shift = 128 - bits;
    ((v << shift) as i128) >> shift
}

/// Compare a and b in the type's order (integers signed or not).
pub(super) fn cmp(ty: AmoType, a: Val, b: Val) -> Option<std::cmp::Ordering> {
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

pub(super) fn truthy(v: Val) -> bool {
    match v {
        Val::Int(x) => x != 0,
        Val::F32(x) => x != 0.0,
        Val::F64(x) => x != 0.0,
        Val::C32(a, b) => a != 0.0 || b != 0.0,
        Val::C64(a, b) => a != 0.0 || b != 0.0,
    }
}

pub(super) fn int(ty: AmoType, v: Val) -> u128 {
    let bits = ty.int_bits().map_or(128, |b| b.0);
    match v {
        Val::Int(x) => x & mask(bits),
        _ => 0,
    }
}

pub(super) fn from_bool(b: bool) -> Val {
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
