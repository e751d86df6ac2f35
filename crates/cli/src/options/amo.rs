//! The atomic tools' options (atomic_bw, atomic_lat; spec §3.4, §3.8):
//! op, CSWAP op and type names case-insensitively, and the originals'
//! op/type validity rules, checked before connecting.

use super::{common_mode, common_values, number, threshold, Action, Common, Family, Opt, OptionError, Raw, RunMode};
use crate::options::bw::MAX_LIST;
use fabdiag_engine::amo::{validate, AmoOp, AmoType, CswapOp};

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
pub fn family(latency: bool) -> Family {
    use Opt::*;
    if latency {
        Family {
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
            extensions: &[Clock, IgnoreCpuFreq, Provider, Json, MaxLat, Percentiles, Local],
            width: 26,
            word: "AMO",
            words: "AMOs",
            default_iters: LAT_DEFAULT_ITERS,
            default_size: 8,
            trailer: TRAILER,
        }
    } else {
        Family {
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
            extensions: &[Provider, Json, MinBw, Local],
            width: 25,
            word: "AMO",
            words: "AMOs",
            default_iters: BW_DEFAULT_ITERS,
            default_size: 8,
            trailer: TRAILER,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AmoOptions {
    pub latency: bool,
    pub c: Common,
    pub op: AmoOp,
    pub cswap: CswapOp,
    pub ty: AmoType,
    pub fetching: bool,
    pub matching: bool,
    pub unrestricted: bool,
    pub use_idc: bool,
    pub use_hrp: bool,
    pub list_size: u64,
    pub bidirectional: bool,
    // latency only
    pub warmup: u64,
    pub gap_us: u64,
    pub report_all: bool,
    pub cycles: bool,
    pub ignore_cpu_freq_mismatch: bool,
    pub min_bw: Option<f64>,
    pub max_lat_us: Option<f64>,
    pub percentiles: bool,
    pub ignored_on_server: Vec<&'static str>,
}

const RUN_OPTIONS: &[(Opt, &str)] = &[
    (Opt::Iters, "-n"),
    (Opt::Duration, "-D"),
    (Opt::ListSizeAmo, "-l"),
    (Opt::AtomicOp, "-A"),
    (Opt::CswapOp, "-C"),
    (Opt::AtomicType, "-T"),
    (Opt::Bidir, "-b"),
    (Opt::Fetching, "--fetching"),
    (Opt::Matching, "--matching"),
    (Opt::Unrestricted, "--unrestricted"),
    (Opt::NoHrpAmo, "--no-hrp"),
    (Opt::NoIdc, "--no-idc"),
    (Opt::Warmup, "--warmup"),
    (Opt::LatencyGap, "--latency-gap"),
    (Opt::ReportAllAmo, "--report-all"),
    (Opt::MinBw, "--min-bw"),
    (Opt::MaxLat, "--max-lat"),
];

pub fn resolve(latency: bool, raw: &Raw) -> Result<Action<AmoOptions>, OptionError> {
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
    let (warmup, gap_us, clock) = super::lat::timing(raw)?;
    let cycles = clock == super::lat::ClockKind::Cycles;
    let min_bw = threshold(raw, Opt::MinBw, "Invalid minimum bandwidth (MB/s, a positive number)")?;
    let max_lat_us = threshold(raw, Opt::MaxLat, "Invalid maximum latency (µs, a positive number)")?;
    // the originals check op/type before anything else touches the network
    validate(op, cswap, ty).map_err(inval)?;
    common_mode(raw, &mut c)?;
    let matching = raw.has(Opt::Matching);
    let fetching = raw.has(Opt::Fetching);
    // forced settings, in the originals' order (spec §3.4): matching forces
    // unrestricted and turns IDC off; HRP is off when fetching or unrestricted
    let unrestricted = raw.has(Opt::Unrestricted) || matching;
    let use_idc = !raw.has(Opt::NoIdc) && !matching;
    let use_hrp = !raw.has(Opt::NoHrpAmo) && !fetching && !unrestricted;
    let ignored_on_server = if c.mode == RunMode::Server {
        raw.given(RUN_OPTIONS)
    } else {
        Vec::new()
    };
    Ok(Action::Run(AmoOptions {
        latency,
        c,
        op,
        cswap,
        ty,
        fetching,
        matching,
        unrestricted,
        use_idc,
        use_hrp,
        list_size,
        bidirectional: raw.has(Opt::Bidir),
        warmup,
        gap_us,
        // (the original atomic_lat overflowed its sample array with -D,
        // spec §6.2; here samples grow as needed, so -D keeps report-all)
        report_all: raw.has(Opt::ReportAllAmo),
        cycles,
        ignore_cpu_freq_mismatch: raw.has(Opt::IgnoreCpuFreq),
        min_bw,
        max_lat_us,
        percentiles: raw.has(Opt::Percentiles),
        ignored_on_server,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lat: bool, args: &[&str]) -> Result<Action<AmoOptions>, OptionError> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        resolve(lat, &family(lat).parse(&a).map_err(OptionError::Invalid)?)
    }

    fn err(lat: bool, args: &[&str]) -> String {
        match run(lat, args) {
            Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => m,
            other => panic!("expected an error for {args:?}, got {other:?}"),
        }
    }

    #[test]
    fn usage_matches_the_originals() {
        let u = family(false).usage("cxi_atomic_bw");
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
        let l = family(true).usage("cxi_atomic_lat");
        assert!(l.contains("  -A, --atomic-op         The atomic operation to use (default: SUM)\n"));
        assert!(
            l.contains("      --report-all        Report all latency measurements individually\n      -h")
                || l.contains("      --report-all        Report all latency measurements individually\n  -h")
        );
    }

    #[test]
    fn names_defaults_and_rules() {
        let Action::Run(o) = run(false, &[]).unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.op, o.cswap, o.ty, o.c.iterations, o.list_size),
            (AmoOp::Sum, CswapOp::Eq, AmoType::Uint64, 10000, 4096)
        );
        assert!(o.use_hrp && o.use_idc && !o.unrestricted);
        let Action::Run(o) = run(
            false,
            &["h", "-A", "cswap", "-C", "eq", "-T", "uint128", "-D", "2", "-b"],
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.op, o.ty, o.c.duration_s, o.bidirectional),
            (AmoOp::Cswap, AmoType::Uint128, Some(2), true)
        );
        let Action::Run(o) = run(false, &["h", "--matching", "--fetching"]).unwrap() else {
            panic!()
        };
        assert!(
            o.unrestricted && !o.use_idc && !o.use_hrp,
            "matching forces unrestricted, no IDC; fetching no HRP"
        );
        let Action::Run(o) = run(true, &[]).unwrap() else {
            panic!()
        };
        assert_eq!(o.c.iterations, 100);
        assert_eq!(err(false, &["-A", "PROD"]), "Invalid atomic operation: PROD");
        assert_eq!(err(false, &["-C", "XX"]), "Invalid CSWAP operation: XX");
        assert_eq!(err(false, &["-T", "int4"]), "Invalid atomic type: int4");
        assert_eq!(
            err(false, &["-A", "bor", "-T", "float"]),
            "Invalid Op and Type combination: BOR FLOAT"
        );
        assert_eq!(
            err(true, &["-A", "cswap", "-C", "lt", "-T", "double_complex"]),
            "Invalid Op and Type combination: CSWAP LT DOUBLE_COMPLEX"
        );
        assert_eq!(err(false, &["-s", "8"]), "invalid option -- 's'");
        assert_eq!(err(true, &["-l", "8"]), "invalid option -- 'l'");
        assert_eq!(err(true, &["-b"]), "invalid option -- 'b'");
    }
}
