//! cxi_gpu_loopback_bw's options (originals §3.5): one process, no address and
//! no port; `-i` counts iterations and `-n` writes per iteration (the other
//! tools' `-n` and `-l`, with their messages); one size, not a range.

use crate::numbers::parse_strtoul;
use crate::resolve::verify;
use crate::resolve::{common_mode, common_values, number, threshold, Action, Invocation, OptionError};
use crate::table::Raw;
use crate::table::{Layout, Opt};
use fabdiag_model::Threshold;
use fabdiag_model::Tool;
use fabdiag_model::{MAX_LIST, MAX_SIZE};

pub const DEFAULT_ITERS: u64 = 25;
pub const DEFAULT_XFERS: u64 = 8192;
pub const DEFAULT_SIZE: u64 = 524288;

pub fn layout() -> Layout {
    use Opt::*;
    Layout {
        opts: &[
            DeviceLoop,
            SvcId,
            TxGpu,
            RxGpu,
            GpuTypeLoop,
            Duration,
            LoopIters,
            NumXfers,
            LoopSize,
            UseHpLoop,
            Help,
            Version,
        ],
        extensions: &[Provider, Json, MinBwGbit, Verify, NoVerify, Counters, Metrics],
        // (one process: no server to ignore them)
        run: &[],
        width: 25,
        tool: Tool::GpuLoopbackBw,
        default_iters: DEFAULT_ITERS,
        default_size: DEFAULT_SIZE,
        trailer: "",
        one_process: true,
    }
}

pub fn resolve(raw: &Raw) -> Result<Action<Invocation>, OptionError> {
    if raw.has(Opt::Help) {
        return Ok(Action::Help);
    }
    if raw.has(Opt::Version) {
        return Ok(Action::Version);
    }
    let mut c = common_values(raw, DEFAULT_ITERS, DEFAULT_SIZE)?;
    let iterations = number(raw, Opt::LoopIters, DEFAULT_ITERS, |v| v > 0, "Invalid iteration count")?;
    let list_size = number(
        raw,
        Opt::NumXfers,
        DEFAULT_XFERS,
        |v| (1..=MAX_LIST).contains(&v),
        "Invalid list size",
    )?;
    // The original accepted 0 and printed nonsense packet counts
    // (originals §6.9); a write of no bytes measures nothing, so it is refused.
    let size = match raw.last(Opt::LoopSize) {
        None => DEFAULT_SIZE,
        Some(s) => parse_strtoul(s)
            .filter(|v| (1..=MAX_SIZE).contains(v))
            .ok_or_else(|| OptionError::Invalid(format!("Invalid transfer size: {s}")))?,
    };
    let min_gbit = threshold(
        raw,
        Opt::MinBwGbit,
        "Invalid minimum bandwidth (Gb/s, a positive number)",
    )?;
    common_mode(raw, &mut c)?;
    if let [addr, ..] = raw.operands.as_slice() {
        return Err(OptionError::Invalid(format!(
            "Unexpected argument: {addr} (cxi_gpu_loopback_bw runs in one process and takes no address)"
        )));
    }
    let spec = fabdiag_model::TestSpec {
        iterations,
        min_size: size,
        max_size: size,
        list_size,
        // every write from the start of the TX buffer to offset 0 of the
        // RX buffer (originals §3.5): one buffer of one size each
        max_buf: size,
        // IDC copies the payload from host memory (originals §2.12)
        use_idc: c.gpu.tx.is_none(),
        verify: verify(raw, &c.gpu),
        ..c.spec(Tool::GpuLoopbackBw)
    };
    let mut inv = c.invocation(raw, spec, &layout().run_options());
    inv.threshold = min_gbit.map(Threshold::MinGbit);
    Ok(Action::Run(inv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::RunMode;
    use crate::testing::{err, run};
    use fabdiag_model::GpuKind;

    #[test]
    fn usage_matches_the_original() {
        let original = std::fs::read_to_string(format!(
            "{}/../report/tests/golden/original_loopback_usage.txt",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let ours = layout().usage("cxi_loopback_bw");
        // -d names a libfabric domain (a deliberate difference, as for
        // every tool); everything else is line-identical
        let expected: Vec<&str> = original.lines().filter(|l| !l.starts_with("  -d, --device")).collect();
        let ours_lines: Vec<&str> = ours
            .split("\nfabdiag options:")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("  -d, --device") && !l.contains("(default: the provider's first domain)"))
            .collect();
        assert_eq!(ours_lines, expected);
    }

    #[test]
    fn defaults_and_the_remapped_letters() {
        let t = Tool::GpuLoopbackBw;
        let Action::Run(o) = run(t, &[]).unwrap() else { panic!() };
        assert_eq!(
            o.mode,
            RunMode::Server,
            "no address: the caller runs it in this process"
        );
        let s = &o.spec;
        assert_eq!(
            (s.iterations, s.list_size, s.min_size, s.max_size, s.max_buf),
            (25, 8192, 524288, 524288, 524288)
        );
        assert!(!s.verify && s.duration_s.is_none() && s.use_idc);
        let Action::Run(o) = run(t, &["-i", "3", "-n", "16", "-s", "0x1000", "-D", "2", "--verify"]).unwrap() else {
            panic!()
        };
        let s = &o.spec;
        assert_eq!(
            (s.iterations, s.list_size, s.max_size, s.duration_s),
            (3, 16, 4096, Some(2))
        );
        assert!(s.verify);
        let Action::Run(o) = run(t, &["-t", "0", "-r", "2", "-g", "Nvidia"]).unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.gpu.tx, o.gpu.rx, o.gpu.kind),
            (Some(0), Some(2), Some(GpuKind::Nvidia))
        );
        assert!(o.spec.verify, "on by default for GPU buffers");
        assert!(!o.spec.use_idc, "-t turns IDC off");
        let Action::Run(o) = run(t, &["-t", "0", "--no-verify"]).unwrap() else {
            panic!()
        };
        assert!(!o.spec.verify);
        let Action::Run(o) = run(t, &["--min-bw", "12.5"]).unwrap() else {
            panic!()
        };
        assert_eq!(o.threshold, Some(Threshold::MinGbit(12.5)));
    }

    #[test]
    fn validation_messages_are_the_originals() {
        let t = Tool::GpuLoopbackBw;
        assert_eq!(err(t, &["-i", "0"]), "Invalid iteration count: 0");
        assert_eq!(err(t, &["-n", "0"]), "Invalid list size: 0");
        assert_eq!(err(t, &["-n", "16383"]), "Invalid list size: 16383");
        assert_eq!(err(t, &["-s", "4294967296"]), "Invalid transfer size: 4294967296");
        assert_eq!(err(t, &["-s", "8:16"]), "Invalid transfer size: 8:16");
        assert_eq!(err(t, &["-s", "0"]), "Invalid transfer size: 0");
        assert_eq!(err(t, &["-D", "0"]), "Invalid duration: 0");
        assert_eq!(err(t, &["-t", "256"]), "Invalid src gpu device: 256");
        assert_eq!(
            err(t, &["-g", "cuda"]),
            "Invalid gpu type: cuda. Must be AMD, NVIDIA or INTEL"
        );
        assert_eq!(
            err(t, &["--use-hp", "4K"]),
            "Invalid hugepage type: 4K. Must be 2M or 1G"
        );
        assert!(err(t, &["host"]).contains("takes no address"));
        // options of the client/server tools are not this tool's
        assert_eq!(err(t, &["-p", "1"]), "invalid option -- 'p'");
        assert_eq!(err(t, &["-l", "1"]), "invalid option -- 'l'");
        assert_eq!(err(t, &["--local"]), "unrecognized option '--local'");
        assert!(err(t, &["--min-bw", "0"]).contains("Invalid minimum bandwidth (Gb/s"));
    }
}
