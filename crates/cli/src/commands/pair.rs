//! A client/server tool (write-bw ... atomic-lat, or its original name):
//! options, then a server for one client, a client, or both here
//! (`--local`), then the outcome. gpu-loopback-bw, which has no server,
//! runs here too: in this process, on one endpoint.

use super::{load_libfabric, with_hooks};
use crate::output::{self, early_failure, finish, stopped, Console, MetricsTarget, SoFar, Telling};
use crate::streams::print_stdout;
use crate::version::VERSION;
use crate::{exit, signals, stuck};
use fabdiag_model::{Role, Tool};
use fabdiag_options::{Action, Invocation, OptionError, RunMode};
use fabdiag_proto::{Listener, Phase};
use fabdiag_session::Failure;
use std::sync::{Arc, Mutex};

pub fn run(tool: Tool, prog: &str, args: &[String]) -> u8 {
    let name = tool.original_name();
    let json = args.iter().any(|a| a == "--json");
    let inv = match fabdiag_options::parse(tool, args) {
        Ok(Action::Help) => {
            print_stdout(&fabdiag_options::usage(tool, prog));
            return exit::OK;
        }
        Ok(Action::Version) => {
            print_stdout(&format!("{prog} version: {VERSION}\n"));
            return exit::OK;
        }
        Ok(Action::Run(inv)) => inv,
        Err(OptionError::Invalid(m)) => return early_failure(name, prog, json, exit::USAGE, &m),
        Err(OptionError::Unavailable(m)) => return early_failure(name, prog, json, exit::UNAVAILABLE, &m),
    };
    let role = match inv.mode {
        RunMode::Server if tool.has_server() => Role::Server,
        _ => Role::Client,
    };
    if let Some(path) = &inv.metrics {
        if let Err(m) = crate::metrics_file::check(path) {
            return early_failure(name, prog, json, exit::USAGE, &m);
        }
    }
    let auth = match crate::auth::from_options(inv.auth_key.as_deref(), inv.auth_munge, None) {
        Ok(a) => a,
        Err((code, m)) => return early_failure(name, prog, json, code, &m),
    };
    let telling = telling(tool, prog, &inv, role);
    // the peer as the user named it; a server learns its client's address
    let so_far = Arc::new(Mutex::new(SoFar {
        peer: match &inv.mode {
            RunMode::Client(host) => Some(host.clone()),
            RunMode::Local => Some("localhost".into()),
            RunMode::Server => None,
        },
        ..SoFar::default()
    }));
    // before anything starts a thread (a GPU runtime does): a stop signal
    // mid-run reports the sizes measured, then ends the process by it
    let stop_telling = telling.clone();
    let watching = signals::report_on_stop(prog, Arc::clone(&so_far), move |s: &SoFar, sig| {
        if !s.finished {
            stopped(&stop_telling, sig.as_str(), s);
        }
    });
    let peer = signals::lock(&so_far).peer.clone();
    let gpu = match super::gpu::resolve(&inv.gpu) {
        Ok(g) => g,
        Err(m) => return telling.early(exit::UNAVAILABLE, &m, peer.as_deref()),
    };
    if let Err(e) = load_libfabric() {
        return telling.early(exit::UNAVAILABLE, &e.to_string(), peer.as_deref());
    }
    let calls = fabdiag_fabric::CallWatcher::default();
    let peer_watch = fabdiag_proto::PeerWatch::default();
    let env = with_hooks(fabdiag_session::Env {
        gpu,
        calls: Some(calls.clone()),
        peer: Some(peer_watch.clone()),
        auth,
        // one test, then the process ends (`--local`: both sides here)
        own_fd_table: matches!(inv.mode, RunMode::Client(_) | RunMode::Server),
        ..fabdiag_session::Env::from(inv.own.clone())
    });
    let mut console = Console {
        prog: prog.into(),
        json: inv.json,
        percentiles: inv.percentiles,
        counters: inv.counters,
        so_far: Arc::clone(&so_far),
    };
    if let Err(e) = watching {
        console.warn(&format!(
            "warning: cannot watch for SIGINT/SIGTERM ({e}): a stop will lose this run's results"
        ));
    }
    let kept = Arc::clone(&so_far);
    let guard_telling = telling.clone();
    let guarded = stuck::guard(prog.into(), calls, peer_watch, move |ended| {
        let s = signals::lock(&kept);
        // finished: the outcome is being printed, and ends the process
        (!s.finished).then(|| output::guard_ended_here(&guard_telling, ended, &s))
    });
    if !guarded {
        console.warn(stuck::UNGUARDED);
    }
    let outcome = match inv.mode {
        _ if !tool.has_server() => fabdiag_session::loopback(inv.spec, &env, &mut console),
        RunMode::Server => {
            if !inv.ignored_on_server.is_empty() {
                console.warn(&format!(
                    "warning: the client decides the run parameters; ignoring {} given to the server",
                    inv.ignored_on_server.join(" ")
                ));
            }
            // a provider or domain this machine lacks fails before listening
            fabdiag_session::check_server(&env).and_then(|()| match Listener::bind(inv.port) {
                Ok(l) => fabdiag_session::serve_one(&l, Some(tool), &env, &mut console),
                Err(e) => Err(Failure::early(Phase::Connect, e)),
            })
        }
        RunMode::Client(host) => fabdiag_session::client(inv.spec, &env, &host, inv.port, &mut console),
        RunMode::Local => fabdiag_session::local(inv.spec, &env, &mut console),
    };
    let peer = {
        let mut s = signals::lock(&so_far);
        s.finished = true;
        s.peer.clone()
    };
    finish(&telling, outcome, inv.threshold, peer.as_deref())
}

/// How this run's outcome will be told: its JSON, its metrics file (with
/// the provider and domain the options asked for, for a run that ends
/// before it chooses them).
fn telling(tool: Tool, prog: &str, inv: &Invocation, role: Role) -> Telling {
    Telling {
        tool,
        prog: prog.into(),
        json: inv.json,
        role,
        metrics: inv.metrics.clone().map(|path| MetricsTarget {
            path,
            provider: inv
                .own
                .provider
                .as_ref()
                .map(|p| p.name().to_string())
                .unwrap_or_default(),
            domain: inv.own.device.clone().unwrap_or_default(),
        }),
    }
}
