//! The run spec: one typed struct for every tool, what a client sends and a
//! server adopts (the client decides every run parameter, spec §2.6.4). On
//! the wire it is the `params` of the Config message, with the field names
//! fabdiag has always used; a family's unused fields take defaults, so a
//! bandwidth client's spec (which has no atomic fields) still decodes.
//! `validate` checks a spec against the library's own limits, on both
//! sides: a peer is not trusted to be sane. Nothing here does I/O.

use fabdiag_engine::amo::{validate as amo_rules, AmoOp, AmoType, CswapOp};
use fabdiag_engine::{LatConfig, Mode};
use fabdiag_fabric::HugePageSize;
use fabdiag_report::{Family, Tool};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// The largest transfer size: the originals' 32-bit length.
pub const MAX_SIZE: u64 = 4294967295;
/// The largest list size: (65532 / 4) − 1, the originals' limit.
pub const MAX_LIST: u64 = 65532 / 4 - 1;
/// Slot size of the atomic tools (spec §3.4): operand at +0, compare
/// operand at +16.
pub const AMO_STRIDE: u64 = 64;

/// How latency is timed (`-c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// CLOCK_MONOTONIC_RAW.
    #[default]
    ClockGettime,
    /// The CPU cycle counter, calibrated by the client.
    Cycles,
}

impl ClockKind {
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::ClockGettime => "clock_gettime",
            ClockKind::Cycles => "cycles",
        }
    }
}

/// Every run parameter of every tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestSpec {
    #[serde(with = "wire::tool")]
    pub tool: Tool,
    /// The provider the client opened; the server opens the same. Filled in
    /// by the client session.
    #[serde(default)]
    pub provider: String,
    pub iterations: u64,
    pub duration_s: Option<u64>,
    #[serde(default = "wire::eight")]
    pub min_size: u64,
    #[serde(default = "wire::eight")]
    pub max_size: u64,
    #[serde(default = "wire::one")]
    pub list_size: u64,
    #[serde(default)]
    pub bidirectional: bool,
    #[serde(default)]
    pub use_idc: bool,
    #[serde(default)]
    pub use_hrp: bool,
    #[serde(default)]
    pub unrestricted: bool,
    #[serde(default)]
    pub rdzv: bool,
    #[serde(default = "wire::unlimited")]
    pub max_buf: u64,
    #[serde(default = "wire::sixty_four")]
    pub buf_align: u64,
    #[serde(default, with = "wire::hugepages")]
    pub hugepages: Option<HugePageSize>,
    #[serde(default)]
    pub warmup: u64,
    #[serde(default)]
    pub gap_us: u64,
    #[serde(default)]
    pub report_all: bool,
    #[serde(default)]
    pub clock: ClockKind,
    #[serde(default = "wire::sum", with = "wire::op")]
    pub op: AmoOp,
    #[serde(default = "wire::eq", with = "wire::cswap")]
    pub cswap: CswapOp,
    #[serde(default = "wire::uint64", with = "wire::ty")]
    pub ty: AmoType,
    #[serde(default)]
    pub fetching: bool,
    #[serde(default)]
    pub matching: bool,
    /// `--verify` (bandwidth tools): every size's source is stamped with a
    /// pattern of its own and the target checked after the size.
    #[serde(default)]
    pub verify: bool,
}

/// Why a spec was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

impl TestSpec {
    /// A spec with every parameter at a neutral value, for `tool`; callers
    /// set what they need (the option parser sets everything).
    pub fn new(tool: Tool) -> TestSpec {
        TestSpec {
            tool,
            provider: String::new(),
            iterations: 1,
            duration_s: None,
            min_size: 8,
            max_size: 8,
            list_size: 1,
            bidirectional: false,
            use_idc: true,
            use_hrp: true,
            unrestricted: false,
            rdzv: false,
            max_buf: u64::MAX,
            buf_align: 64,
            hugepages: None,
            warmup: 0,
            gap_us: 0,
            report_all: false,
            clock: ClockKind::ClockGettime,
            op: AmoOp::Sum,
            cswap: CswapOp::Eq,
            ty: AmoType::Uint64,
            fetching: false,
            matching: false,
            verify: false,
        }
    }

    pub fn mode(&self) -> Mode {
        match self.duration_s {
            Some(s) => Mode::Duration(s),
            None => Mode::Iterations(self.iterations),
        }
    }

    pub fn lat_config(&self) -> LatConfig {
        LatConfig {
            mode: self.mode(),
            warmup: self.warmup,
            gap: Duration::from_micros(self.gap_us),
            keep_all: self.report_all,
        }
    }

    /// Checks the spec against the library's limits and the family's rules.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = || SpecError(format!("client sent invalid run parameters: {self:?}"));
        let common = self.iterations >= 1 && self.duration_s.is_none_or(|d| d >= 1 && d <= u32::MAX as u64);
        let sizes = self.min_size >= 1 && self.min_size <= self.max_size && self.max_size <= MAX_SIZE;
        let list = (1..=MAX_LIST).contains(&self.list_size);
        let ok = match self.tool.family() {
            Family::Bandwidth(_) => common && sizes && list && self.max_size <= self.max_buf && self.buf_align >= 1,
            Family::Latency(_) => common && sizes,
            Family::Atomic { .. } => {
                amo_rules(self.op, self.cswap, self.ty).map_err(SpecError)?;
                common && list
            }
        };
        if ok {
            Ok(())
        } else {
            Err(bad())
        }
    }

    /// The spec as the Config message carries it.
    pub fn to_wire(&self) -> Result<serde_json::Value, SpecError> {
        serde_json::to_value(self).map_err(|e| SpecError(format!("cannot encode run parameters: {e}")))
    }

    pub fn from_wire(v: serde_json::Value) -> Result<TestSpec, SpecError> {
        serde_json::from_value(v).map_err(|e| SpecError(format!("client sent undecodable run parameters: {e}")))
    }
}

/// How the wire spells the typed fields: the originals' names.
mod wire {
    use super::*;

    pub fn eight() -> u64 {
        8
    }
    pub fn one() -> u64 {
        1
    }
    pub fn sixty_four() -> u64 {
        64
    }
    pub fn unlimited() -> u64 {
        u64::MAX
    }
    pub fn sum() -> AmoOp {
        AmoOp::Sum
    }
    pub fn eq() -> CswapOp {
        CswapOp::Eq
    }
    pub fn uint64() -> AmoType {
        AmoType::Uint64
    }

    fn named<'de, D: Deserializer<'de>, T>(d: D, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<T, D::Error> {
        let s = String::deserialize(d)?;
        parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown {what} {s:?}")))
    }

    pub mod tool {
        use super::*;
        pub fn serialize<S: Serializer>(t: &Tool, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(t.original_name())
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Tool, D::Error> {
            named(d, "tool", Tool::from_original)
        }
    }

    pub mod op {
        use super::*;
        pub fn serialize<S: Serializer>(o: &AmoOp, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(o.name())
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<AmoOp, D::Error> {
            named(d, "atomic op", AmoOp::parse)
        }
    }

    pub mod cswap {
        use super::*;
        pub fn serialize<S: Serializer>(o: &CswapOp, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(o.name())
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CswapOp, D::Error> {
            named(d, "CSWAP op", CswapOp::parse)
        }
    }

    pub mod ty {
        use super::*;
        pub fn serialize<S: Serializer>(t: &AmoType, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(t.name())
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<AmoType, D::Error> {
            named(d, "atomic type", AmoType::parse)
        }
    }

    pub mod hugepages {
        use super::*;
        pub fn serialize<S: Serializer>(h: &Option<HugePageSize>, s: S) -> Result<S::Ok, S::Error> {
            match h {
                Some(h) => s.serialize_some(h.label()),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<HugePageSize>, D::Error> {
            match Option::<String>::deserialize(d)?.as_deref() {
                None => Ok(None),
                Some("2M") => Ok(Some(HugePageSize::TwoMiB)),
                Some("1G") => Ok(Some(HugePageSize::OneGiB)),
                Some(other) => Err(serde::de::Error::custom(format!("invalid hugepage size {other:?}"))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bandwidth_clients_params_still_decode() {
        // what a fabdiag write-bw client has always sent
        let v = json!({"tool": "cxi_write_bw", "provider": "tcp;ofi_rxm", "iterations": 10, "duration_s": null,
            "min_size": 8, "max_size": 8, "list_size": 4, "bidirectional": false, "use_idc": true,
            "use_hrp": true, "unrestricted": false, "rdzv": false, "max_buf": 4096, "buf_align": 64,
            "hugepages": "2M"});
        let s = TestSpec::from_wire(v).unwrap();
        assert_eq!(
            (s.tool, s.list_size, s.hugepages),
            (Tool::WriteBw, 4, Some(HugePageSize::TwoMiB))
        );
        assert_eq!((s.op, s.clock), (AmoOp::Sum, ClockKind::ClockGettime));
        s.validate().unwrap();
        assert_eq!(TestSpec::from_wire(s.to_wire().unwrap()).unwrap(), s);
    }

    #[test]
    fn atomic_params_round_trip_with_the_originals_names() {
        let mut s = TestSpec::new(Tool::AtomicLat);
        s.op = AmoOp::Cswap;
        s.cswap = CswapOp::Ge;
        s.ty = AmoType::Float;
        s.clock = ClockKind::Cycles;
        let v = s.to_wire().unwrap();
        assert_eq!(
            (v["tool"].as_str(), v["op"].as_str()),
            (Some("cxi_atomic_lat"), Some("CSWAP"))
        );
        assert_eq!((v["cswap"].as_str(), v["ty"].as_str()), (Some("GE"), Some("FLOAT")));
        assert_eq!(v["clock"], "cycles");
        assert_eq!(TestSpec::from_wire(v).unwrap(), s);
    }

    #[test]
    fn validation_uses_the_librarys_limits() {
        let ok = |f: &dyn Fn(&mut TestSpec)| {
            let mut s = TestSpec::new(Tool::WriteBw);
            f(&mut s);
            s.validate()
        };
        assert!(ok(&|_| {}).is_ok());
        assert!(ok(&|s| s.min_size = 0).is_err());
        assert!(ok(&|s| s.max_size = MAX_SIZE + 1).is_err());
        assert!(ok(&|s| s.min_size = 16).is_err(), "min above max");
        assert!(ok(&|s| s.list_size = MAX_LIST + 1).is_err());
        assert!(ok(&|s| s.iterations = 0).is_err());
        assert!(ok(&|s| s.duration_s = Some(u32::MAX as u64 + 1)).is_err());
        assert!(ok(&|s| s.max_buf = 4).is_err(), "max size above --buf-sz");
        let mut a = TestSpec::new(Tool::AtomicBw);
        a.op = AmoOp::Lor;
        a.ty = AmoType::Float;
        assert_eq!(
            a.validate().unwrap_err().0,
            "Invalid Op and Type combination: LOR FLOAT"
        );
        let bad = json!({"tool": "cxi_frob_bw", "iterations": 1, "duration_s": null});
        assert!(TestSpec::from_wire(bad).unwrap_err().0.contains("unknown tool"));
    }
}
