//! One probe: the fabdiag command line that runs it against a peer's
//! `fabdiag serve`, and what its run said, read from the JSON document it
//! printed (figures, or why the peer is down, busy or turning it away).
//! It neither starts the process nor waits for it: the binary does, and
//! hands in how the process ended.

use crate::peers::Peer;
use serde_json::Value;

/// What a probe measures, and with which tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    Latency,
    Bandwidth,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 2] = [ProbeKind::Latency, ProbeKind::Bandwidth];

    /// The `probe` label.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Latency => "latency",
            ProbeKind::Bandwidth => "bandwidth",
        }
    }

    /// The fabdiag command that probes, and its `tool` label.
    pub fn tool(self) -> (&'static str, &'static str) {
        match self {
            ProbeKind::Latency => ("send-lat", "send_lat"),
            ProbeKind::Bandwidth => ("write-bw", "write_bw"),
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Iterations of a latency probe (the tool's own default, and its 10
/// warm-up iterations come on top).
pub const LATENCY_ITERATIONS: u64 = 100;
/// Iterations of a bandwidth probe: each posts the tool's list of 256
/// writes, so 16 move 4096 messages (256 MiB of 64 KiB ones).
pub const BANDWIDTH_ITERATIONS: u64 = 16;

/// What every probe is run with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeArgs {
    pub lat_size: u64,
    pub bw_size: u64,
    pub provider: Option<fabdiag_model::Provider>,
    pub auth_key: Option<String>,
    /// `--auth-munge`: prove a MUNGE credential instead.
    pub auth_munge: bool,
}

/// The arguments (after the program) of `kind`'s probe of `peer`.
pub fn command(kind: ProbeKind, peer: &Peer, a: &ProbeArgs) -> Vec<String> {
    let (cmd, _) = kind.tool();
    let (size, n) = match kind {
        ProbeKind::Latency => (a.lat_size, LATENCY_ITERATIONS),
        ProbeKind::Bandwidth => (a.bw_size, BANDWIDTH_ITERATIONS),
    };
    let mut v: Vec<String> = vec![cmd.into(), peer.host.clone(), "-p".into(), peer.port.to_string()];
    v.extend([
        "-s".into(),
        size.to_string(),
        "-n".into(),
        n.to_string(),
        "--json".into(),
    ]);
    if let Some(p) = &a.provider {
        v.extend(["-P".into(), p.name().to_string()]);
    }
    if let Some(k) = &a.auth_key {
        v.extend(["--auth-key".into(), k.clone()]);
    }
    if a.auth_munge {
        v.push("--auth-munge".into());
    }
    v
}

/// How a probe's process ended, as the binary saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ended {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Killed by the monitor after its `--timeout` of this many seconds.
    pub timed_out_after_s: Option<u64>,
    pub stdout: String,
    pub stderr: String,
}

/// A latency probe's figures, in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    pub size_bytes: u64,
    pub iterations: u64,
    /// (quantile, seconds): 0 (min), 0.5, 0.9, 0.99, 0.999, 1 (max).
    pub quantiles: Vec<(f64, f64)>,
    pub mean_s: f64,
    /// Link time taken: every iteration's latency, warm-up included.
    pub link_s: f64,
}

/// A bandwidth probe's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Bandwidth {
    pub size_bytes: u64,
    pub bytes_per_s: f64,
    /// Link time taken: the transfer's elapsed time.
    pub link_s: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Figures {
    Latency(Latency),
    Bandwidth(Bandwidth),
}

impl Figures {
    pub fn link_s(&self) -> f64 {
        match self {
            Figures::Latency(l) => l.link_s,
            Figures::Bandwidth(b) => b.link_s,
        }
    }

    /// The figure a window keeps: the median latency, or the bandwidth.
    pub fn headline(&self) -> f64 {
        match self {
            Figures::Latency(l) => l
                .quantiles
                .iter()
                .find(|(q, _)| *q == 0.5)
                .map_or(l.mean_s, |(_, v)| *v),
            Figures::Bandwidth(b) => b.bytes_per_s,
        }
    }
}

/// Why a peer is down: the `reason` label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Nothing listens on the port.
    Refused,
    /// The name does not resolve.
    Resolve,
    /// No route, or no answer to the connection (connect timed out).
    Unreachable,
    /// The shared key or MUNGE credential was refused, or the server
    /// does not authenticate the same way.
    Auth,
    /// The server's limits turn the probe away (--max-memory, ...).
    Limits,
    /// The peer stopped answering in the middle of the probe, or took its
    /// connection and said nothing (a hung node or serve).
    Silent,
    /// The peer closed the connection in the middle of the probe.
    PeerLost,
    /// The peer failed on its side (its provider, its memory).
    PeerFailed,
    /// Something other than `fabdiag serve` answered.
    NotFabdiag,
    /// The provider or memory asked for is missing here.
    Unavailable,
    /// No end within the monitor's --timeout; the probe was killed.
    Timeout,
    /// The probe died of a signal.
    Crashed,
    /// Any other failure; the log line has its message.
    Error,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Refused => "refused",
            Reason::Resolve => "resolve",
            Reason::Unreachable => "unreachable",
            Reason::Auth => "auth",
            Reason::Limits => "limits",
            Reason::Silent => "silent",
            Reason::PeerLost => "peer_lost",
            Reason::PeerFailed => "peer_failed",
            Reason::NotFabdiag => "not_fabdiag",
            Reason::Unavailable => "unavailable",
            Reason::Timeout => "timeout",
            Reason::Crashed => "crashed",
            Reason::Error => "error",
        }
    }
}

/// What a probe found.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Up(Figures),
    Down(Reason, String),
    /// The server was busy with another client's test: try again in a
    /// moment; it says nothing of the link.
    Busy(String),
    /// The server turned the probe away for its tests-per-minute limit:
    /// try again after the seconds given.
    RateLimited(String, f64),
}

impl Outcome {
    /// The `outcome` label of the probe counter.
    pub fn label(&self) -> &'static str {
        Outcome::LABELS[self.index()]
    }

    pub const LABELS: [&'static str; 4] = ["ok", "down", "busy", "rate_limited"];

    /// Its place in `LABELS`.
    pub fn index(&self) -> usize {
        match self {
            Outcome::Up(_) => 0,
            Outcome::Down(..) => 1,
            Outcome::Busy(_) => 2,
            Outcome::RateLimited(..) => 3,
        }
    }
}

/// Seconds before a probe turned away as busy is tried again.
pub const BUSY_RETRY_S: f64 = 2.0;

/// What `kind`'s probe that ended as `e` found.
pub fn outcome(kind: ProbeKind, e: &Ended) -> Outcome {
    if let Some(s) = e.timed_out_after_s {
        return Outcome::Down(Reason::Timeout, format!("no end within {s} s; the probe was killed"));
    }
    let doc: Option<Value> = serde_json::from_str(&e.stdout).ok();
    let Some(doc) = doc else {
        let last = e.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return match e.signal {
            Some(sig) => Outcome::Down(Reason::Crashed, format!("the probe died of signal {sig}: {last}")),
            None => Outcome::Down(
                Reason::Error,
                format!(
                    "the probe printed no report (exit {}): {last}",
                    e.exit_code.map_or("?".to_string(), |c| c.to_string())
                ),
            ),
        };
    };
    if let Some(err) = doc.get("error").filter(|v| !v.is_null()) {
        let message = err.get("message").and_then(Value::as_str).unwrap_or("").to_string();
        let kind_label = err.get("kind").and_then(Value::as_str).unwrap_or("");
        return classify(kind_label, message);
    }
    match doc.get("results").and_then(|r| r.get(0)).and_then(|r| figures(kind, r)) {
        Some(f) => Outcome::Up(f),
        None => Outcome::Down(Reason::Error, "the probe's report has no figures".into()),
    }
}

/// The outcome an error message names. The texts are fabdiag's own
/// (the control protocol's and serve's), so they are matched here.
fn classify(kind: &str, message: String) -> Outcome {
    let has = |s: &str| message.contains(s);
    if has("is busy with") {
        return Outcome::Busy(message);
    }
    if has("tests in the last minute") {
        let after = message
            .split("try again in ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(60.0);
        return Outcome::RateLimited(message, after);
    }
    let reason = if has("connection refused") {
        Reason::Refused
    } else if has("cannot resolve server address") {
        Reason::Resolve
    } else if has("cannot connect to") {
        Reason::Unreachable
    } else if has("authentication failed") || has("shared key") || has("MUNGE") {
        Reason::Auth
    } else if has("--max-memory") || has("--max-test-seconds") {
        Reason::Limits
    } else if has("stopped answering") || has("no fabric completion") || has("sent no fabdiag hello") {
        Reason::Silent
    } else if has("closed the control connection") {
        Reason::PeerLost
    } else if has("not a fabdiag control endpoint") {
        Reason::NotFabdiag
    } else if has("peer failed during") {
        Reason::PeerFailed
    } else if kind == "unavailable" {
        Reason::Unavailable
    } else {
        Reason::Error
    };
    Outcome::Down(reason, message)
}

fn figures(kind: ProbeKind, r: &Value) -> Option<Figures> {
    let u = |k: &str| r.get(k).and_then(Value::as_u64);
    let f = |k: &str| r.get(k).and_then(Value::as_f64).filter(|v| v.is_finite() && *v >= 0.0);
    let size_bytes = u("size_bytes")?;
    match kind {
        ProbeKind::Latency => {
            // divided, not multiplied by 1e-9: 18835 ns is 1.8835e-5 s exactly as printed
            let ns = |k: &str| f(k).map(|v| v / 1e9);
            let iterations = u("iterations")?;
            let mean_s = ns("mean_ns")?;
            let mut quantiles = Vec::new();
            for (q, k) in [
                (0.0, "min_ns"),
                (0.5, "p50_ns"),
                (0.9, "p90_ns"),
                (0.99, "p99_ns"),
                (0.999, "p999_ns"),
                (1.0, "max_ns"),
            ] {
                quantiles.push((q, ns(k)?));
            }
            let warmup = u("warmup_iterations").unwrap_or(0);
            Some(Figures::Latency(Latency {
                size_bytes,
                iterations,
                quantiles,
                mean_s,
                link_s: (iterations + warmup) as f64 * mean_s,
            }))
        }
        ProbeKind::Bandwidth => Some(Figures::Bandwidth(Bandwidth {
            size_bytes,
            // the tools' MB is 10^6 bytes
            bytes_per_s: f("bw_mb_per_s")? * 1e6,
            link_s: f("elapsed_ns")? / 1e9,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(stdout: &str) -> Ended {
        Ended {
            exit_code: Some(0),
            stdout: stdout.into(),
            ..Ended::default()
        }
    }

    fn failed(kind: &str, message: &str) -> Outcome {
        let doc = serde_json::json!({"results": [], "error": {"kind": kind, "message": message}});
        outcome(ProbeKind::Latency, &ended(&doc.to_string()))
    }

    #[test]
    fn the_probe_command_lines() {
        let peer = Peer {
            name: "n1".into(),
            host: "fd00::2".into(),
            port: 5000,
        };
        let mut a = ProbeArgs {
            lat_size: 8,
            bw_size: 65536,
            provider: None,
            auth_key: None,
            auth_munge: false,
        };
        assert_eq!(
            command(ProbeKind::Latency, &peer, &a).join(" "),
            "send-lat fd00::2 -p 5000 -s 8 -n 100 --json"
        );
        a.provider = Some(fabdiag_model::Provider::named("tcp"));
        a.auth_key = Some("/etc/fabdiag/key".into());
        assert_eq!(
            command(ProbeKind::Bandwidth, &peer, &a).join(" "),
            "write-bw fd00::2 -p 5000 -s 65536 -n 16 --json -P tcp --auth-key /etc/fabdiag/key"
        );
        a.auth_key = None;
        a.auth_munge = true;
        assert_eq!(
            command(ProbeKind::Latency, &peer, &a).join(" "),
            "send-lat fd00::2 -p 5000 -s 8 -n 100 --json -P tcp --auth-munge"
        );
    }

    #[test]
    fn figures_from_the_tools_reports() {
        let lat = r#"{"results":[{"size_bytes":8,"iterations":100,"warmup_iterations":10,
            "min_ns":10000,"max_ns":70000,"mean_ns":20000,"p50_ns":18000,"p90_ns":22000,
            "p99_ns":45000,"p999_ns":70000}],"error":null}"#;
        let Outcome::Up(Figures::Latency(l)) = outcome(ProbeKind::Latency, &ended(lat)) else {
            panic!("not up")
        };
        assert_eq!(l.quantiles[1], (0.5, 18e-6));
        assert!((l.link_s - 110.0 * 20e-6).abs() < 1e-12, "{}", l.link_s);
        let bw = r#"{"results":[{"size_bytes":65536,"elapsed_ns":166000000,"bw_mb_per_s":1613.5}],"error":null}"#;
        let Outcome::Up(f) = outcome(ProbeKind::Bandwidth, &ended(bw)) else {
            panic!("not up")
        };
        assert_eq!(f.headline(), 1613.5e6);
        assert!((f.link_s() - 0.166).abs() < 1e-12);
        let empty = r#"{"results":[],"error":null}"#;
        assert_eq!(
            outcome(ProbeKind::Bandwidth, &ended(empty)),
            Outcome::Down(Reason::Error, "the probe's report has no figures".into())
        );
    }

    #[test]
    fn every_failure_has_its_reason() {
        let down = |kind, m: &str| match failed(kind, m) {
            Outcome::Down(r, _) => r.as_str(),
            o => o.label(),
        };
        let cases = [
            ("no server listening on 10.0.0.2:49194 (connection refused)", "refused"),
            ("cannot resolve server address 'n9': Name or service not known", "resolve"),
            ("cannot connect to 10.0.0.2:49194: timed out", "unreachable"),
            ("authentication failed: the server refused this key", "auth"),
            ("peer failed during hello: this server admits only clients that prove its shared key: give the client --auth-key with the server's key file", "auth"),
            ("peer failed during hello: this server has no shared key and cannot prove one; the client asked for it (--auth-key): give the server the same --auth-key", "auth"),
            ("peer failed during hello: this server admits only clients with a MUNGE credential: give the client --auth-munge", "auth"),
            ("authentication failed: the server's MUNGE credential is refused: it was replayed: munged decoded it before", "auth"),
            ("peer failed during setup: this server allows a test at most 1 GiB of buffers (fabdiag serve --max-memory); this one needs 2 GiB", "limits"),
            ("peer stopped answering during the test (nothing heard for 20 s)", "silent"),
            ("peer closed the control connection during the test", "peer_lost"),
            ("peer is not a fabdiag control endpoint: bad magic", "not_fabdiag"),
            ("peer accepted the connection and sent no fabdiag hello within 5 s: a hung node or fabdiag serve, or a service that waits for its client to speak first", "silent"),
            ("peer failed during setup: fi_mr_reg: Cannot allocate memory", "peer_failed"),
            ("fi_writemsg failed: -22", "error"),
        ];
        for (m, want) in cases {
            assert_eq!(down("runtime", m), want, "{m}");
        }
        assert_eq!(down("unavailable", "provider psm3 not found"), "unavailable");
        assert_eq!(
            failed("runtime", "peer failed during hello: fabdiag serve on port 49194 is busy with a write_bw test from 10.0.0.9; try again when it ends"),
            Outcome::Busy("peer failed during hello: fabdiag serve on port 49194 is busy with a write_bw test from 10.0.0.9; try again when it ends".into())
        );
        let m = "peer failed during hello: 10.0.0.1 started 30 tests in the last minute, this server's limit (fabdiag serve --max-tests-per-minute); try again in 17 s";
        assert_eq!(failed("runtime", m), Outcome::RateLimited(m.into(), 17.0));
    }

    #[test]
    fn a_probe_without_a_report() {
        let e = Ended {
            signal: Some(11),
            stderr: "start\nSegmentation fault\n\n".into(),
            ..Ended::default()
        };
        assert_eq!(
            outcome(ProbeKind::Latency, &e),
            Outcome::Down(
                Reason::Crashed,
                "the probe died of signal 11: Segmentation fault".into()
            )
        );
        let e = Ended {
            exit_code: Some(2),
            stdout: "{not json".into(),
            stderr: "fabdiag: odd\n".into(),
            ..Ended::default()
        };
        assert_eq!(
            outcome(ProbeKind::Latency, &e),
            Outcome::Down(
                Reason::Error,
                "the probe printed no report (exit 2): fabdiag: odd".into()
            )
        );
        let e = Ended {
            timed_out_after_s: Some(15),
            ..Ended::default()
        };
        assert_eq!(outcome(ProbeKind::Latency, &e).label(), "down");
    }
}
