//! How a pair run's outcome becomes output and an exit code (the streams
//! themselves are `streams`'). `Console` hears a session's events and prints the originals'
//! tables as each size finishes (so a long run shows progress), or keeps
//! stdout for the single JSON document and sends the server's `Listening`
//! line and warnings to stderr. `finish` judges thresholds, prints the one
//! error line and the JSON document, and picks the exit code.

use crate::metrics_file;
use crate::streams::print_stdout;
use crate::stuck::{self, Ended};
use crate::version::VERSION;
use crate::{exit, signals};
use fabdiag_model::Threshold;
use fabdiag_model::{Role, Row, RunDesc, Tool};
use fabdiag_proto::Phase;
use fabdiag_report::json::{render, Document, ErrorJson, RowJson, RunDocument, SCHEMA_VERSION};
use fabdiag_report::metrics::{self, PairContext};
use fabdiag_report::threshold::judge;
use fabdiag_report::{counters_text, legacy, text};
use fabdiag_session::{Event, Failure, Report, Sink};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A pair tool's console: text tables, or quiet for JSON. It also keeps
/// what was measured so far, for a stop signal's report.
pub struct Console {
    pub prog: String,
    pub json: bool,
    /// Print the extra percentile table (latency tools).
    pub percentiles: bool,
    /// Print the NIC counter block after the table (`--counters`).
    pub counters: bool,
    pub so_far: Arc<Mutex<SoFar>>,
}

/// What a pair tool has measured so far: what a stop signal reports.
#[derive(Default)]
pub struct SoFar {
    /// The peer as the metrics name it: the host the client was given,
    /// the address a server's client came from.
    pub peer: Option<String>,
    pub run: Option<RunDesc>,
    pub rows: Vec<Row>,
    pub phase: Option<Phase>,
    /// The outcome is being printed: a stop now only ends the process.
    pub finished: bool,
}

impl Console {
    fn text(&self, s: &str) {
        if !self.json && !s.is_empty() {
            print_stdout(s);
        }
    }

    pub fn warn(&self, message: &str) {
        tell!("{}: {message}", self.prog);
    }
}

impl Sink for Console {
    fn event(&mut self, e: Event<'_>) {
        // kept before it is printed, and the lock not held while printing
        match &e {
            Event::Phase(p) => signals::lock(&self.so_far).phase = Some(*p),
            Event::Banner(run) => signals::lock(&self.so_far).run = Some((*run).clone()),
            Event::Accepted { peer, .. } => signals::lock(&self.so_far).peer = Some(peer.ip().to_string()),
            Event::Row { row, .. } => signals::lock(&self.so_far).rows.push((*row).clone()),
            _ => {}
        }
        match e {
            Event::Listening(port) if self.json => tell!("{}", legacy::listening(port)),
            Event::Listening(port) => print_stdout(&format!("{}\n", legacy::listening(port))),
            Event::Warning(w) => self.warn(w),
            // the server keeps listening after turning a stranger away; say why
            Event::Rejected { peer, reason } => self.warn(&format!("rejected connection from {peer}: {reason}")),
            Event::Banner(run) => self.text(&text::banner(run)),
            Event::Row { run, row, index } => self.text(&text::row(run, row, index)),
            Event::End { run, rows } => self.text(&text::end(run, rows, self.percentiles)),
            Event::Counters { role, counters } if self.counters => self.text(&counters_text::block(role, counters)),
            Event::Accepted { .. } | Event::Phase(_) | Event::Counters { .. } => {}
        }
    }
}

/// How a pair tool's outcome is told, besides its one line on stderr:
/// its JSON document on stdout (`--json`), its metrics in a file
/// (`--metrics`).
#[derive(Clone, Debug)]
pub struct Telling {
    pub tool: Tool,
    pub prog: String,
    pub json: bool,
    pub role: Role,
    pub metrics: Option<MetricsTarget>,
}

/// `--metrics FILE`, with what the options asked for, for a run that ends
/// before it chose a provider and domain.
#[derive(Clone, Debug)]
pub struct MetricsTarget {
    pub path: PathBuf,
    pub provider: String,
    pub domain: String,
}

impl Telling {
    fn name(&self) -> &'static str {
        self.tool.original_name()
    }

    /// A failure after the options were read but before the run: its
    /// line, document (with no role, as before any run) and metrics; the
    /// exit code.
    pub fn early(&self, code: u8, msg: &str, peer: Option<&str>) -> u8 {
        let mut doc = document(self.name(), None);
        doc.error = Some(ErrorJson {
            kind: exit::kind_name(code).into(),
            message: msg.into(),
        });
        tell(self, Some(msg), &doc, peer, code)
    }
}

/// An empty document of `tool` (its original name) in `role`.
pub fn document(tool: &str, role: Option<Role>) -> RunDocument {
    Document {
        schema_version: SCHEMA_VERSION,
        fabdiag_version: VERSION.into(),
        tool: tool.into(),
        role: role.map(|r| match r {
            Role::Client => "client".into(),
            Role::Server => "server".into(),
        }),
        config: None,
        results: Vec::new(),
        threshold: None,
        error: None,
        counters: None,
    }
}

fn rows_json(rows: &[Row]) -> Vec<RowJson> {
    rows.iter().map(RowJson::from).collect()
}

/// A failure before any run: one line on stderr, and a JSON document on
/// stdout when --json was asked for (even if the options were bad).
pub fn early_failure(tool: &str, prog: &str, json: bool, code: u8, msg: &str) -> u8 {
    tell!("{prog}: {msg}");
    if json {
        let mut doc = document(tool, None);
        doc.error = Some(ErrorJson {
            kind: exit::kind_name(code).into(),
            message: msg.into(),
        });
        print_stdout(&(render(&doc) + "\n"));
    }
    code
}

/// A stop signal during a pair tool: one line saying so, and with --json
/// the document with every size measured before it.
pub fn stopped(t: &Telling, sig: &str, so_far: &SoFar) {
    let msg = format!("stopped by {sig}{}", so_far.when(t.role));
    let doc = failed_document(
        t.name(),
        t.role,
        so_far.run.clone(),
        &so_far.rows,
        "interrupted",
        msg.clone(),
    );
    // the process ends by the signal: the exit code is not used
    tell(t, Some(&msg), &doc, so_far.peer.as_deref(), exit::RUNTIME);
}

/// What the guard's ending of a run (crate::stuck) amounts to: its
/// document, exit code and one line. A provider call that never returned
/// is a runtime failure said with `where_` (" during run (2 sizes
/// measured)"); a peer lost while a call was held, the failure the session
/// would have made of it in `phase`. Either keeps `run` and `rows`.
pub fn guard_ended(
    tool: &str,
    role: Role,
    ended: Ended,
    where_: &str,
    phase: Option<Phase>,
    run: Option<RunDesc>,
    rows: &[Row],
) -> (RunDocument, u8, String) {
    match ended {
        Ended::Stuck(call) => {
            let msg = stuck::line(&call, where_);
            let kind = exit::kind_name(exit::RUNTIME);
            (
                failed_document(tool, role, run, rows, kind, msg.clone()),
                exit::RUNTIME,
                msg,
            )
        }
        Ended::PeerLost(loss) => {
            let f = stuck::lost(loss, phase, run, rows.to_vec());
            let msg = f.to_string();
            let (doc, code, _) = conclude(tool, role, Err(f), None);
            (doc, code, msg)
        }
    }
}

/// A pair tool's run that the guard ended, told as a stop signal's is:
/// the line, the JSON document with what was measured; the exit code.
pub fn guard_ended_here(t: &Telling, ended: Ended, so_far: &SoFar) -> u8 {
    let (doc, code, msg) = guard_ended(
        t.name(),
        t.role,
        ended,
        &so_far.when(t.role),
        so_far.phase,
        so_far.run.clone(),
        &so_far.rows,
    );
    tell(t, Some(&msg), &doc, so_far.peer.as_deref(), code)
}

/// A pair tool's outcome told: its one line on stderr, if any, with
/// --json its document on stdout, with --metrics its metrics in the file.
/// The exit code: `code`, or a runtime failure where a run that passed
/// could not write its metrics.
fn tell(t: &Telling, line: Option<&str>, doc: &RunDocument, peer: Option<&str>, code: u8) -> u8 {
    if let Some(l) = line {
        tell!("{}: {l}", t.prog);
    }
    if t.json {
        print_stdout(&(render(doc) + "\n"));
    }
    let Some(target) = &t.metrics else {
        return code;
    };
    let file = metrics_file::name(&target.path);
    let ctx = PairContext {
        file: &file,
        tool: t.tool,
        role: match t.role {
            Role::Client => "client",
            Role::Server => "server",
        },
        peer: peer.unwrap_or(""),
        provider: &target.provider,
        domain: &target.domain,
        ended_unix_s: metrics_file::now_unix_s(),
    };
    let written = metrics::pair(doc, &ctx)
        .map_err(|e| e.to_string())
        .and_then(|text| metrics_file::write(&target.path, &text));
    match written {
        Ok(()) => code,
        Err(e) => {
            tell!("{}: {e}", t.prog);
            if code == exit::OK {
                exit::RUNTIME
            } else {
                code
            }
        }
    }
}

impl SoFar {
    /// Where the run was, for a line about its early end: " during run (2
    /// sizes measured)", or while it waited for a client.
    fn when(&self, role: Role) -> String {
        let place = match (self.phase, role) {
            (Some(p), _) => format!(" during {p}"),
            (None, Role::Server) => " while waiting for a client".into(),
            (None, Role::Client) => String::new(),
        };
        match (self.phase, self.rows.len()) {
            (None, 0) => place,
            (_, 1) => format!("{place} (1 size measured)"),
            (_, n) => format!("{place} ({n} sizes measured)"),
        }
    }
}

/// The document of a run that ended early: what it had agreed and the
/// sizes it finished, with the error.
fn failed_document(
    tool: &str,
    role: Role,
    run: Option<RunDesc>,
    rows: &[Row],
    kind: &str,
    message: String,
) -> RunDocument {
    let mut doc = document(tool, Some(role));
    doc.config = run;
    doc.results = rows_json(rows);
    doc.error = Some(ErrorJson {
        kind: kind.into(),
        message,
    });
    doc
}

/// What a finished session amounts to: its document and exit code, and
/// the one line to print on stderr if it failed.
pub fn conclude(
    tool: &str,
    role: Role,
    outcome: Result<Report, Failure>,
    threshold: Option<Threshold>,
) -> (RunDocument, u8, Option<String>) {
    match outcome {
        Ok(report) => {
            let mut doc = document(tool, Some(role));
            let mut code = exit::OK;
            let mut line = None;
            if let Some(t) = threshold {
                let verdict = judge(t, &report.rows);
                if let Some(msg) = verdict.failure {
                    doc.error = Some(ErrorJson {
                        kind: exit::kind_name(exit::THRESHOLD).into(),
                        message: msg.clone(),
                    });
                    code = exit::THRESHOLD;
                    line = Some(msg);
                }
                doc.threshold = Some(verdict.json);
            }
            doc.results = rows_json(&report.rows);
            doc.config = Some(report.run);
            doc.counters = report.counters;
            (doc, code, line)
        }
        Err(f) => {
            let code = exit::of(f.kind);
            // a cable that flapped, said beside the failure it caused
            let msg = match f.counters.as_deref().and_then(counters_text::failure_clause) {
                Some(clause) => format!("{f}; {clause}"),
                None => f.to_string(),
            };
            let mut doc = failed_document(
                tool,
                role,
                f.run.map(|r| *r),
                &f.rows,
                exit::kind_name(code),
                msg.clone(),
            );
            doc.counters = f.counters.map(|c| *c);
            (doc, code, Some(msg))
        }
    }
}

/// Reports a pair tool's outcome: the error line, the JSON document, the
/// exit code.
pub fn finish(t: &Telling, outcome: Result<Report, Failure>, threshold: Option<Threshold>, peer: Option<&str>) -> u8 {
    let (doc, code, line) = conclude(t.name(), t.role, outcome, threshold);
    tell(t, line.as_deref(), &doc, peer, code)
}
