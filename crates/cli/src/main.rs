//! fabdiag: fabric diagnostics re-creating HPE's CXI tools on libfabric.
//!
//! Data flow of one run (bandwidth or latency):
//!
//! ```text
//! argv ──getopt──> Raw ──resolve──> BwOptions | LatOptions       (options)
//!   client: discover provider (fabric) → connect + hello (proto)
//!           → choose domain by control-connection address (provider)
//!           → allocate + register buffers, open endpoint (fabric)
//!           → Config, Endpoint exchange → Ready barrier (session, proto)
//!           → per size: engine::run_size / run_lat_size over FabricDriver
//!                 pre-run barrier, timed iterations, post-run barrier,
//!                 counts exchanged → SizeResult | LatResult
//!           → sinks: legacy table rows as they finish, or one JSON document
//!   server: listen → accept + hello → adopt the client's Config → same
//! ```
//!
//! Only this crate prints, and only this file decides exit codes (`exit`).

mod driver;
mod exit;
mod getopt;
mod numbers;
mod options;
mod output;
mod provider;
mod session;

use fabdiag_fabric::FabricError;
use fabdiag_report::json::{
    BwResultJson, Document, ErrorJson, LatResultJson, LatThresholdJson, ThresholdJson, SCHEMA_VERSION,
};
use fabdiag_report::{BwTool, LatTool};
use options::{Action, Family, OptionError, Raw, RunMode};
use output::{Console, Silent};
use serde::Serialize;
use session::{Failed, Outcome};
use std::process::ExitCode;

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy)]
enum Tool {
    Bw(BwTool),
    Lat(LatTool),
    /// atomic_bw (false) or atomic_lat (true).
    Amo(bool),
}

const TOOLS: &[Tool] = &[
    Tool::Bw(BwTool::WriteBw),
    Tool::Bw(BwTool::ReadBw),
    Tool::Bw(BwTool::SendBw),
    Tool::Lat(LatTool::SendLat),
    Tool::Lat(LatTool::WriteLat),
    Tool::Lat(LatTool::ReadLat),
    Tool::Amo(false),
    Tool::Amo(true),
];

impl Tool {
    fn original_name(self) -> &'static str {
        match self {
            Tool::Bw(t) => t.original_name(),
            Tool::Lat(t) => t.original_name(),
            Tool::Amo(false) => "cxi_atomic_bw",
            Tool::Amo(true) => "cxi_atomic_lat",
        }
    }

    fn subcommand(self) -> &'static str {
        match self {
            Tool::Bw(t) => t.subcommand(),
            Tool::Lat(t) => t.subcommand(),
            Tool::Amo(false) => "atomic-bw",
            Tool::Amo(true) => "atomic-lat",
        }
    }

    fn describe(self) -> String {
        match self {
            Tool::Bw(t) => format!("{} bandwidth", t.word()),
            Tool::Lat(t) => format!("{} latency", t.word()),
            Tool::Amo(false) => "Atomic bandwidth".into(),
            Tool::Amo(true) => "Atomic latency".into(),
        }
    }
}

fn main() -> ExitCode {
    ExitCode::from(run())
}

fn overview() -> String {
    let mut s = format!(
        "fabdiag {VERSION}: fabric diagnostics on libfabric\n\nUsage:\n  fabdiag COMMAND [OPTIONS]   (COMMAND -h for its options)\n\nCommands:\n"
    );
    for t in TOOLS {
        s.push_str(&format!(
            "  {:<12}{}, as {}\n",
            t.subcommand(),
            t.describe(),
            t.original_name()
        ));
    }
    s.push_str("  host-traffic\n              Host <-> GPU memory <-> compute traffic, as gc-hosttraffictest (CUDA)\n");
    s.push_str("  providers   List libfabric providers and domains on this machine\n");
    s.push_str("  atomic-support [-P PROV] [--json]\n              Which atomic op/type/form each provider supports (fi_*atomicvalid)\n");
    s.push_str("\nInstalled under an original name (e.g. a cxi_write_bw symlink), fabdiag\nbehaves as that tool.\n");
    s
}

fn run() -> u8 {
    let args: Vec<String> = std::env::args().collect();
    let argv0 = args.first().map(String::as_str).unwrap_or("fabdiag");
    let base = std::path::Path::new(argv0)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("fabdiag");
    if let Some(tool) = TOOLS.iter().find(|t| t.original_name() == base) {
        return run_tool(*tool, base, &args[1..]);
    }
    if base == "gc-hosttraffictest" {
        return run_traffic(base, &args[1..]);
    }
    match args.get(1).map(String::as_str) {
        None | Some("-h" | "--help" | "help") => {
            output::print_stdout(&overview());
            exit::OK
        }
        Some("-V" | "--version") => {
            output::print_stdout(&format!("fabdiag {VERSION}\n"));
            exit::OK
        }
        Some("providers") => list_providers(),
        Some("atomic-support") => atomic_support(&args[2..]),
        Some("host-traffic") => run_traffic("fabdiag host-traffic", &args[2..]),
        Some(cmd) => match TOOLS.iter().find(|t| t.subcommand() == cmd || t.original_name() == cmd) {
            Some(tool) => run_tool(*tool, &format!("fabdiag {}", tool.subcommand()), &args[2..]),
            None => {
                eprintln!("fabdiag: unknown command '{cmd}' (try fabdiag -h)");
                exit::USAGE
            }
        },
    }
}

fn list_providers() -> u8 {
    use fabdiag_fabric::{discover, Capability, Query};
    let mut text = String::from("provider        domain          fabric                 write read msg\n");
    let mut rows: std::collections::BTreeMap<(String, String, String), [bool; 3]> = Default::default();
    for (i, cap) in [Capability::RmaWrite, Capability::RmaRead, Capability::Msg]
        .into_iter()
        .enumerate()
    {
        match discover(&Query {
            capability: Some(cap),
            ..Default::default()
        }) {
            Ok(list) => {
                for e in list.entries() {
                    rows.entry((e.provider.clone(), e.domain.clone(), e.fabric.clone()))
                        .or_default()[i] = true;
                }
            }
            Err(e @ FabricError::LibraryMissing(_)) => {
                eprintln!("fabdiag: {e}");
                return exit::UNAVAILABLE;
            }
            Err(_) => {}
        }
    }
    let yn = |b: bool| if b { "yes" } else { "-" };
    for ((p, d, f), c) in rows {
        text.push_str(&format!(
            "{p:<15} {d:<15} {f:<22} {:<5} {:<4} {}\n",
            yn(c[0]),
            yn(c[1]),
            yn(c[2])
        ));
    }
    output::print_stdout(&text);
    exit::OK
}

/// `host-traffic` / gc-hosttraffictest: options, the GPU, then the test.
fn run_traffic(prog: &str, args: &[String]) -> u8 {
    use fabdiag_report::traffic::document;
    use options::traffic::{parse, usage, TrafficAction};
    let json = args.iter().any(|a| a == "-j" || a == "--json-output");
    let fail = |code: u8, msg: &str, config: &[(&str, String)]| -> u8 {
        eprintln!("{prog}: {msg}");
        if json {
            output::print_stdout(
                &(serde_json::to_string_pretty(&document(config, &[], Some(msg))).unwrap_or_default() + "\n"),
            );
        }
        code
    };
    let o = match parse(args) {
        Ok(TrafficAction::Help) => {
            output::print_stdout(&usage(prog));
            return exit::OK;
        }
        Ok(TrafficAction::Version) => {
            output::print_stdout(&format!("{prog} version: {VERSION}\n"));
            return exit::OK;
        }
        Ok(TrafficAction::Run(o)) => o,
        Err(m) => return fail(exit::USAGE, &format!("{m} (see -h)"), &[]),
    };
    let mut config: Vec<(&str, String)> = vec![
        ("number_of_ipus", "1".into()),
        (
            "tile_transfers_enabled",
            o.tests.iter().any(|t| t.tile.is_some()).to_string(),
        ),
        ("transfer_size_64byte_blocks", o.payload_blocks.to_string()),
        ("iterations", o.iterations.to_string()),
        (
            "host_transfers_enabled",
            o.tests.iter().any(|t| t.host.is_some()).to_string(),
        ),
        ("host_chunk_bytes", o.chunk.to_string()),
    ];
    let cuda = match fabdiag_gpu::Cuda::load() {
        Ok(c) => c,
        Err(e) => return fail(exit::UNAVAILABLE, &e.to_string(), &config),
    };
    let devices = match cuda.devices() {
        Ok(d) if d.is_empty() => {
            return fail(
                exit::UNAVAILABLE,
                &fabdiag_gpu::GpuError::NoDevices.to_string(),
                &config,
            )
        }
        Ok(d) => d,
        Err(e) => return fail(exit::RUNTIME, &e.to_string(), &config),
    };
    let dev = match fabdiag_gpu::resolve(&devices, &o.device) {
        Ok(d) => d.clone(),
        Err(e) => return fail(exit::USAGE, &e.to_string(), &config),
    };
    let tiles = o.tiles.unwrap_or(dev.sm_count.max(1) as u32);
    config.extend([
        ("tiles_per_ipu", tiles.to_string()),
        ("gpu_name", dev.name.clone()),
        ("gpu_pci_bus_id", dev.pci_bus_id.clone()),
        ("gpu_uuid", dev.uuid.clone()),
        ("gpu_sm_count", dev.sm_count.to_string()),
        ("gpu_copy_engines", dev.copy_engines.to_string()),
    ]);
    // The measurement (pinned host memory on the GPU's NUMA node, copy
    // streams, tile kernels, simultaneous start, event timing, data
    // checks) has to be written and verified on a GPU machine; until then
    // this build says so instead of printing numbers it cannot stand by.
    fail(
        exit::UNAVAILABLE,
        &format!(
            "found {} ({}), but this build cannot measure host/GPU traffic yet: the CUDA measurement is still to be developed on a GPU machine",
            dev.name, dev.pci_bus_id
        ),
        &config,
    )
}

/// One cell of the atomic support matrix.
#[derive(Serialize)]
struct AmoSupport {
    provider: String,
    op: &'static str,
    cswap_op: Option<&'static str>,
    atomic_type: &'static str,
    fetching: bool,
    libfabric_op: &'static str,
    libfabric_call: &'static str,
    /// Allowed by the originals' op/type rules.
    allowed: bool,
    supported: bool,
    /// Supported, but refused: a provider defect would crash the process.
    defect: Option<&'static str>,
}

impl AmoSupport {
    fn usable(&self) -> bool {
        self.supported && self.defect.is_none()
    }
}

/// Asks each provider with atomics, through an endpoint on the loopback
/// domain, which of the originals' atomics it can run, in which form.
fn atomic_support(args: &[String]) -> u8 {
    use fabdiag_engine::amo::{libfabric_op, validate, AmoOp, CSWAP_OPS, OPS, TYPES};
    use fabdiag_fabric::{discover, AtomicKind, AtomicSpec, Capability, Endpoint, HostBuffer, Query};
    let json = args.iter().any(|a| a == "--json");
    let wanted = args
        .iter()
        .position(|a| a == "-P")
        .and_then(|i| args.get(i + 1))
        .cloned();
    if let Some(bad) = args
        .iter()
        .find(|a| !matches!(a.as_str(), "--json" | "-P") && Some(*a) != wanted.as_ref())
    {
        eprintln!(
            "fabdiag atomic-support: unexpected argument '{bad}' (usage: fabdiag atomic-support [-P PROV] [--json])"
        );
        return exit::USAGE;
    }
    if let Err(e) = fabdiag_fabric::load() {
        eprintln!("fabdiag atomic-support: {e}");
        return exit::UNAVAILABLE;
    }
    let list = match discover(&Query {
        provider: wanted.clone(),
        domain: None,
        capability: Some(Capability::Atomic),
    }) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fabdiag atomic-support: {e}");
            return if e.is_unavailable() {
                exit::UNAVAILABLE
            } else {
                exit::RUNTIME
            };
        }
    };
    let mut providers: Vec<String> = Vec::new();
    for e in list.entries() {
        if !providers.contains(&e.provider) {
            providers.push(e.provider.clone());
        }
    }
    let mut cells = Vec::new();
    // a provider that cannot be asked makes the answer incomplete
    let mut failed = false;
    for prov in providers {
        let candidates: Vec<usize> = list
            .entries()
            .enumerate()
            .filter(|(_, e)| e.provider == prov)
            .map(|(i, _)| i)
            .collect();
        // prefer the loopback domain: nothing leaves the machine
        let idx = candidates
            .iter()
            .copied()
            .find(|&i| {
                list.get(i)
                    .is_some_and(|e| e.domain == "lo" || e.fabric.starts_with("127."))
            })
            .unwrap_or(candidates[0]);
        let bufs = match (HostBuffer::new(4096, None, 0), HostBuffer::new(4096, None, 0)) {
            (Ok(a), Ok(b)) => vec![a, b],
            _ => return exit::RUNTIME,
        };
        let ep = match Endpoint::open(&list, idx, bufs) {
            Ok(ep) => ep,
            Err(e) => {
                eprintln!("fabdiag atomic-support: {prov}: {e}");
                failed = true;
                continue;
            }
        };
        for ty in TYPES {
            for op in OPS {
                let conds: Vec<_> = if op == AmoOp::Cswap {
                    CSWAP_OPS.to_vec()
                } else {
                    vec![CSWAP_OPS[0]]
                };
                for cs in conds {
                    for fetching in [false, true] {
                        let (fi, call) = libfabric_op(op, cs, fetching);
                        let kind = match call {
                            fabdiag_engine::amo::FiCall::Atomic => AtomicKind::Plain,
                            fabdiag_engine::amo::FiCall::Fetch => AtomicKind::Fetch,
                            fabdiag_engine::amo::FiCall::Compare => AtomicKind::Compare,
                        };
                        let spec = AtomicSpec {
                            kind,
                            datatype: ty as i32,
                            op: fi.code(),
                            size: ty.size(),
                        };
                        cells.push(AmoSupport {
                            provider: prov.clone(),
                            op: op.name(),
                            cswap_op: (op == AmoOp::Cswap).then(|| cs.name()),
                            atomic_type: ty.name(),
                            fetching,
                            libfabric_op: fi.name(),
                            libfabric_call: call.name(),
                            allowed: validate(op, cs, ty).is_ok(),
                            supported: ep.atomic_valid(&spec).unwrap_or(false),
                            defect: ep.known_atomic_defect(&spec),
                        });
                    }
                }
            }
        }
    }
    let code = if failed { exit::RUNTIME } else { exit::OK };
    if json {
        output::print_stdout(&(serde_json::to_string_pretty(&cells).unwrap_or_else(|_| "[]".into()) + "\n"));
        return code;
    }
    // One table per provider: N non-fetching, F fetching, NF both, - none,
    // . not allowed by the originals; CSWAP counts its six conditions.
    let mut text = String::new();
    let mut provs: Vec<&String> = Vec::new();
    for c in &cells {
        if !provs.contains(&&c.provider) {
            provs.push(&c.provider);
        }
    }
    for p in provs {
        text.push_str(&format!("{p}\n{:<15}", "TYPE"));
        for op in OPS {
            text.push_str(&format!("{:>7}", op.name()));
        }
        text.push('\n');
        for ty in TYPES {
            text.push_str(&format!("{:<15}", ty.name()));
            for op in OPS {
                let mine: Vec<&AmoSupport> = cells
                    .iter()
                    .filter(|c| &c.provider == p && c.op == op.name() && c.atomic_type == ty.name())
                    .collect();
                let cell = if !mine.iter().any(|c| c.allowed) {
                    ".".to_string()
                } else if op == AmoOp::Cswap {
                    let n = mine.iter().filter(|c| c.allowed && c.usable() && !c.fetching).count();
                    let allowed = mine.iter().filter(|c| c.allowed && !c.fetching).count();
                    format!("{n}/{allowed}")
                } else {
                    let n = mine.iter().any(|c| !c.fetching && c.usable());
                    let f = mine.iter().any(|c| c.fetching && c.usable());
                    match (n, f) {
                        (true, true) => "NF".into(),
                        (true, false) => "N".into(),
                        (false, true) => "F".into(),
                        (false, false) => "-".into(),
                    }
                };
                text.push_str(&format!("{cell:>7}"));
            }
            text.push('\n');
        }
        if let Some(d) = cells
            .iter()
            .filter(|c| &c.provider == p && c.supported)
            .find_map(|c| c.defect)
        {
            text.push_str(&format!("(refused although the provider accepts them: {d})\n"));
        }
        text.push('\n');
    }
    text.push_str("N: fi_atomic  F: fi_fetch_atomic  NF: both  CSWAP k/n: conditions supported (fi_compare_atomic)\n-: not supported by the provider  .: not allowed by the originals' op/type rules\n");
    output::print_stdout(&text);
    code
}

/// Exit code for a failed run: "cannot be done here" vs "went wrong".
fn classify(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if let Some(f) = cause.downcast_ref::<FabricError>() {
            if f.is_unavailable() {
                return exit::UNAVAILABLE;
            }
        }
        if cause.downcast_ref::<fabdiag_clock::ClockError>().is_some() {
            return exit::UNAVAILABLE;
        }
    }
    exit::RUNTIME
}

fn error_kind(code: u8) -> &'static str {
    match code {
        exit::USAGE => "usage",
        exit::UNAVAILABLE => "unavailable",
        exit::THRESHOLD => "threshold",
        _ => "runtime",
    }
}

fn document<C, R, T>(tool: &str, role: Option<&RunMode>) -> Document<C, R, T> {
    Document {
        schema_version: SCHEMA_VERSION,
        fabdiag_version: VERSION.into(),
        tool: tool.into(),
        role: role.map(|m| match m {
            RunMode::Server => "server".into(),
            RunMode::Client(_) | RunMode::Local => "client".into(),
        }),
        config: None,
        results: Vec::new(),
        threshold: None,
        error: None,
    }
}

/// A failure before any run: one line on stderr, and a JSON document on
/// stdout when --json was asked for (even if the options were bad).
fn early_failure(tool: &str, prog: &str, json: bool, code: u8, msg: &str) -> u8 {
    eprintln!("{prog}: {msg}");
    if json {
        let mut doc = document::<(), (), ()>(tool, None);
        doc.error = Some(ErrorJson {
            kind: error_kind(code).into(),
            message: msg.into(),
        });
        output::print_stdout(&(fabdiag_report::json::render(&doc) + "\n"));
    }
    code
}

/// Parses and validates; on help, version or a bad option returns the
/// exit code after saying so.
fn prepare<O>(
    family: &Family,
    resolve: impl Fn(&Raw) -> Result<Action<O>, OptionError>,
    tool: &str,
    prog: &str,
    args: &[String],
) -> Result<O, u8> {
    let json = args.iter().any(|a| a == "--json");
    let raw = family
        .parse(args)
        .map_err(|m| early_failure(tool, prog, json, exit::USAGE, &format!("{m} (see -h)")))?;
    match resolve(&raw) {
        Ok(Action::Help) => {
            output::print_stdout(&family.usage(prog));
            Err(exit::OK)
        }
        Ok(Action::Version) => {
            output::print_stdout(&format!("{prog} version: {VERSION}\n"));
            Err(exit::OK)
        }
        Ok(Action::Run(o)) => {
            if let Err(e) = fabdiag_fabric::load() {
                return Err(early_failure(tool, prog, json, exit::UNAVAILABLE, &e.to_string()));
            }
            Ok(o)
        }
        Err(OptionError::Invalid(m)) => Err(early_failure(tool, prog, json, exit::USAGE, &m)),
        Err(OptionError::Unavailable(m)) => Err(early_failure(tool, prog, json, exit::UNAVAILABLE, &m)),
    }
}

fn run_tool(tool: Tool, prog: &str, args: &[String]) -> u8 {
    match tool {
        Tool::Bw(t) => run_bw(t, prog, args),
        Tool::Lat(t) => run_lat(t, prog, args),
        Tool::Amo(latency) => run_amo(latency, prog, args),
    }
}

/// The atomic session hands back one `AmoResults`; the report wants rows.
fn unpack<T>(
    r: Result<Outcome<fabdiag_report::AmoRun, session::amo::AmoResults>, session::amo::AmoFailed>,
    pick: fn(session::amo::AmoResults) -> Option<T>,
) -> Result<Outcome<fabdiag_report::AmoRun, T>, Failed<fabdiag_report::AmoRun, T>> {
    match r {
        Ok(o) => Ok(Outcome {
            run: o.run,
            results: o.results.into_iter().filter_map(pick).collect(),
        }),
        Err(f) => Err(Failed {
            run: f.run,
            results: f.results.into_iter().filter_map(pick).collect(),
            error: f.error,
        }),
    }
}

fn run_amo(latency: bool, prog: &str, args: &[String]) -> u8 {
    use fabdiag_fabric::Capability;
    use fabdiag_report::json::{AmoBw, AmoLat, AmoResultJson};
    use session::amo::{run_client, run_server, AmoResults};
    let name = if latency { "cxi_atomic_lat" } else { "cxi_atomic_bw" };
    let opts = match prepare(
        &options::amo::family(latency),
        |r| options::amo::resolve(latency, r),
        name,
        prog,
        args,
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut console = Console {
        prog: prog.into(),
        json: opts.c.json,
        percentiles: opts.percentiles,
    };
    let so = options::amo::AmoOptions {
        ignored_on_server: vec![],
        ..opts.clone()
    };
    let result = dispatch(
        &opts.c.mode,
        opts.c.port,
        &mut console,
        || {
            Ok(
                provider::candidates(opts.c.provider.as_deref(), opts.c.device.as_deref(), Capability::Atomic)
                    .map(|_| ())?,
            )
        },
        |l, c| run_server(&opts, l, c),
        move |l| {
            run_server(&so, l, &mut Silent)
                .map(|_| ())
                .map_err(|f| format!("{:#}", f.error))
        },
        |host, port, c| run_client(&opts, host, port, c),
    );
    if latency {
        let max_lat = opts.max_lat_us;
        let picked = unpack(result, |r| match r {
            AmoResults::Lat(v) => Some(v),
            AmoResults::Bw(_) => None,
        });
        finish::<_, _, AmoResultJson<LatResultJson>, _>(
            name,
            prog,
            opts.c.json,
            &opts.c.mode,
            picked,
            |results: &[AmoLat]| {
                max_lat_verdict(max_lat, results.iter().map(|r| (r.result.size, r.result.stats.mean_ns)))
            },
        )
    } else {
        let min_bw = opts.min_bw;
        let picked = unpack(result, |r| match r {
            AmoResults::Bw(v) => Some(v),
            AmoResults::Lat(_) => None,
        });
        finish::<_, _, AmoResultJson<BwResultJson>, _>(
            name,
            prog,
            opts.c.json,
            &opts.c.mode,
            picked,
            |results: &[AmoBw]| min_bw_verdict(min_bw, results.iter().map(|r| (r.result.size, r.result.bw_mb_s))),
        )
    }
}

type Served = Result<(), String>;

/// Runs the mode asked for: a server on `port`, a client of `host`, or
/// both here (`--local`, after `check` has vetted the provider).
#[allow(clippy::too_many_arguments)]
fn dispatch<C, R>(
    mode: &RunMode,
    port: u16,
    console: &mut Console,
    check: impl FnOnce() -> anyhow::Result<()>,
    server: impl FnOnce(fabdiag_proto::Listener, &mut Console) -> Result<Outcome<C, R>, Failed<C, R>>,
    local_server: impl FnOnce(fabdiag_proto::Listener) -> Served + Send + 'static,
    client: impl FnOnce(&str, u16, &mut Console) -> Result<Outcome<C, R>, Failed<C, R>>,
) -> Result<Outcome<C, R>, Failed<C, R>> {
    match mode {
        RunMode::Server => match fabdiag_proto::Listener::bind(port) {
            Ok(l) => server(l, console),
            Err(e) => Err(Failed::early(e)),
        },
        RunMode::Client(host) => client(host, port, console),
        RunMode::Local => run_local(check, local_server, |p| client("127.0.0.1", p, console)),
    }
}

/// `--local`: a server thread on a free loopback port, and a client here.
fn run_local<C, R>(
    check: impl FnOnce() -> anyhow::Result<()>,
    serve: impl FnOnce(fabdiag_proto::Listener) -> Served + Send + 'static,
    client: impl FnOnce(u16) -> Result<Outcome<C, R>, Failed<C, R>>,
) -> Result<Outcome<C, R>, Failed<C, R>> {
    // Check the provider before starting a server that would wait forever.
    check().map_err(Failed::early)?;
    let listener = fabdiag_proto::Listener::bind_loopback().map_err(Failed::early)?;
    let port = listener.port();
    let server = std::thread::Builder::new()
        .name("fabdiag-local-server".into())
        .spawn(move || serve(listener))
        .map_err(|e| Failed::early(anyhow::anyhow!("cannot start the local server: {e}")))?;
    let outcome = client(port)?;
    let problem = match server.join() {
        Ok(Ok(())) => return Ok(outcome),
        Ok(Err(msg)) => format!("local server: {msg}"),
        Err(_) => "local server thread panicked".to_string(),
    };
    Err(Failed {
        run: Some(Box::new(outcome.run)),
        results: outcome.results,
        error: anyhow::anyhow!(problem),
    })
}

fn run_bw(tool: BwTool, prog: &str, args: &[String]) -> u8 {
    use session::bw::{capability, run_client, run_server};
    let opts = match prepare(
        &options::bw::family(tool),
        |r| options::bw::resolve(tool, r),
        tool.original_name(),
        prog,
        args,
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut console = Console {
        prog: prog.into(),
        json: opts.c.json,
        percentiles: false,
    };
    let so = options::bw::BwOptions {
        ignored_on_server: vec![],
        ..opts.clone()
    };
    let result = dispatch(
        &opts.c.mode,
        opts.c.port,
        &mut console,
        || {
            Ok(
                provider::candidates(opts.c.provider.as_deref(), opts.c.device.as_deref(), capability(tool))
                    .map(|_| ())?,
            )
        },
        |l, c| run_server(&opts, l, c),
        move |l| {
            run_server(&so, l, &mut Silent)
                .map(|_| ())
                .map_err(|f| format!("{:#}", f.error))
        },
        |host, port, c| run_client(&opts, host, port, c),
    );
    let min_bw = opts.min_bw;
    finish::<_, _, BwResultJson, _>(
        tool.original_name(),
        prog,
        opts.c.json,
        &opts.c.mode,
        result,
        |results| min_bw_verdict(min_bw, results.iter().map(|r| (r.size, r.bw_mb_s))),
    )
}

fn run_lat(tool: LatTool, prog: &str, args: &[String]) -> u8 {
    use session::lat::{capability, run_client, run_server};
    let opts = match prepare(
        &options::lat::family(tool),
        |r| options::lat::resolve(tool, r),
        tool.original_name(),
        prog,
        args,
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut console = Console {
        prog: prog.into(),
        json: opts.c.json,
        percentiles: opts.percentiles,
    };
    let so = options::lat::LatOptions {
        ignored_on_server: vec![],
        ..opts.clone()
    };
    let result = dispatch(
        &opts.c.mode,
        opts.c.port,
        &mut console,
        || {
            Ok(
                provider::candidates(opts.c.provider.as_deref(), opts.c.device.as_deref(), capability(tool))
                    .map(|_| ())?,
            )
        },
        |l, c| run_server(&opts, l, c),
        move |l| {
            run_server(&so, l, &mut Silent)
                .map(|_| ())
                .map_err(|f| format!("{:#}", f.error))
        },
        |host, port, c| run_client(&opts, host, port, c),
    );
    let max_lat = opts.max_lat_us;
    finish::<_, _, LatResultJson, _>(
        tool.original_name(),
        prog,
        opts.c.json,
        &opts.c.mode,
        result,
        |results| max_lat_verdict(max_lat, results.iter().map(|r| (r.size, r.stats.mean_ns))),
    )
}

/// `--min-bw`: every (size, MB/s) must reach `min`.
fn min_bw_verdict(min: Option<f64>, rows: impl Iterator<Item = (u64, f64)>) -> Option<(ThresholdJson, Option<String>)> {
    let min = min?;
    let failed: Vec<(u64, f64)> = rows.filter(|(_, bw)| *bw < min).collect();
    let list: Vec<String> = failed
        .iter()
        .map(|(size, bw)| format!("{size} B at {bw:.2} MB/s"))
        .collect();
    let msg = (!failed.is_empty()).then(|| format!("bandwidth below --min-bw {min} MB/s: {}", list.join(", ")));
    let verdict = ThresholdJson {
        min_bw_mb_per_s: min,
        passed: failed.is_empty(),
        failed_sizes_bytes: failed.iter().map(|(size, _)| *size).collect(),
    };
    Some((verdict, msg))
}

/// `--max-lat`: every (size, mean ns) must stay at or below `max` µs.
fn max_lat_verdict(
    max: Option<f64>,
    rows: impl Iterator<Item = (u64, u64)>,
) -> Option<(LatThresholdJson, Option<String>)> {
    let max = max?;
    let failed: Vec<(u64, u64)> = rows.filter(|(_, ns)| *ns as f64 > max * 1000.0).collect();
    let list: Vec<String> = failed
        .iter()
        .map(|(size, ns)| format!("{size} B at {:.2} us", *ns as f64 / 1000.0))
        .collect();
    let msg = (!failed.is_empty()).then(|| format!("mean latency above --max-lat {max} us: {}", list.join(", ")));
    let verdict = LatThresholdJson {
        max_lat_us: max,
        statistic: "mean".into(),
        passed: failed.is_empty(),
        failed_sizes_bytes: failed.iter().map(|(size, _)| *size).collect(),
    };
    Some((verdict, msg))
}

/// Reports the outcome: threshold verdict, one error line, the JSON
/// document, and the exit code.
fn finish<C: Serialize, R, RJ: Serialize + for<'a> From<&'a R>, T: Serialize>(
    tool: &str,
    prog: &str,
    json: bool,
    mode: &RunMode,
    result: Result<Outcome<C, R>, Failed<C, R>>,
    threshold: impl Fn(&[R]) -> Option<(T, Option<String>)>,
) -> u8 {
    let mut doc: Document<C, RJ, T> = document(tool, Some(mode));
    let code = match result {
        Ok(outcome) => {
            let mut code = exit::OK;
            if let Some((verdict, failure)) = threshold(&outcome.results) {
                if let Some(msg) = failure {
                    eprintln!("{prog}: {msg}");
                    doc.error = Some(ErrorJson {
                        kind: "threshold".into(),
                        message: msg,
                    });
                    code = exit::THRESHOLD;
                }
                doc.threshold = Some(verdict);
            }
            doc.results = outcome.results.iter().map(RJ::from).collect();
            doc.config = Some(outcome.run);
            code
        }
        Err(f) => {
            let code = classify(&f.error);
            eprintln!("{prog}: {:#}", f.error);
            doc.results = f.results.iter().map(RJ::from).collect();
            doc.config = f.run.map(|r| *r);
            doc.error = Some(ErrorJson {
                kind: error_kind(code).into(),
                message: format!("{:#}", f.error),
            });
            code
        }
    };
    if json {
        output::print_stdout(&(fabdiag_report::json::render(&doc) + "\n"));
    }
    code
}
