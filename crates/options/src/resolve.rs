//! Flags as typed (`Raw`, last occurrence wins), and the checks every
//! client/server tool shares, in the originals' order and with their
//! messages (originals §2.2). Each tool module resolves its own options on top
//! of these into an `Invocation`. Nothing here prints.

use crate::numbers::{parse_size_range, parse_strtoul};
use crate::table::{Opt, Raw};
use fabdiag_model::GpuKind;
use fabdiag_model::HugePageSize;
use fabdiag_model::Threshold;
use fabdiag_model::Tool;
use fabdiag_model::{OwnSettings, PollMode, Provider};
use fabdiag_model::{TestSpec, DEFAULT_SVC_ID};
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub enum Action<T> {
    Help,
    Version,
    Run(T),
}

#[derive(Clone, Debug, PartialEq)]
pub enum RunMode {
    Server,
    Client(String),
    Local,
}

/// Why options were refused. `Unavailable` is a valid request this build or
/// machine cannot serve (GPU memory, CXI emulation timer).
#[derive(Debug, PartialEq, Eq)]
pub enum OptionError {
    Invalid(String),
    Unavailable(String),
}

/// `-t`, `-r` and `-g` as given: which of this side's buffers the user
/// wants on which GPU. Whether this machine can do it (a runtime, the GPU,
/// a provider with FI_HMEM) is the binary's question, not the parser's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuRequest {
    pub tx: Option<u32>,
    pub rx: Option<u32>,
    pub kind: Option<GpuKind>,
}

impl GpuRequest {
    /// `-t`, `-r` and `-g` as given (originals §2.3: indices as strtoul, at
    /// most 255; the type in any letter case).
    pub fn parse(tx: Option<&str>, rx: Option<&str>, kind: Option<&str>) -> Result<GpuRequest, OptionError> {
        let index = |v: Option<&str>, what: &str| match v {
            None => Ok(None),
            Some(s) => parse_strtoul(s)
                .filter(|&v| v <= 255)
                .map(|v| Some(v as u32))
                .ok_or_else(|| invalid(format!("{what}: {s}"))),
        };
        Ok(GpuRequest {
            tx: index(tx, "Invalid src gpu device")?,
            rx: index(rx, "Invalid dest gpu device")?,
            kind: match kind {
                None => None,
                Some(s) => Some(
                    GpuKind::parse(s)
                        .ok_or_else(|| invalid(format!("Invalid gpu type: {s}. Must be AMD, NVIDIA or INTEL")))?,
                ),
            },
        })
    }

    /// Does this side put any buffer on a GPU?
    pub fn any(&self) -> bool {
        self.tx.is_some() || self.rx.is_some()
    }
}

/// A validated command line of a client/server tool: how to run (server,
/// client of a host, or both here), the spec the client decides, this
/// side's own settings, and what the binary does with the outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub mode: RunMode,
    pub port: u16,
    pub spec: TestSpec,
    /// This side's own settings (`-P`, `-d`, `-v`, ...), never sent.
    pub own: OwnSettings,
    pub json: bool,
    pub threshold: Option<Threshold>,
    /// Print the extra percentile table (latency tools).
    pub percentiles: bool,
    /// `--counters`: print the NIC counter block after the table.
    pub counters: bool,
    /// Run options given to a server, which the client overrides (the
    /// originals ignored them silently, originals §6.6; fabdiag warns).
    pub ignored_on_server: Vec<String>,
    /// `-t/-r/-g` on this side.
    pub gpu: GpuRequest,
    /// `--metrics FILE`: also write the outcome there for Prometheus.
    pub metrics: Option<PathBuf>,
    /// `--auth-key FILE`: the shared key's file (read by the binary).
    pub auth_key: Option<PathBuf>,
    /// `--auth-munge`: prove and check MUNGE credentials instead.
    pub auth_munge: bool,
}

/// Options every client/server tool shares, validated.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Common {
    pub mode: RunMode,
    pub device: Option<String>,
    pub provider: Option<Provider>,
    pub svc_id: u32,
    pub port: u16,
    pub iterations: u64,
    pub duration_s: Option<u64>,
    pub min_size: u64,
    pub max_size: u64,
    pub hugepages: Option<HugePageSize>,
    pub json: bool,
    pub gpu: GpuRequest,
    pub poll: PollMode,
}

fn invalid(m: String) -> OptionError {
    OptionError::Invalid(m)
}

/// A `strtoul`-style number, or the originals' message for `what`.
pub(crate) fn number(
    raw: &Raw,
    id: Opt,
    default: u64,
    ok: impl Fn(u64) -> bool,
    what: &str,
) -> Result<u64, OptionError> {
    match raw.last(id) {
        None => Ok(default),
        Some(s) => parse_strtoul(s)
            .filter(|v| ok(*v))
            .ok_or_else(|| invalid(format!("{what}: {s}"))),
    }
}

/// Validates the shared options in the originals' order. Tool checks that
/// the originals ran before the positional argument come between
/// `common_values` and `common_mode`.
pub(crate) fn common_values(raw: &Raw, default_iters: u64, default_size: u64) -> Result<Common, OptionError> {
    let device = match raw.last(Opt::Device) {
        Some("") => return Err(invalid("Invalid device name: ".into())),
        d => d.map(str::to_string),
    };
    let provider = raw
        .last(Opt::Provider)
        .map(Provider::parse)
        .transpose()
        .map_err(|e| invalid(e.to_string()))?;
    let svc_id = match raw.last(Opt::SvcId) {
        None => DEFAULT_SVC_ID,
        Some(s) => s
            .parse::<i64>()
            .ok()
            .filter(|v| (1..=i32::MAX as i64).contains(v))
            .map(|v| v as u32)
            .ok_or_else(|| invalid(format!("Invalid svc_id: {s}")))?,
    };
    let port = match raw.last(Opt::Port) {
        None => fabdiag_model::DEFAULT_PORT,
        Some(s) => match parse_strtoul(s).filter(|&v| v <= u16::MAX as u64) {
            Some(0) => fabdiag_model::DEFAULT_PORT,
            Some(v) => v as u16,
            None => return Err(invalid(format!("Invalid port: {s}"))),
        },
    };
    let gpu = GpuRequest::parse(raw.last(Opt::TxGpu), raw.last(Opt::RxGpu), raw.last(Opt::GpuType))?;
    let iterations = number(raw, Opt::Iters, default_iters, |v| v > 0, "Invalid iteration count")?;
    let duration_s = match raw.last(Opt::Duration) {
        None => None,
        Some(_) => Some(number(
            raw,
            Opt::Duration,
            0,
            |v| v > 0 && v <= u32::MAX as u64,
            "Invalid duration",
        )?),
    };
    let (min_size, max_size) = match raw.last(Opt::Size) {
        None => (default_size, default_size),
        Some(s) => parse_size_range(s).map_err(invalid)?,
    };
    let hugepages = match raw.last(Opt::UseHp) {
        None => None,
        Some(s) => match s.to_ascii_uppercase().as_str() {
            "2M" => Some(HugePageSize::TwoMiB),
            "1G" => Some(HugePageSize::OneGiB),
            _ => return Err(invalid(format!("Invalid hugepage type: {s}. Must be 2M or 1G"))),
        },
    };
    let poll = match raw.last(Opt::Poll) {
        None => PollMode::Spin,
        Some(s) => poll_mode(s)?,
    };
    Ok(Common {
        mode: RunMode::Server,
        device,
        provider,
        svc_id,
        port,
        iterations,
        duration_s,
        min_size,
        max_size,
        hugepages,
        json: raw.has(Opt::Json),
        gpu,
        poll,
    })
}

/// The checks after the tool's own: the emulation request, then the
/// positional argument (originals §2.2 steps 2 and 5).
pub(crate) fn common_mode(raw: &Raw, c: &mut Common) -> Result<(), OptionError> {
    if raw.has(Opt::EmuMode) {
        return Err(OptionError::Unavailable(
            "--emu-mode reads a CXI hardware timer and has no libfabric equivalent".into(),
        ));
    }
    c.mode = match (raw.operands.as_slice(), raw.has(Opt::Local)) {
        ([], false) => RunMode::Server,
        ([], true) => RunMode::Local,
        ([addr], false) => RunMode::Client(addr.clone()),
        ([addr], true) => {
            return Err(invalid(format!(
                "--local runs both sides on this machine; drop the server address {addr}"
            )))
        }
        ([_, extra, ..], _) => return Err(invalid(format!("Unexpected argument: {extra}"))),
    };
    one_auth(raw.has(Opt::AuthKey), raw.has(Opt::AuthMunge))
}

/// `--auth-key` and `--auth-munge` (every tool that has both): one or the other.
/// `--poll`'s value, for the pair tools and `serve` alike.
pub(crate) fn poll_mode(s: &str) -> Result<PollMode, OptionError> {
    PollMode::parse(s).ok_or_else(|| invalid(format!("Invalid poll mode: {s}. Must be spin or yield")))
}

pub(crate) fn one_auth(key: bool, munge: bool) -> Result<(), OptionError> {
    match key && munge {
        true => Err(invalid(
            "--auth-key and --auth-munge are two ways to authenticate: give one".into(),
        )),
        false => Ok(()),
    }
}

/// A positive decimal number for a threshold option.
pub(crate) fn threshold(raw: &Raw, id: Opt, what: &str) -> Result<Option<f64>, OptionError> {
    match raw.last(id) {
        None => Ok(None),
        Some(s) => s
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .map(Some)
            .ok_or_else(|| invalid(format!("{what}: {s}"))),
    }
}

impl Common {
    /// The spec with the shared run parameters; the tool fills in its own.
    pub(crate) fn spec(&self, tool: Tool) -> TestSpec {
        TestSpec {
            iterations: self.iterations,
            duration_s: self.duration_s,
            min_size: self.min_size,
            max_size: self.max_size,
            hugepages: self.hugepages,
            ..TestSpec::new(tool)
        }
    }

    /// The invocation around `spec`; server-side run options are listed so
    /// the server can warn that the client decides them.
    pub(crate) fn invocation(self, raw: &Raw, spec: TestSpec, run_options: &[(Opt, String)]) -> Invocation {
        let ignored_on_server = if self.mode == RunMode::Server {
            raw.given(run_options)
        } else {
            Vec::new()
        };
        Invocation {
            mode: self.mode,
            port: self.port,
            spec,
            own: OwnSettings {
                provider: self.provider,
                device: self.device,
                svc_id: self.svc_id,
                ignore_cpu_freq_mismatch: raw.has(Opt::IgnoreCpuFreq),
                poll: self.poll,
            },
            json: self.json,
            threshold: None,
            percentiles: raw.has(Opt::Percentiles),
            counters: raw.has(Opt::Counters),
            metrics: raw.last(Opt::Metrics).map(PathBuf::from),
            auth_key: raw.last(Opt::AuthKey).map(PathBuf::from),
            auth_munge: raw.has(Opt::AuthMunge),
            ignored_on_server,
            gpu: self.gpu,
        }
    }
}

/// `--verify`, on by default when a buffer of this side is on a GPU
/// (`--no-verify` turns it off either way).
pub(crate) fn verify(raw: &Raw, gpu: &GpuRequest) -> bool {
    !raw.has(Opt::NoVerify) && (raw.has(Opt::Verify) || gpu.any())
}
