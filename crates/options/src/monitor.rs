//! The command line of `fabdiag monitor`, parsed with the same getopt rules
//! as the tools. Nothing here reads the peers file, runs `sinfo` or opens
//! a socket.

use crate::getopt::{self, Parsed};
use crate::resolve::{Action, OptionError};
use crate::row::{self, Row, Style};
use fabdiag_model::Provider;
use std::net::SocketAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MonitorOpt {
    Peers,
    Partition,
    Port,
    Listen,
    Interval,
    BwInterval,
    Budget,
    Timeout,
    LatSize,
    BwSize,
    Window,
    Parallel,
    Provider,
    AuthKey,
    AuthMunge,
    Help,
}

const STYLE: Style = Style::Getopt { width: 25 };

const ROWS: &[Row<MonitorOpt>] = &[
    Row::valued(
        MonitorOpt::Peers,
        None,
        "peers",
        "FILE",
        &[
            "The peers: one HOST, HOST:PORT or [IPV6]:PORT per",
            "line; # starts a comment",
        ],
    )
    .brief("The peers file: HOST[:PORT] per line"),
    Row::valued(
        MonitorOpt::Partition,
        None,
        "partition",
        "NAME",
        &["The nodes of this Slurm partition (from sinfo),", "less this one"],
    )
    .brief("Watch the nodes of this Slurm partition"),
    Row::valued(
        MonitorOpt::Port,
        Some('p'),
        "port",
        "PORT",
        &[
            "The peers' fabdiag serve port, where a line gives",
            "none (default: 49194)",
        ],
    )
    .brief("The peers' fabdiag serve port"),
    Row::valued(
        MonitorOpt::Listen,
        None,
        "listen",
        "ADDR",
        &[
            "Serve /metrics here (default: {DEFAULT_LISTEN}; give",
            "0.0.0.0:9477 to let another host scrape)",
        ],
    )
    .brief("Serve /metrics at this address"),
    Row::valued(
        MonitorOpt::Interval,
        None,
        "interval",
        "SEC",
        &[
            "Each peer's latency probe every SEC seconds (default:",
            "{DEFAULT_INTERVAL_S})",
        ],
    )
    .brief("Seconds between a peer's latency probes"),
    Row::valued(
        MonitorOpt::BwInterval,
        None,
        "bw-interval",
        "SEC",
        &[
            "Each peer's bandwidth probe every SEC seconds, 0 for",
            "none (default: {DEFAULT_BW_INTERVAL_S})",
        ],
    )
    .brief("Seconds between a peer's bandwidth probes (0: none)"),
    Row::valued(
        MonitorOpt::Budget,
        None,
        "budget",
        "PERCENT",
        &[
            "The most of the link's time the probes may take, all",
            "peers together; probes wait for it (default: {DEFAULT_BUDGET_PERCENT})",
        ],
    )
    .brief("Most percent of link time probing may take"),
    Row::valued(
        MonitorOpt::Timeout,
        None,
        "timeout",
        "SEC",
        &[
            "Kill a probe that has not ended after SEC seconds and",
            "count the peer down (default: {DEFAULT_TIMEOUT_S})",
        ],
    )
    .brief("Kill a probe after this many seconds"),
    Row::valued(
        MonitorOpt::LatSize,
        None,
        "lat-size",
        "BYTES",
        &[
            "The latency probe's message size (send-lat, 100",
            "iterations; default: {DEFAULT_LAT_SIZE})",
        ],
    )
    .brief("Latency probe message size"),
    Row::valued(
        MonitorOpt::BwSize,
        None,
        "bw-size",
        "BYTES",
        &[
            "The bandwidth probe's message size (write-bw, 16",
            "iterations of 256 writes; default: {DEFAULT_BW_SIZE})",
        ],
    )
    .brief("Bandwidth probe message size"),
    Row::valued(
        MonitorOpt::Window,
        None,
        "window",
        "N",
        &[
            "The rolling minimum, median and maximum cover the",
            "last N probes of each kind (default: {DEFAULT_WINDOW})",
        ],
    )
    .brief("Probes the rolling statistics cover"),
    Row::valued(
        MonitorOpt::Parallel,
        None,
        "parallel",
        "N",
        &[
            "Latency probes that may run at once; a bandwidth",
            "probe always runs alone (default: 1)",
        ],
    )
    .brief("Latency probes run at once"),
    Row::valued(
        MonitorOpt::Provider,
        Some('P'),
        "provider",
        "PROV",
        &["The libfabric provider the probes use (default: the", "tools' choice)"],
    )
    .brief("The libfabric provider to probe with"),
    Row::valued(
        MonitorOpt::AuthKey,
        None,
        "auth-key",
        "FILE",
        &["Prove this shared key to every peer (as serve's", "--auth-key)"],
    )
    .brief("Prove this shared key to every peer"),
    Row::flag(
        MonitorOpt::AuthMunge,
        None,
        "auth-munge",
        &["Prove a MUNGE credential to every peer (as serve's", "--auth-munge)"],
    )
    .brief("Prove a MUNGE credential to every peer"),
    Row::flag(MonitorOpt::Help, Some('h'), "help", &["Print this help text and exit"]),
];

pub const DEFAULT_LISTEN: &str = "127.0.0.1:9477";
pub const DEFAULT_INTERVAL_S: f64 = 30.0;
pub const DEFAULT_BW_INTERVAL_S: f64 = 300.0;
pub const DEFAULT_BUDGET_PERCENT: f64 = 1.0;
/// Under the 20 s a client waits for a silent peer, so the monitor's own
/// limit names a hung peer first.
pub const DEFAULT_TIMEOUT_S: u64 = 15;
pub const DEFAULT_LAT_SIZE: u64 = 8;
pub const DEFAULT_BW_SIZE: u64 = 65536;
pub const DEFAULT_WINDOW: usize = 20;

/// Every option of `fabdiag monitor`: what its shell completion offers.
pub fn completions() -> Vec<row::Completion> {
    row::completions(ROWS, &fill)
}

fn fill(line: &str) -> String {
    let pairs = [
        ("DEFAULT_LISTEN", DEFAULT_LISTEN.to_string()),
        ("DEFAULT_INTERVAL_S", DEFAULT_INTERVAL_S.to_string()),
        ("DEFAULT_BW_INTERVAL_S", DEFAULT_BW_INTERVAL_S.to_string()),
        ("DEFAULT_BUDGET_PERCENT", DEFAULT_BUDGET_PERCENT.to_string()),
        ("DEFAULT_TIMEOUT_S", DEFAULT_TIMEOUT_S.to_string()),
        ("DEFAULT_LAT_SIZE", DEFAULT_LAT_SIZE.to_string()),
        ("DEFAULT_BW_SIZE", DEFAULT_BW_SIZE.to_string()),
        ("DEFAULT_WINDOW", DEFAULT_WINDOW.to_string()),
    ];
    row::fill_in(line, &pairs)
}

/// Where the peers come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerSource {
    File(String),
    Partition(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct MonitorOptions {
    pub peers: PeerSource,
    pub port: u16,
    pub listen: SocketAddr,
    pub interval_s: f64,
    /// None: no bandwidth probes.
    pub bw_interval_s: Option<f64>,
    /// The share of link time, 0.01 for 1 %.
    pub budget: f64,
    pub timeout_s: u64,
    pub lat_size: u64,
    pub bw_size: u64,
    pub window: usize,
    pub parallel: usize,
    pub provider: Option<Provider>,
    pub auth_key: Option<String>,
    /// `--auth-munge`: prove MUNGE credentials instead.
    pub auth_munge: bool,
}

pub fn usage(prog: &str) -> String {
    format!(
        "Usage:
  {prog} (--peers FILE | --partition NAME) [-p PORT] [--listen ADDR]
         [--interval SEC] [--bw-interval SEC] [--budget PERCENT] [--timeout SEC]
         [--lat-size BYTES] [--bw-size BYTES] [--window N] [--parallel N]
         [-P PROVIDER] [--auth-key FILE | --auth-munge]
                         Probe peers' fabdiag serve on a schedule and serve
                         the figures at http://ADDR/metrics for Prometheus

Options:
{}
One line per peer state change goes to stderr. SIGTERM or SIGINT stops the
probes and exits 0.
",
        row::help_block(ROWS, STYLE, &fill)
    )
}

fn seconds(v: &str, least: f64) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= least && *s <= 86_400.0)
}

fn count(v: &str, least: u64, most: u64) -> Option<u64> {
    v.parse::<u64>().ok().filter(|n| (least..=most).contains(n))
}

pub fn parse(args: &[String]) -> Result<Action<MonitorOptions>, OptionError> {
    let bad = |m: String| OptionError::Invalid(m);
    let mut peers: Option<PeerSource> = None;
    let mut o = MonitorOptions {
        peers: PeerSource::File(String::new()),
        port: fabdiag_model::DEFAULT_PORT,
        listen: DEFAULT_LISTEN
            .parse()
            .map_err(|_| bad("bad default listen address".into()))?,
        interval_s: DEFAULT_INTERVAL_S,
        bw_interval_s: Some(DEFAULT_BW_INTERVAL_S),
        budget: DEFAULT_BUDGET_PERCENT / 100.0,
        timeout_s: DEFAULT_TIMEOUT_S,
        lat_size: DEFAULT_LAT_SIZE,
        bw_size: DEFAULT_BW_SIZE,
        window: DEFAULT_WINDOW,
        parallel: 1,
        provider: None,
        auth_key: None,
        auth_munge: false,
    };
    for p in getopt::parse(ROWS, args).map_err(|m| bad(format!("{m} (see -h)")))? {
        match p {
            Parsed::Opt(MonitorOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(id, v) => apply(&mut o, &mut peers, id, v.unwrap_or_default())?,
            Parsed::Operand(x) => return Err(bad(format!("Unexpected argument: {x} (see -h)"))),
        }
    }
    o.peers = peers.ok_or_else(|| bad("Which peers? Give --peers FILE or --partition NAME (see -h)".into()))?;
    crate::resolve::one_auth(o.auth_key.is_some(), o.auth_munge)?;
    if o.bw_interval_s.is_some_and(|b| b < o.interval_s) {
        return Err(bad(
            "--bw-interval is shorter than --interval: bandwidth probes are the rarer kind".into(),
        ));
    }
    Ok(Action::Run(o))
}

/// One option `id` with its value `v` into `o` (the peers into `peers`).
fn apply(o: &mut MonitorOptions, peers: &mut Option<PeerSource>, id: MonitorOpt, v: String) -> Result<(), OptionError> {
    let bad = |m: String| OptionError::Invalid(m);
    let nonempty = |what: &str| match v.is_empty() {
        true => Err(bad(format!("Invalid {what}: ''"))),
        false => Ok(v.clone()),
    };
    match id {
        MonitorOpt::Peers | MonitorOpt::Partition => {
            if peers.is_some() {
                return Err(bad("one of --peers and --partition, once".into()));
            }
            *peers = Some(match id {
                MonitorOpt::Peers => PeerSource::File(nonempty("peers file")?),
                _ => PeerSource::Partition(nonempty("partition")?),
            });
        }
        MonitorOpt::Port => {
            o.port = count(&v, 1, 65535)
                .map(|p| p as u16)
                .ok_or_else(|| bad(format!("Invalid port: {v} (1 to 65535)")))?
        }
        MonitorOpt::Listen => {
            o.listen = v.parse().map_err(|_| {
                bad(format!(
                    "Invalid listen address: '{v}' (ADDRESS:PORT, e.g. 0.0.0.0:9477)"
                ))
            })?
        }
        MonitorOpt::Interval => {
            o.interval_s =
                seconds(&v, 1.0).ok_or_else(|| bad(format!("Invalid interval: {v} (seconds, 1 to 86400)")))?
        }
        MonitorOpt::BwInterval => {
            o.bw_interval_s = match v.as_str() {
                "0" => None,
                _ => Some(seconds(&v, 1.0).ok_or_else(|| {
                    bad(format!(
                        "Invalid bandwidth interval: {v} (seconds, 1 to 86400, or 0 for none)"
                    ))
                })?),
            }
        }
        MonitorOpt::Budget => {
            o.budget = v
                .parse::<f64>()
                .ok()
                .filter(|b| b.is_finite() && *b > 0.0 && *b <= 100.0)
                .map(|b| b / 100.0)
                .ok_or_else(|| {
                    bad(format!(
                        "Invalid budget: {v} (percent of link time, above 0, at most 100)"
                    ))
                })?
        }
        MonitorOpt::Timeout => {
            o.timeout_s = count(&v, 1, 3600).ok_or_else(|| bad(format!("Invalid timeout: {v} (seconds, 1 to 3600)")))?
        }
        MonitorOpt::LatSize | MonitorOpt::BwSize => {
            let n = count(&v, 1, fabdiag_model::MAX_SIZE).ok_or_else(|| {
                bad(format!(
                    "Invalid probe size: {v} (bytes, 1 to {})",
                    fabdiag_model::MAX_SIZE
                ))
            })?;
            match id {
                MonitorOpt::LatSize => o.lat_size = n,
                _ => o.bw_size = n,
            }
        }
        MonitorOpt::Window => {
            o.window =
                count(&v, 1, 10_000).ok_or_else(|| bad(format!("Invalid window: {v} (probes, 1 to 10000)")))? as usize
        }
        MonitorOpt::Parallel => {
            o.parallel = count(&v, 1, 64)
                .ok_or_else(|| bad(format!("Invalid parallel: {v} (probes at once, 1 to 64)")))?
                as usize
        }
        MonitorOpt::Provider => o.provider = Some(Provider::named(&nonempty("provider")?)),
        MonitorOpt::AuthKey => o.auth_key = Some(nonempty("key file")?),
        MonitorOpt::AuthMunge => o.auth_munge = true,
        MonitorOpt::Help => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn run(a: &[&str]) -> MonitorOptions {
        match parse(&args(a)) {
            Ok(Action::Run(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn monitor_options() {
        let d = run(&["--peers", "p.txt"]);
        assert_eq!(d.peers, PeerSource::File("p.txt".into()));
        assert_eq!(d.listen.to_string(), "127.0.0.1:9477");
        assert_eq!((d.interval_s, d.bw_interval_s, d.budget), (30.0, Some(300.0), 0.01));
        assert_eq!(
            (d.timeout_s, d.lat_size, d.bw_size, d.window, d.parallel),
            (15, 8, 65536, 20, 1)
        );
        let o = run(&[
            "--partition=gpu",
            "-p",
            "5000",
            "--listen",
            "[::1]:9000",
            "--bw-interval",
            "0",
            "--budget",
            "0.5",
            "--parallel=4",
            "-P",
            "tcp",
            "--auth-key",
            "/k",
        ]);
        assert_eq!(o.peers, PeerSource::Partition("gpu".into()));
        assert_eq!((o.port, o.listen.to_string()), (5000, "[::1]:9000".to_string()));
        assert_eq!((o.bw_interval_s, o.budget, o.parallel), (None, 0.005, 4));
        assert_eq!(
            (o.provider.as_ref().map(Provider::name), o.auth_key.as_deref()),
            (Some("tcp"), Some("/k"))
        );
        for (a, msg) in [
            (
                &["--peers", "p", "--auth-key", "/k", "--auth-munge"][..],
                "--auth-key and --auth-munge are two ways to authenticate: give one",
            ),
            (&[][..], "Which peers? Give --peers FILE or --partition NAME (see -h)"),
            (
                &["--peers", "a", "--partition", "b"],
                "one of --peers and --partition, once",
            ),
            (&["--peers="], "Invalid peers file: ''"),
            (&["--peers", "a", "-p", "0"], "Invalid port: 0 (1 to 65535)"),
            (
                &["--peers", "a", "--listen", "9477"],
                "Invalid listen address: '9477' (ADDRESS:PORT, e.g. 0.0.0.0:9477)",
            ),
            (
                &["--peers", "a", "--interval", "0.5"],
                "Invalid interval: 0.5 (seconds, 1 to 86400)",
            ),
            (
                &["--peers", "a", "--budget", "0"],
                "Invalid budget: 0 (percent of link time, above 0, at most 100)",
            ),
            (
                &["--peers", "a", "--budget", "nan"],
                "Invalid budget: nan (percent of link time, above 0, at most 100)",
            ),
            (
                &["--peers", "a", "--timeout", "0"],
                "Invalid timeout: 0 (seconds, 1 to 3600)",
            ),
            (
                &["--peers", "a", "--window", "0"],
                "Invalid window: 0 (probes, 1 to 10000)",
            ),
            (
                &["--peers", "a", "--parallel", "65"],
                "Invalid parallel: 65 (probes at once, 1 to 64)",
            ),
            (
                &["--peers", "a", "--interval", "60", "--bw-interval", "30"],
                "--bw-interval is shorter than --interval: bandwidth probes are the rarer kind",
            ),
            (&["--peers", "a", "x"], "Unexpected argument: x (see -h)"),
        ] {
            assert_eq!(parse(&args(a)), Err(OptionError::Invalid(msg.into())), "{a:?}");
        }
        assert!(matches!(
            parse(&args(&["--peers", "a", "--lat-size", "0"])),
            Err(OptionError::Invalid(m)) if m.starts_with("Invalid probe size: 0 (bytes, 1 to ")
        ));
        assert_eq!(parse(&args(&["-h"])), Ok(Action::Help));
        for c in completions() {
            let (long, help) = (c.long, c.brief);
            assert!(!help.is_empty(), "--{long} has no help line");
            assert!(
                usage("fabdiag monitor").contains(&format!("--{long}")),
                "--{long} not in the usage"
            );
        }
    }
}
