//! The README and the guide, held to what they show.
//!
//! - Every ```console example runs here (trycmd) and must print what the
//!   page shows, stdout and stderr together, with its exit status (`? 1`);
//!   `[..]` stands for the rest of a line that varies, `...` for lines.
//!   These are the examples whose output does not depend on the machine:
//!   usage and help texts, error lines, `sweep --plan`, simulated sweeps,
//!   JSON error documents.
//! - Every captured example, one whose figures depend on the machine,
//!   follows a line a reader sees that says it is captured, and a comment
//!   that says how it was made,
//!   `<!-- shape: fabdiag ARGS -->` (one command), or
//!   `<!-- shape: server | fabdiag TOOL ARGS | fabdiag TOOL 127.0.0.1 ARGS -->`
//!   (a server and its client; `client |` for the client's side), or
//!   `<!-- shape: serve | fabdiag serve | fabdiag TOOL 127.0.0.1 ARGS | ... -->`
//!   (fabdiag serve's log of the clients given, stopped by SIGINT). The
//!   command runs here and its output must have the page's shape: the same
//!   lines, the same banner labels, the same headers and separators, each
//!   table row the same columns; for JSON the same keys at every level.
//!   `<!-- sections: fabdiag ARGS -->` is looser, for a report whose lines
//!   depend on the machine (doctor's): each section title the page shows
//!   (an unindented line) is printed, in that order.
//! - With FABDIAG_WRITE_CAPTURES=1 the captured examples are written into
//!   their pages from what their commands print now (all but `sections`),
//!   for after a change to a tool's output; nothing else changes a page.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages a reader meets: the README and the guide (not the results
/// under docs/results, which are records of runs).
fn guide_pages() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    if let Ok(dir) = std::fs::read_dir(root().join("docs")) {
        out.extend(
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md")),
        );
    }
    out.sort();
    out
}

#[test]
fn console_examples_print_what_the_pages_show() {
    let _cpu = cpu();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("fabdiag", Path::new(bin()))
        .timeout(Duration::from_secs(60));
    for p in guide_pages() {
        cases.case(p);
    }
    cases.run();
}

/// One captured example: what made it, which side it shows, and the
/// block as the page has it (its language and its lines).
struct Captured {
    page: String,
    line: usize,
    side: Side,
    commands: Vec<Vec<String>>,
    json: bool,
    /// Only the section titles are held to the page.
    sections: bool,
    shown: String,
    /// The block's lines in the page (0-based), fences excluded.
    body: std::ops::Range<usize>,
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Alone,
    Server,
    Client,
    Serve,
}

fn captured(page: &Path) -> Vec<Captured> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let name = page.strip_prefix(root()).unwrap_or(page).display().to_string();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let (spec, sections) = match (
            l.trim().strip_prefix("<!-- shape:"),
            l.trim().strip_prefix("<!-- sections:"),
        ) {
            (Some(s), _) => (s, false),
            (_, Some(s)) => (s, true),
            _ => continue,
        };
        let Some(spec) = spec.strip_suffix("-->") else {
            continue;
        };
        let parts: Vec<&str> = spec.split('|').map(str::trim).collect();
        let (side, commands) = match parts.as_slice() {
            [one] => (Side::Alone, vec![*one]),
            ["server", s, c] => (Side::Server, vec![*s, *c]),
            ["client", s, c] => (Side::Client, vec![*s, *c]),
            ["serve", rest @ ..] if rest.len() >= 2 => (Side::Serve, rest.to_vec()),
            _ => panic!(
                "{name}:{}: a shape comment is 'fabdiag ARGS', 'server|client | SERVER | CLIENT' or 'serve | SERVE | CLIENT...'",
                i + 1
            ),
        };
        let commands: Vec<Vec<String>> = commands
            .iter()
            .map(|c| {
                let w: Vec<String> = c.split_whitespace().map(String::from).collect();
                assert_eq!(w.first().map(String::as_str), Some("fabdiag"), "{name}:{}", i + 1);
                w[1..].to_vec()
            })
            .collect();
        // a reader cannot see the comment: the text above it says the
        // block is a capture (and, as the pages do, from what command)
        let above: Vec<&str> = lines[..i]
            .iter()
            .rev()
            .skip_while(|l| l.trim().is_empty())
            .take_while(|l| !l.trim().is_empty())
            .copied()
            .collect();
        assert!(
            above.iter().any(|l| l.to_lowercase().contains("captured")),
            "{name}:{}: the paragraph above a captured example does not say it is captured: {above:?}",
            i + 1
        );
        let open = lines[i + 1..]
            .iter()
            .position(|l| l.starts_with("```"))
            .map(|k| i + 1 + k)
            .unwrap_or_else(|| panic!("{name}:{}: no code block after the shape comment", i + 1));
        let close = lines[open + 1..]
            .iter()
            .position(|l| l.starts_with("```"))
            .map(|k| open + 1 + k)
            .unwrap_or_else(|| panic!("{name}:{}: the block is not closed", open + 1));
        out.push(Captured {
            page: name.clone(),
            line: i + 1,
            side,
            commands,
            json: lines[open].trim_start_matches('`').starts_with("json"),
            sections,
            shown: lines[open + 1..close].join("\n"),
            body: open + 1..close,
        });
    }
    out
}

/// What the example's commands print here, on the side it shows.
fn run_example(c: &Captured) -> Output {
    let args = |i: usize| c.commands[i].iter().map(String::as_str).collect::<Vec<_>>();
    match c.side {
        Side::Alone => run(&args(0), LIMIT),
        Side::Server | Side::Client => {
            let (s, cl) = (args(0), args(1));
            assert!(!s.is_empty() && cl.len() >= 2 && s[0] == cl[0] && cl[1] == "127.0.0.1");
            let (client, server) = pair(s[0], &s[1..], &cl[2..]);
            if c.side == Side::Server {
                server
            } else {
                client
            }
        }
        Side::Serve => {
            let port = free_port().to_string();
            let mut serve = args(0);
            serve.extend(["-p", port.as_str()]);
            let mut srv = Proc::spawn(&mut fabdiag(&serve));
            wait_listening(&mut srv, "127.0.0.1", port.parse().unwrap_or_default());
            // the harness's probe was a connection too: the first client
            // would be turned away while its worker ends, so wait for its
            // line (after the one saying the server listens)
            srv.wait_for("the probe's log line", LIMIT, |_, err| {
                err.lines().filter(|l| l.starts_with("fabdiag serve: ")).count() >= 2
            });
            for i in 1..c.commands.len() {
                let mut client = args(i);
                client.extend(["-p", port.as_str()]);
                let o = run(&client, LIMIT);
                assert_eq!(o.code, Some(0), "{}:{}: {client:?}: {}", c.page, c.line, o.stderr);
            }
            // the server logs a test once its own side has ended, which can
            // be just after its client exits; a SIGINT before that ends the
            // server without the line
            let clients = c.commands.len() - 1;
            srv.wait_for("a log line per client", LIMIT, |out, _| out.lines().count() >= clients);
            srv.signal(Signal::SIGINT);
            srv.wait(LIMIT)
        }
    }
}

/// A word with its figures blanked: every run of digits (with the dots
/// between them) as `#`, so "3689.19", "12:19:32Z" and "127.0.0.1:49326"
/// compare by their form. A dash stands for a figure too (a server's count).
fn form(t: &str) -> String {
    if t == "-" {
        return "#".into();
    }
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(|x| x.is_ascii_digit() || *x == '.') {
                chars.next();
            }
            out.push('#');
        } else {
            out.push(c);
        }
    }
    out
}

/// How `shown` differs in shape from `got`, line by line (None: alike).
fn text_shape(shown: &str, got: &str) -> Option<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (shown.lines().collect(), got.trim_end().lines().collect());
    if a.len() != b.len() {
        return Some(format!("{} lines shown, {} printed", a.len(), b.len()));
    }
    for (n, (x, y)) in a.iter().zip(&b).enumerate() {
        let label = |l: &str| l.split_once(" : ").map(|(k, _)| k.trim_end().to_string());
        let alike = match (label(x), label(y)) {
            (Some(p), Some(q)) => p == q,
            _ => {
                let (tx, ty): (Vec<&str>, Vec<&str>) = (x.split_whitespace().collect(), y.split_whitespace().collect());
                tx.len() == ty.len() && tx.iter().zip(&ty).all(|(p, q)| form(p) == form(q))
            }
        };
        if !alike {
            return Some(format!("line {}: shown '{x}', printed '{y}'", n + 1));
        }
    }
    None
}

/// The first section title of `shown` (an unindented line, up to its
/// first double space) that `got` does not print in that order.
fn section_shape(shown: &str, got: &str) -> Option<String> {
    let title = |l: &str| l.split("  ").next().unwrap_or_default().trim().to_string();
    let printed: Vec<String> = got
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .map(title)
        .collect();
    let mut at = 0;
    for l in shown.lines().filter(|l| !l.starts_with(' ') && !l.is_empty()) {
        let t = title(l);
        match printed[at..].iter().position(|p| form(p) == form(&t)) {
            Some(k) => at += k + 1,
            None => return Some(format!("section '{t}' is not printed (in this order)")),
        }
    }
    None
}

/// How JSON `shown` differs in its keys from `got` (None: alike).
fn json_shape(shown: &Value, got: &Value, at: &str) -> Option<String> {
    match (shown, got) {
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<&String>, Vec<&String>) = (a.keys().collect(), b.keys().collect());
            if ka != kb {
                return Some(format!("{at}: keys shown {ka:?}, printed {kb:?}"));
            }
            a.iter().find_map(|(k, v)| json_shape(v, &b[k], &format!("{at}.{k}")))
        }
        (Value::Array(a), Value::Array(b)) => match (a.first(), b.first()) {
            (Some(x), Some(y)) => json_shape(x, y, &format!("{at}[0]")),
            _ => None,
        },
        // (a value may be null on one run and set on another)
        (Value::Null, _) | (_, Value::Null) => None,
        (a, b) if std::mem::discriminant(a) == std::mem::discriminant(b) => None,
        (a, b) => Some(format!("{at}: shown {a}, printed {b}")),
    }
}

#[test]
fn captured_examples_have_the_shape_the_pages_show() {
    let _cpu = cpu();
    let examples: Vec<Captured> = guide_pages().iter().flat_map(|p| captured(p)).collect();
    assert!(
        examples.len() >= 5,
        "the pages show few captured examples: {}",
        examples.len()
    );
    let write = std::env::var_os("FABDIAG_WRITE_CAPTURES").is_some();
    let mut written = Vec::new();
    let mut faults = Vec::new();
    for c in &examples {
        let o = run_example(c);
        if write && !c.sections && o.code == Some(0) {
            written.push((c, as_shown(c, &o.stdout)));
            continue;
        }
        let fault = if o.code != Some(0) && !c.sections {
            Some(format!("it exited {:?}: {}", o.code, o.stderr))
        } else if c.sections {
            section_shape(&c.shown, &o.stdout)
        } else if c.json {
            match (
                serde_json::from_str::<Value>(&c.shown),
                serde_json::from_str::<Value>(&o.stdout),
            ) {
                (Ok(a), Ok(b)) => json_shape(&a, &b, "$"),
                (a, b) => Some(format!("not JSON: shown {:?}, printed {:?}", a.err(), b.err())),
            }
        } else {
            text_shape(&c.shown, &o.stdout)
        };
        if let Some(f) = fault {
            faults.push(format!("{}:{}: {f}", c.page, c.line));
        }
    }
    write_captures(&written);
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// What a page shows for `stdout`: JSON laid out by `layout`, and a
/// server's port as the default one a reader would run it on.
fn as_shown(c: &Captured, stdout: &str) -> String {
    if c.json {
        if let Ok(v) = serde_json::from_str::<Value>(stdout) {
            return layout(&v, 0);
        }
    }
    stdout
        .trim_end()
        .lines()
        .map(|l| match l.strip_prefix("Listening on port ") {
            Some(rest) => format!(
                "Listening on port 49194{}",
                rest.trim_start_matches(|c: char| c.is_ascii_digit())
            ),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// JSON on one line, with a space after each comma and colon.
fn flat(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}: {}", Value::String(k.clone()), flat(x)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(flat).collect::<Vec<_>>().join(", ")),
        scalar => scalar.to_string(),
    }
}

/// JSON indented by two, but an object or array that fits in 96
/// characters stays on one line: a page shows a document's shape without
/// a line per number.
fn layout(v: &Value, indent: usize) -> String {
    let flat = flat(v);
    let pad = " ".repeat(indent + 2);
    match v {
        Value::Object(m) if flat.len() + indent > 96 && !m.is_empty() => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{pad}{}: {}", Value::String(k.clone()), layout(x, indent + 2)))
                .collect();
            format!("{{\n{}\n{}}}", items.join(",\n"), " ".repeat(indent))
        }
        Value::Array(a) if flat.len() + indent > 96 && !a.is_empty() => {
            let items: Vec<String> = a.iter().map(|x| format!("{pad}{}", layout(x, indent + 2))).collect();
            format!("[\n{}\n{}]", items.join(",\n"), " ".repeat(indent))
        }
        _ => flat,
    }
}

/// Puts each example's fresh output into its page, in place of the block
/// the page had (FABDIAG_WRITE_CAPTURES=1, after a change to what a tool
/// prints; the shape check is skipped for what it writes).
fn write_captures(written: &[(&Captured, String)]) {
    let mut pages: Vec<&str> = written.iter().map(|(c, _)| c.page.as_str()).collect();
    pages.dedup();
    for page in pages {
        let path = root().join(page);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        // from the bottom up, so the earlier blocks' lines stay where they were
        for (c, out) in written.iter().rev().filter(|(c, _)| c.page == page) {
            lines.splice(c.body.clone(), out.lines().map(String::from));
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{page}: {e}"));
    }
}

/// The shape checks themselves: a label, a column or a line changed is
/// found; the figures are free.
#[test]
fn the_shape_checks_tell_figures_from_form() {
    let shown = "Device           : lo\nRDMA Size[B]      Writes  BW[MB/s]\n       65536      256000   3689.19\n-----";
    let figures =
        "Device           : shm\nRDMA Size[B]      Writes  BW[MB/s]\n       65536           -    812.5\n-----";
    assert_eq!(text_shape(shown, figures), None);
    assert!(text_shape(shown, &figures.replace("Device ", "Domain ")).is_some());
    assert!(text_shape(shown, &figures.replace("812.5", "812.5 9")).is_some());
    assert!(text_shape(shown, &figures.replace("Writes", "Reads")).is_some());
    assert!(text_shape(shown, "Device           : lo").is_some());
    let a: Value = serde_json::json!({"size": 8, "rows": [{"bw": 1.0, "ops": null}]});
    let b: Value = serde_json::json!({"size": 16, "rows": [{"bw": 2.5, "ops": 7}]});
    assert_eq!(json_shape(&a, &b, "$"), None);
    let c: Value = serde_json::json!({"size": 16, "rows": [{"bw": 2.5}]});
    assert!(json_shape(&a, &c, "$").is_some());
}

/// The metrics page's table lists every metric fabdiag exports, and
/// nothing the catalogue lacks.
#[test]
fn the_metrics_page_lists_every_metric() {
    let page = std::fs::read_to_string(root().join("docs/metrics.md")).expect("docs/metrics.md");
    let table = page
        .split("## Every metric")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the page's \"Every metric\" table");
    let mut listed: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let mut exported: Vec<&str> = fabdiag_exposition::catalogue::all().iter().map(|d| d.name).collect();
    listed.sort_unstable();
    exported.sort_unstable();
    assert_eq!(listed, exported);
}
