//! The run spec: one typed struct for every tool, what a client sends and a
//! server adopts (the client decides every run parameter, originals §2.6.4). On
//! the wire it is the `params` of the Config message, with the field names
//! fabdiag has always used; a family's unused fields take defaults, so a
//! bandwidth client's spec (which has no atomic fields) still decodes.
//! `validate` checks a spec against the library's own limits, on both
//! sides: a peer is not trusted to be sane. Nothing here does I/O.

use crate::catalog::{Family, Tool};
use crate::own::PollMode;
use fabdiag_engine::amo::{validate as amo_rules, AmoOp, AmoType, CswapOp};
use fabdiag_engine::bw::sizes;
use fabdiag_engine::{LatConfig, Mode};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// The largest transfer size: the originals' 32-bit length.
pub const MAX_SIZE: u64 = 4294967295;
/// The largest list size: (65532 / 4) − 1, the originals' limit.
pub const MAX_LIST: u64 = 65532 / 4 - 1;
/// Slot size of the atomic tools (originals §3.4): operand at +0, compare
/// operand at +16.
pub const AMO_STRIDE: u64 = 64;

/// The slowest rate a link that works is expected to keep: the time
/// limits on a run that is slow but alive allow its data at this rate.
pub const FLOOR_BYTES_PER_S: u64 = 100_000_000;
/// And what one operation may cost such a link beside its bytes
/// (100,000 operations a second).
pub const FLOOR_PER_OP: Duration = Duration::from_micros(10);
/// And one iteration whose operations wait for the last one's end (a
/// latency round trip, a bandwidth window).
pub const FLOOR_PER_ITERATION: Duration = Duration::from_millis(1);

/// How long `bytes` take at `FLOOR_BYTES_PER_S`.
pub fn at_floor(bytes: u64) -> Duration {
    Duration::from_micros(bytes / (FLOOR_BYTES_PER_S / 1_000_000))
}

/// Huge pages for the host buffers (`--use-hp`). fabdiag-fabric maps
/// them with its own type, which also knows where the kernel counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugePageSize {
    TwoMiB,
    OneGiB,
}

impl HugePageSize {
    pub fn bytes(self) -> u64 {
        match self {
            HugePageSize::TwoMiB => 2 << 20,
            HugePageSize::OneGiB => 1 << 30,
        }
    }

    /// The originals' spelling: "2M" / "1G".
    pub fn label(self) -> &'static str {
        match self {
            HugePageSize::TwoMiB => "2M",
            HugePageSize::OneGiB => "1G",
        }
    }
}

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
    #[serde(with = "spelling::tool")]
    pub tool: Tool,
    /// The provider the client opened, as the server reads it from the
    /// wire (`to_wire_opened`); empty in a spec the client holds.
    #[serde(default)]
    pub provider: String,
    pub iterations: u64,
    pub duration_s: Option<u64>,
    #[serde(default = "spelling::eight")]
    pub min_size: u64,
    #[serde(default = "spelling::eight")]
    pub max_size: u64,
    #[serde(default = "spelling::one")]
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
    #[serde(default = "spelling::unlimited")]
    pub max_buf: u64,
    #[serde(default = "spelling::sixty_four")]
    pub buf_align: u64,
    #[serde(default, with = "spelling::hugepages")]
    pub hugepages: Option<HugePageSize>,
    #[serde(default)]
    pub warmup: u64,
    #[serde(default)]
    pub gap_us: u64,
    #[serde(default)]
    pub report_all: bool,
    #[serde(default)]
    pub clock: ClockKind,
    #[serde(default = "spelling::sum", with = "spelling::op")]
    pub op: AmoOp,
    #[serde(default = "spelling::eq", with = "spelling::cswap")]
    pub cswap: CswapOp,
    #[serde(default = "spelling::uint64", with = "spelling::ty")]
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

    /// A duration run's length, every size's duration summed; None for an
    /// iteration run, whose length depends on the link.
    pub fn duration_run_s(&self) -> Option<u64> {
        let sizes = sizes(self.min_size, self.max_size).len() as u64;
        self.duration_s.map(|d| d.saturating_mul(sizes))
    }

    /// How long the run may take on a link that is slow but works: a
    /// duration run, its duration per size; an iteration run, per size its
    /// iterations at `FLOOR_PER_ITERATION` (and the gap after each), its
    /// operations at `FLOOR_PER_OP` and their bytes at `FLOOR_BYTES_PER_S`
    /// (twice where data goes both ways: `-b`, the latency tools' round
    /// trips).
    pub fn longest_run(&self) -> Duration {
        let sizes = sizes(self.min_size, self.max_size);
        if let Some(d) = self.duration_s {
            return Duration::from_secs(d.saturating_mul(sizes.len() as u64));
        }
        let ways: u64 = if self.bidirectional || self.tool.is_latency() {
            2
        } else {
            1
        };
        let iterations = self.iterations.saturating_add(self.warmup);
        let ops = iterations.saturating_mul(self.list_size);
        let times = |d: Duration, n: u64| d.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
        let fixed = times(FLOOR_PER_ITERATION + Duration::from_micros(self.gap_us), iterations)
            .saturating_add(times(FLOOR_PER_OP, ops));
        sizes.into_iter().fold(Duration::ZERO, |t, size| {
            t.saturating_add(fixed)
                .saturating_add(at_floor(ops.saturating_mul(size).saturating_mul(ways)))
        })
    }

    /// The latency loop's settings: the spec's, and how this side waits
    /// out the gap (its own `--poll`, never the peer's).
    pub fn lat_config(&self, poll: PollMode) -> LatConfig {
        LatConfig {
            mode: self.mode(),
            warmup: self.warmup,
            gap: Duration::from_micros(self.gap_us),
            keep_all: self.report_all,
            yield_in_gap: poll == PollMode::Yield,
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

    /// The parameters as a client sends them, with the provider it opened
    /// (the server opens the same); the spec itself stays as validated.
    pub fn to_wire_opened(&self, provider: &str) -> Result<serde_json::Value, SpecError> {
        let mut v = self.to_wire()?;
        if let Some(o) = v.as_object_mut() {
            o.insert("provider".into(), serde_json::Value::String(provider.into()));
        }
        Ok(v)
    }

    pub fn from_wire(v: serde_json::Value) -> Result<TestSpec, SpecError> {
        serde_json::from_value(v).map_err(|e| SpecError(format!("client sent undecodable run parameters: {e}")))
    }
}

/// How the wire spells the typed fields: the originals' names.
mod spelling {
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
    fn the_provider_opened_travels_on_the_wire_and_the_spec_stays_as_it_was() {
        let s = TestSpec::new(Tool::WriteBw);
        let v = s.to_wire_opened("tcp;ofi_rxm").unwrap();
        assert_eq!(v["provider"].as_str(), Some("tcp;ofi_rxm"));
        assert_eq!(TestSpec::from_wire(v).unwrap().provider, "tcp;ofi_rxm");
        assert_eq!(s.provider, "");
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

    /// What a sweep allows a pair test beside its minute of set-up.
    #[test]
    fn the_longest_run_allows_the_data_at_the_floor_rate() {
        let spec = |tool, n, list, min, max| TestSpec {
            iterations: n,
            list_size: list,
            min_size: min,
            max_size: max,
            ..TestSpec::new(tool)
        };
        // write-bw as a sweep runs it by default: 1000 windows of 256 × 64 KiB
        let w = spec(Tool::WriteBw, 1000, 256, 65536, 65536);
        let data = Duration::from_micros(256_000 * 65536 / 100);
        let fixed = Duration::from_millis(1000) + Duration::from_micros(10 * 256_000);
        assert_eq!(w.longest_run(), data + fixed);
        assert_eq!(w.longest_run().as_secs(), 171);
        // both ways: the data twice
        let b = TestSpec {
            bidirectional: true,
            ..w.clone()
        };
        assert_eq!(b.longest_run(), 2 * data + fixed);
        // every size of a range, and the gap after each iteration
        let r = TestSpec {
            gap_us: 100,
            ..spec(Tool::WriteBw, 10, 1, 8, 32)
        };
        let per = |size: u64| Duration::from_micros(10 * 1100 + 10 * 10) + Duration::from_micros(10 * size / 100);
        assert_eq!(r.longest_run(), per(8) + per(16) + per(32));
        // a latency round trip carries its size both ways; warm-ups count
        let l = TestSpec {
            warmup: 10,
            ..spec(Tool::SendLat, 100, 1, 1 << 20, 1 << 20)
        };
        assert_eq!(
            l.longest_run(),
            Duration::from_micros(110 * 1010) + Duration::from_micros(110 * 2 * (1 << 20) / 100)
        );
        // the default atomic-bw over tcp took 246 s on this VM (0.17 M ops/s)
        let a = TestSpec {
            warmup: 10,
            ..spec(Tool::AtomicBw, 10_000, 4096, 8, 8)
        };
        assert!(a.longest_run() > Duration::from_secs(400), "{:?}", a.longest_run());
        // a duration run: its duration per size
        let d = TestSpec {
            duration_s: Some(5),
            ..spec(Tool::ReadBw, 1, 1, 1024, 4096)
        };
        assert_eq!(d.longest_run(), Duration::from_secs(15));
        // the largest run the options allow does not overflow
        let huge = spec(Tool::WriteBw, u64::MAX, MAX_LIST, MAX_SIZE, MAX_SIZE);
        assert!(huge.longest_run() > Duration::from_secs(u64::from(u32::MAX)));
    }
}
