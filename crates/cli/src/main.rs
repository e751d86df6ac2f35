//! fabdiag: fabric diagnostics re-creating HPE's CXI tools on libfabric.
//!
//! Data flow of one bandwidth run:
//!
//! ```text
//! argv ──getopt──> RawBw ──resolve──> BwOptions                (bw_options)
//!   client: discover provider (fabric) → connect + hello (proto)
//!           → choose domain by control-connection address (provider)
//!           → allocate + register buffers, open endpoint (fabric)
//!           → Config, Endpoint exchange → Ready barrier (proto)
//!           → per size: engine::run_size over FabricDriver (engine, driver)
//!                 pre-run barrier, timed iterations, post-run barrier,
//!                 results exchange → SizeResult
//!           → Sink: legacy table rows as they finish, or one JSON document
//!   server: listen → accept + hello → adopt the client's Config → same
//! ```
//!
//! Only this crate prints, and only `main` decides exit codes (`exit`).

mod bw_options;
mod driver;
mod exit;
mod getopt;
mod numbers;
mod output;
mod provider;
mod session;

use bw_options::{Action, BwOptions, OptionError, RunMode};
use fabdiag_fabric::FabricError;
use fabdiag_report::json::{BwDocument, BwResultJson, ErrorJson, ThresholdJson, SCHEMA_VERSION};
use fabdiag_report::BwTool;
use output::{JsonSink, SilentSink, TextSink};
use session::{Failed, Outcome, Sink};
use std::process::ExitCode;

const VERSION: &str = env!("CARGO_PKG_VERSION");

const TOOLS: &[BwTool] = &[BwTool::WriteBw, BwTool::ReadBw, BwTool::SendBw];

fn main() -> ExitCode {
    ExitCode::from(run())
}

fn overview() -> String {
    let mut s = format!(
        "fabdiag {VERSION}: fabric diagnostics on libfabric\n\nUsage:\n  fabdiag COMMAND [OPTIONS]   (COMMAND -h for its options)\n\nCommands:\n"
    );
    for t in TOOLS {
        s.push_str(&format!(
            "  {:<12}{} bandwidth, as {}\n",
            t.subcommand(),
            t.word(),
            t.original_name()
        ));
    }
    s.push_str("  providers   List libfabric providers and domains on this machine\n");
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
        return run_bw(*tool, base, &args[1..]);
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
        Some(cmd) => match TOOLS
            .iter()
            .find(|t| t.subcommand() == cmd || t.original_name() == cmd)
        {
            Some(tool) => run_bw(*tool, &format!("fabdiag {}", tool.subcommand()), &args[2..]),
            None => {
                eprintln!("fabdiag: unknown command '{cmd}' (try fabdiag -h)");
                exit::USAGE
            }
        },
    }
}

fn list_providers() -> u8 {
    use fabdiag_fabric::{discover, Capability, Query};
    let mut text =
        String::from("provider        domain          fabric                 write read msg\n");
    let mut rows: std::collections::BTreeMap<(String, String, String), [bool; 3]> =
        Default::default();
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
            Err(e) if matches!(e, FabricError::LibraryMissing(_)) => {
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

/// Exit code for a failed run: "cannot be done here" vs "went wrong".
fn classify(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if let Some(f) = cause.downcast_ref::<FabricError>() {
            if f.is_unavailable() {
                return exit::UNAVAILABLE;
            }
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

fn document(tool: BwTool, opts: Option<&BwOptions>) -> BwDocument {
    BwDocument {
        schema_version: SCHEMA_VERSION,
        fabdiag_version: VERSION.into(),
        tool: tool.original_name().into(),
        role: opts.map(|o| match o.mode {
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
fn early_failure(tool: BwTool, prog: &str, json: bool, code: u8, msg: &str) -> u8 {
    eprintln!("{prog}: {msg}");
    if json {
        let mut doc = document(tool, None);
        doc.error = Some(ErrorJson {
            kind: error_kind(code).into(),
            message: msg.into(),
        });
        output::print_stdout(&(fabdiag_report::json::render(&doc) + "\n"));
    }
    code
}

fn run_bw(tool: BwTool, prog: &str, args: &[String]) -> u8 {
    let json_requested = args.iter().any(|a| a == "--json");
    let raw = match bw_options::parse_raw(tool, args) {
        Ok(r) => r,
        Err(m) => {
            return early_failure(
                tool,
                prog,
                json_requested,
                exit::USAGE,
                &format!("{m} (see -h)"),
            )
        }
    };
    let opts = match bw_options::resolve(tool, &raw) {
        Ok(Action::Help) => {
            output::print_stdout(&bw_options::usage(tool, prog));
            return exit::OK;
        }
        Ok(Action::Version) => {
            output::print_stdout(&format!("{prog} version: {VERSION}\n"));
            return exit::OK;
        }
        Ok(Action::Run(o)) => o,
        Err(OptionError::Invalid(m)) => {
            return early_failure(tool, prog, json_requested, exit::USAGE, &m)
        }
        Err(OptionError::Unavailable(m)) => {
            return early_failure(tool, prog, json_requested, exit::UNAVAILABLE, &m)
        }
    };
    if let Err(e) = fabdiag_fabric::load() {
        return early_failure(tool, prog, opts.json, exit::UNAVAILABLE, &e.to_string());
    }
    let mut text_sink = TextSink { prog: prog.into() };
    let mut json_sink = JsonSink { prog: prog.into() };
    let sink: &mut dyn Sink = if opts.json {
        &mut json_sink
    } else {
        &mut text_sink
    };
    let result = match &opts.mode {
        RunMode::Server => match fabdiag_proto::Listener::bind(opts.port) {
            Ok(l) => session::run_server(&opts, l, sink),
            Err(e) => Err(Failed {
                run: None,
                results: vec![],
                error: e.into(),
            }),
        },
        RunMode::Client(host) => session::run_client(&opts, host, opts.port, sink),
        RunMode::Local => run_local(&opts, sink),
    };
    finish(tool, prog, &opts, result)
}

/// `--local`: a server thread on a free loopback port and a client here.
fn run_local(opts: &BwOptions, sink: &mut dyn Sink) -> Result<Outcome, Failed> {
    let early = |e: anyhow::Error| Failed {
        run: None,
        results: vec![],
        error: e,
    };
    // Check the provider before starting a server that would wait forever.
    provider::candidates(
        opts.provider.as_deref(),
        opts.device.as_deref(),
        session::capability(opts.tool),
    )
    .map_err(|e| early(e.into()))?;
    let listener = fabdiag_proto::Listener::bind_loopback().map_err(|e| early(e.into()))?;
    let port = listener.port();
    let server_opts = BwOptions {
        mode: RunMode::Server,
        json: false,
        ignored_on_server: vec![],
        ..opts.clone()
    };
    let server = std::thread::Builder::new()
        .name("fabdiag-local-server".into())
        .spawn(move || {
            session::run_server(&server_opts, listener, &mut SilentSink)
                .map(|_| ())
                .map_err(|f| format!("{:#}", f.error))
        })
        .map_err(|e| early(anyhow::anyhow!("cannot start the local server: {e}")))?;
    let outcome = session::run_client(opts, "127.0.0.1", port, sink)?;
    match server.join() {
        Ok(Ok(())) => Ok(outcome),
        Ok(Err(msg)) => Err(Failed {
            run: Some(Box::new(outcome.run)),
            results: outcome.results,
            error: anyhow::anyhow!("local server: {msg}"),
        }),
        Err(_) => Err(Failed {
            run: Some(Box::new(outcome.run)),
            results: outcome.results,
            error: anyhow::anyhow!("local server thread panicked"),
        }),
    }
}

fn finish(tool: BwTool, prog: &str, opts: &BwOptions, result: Result<Outcome, Failed>) -> u8 {
    let mut doc = document(tool, Some(opts));
    let code = match result {
        Ok(outcome) => {
            let mut code = exit::OK;
            if let Some(min) = opts.min_bw {
                let failed: Vec<&fabdiag_engine::SizeResult> =
                    outcome.results.iter().filter(|r| r.bw_mb_s < min).collect();
                if !failed.is_empty() {
                    let list: Vec<String> = failed
                        .iter()
                        .map(|r| format!("{} B at {:.2} MB/s", r.size, r.bw_mb_s))
                        .collect();
                    let msg = format!("bandwidth below --min-bw {min} MB/s: {}", list.join(", "));
                    eprintln!("{prog}: {msg}");
                    doc.error = Some(ErrorJson {
                        kind: "threshold".into(),
                        message: msg,
                    });
                    code = exit::THRESHOLD;
                }
                doc.threshold = Some(ThresholdJson {
                    min_bw_mb_per_s: min,
                    passed: failed.is_empty(),
                    failed_sizes_bytes: failed.iter().map(|r| r.size).collect(),
                });
            }
            doc.results = outcome.results.iter().map(BwResultJson::from).collect();
            doc.config = Some(outcome.run);
            code
        }
        Err(f) => {
            let code = classify(&f.error);
            eprintln!("{prog}: {:#}", f.error);
            doc.results = f.results.iter().map(BwResultJson::from).collect();
            doc.config = f.run.map(|r| *r);
            doc.error = Some(ErrorJson {
                kind: error_kind(code).into(),
                message: format!("{:#}", f.error),
            });
            code
        }
    };
    if opts.json {
        output::print_stdout(&(fabdiag_report::json::render(&doc) + "\n"));
    }
    code
}
