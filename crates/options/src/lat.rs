//! The latency tools' options (send_lat, write_lat, read_lat; originals §3.6,
//! §3.7, §3.9). `-c/--clock` and `--ignore-cpu-freq-mismatch` are
//! send_lat's in the originals; fabdiag offers them on all three.

use crate::resolve::{common_mode, common_values, number, threshold, Action, Invocation, OptionError};

use crate::table::Raw;
use crate::table::{Layout, Opt, LATENCY_EXTENSIONS};
use fabdiag_model::ClockKind;
use fabdiag_model::Threshold;
use fabdiag_model::{LatTool, Tool};

pub const DEFAULT_ITERS: u64 = 100;
pub const DEFAULT_SIZE: u64 = 8;
pub const DEFAULT_WARMUP: u64 = 10;
pub const DEFAULT_GAP_US: u64 = 1000;

pub fn layout(tool: LatTool) -> Layout {
    use Opt::*;
    let (opts, extensions): (&'static [Opt], &'static [Opt]) = match tool {
        LatTool::WriteLat => (
            &[
                Device,
                SvcId,
                Port,
                TxGpu,
                RxGpu,
                GpuType,
                Iters,
                Duration,
                Warmup,
                LatencyGap,
                Size,
                Unrestricted,
                NoIdc,
                NoLl,
                ReportAll,
                UseHp,
                EmuMode,
                Help,
                Version,
            ],
            LATENCY_EXTENSIONS,
        ),
        LatTool::ReadLat => (
            &[
                Device,
                SvcId,
                Port,
                TxGpu,
                RxGpu,
                GpuType,
                Iters,
                Duration,
                Warmup,
                LatencyGap,
                Size,
                Unrestricted,
                NoLl,
                ReportAll,
                UseHp,
                EmuMode,
                Help,
                Version,
            ],
            LATENCY_EXTENSIONS,
        ),
        LatTool::SendLat => (
            &[
                Device,
                SvcId,
                Port,
                TxGpu,
                RxGpu,
                GpuType,
                Iters,
                Duration,
                Warmup,
                LatencyGap,
                Size,
                NoIdcSend,
                NoLl,
                Rdzv,
                ReportAll,
                UseHp,
                Clock,
                IgnoreCpuFreq,
                EmuMode,
                Help,
                Version,
            ],
            &[
                Provider,
                Json,
                MaxLat,
                Percentiles,
                Counters,
                Metrics,
                AuthKey,
                AuthMunge,
                Local,
                Poll,
            ],
        ),
    };
    Layout {
        opts,
        extensions,
        run: RUN,
        width: 26,
        tool: Tool::from(tool),
        default_iters: DEFAULT_ITERS,
        default_size: DEFAULT_SIZE,
        trailer: "",
        one_process: false,
    }
}

/// The run parameters of this family's tools, in the order a server's
/// warning names them.
const RUN: &[Opt] = &[
    Opt::Iters,
    Opt::Duration,
    Opt::Warmup,
    Opt::LatencyGap,
    Opt::Size,
    Opt::Rdzv,
    Opt::Unrestricted,
    Opt::NoIdc,
    Opt::NoIdcSend,
    Opt::NoLl,
    Opt::ReportAll,
    Opt::UseHp,
    Opt::MaxLat,
];

/// `--warmup`, `--latency-gap` and `-c/--clock`, shared with atomic_lat.
pub fn timing(raw: &Raw) -> Result<(u64, u64, ClockKind), OptionError> {
    let warmup = number(raw, Opt::Warmup, DEFAULT_WARMUP, |_| true, "Invalid warmup count")?;
    let gap_us = number(raw, Opt::LatencyGap, DEFAULT_GAP_US, |_| true, "Invalid iteration gap")?;
    let clock = match raw.last(Opt::Clock) {
        None | Some("clock_gettime") => ClockKind::ClockGettime,
        Some("cycles") => ClockKind::Cycles,
        Some(other) => return Err(OptionError::Invalid(format!("Invalid clock: {other}"))),
    };
    Ok((warmup, gap_us, clock))
}

pub fn resolve(tool: LatTool, raw: &Raw) -> Result<Action<Invocation>, OptionError> {
    if raw.has(Opt::Help) {
        return Ok(Action::Help);
    }
    if raw.has(Opt::Version) {
        return Ok(Action::Version);
    }
    let mut c = common_values(raw, DEFAULT_ITERS, DEFAULT_SIZE)?;
    let (warmup, gap_us, clock) = timing(raw)?;
    let max_lat_us = threshold(raw, Opt::MaxLat, "Invalid maximum latency (µs, a positive number)")?;
    common_mode(raw, &mut c)?;
    let rdzv = raw.has(Opt::Rdzv);
    let spec = fabdiag_model::TestSpec {
        warmup,
        gap_us,
        rdzv,
        unrestricted: raw.has(Opt::Unrestricted),
        // -R turns IDC off, as in the originals.
        // -R and a TX buffer on a GPU turn IDC off, as in the originals
        use_idc: !raw.has(Opt::NoIdc) && !raw.has(Opt::NoIdcSend) && !rdzv && c.gpu.tx.is_none(),
        // -D turns --report-all off, as in the originals' usage says.
        report_all: raw.has(Opt::ReportAll) && c.duration_s.is_none(),
        clock,
        ..c.spec(Tool::from(tool))
    };
    let mut inv = c.invocation(raw, spec, &layout(tool).run_options());
    inv.threshold = max_lat_us.map(Threshold::MaxLat);
    Ok(Action::Run(inv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{err, run};

    /// The originals' usage texts (send_lat's manual page), but for the -d line.
    const SEND_LAT_USAGE: &str = "Usage:
  cxi_send_lat [-d DEV] [-p PORT]
                          Start a server and wait for connection
  cxi_send_lat ADDR [OPTIONS]
                          Connect to server with address ADDR

Options:
  -v, --svc-id=SVC_ID     Service ID (default: 1)
  -p, --port=PORT         The port to listen on/connect to (default: 49194)
  -t, --tx-gpu=GPU        GPU index for allocating TX buf (default: no GPU)
  -r, --rx-gpu=GPU        GPU index for allocating RX buf (default: no GPU)
  -g, --gpu-type=TYPE     GPU type (AMD or NVIDIA or INTEL) (default type determined
                          by discovered GPU files on system)
  -n, --iters=ITERS       Number of iterations to run (default: 100)
  -D, --duration=SEC      Run for the specified number of seconds
      --warmup=WARMUP     Number of warmup iterations to run (default: 10)
      --latency-gap=USEC  Number of microseconds to wait between each
                          iteration (default: 1000)
  -s, --size=MIN[:MAX]    Send size or range to use (default: 8)
                          Ranges must be powers of 2 (e.g. \"1:8192\")
                          The maximum size is 4294967295
      --no-idc            Do not use Immediate Data Cmds for sizes <= 192 bytes
      --no-ll             Do not use Low-Latency command issuing
  -R, --rdzv              Use rendezvous PUTs
      --report-all        Report all latency measurements individually
                          This option is ignored when using --duration
      --use-hp=SIZE       Attempt to use huge pages when allocating
                          Size may be \"2M\" or \"1G\"
  -c, --clock=TYPE        Clock type used to calculate latency.
                          Valid options are: cycles or clock_gettime.
                          Default is clock_gettime.
      --ignore-cpu-freq-mismatch
                          Used when clock type is cycles. Ignore CPU frequency
                          mismatch. Mismatch can occur when ondemand CPU frequency
                          is enabled such as cpufreq_ondemand governor.
  -h, --help              Print this help text and exit
  -V, --version           Print the version and exit
";

    #[test]
    fn usage_matches_the_originals() {
        let ours = layout(LatTool::SendLat).usage("cxi_send_lat");
        let original_part: String = ours
            .split("\nfabdiag options:")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("  -d, --device") && !l.contains("(default: the domain that reaches"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(original_part, SEND_LAT_USAGE);
        let w = layout(LatTool::WriteLat).usage("cxi_write_lat");
        assert!(w.contains("  -s, --size=MIN[:MAX]    Write size or range to use (default: 8)\n"));
        assert!(w.contains("      --unrestricted      Use unrestricted writes\n      --no-idc            Do not use Immediate Data Cmds\n"));
        assert!(!layout(LatTool::ReadLat).usage("x").contains("--no-idc"));
    }

    #[test]
    fn defaults_and_forced_settings() {
        let Action::Run(o) = run(LatTool::SendLat, &[]).unwrap() else {
            panic!()
        };
        let s = &o.spec;
        assert_eq!((s.iterations, s.min_size, s.warmup, s.gap_us), (100, 8, 10, 1000));
        assert_eq!(s.clock, ClockKind::ClockGettime);
        assert!(s.use_idc && !s.report_all);
        let Action::Run(o) = run(
            LatTool::SendLat,
            &["h", "-R", "--report-all", "-D", "2", "-c", "cycles"],
        )
        .unwrap() else {
            panic!()
        };
        assert!(!o.spec.use_idc, "-R turns IDC off");
        assert!(!o.spec.report_all, "-D turns --report-all off");
        assert_eq!(o.spec.clock, ClockKind::Cycles);
        let Action::Run(o) = run(
            LatTool::ReadLat,
            &["h", "--warmup", "0", "--latency-gap", "0", "--report-all"],
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!((o.spec.warmup, o.spec.gap_us, o.spec.report_all), (0, 0, true));
    }

    #[test]
    fn validation_messages() {
        let s = LatTool::SendLat;
        assert_eq!(err(s, &["-c", "rdtsc"]), "Invalid clock: rdtsc");
        assert_eq!(err(s, &["-c", "Cycles"]), "Invalid clock: Cycles");
        assert_eq!(err(s, &["--warmup", "x"]), "Invalid warmup count: x");
        assert_eq!(err(s, &["--latency-gap", "-5"]), "Invalid iteration gap: -5");
        assert_eq!(err(s, &["-s", "3:8"]), "Invalid size: 3:8 (ranges must be powers of 2)");
        assert_eq!(err(s, &["-n", "0"]), "Invalid iteration count: 0");
        assert!(err(s, &["--max-lat", "0"]).starts_with("Invalid maximum latency"));
        assert_eq!(err(LatTool::ReadLat, &["--no-idc"]), "unrecognized option '--no-idc'");
        assert_eq!(err(LatTool::WriteLat, &["-R"]), "invalid option -- 'R'");
        assert_eq!(err(s, &["-l", "4"]), "invalid option -- 'l'");
    }
}
