//! The atomic tools' options (atomic_bw, atomic_lat; originals §3.4, §3.8):
//! op, CSWAP op and type names case-insensitively, and the originals'
//! op/type validity rules, checked before connecting.

use crate::resolve::{common_mode, common_values, number, threshold, Action, Invocation, OptionError};

use crate::table::Raw;
use crate::table::{Layout, Opt, LATENCY_EXTENSIONS};
use fabdiag_engine::amo::{validate, AmoOp, AmoType, CswapOp};
use fabdiag_model::Threshold;
use fabdiag_model::Tool;
use fabdiag_model::MAX_LIST;

pub const BW_DEFAULT_ITERS: u64 = 10000;
pub const BW_DEFAULT_LIST: u64 = 4096;
pub const LAT_DEFAULT_ITERS: u64 = 100;

const TRAILER: &str = "
Atomic Ops:
  MIN, MAX, SUM, LOR, LAND, BOR, BAND, LXOR, BXOR, SWAP, CSWAP, AXOR
CSWAP Ops:
  EQ, NE, LE, LT, GE, GT
Atomic Types:
  INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT, DOUBLE,
  FLOAT_COMPLEX, DOUBLE_COMPLEX, UINT128
";

/// `latency` picks atomic_lat, else atomic_bw.
pub fn layout(latency: bool) -> Layout {
    use Opt::*;
    if latency {
        Layout {
            opts: &[
                Device,
                SvcId,
                Port,
                Iters,
                Duration,
                Warmup,
                LatencyGap,
                AtomicOp,
                CswapOp,
                AtomicType,
                Fetching,
                Matching,
                Unrestricted,
                NoIdc,
                NoLl,
                ReportAllAmo,
                EmuMode,
                Help,
                Version,
            ],
            extensions: LATENCY_EXTENSIONS,
            run: RUN,
            width: 26,
            tool: Tool::AtomicLat,
            default_iters: LAT_DEFAULT_ITERS,
            default_size: 8,
            trailer: TRAILER,
            one_process: false,
        }
    } else {
        Layout {
            opts: &[
                Device,
                SvcId,
                Port,
                Iters,
                Duration,
                ListSizeAmo,
                AtomicOp,
                CswapOp,
                AtomicType,
                Bidir,
                Fetching,
                Matching,
                Unrestricted,
                NoHrpAmo,
                NoIdc,
                EmuMode,
                Help,
                Version,
            ],
            extensions: &[
                Provider, Json, MinBw, Counters, Metrics, AuthKey, AuthMunge, Local, Poll,
            ],
            run: RUN,
            width: 25,
            tool: Tool::AtomicBw,
            default_iters: BW_DEFAULT_ITERS,
            default_size: 8,
            trailer: TRAILER,
            one_process: false,
        }
    }
}

/// The run parameters of this family's tools, in the order a server's
/// warning names them.
const RUN: &[Opt] = &[
    Opt::Iters,
    Opt::Duration,
    Opt::ListSizeAmo,
    Opt::AtomicOp,
    Opt::CswapOp,
    Opt::AtomicType,
    Opt::Bidir,
    Opt::Fetching,
    Opt::Matching,
    Opt::Unrestricted,
    Opt::NoHrpAmo,
    Opt::NoIdc,
    Opt::Warmup,
    Opt::LatencyGap,
    Opt::ReportAllAmo,
    Opt::MinBw,
    Opt::MaxLat,
];

pub fn resolve(latency: bool, raw: &Raw) -> Result<Action<Invocation>, OptionError> {
    let inval = OptionError::Invalid;
    if raw.has(Opt::Help) {
        return Ok(Action::Help);
    }
    if raw.has(Opt::Version) {
        return Ok(Action::Version);
    }
    let default_iters = if latency { LAT_DEFAULT_ITERS } else { BW_DEFAULT_ITERS };
    let mut c = common_values(raw, default_iters, 8)?;
    let list_size = number(
        raw,
        Opt::ListSizeAmo,
        BW_DEFAULT_LIST,
        |v| (1..=MAX_LIST).contains(&v),
        "Invalid list size",
    )?;
    let op = match raw.last(Opt::AtomicOp) {
        None => AmoOp::Sum,
        Some(s) => AmoOp::parse(s).ok_or_else(|| inval(format!("Invalid atomic operation: {s}")))?,
    };
    let cswap = match raw.last(Opt::CswapOp) {
        None => CswapOp::Eq,
        Some(s) => CswapOp::parse(s).ok_or_else(|| inval(format!("Invalid CSWAP operation: {s}")))?,
    };
    let ty = match raw.last(Opt::AtomicType) {
        None => AmoType::Uint64,
        Some(s) => AmoType::parse(s).ok_or_else(|| inval(format!("Invalid atomic type: {s}")))?,
    };
    let (warmup, gap_us, clock) = crate::lat::timing(raw)?;
    let min_bw = threshold(raw, Opt::MinBw, "Invalid minimum bandwidth (MB/s, a positive number)")?;
    let max_lat_us = threshold(raw, Opt::MaxLat, "Invalid maximum latency (µs, a positive number)")?;
    // the originals check op/type before anything else touches the network
    validate(op, cswap, ty).map_err(inval)?;
    common_mode(raw, &mut c)?;
    let matching = raw.has(Opt::Matching);
    let fetching = raw.has(Opt::Fetching);
    // forced settings, in the originals' order (originals §3.4): matching forces
    // unrestricted and turns IDC off; HRP is off when fetching or unrestricted
    let unrestricted = raw.has(Opt::Unrestricted) || matching;
    let use_idc = !raw.has(Opt::NoIdc) && !matching;
    let use_hrp = !raw.has(Opt::NoHrpAmo) && !fetching && !unrestricted;
    let tool = if latency { Tool::AtomicLat } else { Tool::AtomicBw };
    let spec = fabdiag_model::TestSpec {
        op,
        cswap,
        ty,
        fetching,
        matching,
        unrestricted,
        use_idc,
        use_hrp,
        // atomic_lat runs one operation at a time, one way
        list_size: if latency { 1 } else { list_size },
        bidirectional: raw.has(Opt::Bidir) && !latency,
        min_size: ty.size(),
        max_size: ty.size(),
        warmup,
        gap_us,
        // (the original atomic_lat overflowed its sample array with -D,
        // originals §6.2; here samples grow as needed, so -D keeps report-all)
        report_all: raw.has(Opt::ReportAllAmo),
        clock,
        ..c.spec(tool)
    };
    let mut inv = c.invocation(raw, spec, &layout(latency).run_options());
    inv.threshold = if latency {
        max_lat_us.map(Threshold::MaxLat)
    } else {
        min_bw.map(Threshold::MinBw)
    };
    Ok(Action::Run(inv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{err, run};

    #[test]
    fn usage_matches_the_originals() {
        let u = layout(false).usage("cxi_atomic_bw");
        let original: String = u
            .split("\nfabdiag options:")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("  -d, --device") && !l.contains("(default: the domain that reaches"))
            .map(|l| format!("{l}\n"))
            .collect();
        let want = "Usage:
  cxi_atomic_bw [-d DEV] [-p PORT]
                         Start a server and wait for connection
  cxi_atomic_bw ADDR [OPTIONS]
                         Connect to server with address ADDR

Options:
  -v, --svc-id=SVC_ID    Service ID (default: 1)
  -p, --port=PORT        The port to listen on/connect to (default: 49194)
  -n, --iters=ITERS      Number of iterations to run (default: 10000)
  -D, --duration=SEC     Run for the specified number of seconds
  -l, --list-size=SIZE   Number of writes per iteration, all pushed to the
                         initiator CQ prior to initiating xfer (default: 4096)
  -A, --atomic-op        The atomic operation to use (default: SUM)
  -C, --cswap-op         The CSWAP operation to use (default: EQ)
  -T, --atomic-type      The atomic type to use (default: UINT64)
  -b, --bidirectional    Measure bidirectional bandwidth
      --fetching         Use fetching AMOs
      --matching         Use matching list entries at the target
      --unrestricted     Use unrestricted AMOs
      --no-hrp           Do not use High Rate Puts
      --no-idc           Do not use Immediate Data Cmds
  -h, --help             Print this help text and exit
  -V, --version          Print the version and exit

Atomic Ops:
  MIN, MAX, SUM, LOR, LAND, BOR, BAND, LXOR, BXOR, SWAP, CSWAP, AXOR
CSWAP Ops:
  EQ, NE, LE, LT, GE, GT
Atomic Types:
  INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT, DOUBLE,
  FLOAT_COMPLEX, DOUBLE_COMPLEX, UINT128
";
        assert_eq!(original, want);
        let l = layout(true).usage("cxi_atomic_lat");
        assert!(l.contains("  -A, --atomic-op         The atomic operation to use (default: SUM)\n"));
        assert!(
            l.contains("      --report-all        Report all latency measurements individually\n      -h")
                || l.contains("      --report-all        Report all latency measurements individually\n  -h")
        );
    }

    #[test]
    fn names_defaults_and_rules() {
        let Action::Run(o) = run(Tool::AtomicBw, &[]).unwrap() else {
            panic!()
        };
        let s = &o.spec;
        assert_eq!(
            (s.op, s.cswap, s.ty, s.iterations, s.list_size),
            (AmoOp::Sum, CswapOp::Eq, AmoType::Uint64, 10000, 4096)
        );
        assert!(s.use_hrp && s.use_idc && !s.unrestricted);
        let Action::Run(o) = run(
            Tool::AtomicBw,
            &["h", "-A", "cswap", "-C", "eq", "-T", "uint128", "-D", "2", "-b"],
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.spec.op, o.spec.ty, o.spec.duration_s, o.spec.bidirectional),
            (AmoOp::Cswap, AmoType::Uint128, Some(2), true)
        );
        let Action::Run(o) = run(Tool::AtomicBw, &["h", "--matching", "--fetching"]).unwrap() else {
            panic!()
        };
        assert!(
            o.spec.unrestricted && !o.spec.use_idc && !o.spec.use_hrp,
            "matching forces unrestricted, no IDC; fetching no HRP"
        );
        let Action::Run(o) = run(Tool::AtomicLat, &[]).unwrap() else {
            panic!()
        };
        assert_eq!((o.spec.iterations, o.spec.list_size), (100, 1));
        assert_eq!(err(Tool::AtomicBw, &["-A", "PROD"]), "Invalid atomic operation: PROD");
        assert_eq!(err(Tool::AtomicBw, &["-C", "XX"]), "Invalid CSWAP operation: XX");
        assert_eq!(err(Tool::AtomicBw, &["-T", "int4"]), "Invalid atomic type: int4");
        assert_eq!(
            err(Tool::AtomicBw, &["-A", "bor", "-T", "float"]),
            "Invalid Op and Type combination: BOR FLOAT"
        );
        assert_eq!(
            err(Tool::AtomicLat, &["-A", "cswap", "-C", "lt", "-T", "double_complex"]),
            "Invalid Op and Type combination: CSWAP LT DOUBLE_COMPLEX"
        );
        assert_eq!(err(Tool::AtomicBw, &["-s", "8"]), "invalid option -- 's'");
        assert_eq!(err(Tool::AtomicLat, &["-l", "8"]), "invalid option -- 'l'");
        assert_eq!(err(Tool::AtomicLat, &["-b"]), "invalid option -- 'b'");
    }
}
