//! The originals' atomic ops, CSWAP conditions and types, by their names,
//! and which combinations they accept (originals §3.4). Names and rules only.

use serde::Serialize;

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

    /// Bytes per element (originals §3.4).
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

    pub(super) fn int_bits(self) -> Option<(u32, bool)> {
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

/// The originals' op/type rules and message (originals §3.4).
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
