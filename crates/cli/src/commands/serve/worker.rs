//! One test of `fabdiag serve`, in its own process, started as a spare
//! before any client arrives: it loads libfabric and lists its providers,
//! then waits on standard input (a Unix socket) for the accepted control
//! connection (`handoff.rs`), the session library serves it (any tool),
//! and what happens is reported to the serving process as JSON lines on
//! standard output. A crash in here (libfabric 1.17 has several)
//! ends only this process; the server logs it and serves the next client.

use crate::commands::{load_libfabric, with_hooks};
use crate::output::{self, conclude};
use crate::{exit, signals, stuck};
use fabdiag_model::Role;
use fabdiag_options::Action;
use fabdiag_proto::Phase;
use fabdiag_report::text;
use fabdiag_session::{Env, Event, Sink};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

/// The hidden subcommand `fabdiag serve` starts its workers with.
pub const COMMAND: &str = "__serve-worker";
/// Test hook: the worker aborts (as a provider crash would end it) when it
/// enters this phase, e.g. "run", or "run:cxi_read_bw" for one tool only.
pub const CRASH_HOOK: &str = "FABDIAG_TEST_CRASH_IN_PHASE";
/// Test hook: the worker takes this many milliseconds over its teardown
/// once its client has had everything, before its line to the server, as
/// one does that frees a GPU context or much memory.
pub const TEARDOWN_DELAY_HOOK: &str = "FABDIAG_TEST_WORKER_TEARDOWN_MS";

/// A line from a worker to its server.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Line {
    /// The client passed the hello.
    Accepted { tool: String },
    /// The test entered this phase.
    Phase { phase: String },
    /// The test is over: exit code, a one-line summary or error, and the
    /// whole JSON document (as `--json` of the tool prints it).
    Done {
        code: u8,
        summary: String,
        document: serde_json::Value,
    },
}

struct Reporter {
    seen: Arc<Mutex<Seen>>,
    crash_at: Option<String>,
}

/// The tool and phase of the test so far, also for the guard against a
/// stuck provider call (another thread).
#[derive(Default)]
struct Seen {
    tool: Option<String>,
    phase: Option<Phase>,
}

/// The test's outcome, as the server logs it.
fn done(code: u8, summary: String, doc: &fabdiag_report::json::RunDocument) {
    send(&Line::Done {
        code,
        summary,
        document: serde_json::to_value(doc).unwrap_or(serde_json::Value::Null),
    });
}

fn send(line: &Line) {
    if let Ok(s) = serde_json::to_string(line) {
        let mut out = std::io::stdout().lock();
        // the server reads these; if it is gone there is nobody to tell
        let _ = writeln!(out, "{s}");
        let _ = out.flush();
    }
}

impl Sink for Reporter {
    fn event(&mut self, e: Event<'_>) {
        match e {
            Event::Accepted { tool, .. } => {
                signals::lock(&self.seen).tool = Some(tool.original_name().into());
                send(&Line::Accepted {
                    tool: tool.original_name().into(),
                });
            }
            Event::Phase(p) => {
                let phase = p.to_string();
                send(&Line::Phase { phase: phase.clone() });
                let tool_now = {
                    let mut seen = signals::lock(&self.seen);
                    seen.phase = Some(p);
                    seen.tool.clone()
                };
                if let Some(hook) = &self.crash_at {
                    let (at, tool) = hook.split_once(':').unwrap_or((hook, ""));
                    if at == phase && (tool.is_empty() || tool_now.as_deref() == Some(tool)) {
                        std::process::abort();
                    }
                }
            }
            Event::Warning(w) => tell!("fabdiag serve: {w}"),
            // measured: what is left is closing the endpoint and freeing
            // the buffers, which the server need not wait for to take its
            // next client
            Event::End { .. } => {
                send(&Line::Phase {
                    phase: Phase::Teardown.to_string(),
                });
            }
            _ => {}
        }
    }
}

/// The connection the server hands over through standard input; None
/// when the server closed it without one (it stopped, or is gone).
fn control_stream() -> std::io::Result<Option<TcpStream>> {
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    super::handoff::take(&UnixStream::from(fd))
}

pub fn run(prog: &str, args: &[String]) -> u8 {
    // the server ends its workers (at once mid-test, after the teardown
    // of a measured one): a stop signal sent to the process group, as a
    // Ctrl-C is, must not end this one first
    if let Err(e) = signals::hold_stop() {
        tell!("{prog}: cannot hold SIGINT and SIGTERM for the server: {e}");
    }
    let o = match fabdiag_options::serve::serve(args) {
        Ok(Action::Run(o)) => o,
        _ => {
            tell!("{prog}: {COMMAND} is started by fabdiag serve, with its options");
            return exit::USAGE;
        }
    };
    // the server checked -t/-r and passed the type it found as -g; a GPU
    // gone since is the session's allocation error, told to the client
    let gpu = match (o.gpu.any(), o.gpu.kind) {
        (true, Some(kind)) => Some(crate::commands::gpu::on(&o.gpu, crate::commands::gpu::runtime(kind))),
        (true, None) => {
            tell!("{prog}: {COMMAND} needs -g with -t/-r (fabdiag serve passes it)");
            return exit::USAGE;
        }
        (false, _) => None,
    };
    let auth = match crate::auth::from_options(
        o.auth_key.as_deref().map(std::path::Path::new),
        o.auth_munge,
        o.munge_users.clone(),
    ) {
        Ok(a) => a,
        Err((_, m)) => {
            tell!("{prog}: {m}");
            return exit::USAGE;
        }
    };
    let calls = fabdiag_fabric::CallWatcher::default();
    let peer = fabdiag_proto::PeerWatch::default();
    let env = with_hooks(Env {
        provider: o.provider,
        device: o.device,
        gpu,
        calls: Some(calls.clone()),
        peer: Some(peer.clone()),
        limits: o.limits,
        poll: o.poll,
        auth,
        // one test, then the worker ends
        own_fd_table: true,
        ..Env::default()
    });
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut reporter = Reporter {
        seen: Arc::clone(&seen),
        crash_at: std::env::var(CRASH_HOOK).ok(),
    };
    // a provider call that never returns, or that holds the test after
    // its client is gone: the server hears it as this test's outcome, and
    // serves the next client
    let watched = Arc::clone(&seen);
    if !stuck::guard("fabdiag serve".into(), calls, peer, move |ended| {
        let seen = signals::lock(&watched);
        let tool = seen.tool.clone().unwrap_or_default();
        // (what the test measured is its client's to tell)
        let where_ = seen.phase.map(|p| format!(" during {p}")).unwrap_or_default();
        let (doc, code, msg) = output::guard_ended(&tool, Role::Server, ended, &where_, seen.phase, None, &[]);
        done(code, msg, &doc);
        Some(code)
    }) {
        tell!("fabdiag serve: {}", stuck::UNGUARDED);
    }
    // the start-up a client would otherwise wait for (0.3 s with Debian's
    // libfabric 1.17: loading the library and the first fi_getinfo, whose
    // provider list is kept for the test), done while no client waits. A
    // failing fi_getinfo is not kept: the test asks again and tells its
    // client why.
    let loaded = load_libfabric();
    if loaded.is_ok() {
        let _ = fabdiag_fabric::provider_names();
    }
    let outcome = match (loaded, control_stream()) {
        (_, Ok(None)) => return exit::OK,
        (Err(e), _) => Err(fabdiag_session::Failure::early(Phase::Connect, e)),
        (_, Err(e)) => Err(fabdiag_session::Failure::early(
            Phase::Connect,
            fabdiag_session::SessionError::Internal(format!("no control connection on standard input: {e}")),
        )),
        (Ok(()), Ok(Some(stream))) => fabdiag_session::serve_stream(stream, &env, &mut reporter),
    };
    // (the hook's slow teardown: after the client has had everything,
    // as freeing a GPU context or much memory comes)
    if let Some(ms) = std::env::var(TEARDOWN_DELAY_HOOK).ok().and_then(|v| v.parse().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    let summary = match &outcome {
        Ok(r) => text::summary(&r.run, &r.rows),
        Err(f) => f.to_string(),
    };
    let tool = signals::lock(&seen).tool.clone().unwrap_or_default();
    let (doc, code, _) = conclude(&tool, Role::Server, outcome, None);
    done(code, summary, &doc);
    code
}
