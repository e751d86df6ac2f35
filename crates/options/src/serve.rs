//! The command line of `fabdiag serve`: a few options, parsed with the
//! same getopt rules as the tools.

use crate::getopt::{self, Parsed};
use crate::numbers::parse_strtoul;
use crate::resolve::{Action, GpuRequest, OptionError};
use crate::row::{self, Row, Style};
use fabdiag_model::{PollMode, Provider, ServeLimits};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ServeOpt {
    Port,
    Provider,
    Device,
    TxGpu,
    RxGpu,
    GpuType,
    Json,
    MaxMemory,
    MaxTestSeconds,
    MaxTestsPerMinute,
    AuthKey,
    AuthMunge,
    MungeUsers,
    Poll,
    Help,
    Version,
}

const STYLE: Style = Style::Getopt { width: 25 };

const ROWS: &[Row<ServeOpt>] = &[
    Row::valued(
        ServeOpt::Port,
        Some('p'),
        "port",
        "PORT",
        &["The port to listen on (default: 49194)"],
    )
    .brief("The port to listen on"),
    Row::valued(
        ServeOpt::Provider,
        Some('P'),
        "provider",
        "PROV",
        &["Run only clients of this libfabric provider"],
    )
    .brief("Run only clients of this provider"),
    Row::valued(
        ServeOpt::Device,
        Some('d'),
        "device",
        "DEV",
        &[
            "Device (libfabric domain) name (default: the domain",
            "that reaches each client)",
        ],
    )
    .brief("Device (libfabric domain) name"),
    Row::valued(
        ServeOpt::TxGpu,
        Some('t'),
        "tx-gpu",
        "GPU",
        &["GPU index for this server's TX buffer (default: no GPU)"],
    )
    .brief("GPU index for this server's TX buffer"),
    Row::valued(
        ServeOpt::RxGpu,
        Some('r'),
        "rx-gpu",
        "GPU",
        &["GPU index for this server's RX buffer (default: no GPU)"],
    )
    .brief("GPU index for this server's RX buffer"),
    Row::valued(
        ServeOpt::GpuType,
        Some('g'),
        "gpu-type",
        "TYPE",
        &[
            "GPU type (AMD or NVIDIA or INTEL) (default type determined",
            "by discovered GPU files on system)",
        ],
    )
    .brief("GPU type (AMD, NVIDIA or INTEL)"),
    Row::flag(
        ServeOpt::Json,
        None,
        "json",
        &["One JSON line per served test on stdout"],
    )
    .brief("One JSON line per served test"),
    Row::valued(
        ServeOpt::MaxMemory,
        None,
        "max-memory",
        "SIZE",
        &[
            "Refuse a test that needs more than SIZE of buffers",
            "here (bytes, or with K, M, G: 1G) (default: no limit)",
        ],
    )
    .brief("Refuse a test needing more buffer memory"),
    Row::valued(
        ServeOpt::MaxTestSeconds,
        None,
        "max-test-seconds",
        "S",
        &[
            "Refuse a duration test longer than S seconds, and",
            "end any test still running at twice S (at S + 10 s",
            "when S is over 10) (default: no limit)",
        ],
    )
    .brief("Refuse or end a test longer than this"),
    Row::valued(
        ServeOpt::MaxTestsPerMinute,
        None,
        "max-tests-per-minute",
        "N",
        &[
            "Refuse a client (an address) that starts more than N",
            "tests a minute (default: no limit)",
        ],
    )
    .brief("Refuse a client starting more tests a minute"),
    Row::valued(
        ServeOpt::AuthKey,
        None,
        "auth-key",
        "FILE",
        &[
            "Admit only clients that prove the shared key in FILE",
            "(their --auth-key), and prove it to them",
        ],
    )
    .brief("Admit only clients proving this shared key"),
    Row::flag(
        ServeOpt::AuthMunge,
        None,
        "auth-munge",
        &[
            "Admit only clients with a MUNGE credential from the",
            "cluster's munge key (their --auth-munge), and prove",
            "this server's to them",
        ],
    )
    .brief("Admit only clients with a MUNGE credential"),
    Row::valued(
        ServeOpt::MungeUsers,
        None,
        "munge-users",
        "LIST",
        &[
            "Admit only these users' credentials (names or UIDs,",
            "comma-separated) (default: any user of the cluster)",
        ],
    )
    .brief("Admit only these users' MUNGE credentials"),
    Row::valued(
        ServeOpt::Poll,
        None,
        "poll",
        "MODE",
        &[
            "What this server's side of a test does when its",
            "completion queue is empty: spin (poll again at once;",
            "the default) or yield (let any other thread ready to",
            "run on the CPU have it first: for a node whose cores",
            "are busy; each client chooses its own side's)",
        ],
    )
    .brief("Spin (default) or yield when the completion queue is empty"),
    Row::flag(ServeOpt::Help, Some('h'), "help", &["Print this help text and exit"]),
    Row::flag(ServeOpt::Version, Some('V'), "version", &["Print the version and exit"]),
];

/// Every option of `fabdiag serve`: what its shell completion offers.
pub fn completions() -> Vec<row::Completion> {
    row::completions(ROWS, &row::as_is)
}

/// `fabdiag serve`'s settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    pub port: u16,
    pub provider: Option<Provider>,
    pub device: Option<String>,
    /// `-t/-r/-g`: this server's buffers on a GPU, for every test that can
    /// use GPU memory.
    pub gpu: GpuRequest,
    pub json: bool,
    /// What one client's test may take.
    pub limits: ServeLimits,
    /// `--auth-key FILE`: admit only clients that prove this shared key.
    pub auth_key: Option<String>,
    /// `--auth-munge`: admit only clients with a MUNGE credential.
    pub auth_munge: bool,
    /// `--munge-users LIST`: and only these users' (names or UIDs).
    pub munge_users: Option<Vec<String>>,
    /// `--poll`: how this server's side of every test polls.
    pub poll: PollMode,
}

pub fn serve_usage(prog: &str) -> String {
    format!(
        "Usage:
  {prog} [-p PORT] [-P PROV] [-d DEV] [-t GPU] [-r GPU] [-g TYPE] [--json]
        [--max-memory SIZE] [--max-test-seconds S] [--max-tests-per-minute N]
        [--auth-key FILE | --auth-munge [--munge-users LIST]] [--poll MODE]
                         Serve every fabdiag tool, client after client

Options:
{}
One test runs at a time, each in its own worker process; a client that
arrives meanwhile is told the server is busy. SIGINT or SIGTERM ends it.
-t/-r apply to the bandwidth and latency tests; the atomic tests, which
have no GPU options, use system memory.
",
        row::help_block(ROWS, STYLE, &row::as_is)
    )
}

pub fn serve(args: &[String]) -> Result<Action<ServeOptions>, OptionError> {
    let mut o = ServeOptions {
        port: fabdiag_model::DEFAULT_PORT,
        provider: None,
        device: None,
        gpu: GpuRequest::default(),
        json: false,
        limits: ServeLimits::default(),
        auth_key: None,
        auth_munge: false,
        munge_users: None,
        poll: PollMode::Spin,
    };
    let mut gpu = GpuWords::default();
    let bad = |m: String| OptionError::Invalid(m);
    for p in getopt::parse(ROWS, args).map_err(|m| bad(format!("{m} (see -h)")))? {
        match p {
            Parsed::Opt(ServeOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(ServeOpt::Version, _) => return Ok(Action::Version),
            Parsed::Opt(id, v) => apply(&mut o, &mut gpu, id, v.unwrap_or_default())?,
            Parsed::Operand(x) => return Err(bad(format!("Unexpected argument: {x}"))),
        }
    }
    o.gpu = GpuRequest::parse(gpu.tx.as_deref(), gpu.rx.as_deref(), gpu.kind.as_deref())?;
    crate::resolve::one_auth(o.auth_key.is_some(), o.auth_munge)?;
    if o.munge_users.is_some() && !o.auth_munge {
        return Err(bad("--munge-users needs --auth-munge".into()));
    }
    Ok(Action::Run(o))
}

/// `-t`, `-r` and `-g` as given, checked together once all are read.
#[derive(Default)]
struct GpuWords {
    tx: Option<String>,
    rx: Option<String>,
    kind: Option<String>,
}

/// One option `id` with its value `v` into `o` (the GPU words into `gpu`).
fn apply(o: &mut ServeOptions, gpu: &mut GpuWords, id: ServeOpt, v: String) -> Result<(), OptionError> {
    let bad = |m: String| OptionError::Invalid(m);
    match id {
        ServeOpt::Help | ServeOpt::Version => {}
        ServeOpt::Port => {
            o.port = match parse_strtoul(&v).filter(|&n| n <= u16::MAX as u64) {
                Some(0) => fabdiag_model::DEFAULT_PORT,
                Some(n) => n as u16,
                None => return Err(bad(format!("Invalid port: {v}"))),
            }
        }
        ServeOpt::Provider => o.provider = Some(Provider::parse(&v).map_err(|e| bad(e.to_string()))?),
        ServeOpt::Device if v.is_empty() => return Err(bad("Invalid device name: ".into())),
        ServeOpt::Device => o.device = Some(v),
        ServeOpt::TxGpu => gpu.tx = Some(v),
        ServeOpt::RxGpu => gpu.rx = Some(v),
        ServeOpt::GpuType => gpu.kind = Some(v),
        ServeOpt::Json => o.json = true,
        ServeOpt::MaxMemory => {
            o.limits.max_memory_bytes = Some(memory_size(&v).ok_or_else(|| {
                bad(format!(
                    "Invalid --max-memory: '{v}' (bytes, or a number with K, M or G: 512M)"
                ))
            })?)
        }
        ServeOpt::MaxTestSeconds => {
            o.limits.max_test_s = Some(
                parse_strtoul(&v)
                    .filter(|&s| s >= 1)
                    .ok_or_else(|| bad(format!("Invalid --max-test-seconds: '{v}' (1 or more)")))?,
            )
        }
        ServeOpt::MaxTestsPerMinute => {
            o.limits.max_tests_per_minute = Some(
                parse_strtoul(&v)
                    .filter(|&n| n >= 1)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| bad(format!("Invalid --max-tests-per-minute: '{v}' (1 or more)")))?,
            )
        }
        ServeOpt::AuthKey if v.is_empty() => return Err(bad("Invalid --auth-key: ''".into())),
        ServeOpt::AuthKey => o.auth_key = Some(v),
        ServeOpt::AuthMunge => o.auth_munge = true,
        ServeOpt::MungeUsers => o.munge_users = Some(munge_users(&v)?),
        ServeOpt::Poll => o.poll = crate::resolve::poll_mode(&v)?,
    }
    Ok(())
}

/// `--munge-users`: user names or UIDs, comma-separated, none empty.
pub fn munge_users(v: &str) -> Result<Vec<String>, OptionError> {
    let list: Vec<String> = v.split(',').map(str::to_string).collect();
    match list.iter().find(|u| u.is_empty() || u.contains(char::is_whitespace)) {
        Some(_) => Err(OptionError::Invalid(format!(
            "Invalid --munge-users: '{v}' (user names or UIDs, comma-separated)"
        ))),
        None => Ok(list),
    }
}

/// A memory size: bytes, or a number with K, M, G or T (powers of 1024),
/// at least one page's worth (4096 bytes).
fn memory_size(v: &str) -> Option<u64> {
    let (digits, shift) = match v.char_indices().last()? {
        (i, 'K' | 'k') => (&v[..i], 10),
        (i, 'M' | 'm') => (&v[..i], 20),
        (i, 'G' | 'g') => (&v[..i], 30),
        (i, 'T' | 't') => (&v[..i], 40),
        _ => (v, 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1u64 << shift).filter(|&b| b >= 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn serve_authenticates_one_way() {
        let Action::Run(o) = serve(&args(&["--auth-munge", "--munge-users", "root,4242"])).unwrap() else {
            panic!()
        };
        assert!(o.auth_munge && o.auth_key.is_none());
        assert_eq!(o.munge_users, Some(vec!["root".to_string(), "4242".to_string()]));
        for (a, m) in [
            (
                &["--auth-munge", "--auth-key", "/k"][..],
                "--auth-key and --auth-munge are two ways to authenticate: give one",
            ),
            (&["--munge-users", "root"][..], "--munge-users needs --auth-munge"),
            (
                &["--auth-munge", "--munge-users", "root,,x"][..],
                "Invalid --munge-users: 'root,,x' (user names or UIDs, comma-separated)",
            ),
            (
                &["--auth-munge", "--munge-users="][..],
                "Invalid --munge-users: '' (user names or UIDs, comma-separated)",
            ),
        ] {
            assert_eq!(serve(&args(a)), Err(OptionError::Invalid(m.into())), "{a:?}");
        }
    }

    #[test]
    fn serve_polls_as_told() {
        let poll = |a: &[&str]| match serve(&args(a)) {
            Ok(Action::Run(o)) => Ok(o.poll),
            Ok(_) => panic!("{a:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(poll(&[]), Ok(PollMode::Spin));
        assert_eq!(poll(&["--poll", "yield"]), Ok(PollMode::Yield));
        assert_eq!(poll(&["--poll=spin"]), Ok(PollMode::Spin));
        assert_eq!(
            poll(&["--poll", "nap"]),
            Err(OptionError::Invalid(
                "Invalid poll mode: nap. Must be spin or yield".into()
            ))
        );
    }

    #[test]
    fn serve_options() {
        let Action::Run(o) = serve(&args(&["-p", "5000", "-P", "tcp", "--json"])).unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.port, o.provider.as_ref().map(Provider::name), o.json),
            (5000, Some("tcp"), true)
        );
        let Action::Run(d) = serve(&[]).unwrap() else { panic!() };
        assert_eq!((d.port, d.device), (49194, None));
        assert_eq!(
            serve(&args(&["-p", "70000"])),
            Err(OptionError::Invalid("Invalid port: 70000".into()))
        );
        assert_eq!(
            serve(&args(&["host"])),
            Err(OptionError::Invalid("Unexpected argument: host".into()))
        );
        assert_eq!(
            serve(&args(&["-x"])),
            Err(OptionError::Invalid("invalid option -- 'x' (see -h)".into()))
        );
        assert_eq!(serve(&args(&["-h"])), Ok(Action::Help));
        let Action::Run(l) = serve(&args(&[
            "--max-memory",
            "1G",
            "--max-test-seconds=60",
            "--max-tests-per-minute",
            "10",
        ]))
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            l.limits,
            ServeLimits {
                max_memory_bytes: Some(1 << 30),
                max_test_s: Some(60),
                max_tests_per_minute: Some(10),
            }
        );
        assert_eq!(memory_size("4096"), Some(4096));
        assert_eq!(memory_size("512m"), Some(512 << 20));
        for bad in ["", "G", "1x", "-1G", "100", "99999999999T"] {
            assert_eq!(memory_size(bad), None, "{bad}");
        }
        assert_eq!(
            serve(&args(&["--max-memory", "lots"])),
            Err(OptionError::Invalid(
                "Invalid --max-memory: 'lots' (bytes, or a number with K, M or G: 512M)".into()
            ))
        );
        assert_eq!(
            serve(&args(&["--max-test-seconds", "0"])),
            Err(OptionError::Invalid(
                "Invalid --max-test-seconds: '0' (1 or more)".into()
            ))
        );
        let Action::Run(g) = serve(&args(&["-r", "1", "--tx-gpu=0", "-g", "Nvidia"])).unwrap() else {
            panic!()
        };
        assert_eq!(
            g.gpu,
            GpuRequest {
                tx: Some(0),
                rx: Some(1),
                kind: Some(fabdiag_model::GpuKind::Nvidia)
            }
        );
        assert_eq!(
            serve(&args(&["-r", "x"])),
            Err(OptionError::Invalid("Invalid dest gpu device: x".into()))
        );
        assert_eq!(
            serve(&args(&["-g", "arm"])),
            Err(OptionError::Invalid(
                "Invalid gpu type: arm. Must be AMD, NVIDIA or INTEL".into()
            ))
        );
    }
}
