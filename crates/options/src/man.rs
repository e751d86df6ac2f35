//! Manual pages, from the same option tables that print `-h`, so the two
//! cannot drift: fabdiag(1), one page per tool under its subcommand
//! (`fabdiag-write-bw`) and its original name (`cxi_write_bw`), and pages
//! for `serve`, `sweep` and the host traffic test. Pure: pages are returned as roff
//! text; writing them somewhere is the caller's business.

use crate::table::OptionDoc;
use crate::{layout, serve, sweep, traffic};
use fabdiag_model::{Family, Tool};
use roff::{bold, italic, roman, Inline, Roff};

/// One page: its file name without the section (`cxi_write_bw`) and roff.
pub struct Page {
    pub name: String,
    pub roff: String,
}

fn header(r: &mut Roff, name: &str, version: &str) {
    let title = name.to_ascii_uppercase();
    // title, section, then the footer's middle (the version stands in for a
    // date, so pages are reproducible), its left (source) and the manual
    let source = format!("fabdiag {version}");
    r.control("TH", [title.as_str(), "1", version, source.as_str(), "fabdiag manual"]);
}

fn para(r: &mut Roff, text: &str) {
    r.control("PP", []).text([roman(text)]);
}

/// The page section of options, as `.TP` items, each help line on its
/// own line as `-h` shows it.
fn options(r: &mut Roff, docs: &[&OptionDoc]) {
    for d in docs {
        r.control("TP", []).text([bold(d.left.trim())]);
        for (i, line) in d.help.iter().enumerate() {
            if i > 0 {
                r.control("br", []);
            }
            r.text([roman(line.as_str())]);
        }
    }
}

/// A block shown exactly as the program prints it.
fn verbatim(r: &mut Roff, text: &str) {
    r.control("nf", []);
    for line in text.lines() {
        r.text([roman(line)]);
    }
    r.control("fi", []);
}

const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    ("1", "Invalid option or argument (as the originals)."),
    (
        "2",
        "The run failed: the peer died or went silent, a fabric or control-protocol error, the port in use, no server, a data check (--verify, or an atomic target's final value) failed; or standard output could not be written (a full disk).",
    ),
    ("3", "The run completed but --min-bw or --max-lat was missed."),
    (
        "4",
        "This machine (or, for a client, its server) cannot do it: libfabric missing, unknown provider or domain, a capability or atomic the provider lacks (FI_HMEM included), too few huge pages, no GPU runtime, no such GPU or a libfabric without that GPU's interface, a cycle counter that cannot be calibrated.",
    ),
];

/// fabdiag as a whole: what each code means for every command.
const OVERVIEW_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    ("1", "Invalid option or argument (as the originals)."),
    (
        "2",
        "The run failed: a peer died or went silent, a fabric, GPU or control-protocol error, the port in use, no server, a data check failed; for a sweep, pairs failed or ranks were lost; or standard output could not be written (a full disk: one line says so, and a failure's own code is kept).",
    ),
    (
        "3",
        "The run completed but a threshold was missed (--min-bw, --max-lat, --min-tile-bandwidth, --min-host-bandwidth).",
    ),
    (
        "4",
        "This machine cannot do it: libfabric, a provider, domain or capability, a GPU runtime or GPU is missing.",
    ),
    ("5", "fabdiag sweep only: slow links or nodes were found."),
];

const SERVE_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Stopped by SIGINT or SIGTERM (the test in progress ended, its client told)."),
    ("1", "Invalid option or argument."),
    ("2", "It cannot listen (the port in use) or watch for signals, or its log could not be written to standard output."),
    (
        "4",
        "This machine cannot serve what it was started with: libfabric missing, the -P provider or -d domain absent, no GPU runtime or no such GPU for -t/-r.",
    ),
];

const SWEEP_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Every pair measured and none slow."),
    (
        "1",
        "Invalid option or argument; no rank or coordinator from the launcher's environment; a rank refused (another size or version, a duplicate) or told that rank 0 could not start.",
    ),
    (
        "2",
        "Pairs failed or ranks were missing or lost; the coordinator cannot be reached or listen; the output directory or standard output cannot be written.",
    ),
    ("3", "A pair or node missed --min-bw or --max-lat."),
    (
        "4",
        "Unavailable here: libfabric, the provider, domain or capability, a GPU runtime or GPU that the test needs.",
    ),
    ("5", "Slow links or nodes were found."),
];

const TRAFFIC_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    ("1", "Invalid option or argument (as the original); -d names no GPU here."),
    (
        "2",
        "A test failed: a CUDA error (a kernel fault, a device reset), a wait past its time-out, or a data check that found a wrong byte; or standard output could not be written.",
    ),
    ("3", "A test completed below --min-tile-bandwidth or --min-host-bandwidth."),
    (
        "4",
        "Unavailable here: no NVIDIA driver, no GPU, or a plan this GPU cannot hold (too little free memory, no copy engine, -n × -i past 64 bits of bytes).",
    ),
];

const PAIR_STOP: &str = "Stopped mid-run, the tool dies by the signal (130 or 143 in a shell) after printing what it measured: a line on standard error, and with --json the document with every finished size and error kind \"interrupted\". A signal it was started ignoring stays ignored.";

const SERVE_STOP: &str = "The server ends the test in progress (its client is told), says how many connections it served, and exits 0. A second signal ends it at once; a signal it was started ignoring stays ignored.";

const SWEEP_STOP: &str = "Rank 0 ends the sweep after the round in progress, records the rounds left as not tested, skips the re-tests and writes its report; then every rank dies by the signal (130 or 143 in a shell). A second signal ends a process at once.";

const TRAFFIC_STOP: &str = "Stopped mid-run, the tool dies by the signal (130 or 143 in a shell) after printing a line that says when, and with -j the document with every finished test and that line as its error. A signal it was started ignoring stays ignored.";

/// What a stop signal does, after the exit codes.
fn stop_signals(r: &mut Roff, what: &str) {
    r.control("TP", []).text([bold("SIGINT, SIGTERM")]);
    r.text([roman(what)]);
}

fn exit_status(r: &mut Roff, table: &[(&str, &str)]) {
    r.control("SH", ["EXIT STATUS"]);
    for (code, what) in table {
        r.control("TP", []).text([bold(*code)]);
        r.text([roman(*what)]);
    }
}

/// The variables every page names, after a command's own `extra` ones.
fn environment(r: &mut Roff, extra: &[(&str, &str)]) {
    r.control("SH", ["ENVIRONMENT"]);
    for (name, what) in extra {
        r.control("TP", []).text([bold(*name)]);
        r.text([roman(*what)]);
    }
    r.control("TP", []).text([bold("FABDIAG_LIBFABRIC")]);
    r.text([roman(
        "The libfabric shared object to load instead of libfabric.so.1 (libfabric is loaded at run time).",
    )]);
    r.control("TP", [])
        .text([bold("FI_PROVIDER, FI_LOG_LEVEL, FI_CXI_*, ...")]);
    r.text([roman("libfabric's own variables apply as usual.")]);
}

fn see_also(r: &mut Roff, pages: &[&str]) {
    r.control("SH", ["SEE ALSO"]);
    let mut line: Vec<Inline> = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(*p));
        line.push(roman("(1)"));
    }
    line.push(roman(", "));
    line.push(bold("fi_info"));
    line.push(roman("(1), and /usr/share/doc/fabdiag/README.md"));
    r.text(line);
}

/// What a tool measures, in a few words.
fn what(tool: Tool) -> &'static str {
    match tool {
        Tool::WriteBw => "one-sided RDMA write bandwidth",
        Tool::ReadBw => "one-sided RDMA read bandwidth",
        Tool::SendBw => "two-sided send/receive bandwidth",
        Tool::SendLat => "two-sided send latency (a round trip, halved)",
        Tool::WriteLat => "one-sided RDMA write latency (post to completion)",
        Tool::ReadLat => "one-sided RDMA read latency (post to completion)",
        Tool::AtomicBw => "the rate of remote atomic operations",
        Tool::AtomicLat => "the latency of remote atomic operations",
        Tool::GpuLoopbackBw => "RDMA write bandwidth from a process into its own memory (GPU or system)",
    }
}

/// What a tool does, for its DESCRIPTION.
fn description(tool: Tool) -> String {
    let what = what(tool);
    if !tool.has_server() {
        return format!(
            "{} measures {what}: one process, no server and no TCP, writes -n times per iteration from the start of its TX buffer to the start of its RX buffer through the fabric (any fabric libfabric drives: cxi, verbs, efa, tcp, shm, ...) and back into itself. It re-creates HPE's {} (also called cxi_gpu_bw_loopback and cxi_loopback_bw, names fabdiag answers to) with the same options, defaults and text output. It prints a summary, then one row: the size, the writes, the bandwidth in Gb/s (10^9 bits per second) and the packet rate in 2048-byte packets. With --verify (on by default for GPU buffers) the TX buffer holds a pattern and the RX buffer is checked after the run; a wrong byte is an error naming its offset.",
            tool.original_name(),
            tool.original_name()
        );
    }
    let rest = match tool.family() {
        Family::Bandwidth(_) => {
            "Both sides print a summary of the run, then one row per size: the size, the operations this side initiated (a dash on a server that initiates none), the bandwidth in MB/s (10^6 bytes per second; both directions summed when bidirectional) and the packet rate in 2048-byte packets."
        }
        Family::Latency(_) => {
            "Both sides print a summary; the client then prints, per size, the operations measured and the minimum, maximum, mean and standard deviation of their latency in microseconds (every sample with --report-all). After each size both sides compare how many operations they saw, so a de-synchronised run is an error, not a number."
        }
        Family::Atomic { .. } => {
            "Each side first asks its provider whether it supports the operation on the type in the needed form and refuses cleanly if not. After the run every target that was hit is checked against the value the operations must have produced; a wrong value is an error naming both values."
        }
    };
    format!(
        "{} measures {what} between two processes, usually on two nodes, over any fabric libfabric drives (cxi, verbs, efa, tcp, shm, ...). It re-creates HPE's {} with the same options, defaults and text output. Started without an address it is a server that waits for one client on TCP port 49194; started with the server's address it is the client, which decides every run parameter. {rest}",
        tool.original_name(),
        tool.original_name()
    )
}

/// Deliberate differences, per family (the README has the whole list).
fn differences(tool: Tool) -> Vec<&'static str> {
    let mut d = vec![
        "The control protocol is fabdiag's own (length-prefixed JSON with heartbeats): it does not interoperate with HPE's binaries, and each side notices a dead or silent peer in every phase.",
        "Numbers are stricter: no sign and no trailing garbage; -l, -p, -t and -r are range-checked as typed.",
        "Bad options print one line on stderr instead of the usage text.",
        "Run options given to a server are reported as ignored instead of being ignored silently.",
    ];
    match tool.family() {
        Family::Bandwidth(_) if !tool.has_server() => d.extend([
            "-s 0 is refused (the original accepted it and printed nonsense packet counts).",
            "--min-bw takes Gb/s, the unit of this tool's table.",
        ]),
        Family::Bandwidth(_) => d.extend([
            "Bandwidth durations are computed in 64 bits (the original's wrapped past 4294 s), and IDC (FI_INJECT) is decided per size.",
            "HRP has no libfabric control and is shown as Disabled - Not Applicable.",
        ]),
        Family::Latency(_) => d.extend([
            "--latency-gap waits the requested time (the original waited far less).",
            "Statistics cannot divide by zero, and --clock cycles with a failed calibration is an error.",
        ]),
        Family::Atomic { .. } => d.extend([
            "The target's final value is verified; atomics are never injected; CSWAP and AXOR always fetch.",
        ]),
    }
    d
}

fn tool_page(tool: Tool, name: &str, synopsis_prog: &str, version: &str) -> Page {
    let lay = layout(tool);
    let docs = lay.documented();
    let mut r = Roff::new();
    header(&mut r, name, version);
    r.control("SH", ["NAME"]);
    r.text([roman(format!(
        "{}, fabdiag {} - {} over libfabric",
        tool.original_name(),
        tool.subcommand(),
        what(tool)
    ))]);
    r.control("SH", ["SYNOPSIS"]);
    if lay.one_process {
        r.text([bold(synopsis_prog), roman(" [OPTIONS]")]);
    } else {
        r.text([bold(synopsis_prog), roman(" [-d DEV] [-p PORT]")]);
        r.control("br", []);
        r.text([bold(synopsis_prog), roman(" "), italic("ADDR"), roman(" [OPTIONS]")]);
    }
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(description(tool))]);
    r.control("SH", ["OPTIONS"]);
    options(&mut r, &docs.iter().filter(|d| !d.fabdiag).collect::<Vec<_>>());
    if !lay.trailer.is_empty() {
        para(&mut r, "Names are accepted in any letter case:");
        verbatim(&mut r, lay.trailer.trim());
    }
    r.control("SH", ["FABDIAG OPTIONS"]);
    para(&mut r, "Additions to the original options.");
    options(&mut r, &docs.iter().filter(|d| d.fabdiag).collect::<Vec<_>>());
    exit_status(&mut r, EXIT_STATUS);
    stop_signals(&mut r, PAIR_STOP);
    r.control("SH", ["JSON"]);
    r.text([roman(
        "With --json the tool prints one JSON document on stdout (schema_version 1: the run's configuration, one result per size, the threshold verdict, and the error of a failed run, with the sizes that finished). The schema is described in /usr/share/doc/fabdiag/README.md, section JSON.",
    )]);
    r.control("SH", ["DIFFERENCES FROM THE ORIGINALS"]);
    for d in differences(tool) {
        r.control("IP", ["\\(bu", "2"]).text([roman(d)]);
    }
    environment(&mut r, &[]);
    see_also(&mut r, &["fabdiag", "fabdiag-serve"]);
    Page {
        name: name.into(),
        roff: r.render(),
    }
}

fn overview_page(version: &str) -> Page {
    let mut r = Roff::new();
    header(&mut r, "fabdiag", version);
    r.control("SH", ["NAME"]);
    r.text([roman("fabdiag - fabric and accelerator-link diagnostics on libfabric")]);
    r.control("SH", ["SYNOPSIS"]);
    r.text([bold("fabdiag"), roman(" "), italic("COMMAND"), roman(" [OPTIONS]")]);
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(
        "fabdiag re-creates HPE Slingshot's CXI diagnostics and Graphcore's gc-hosttraffictest on libfabric, so the same command lines and text output work on any fabric libfabric drives, and adds JSON, thresholds with their own exit codes, a server for every tool, and clear one-line errors for every fault. Installed under an original name (cxi_write_bw, ...), fabdiag behaves as that tool.",
    )]);
    r.control("SH", ["COMMANDS"]);
    verbatim(&mut r, &fabdiag_report::support::overview(version));
    r.control("TP", [])
        .text([bold("fabdiag completions"), roman(" bash|zsh|fish")]);
    r.text([roman("Print a shell completion script.")]);
    r.control("TP", []).text([bold("fabdiag manpages"), roman(" DIR")]);
    r.text([roman("Write these manual pages into DIR.")]);
    exit_status(&mut r, OVERVIEW_EXIT_STATUS);
    environment(&mut r, &[]);
    let mut also: Vec<String> = Tool::all().map(|t| t.original_name().to_string()).collect();
    also.extend(["fabdiag-serve", "fabdiag-sweep", "gc-hosttraffictest"].map(String::from));
    let refs: Vec<&str> = also.iter().map(String::as_str).collect();
    see_also(&mut r, &refs);
    Page {
        name: "fabdiag".into(),
        roff: r.render(),
    }
}

const SWEEP_ENV: &[(&str, &str)] = &[
    ("FABDIAG_RANK, FABDIAG_SIZE", "This rank and the number of ranks, read first; else Open MPI's, Slurm's, MPICH's or PMIx's own variables."),
    ("FABDIAG_COORDINATOR", "Rank 0's HOST:PORT when --coordinator is not given (under Slurm the default is the step's first node)."),
    ("FABDIAG_NODE_NAME", "This node's name in the report (default: the host name)."),
    ("FABDIAG_PROGRESS_SECS", "When rank 0's stderr is not a terminal, a progress line at the start of a round once this many seconds (default 60) have passed since the last."),
];

/// A command's own page (serve, sweep, host-traffic): its usage as it
/// prints it, its exit codes and what a stop signal does to it.
struct Command<'a> {
    name: &'a str,
    summary: &'a str,
    description: &'a str,
    usage: &'a str,
    exits: &'a [(&'a str, &'a str)],
    stop: &'a str,
    /// Its own environment variables, before the ones every page names.
    env: &'a [(&'a str, &'a str)],
}

fn text_page(c: Command<'_>, version: &str) -> Page {
    let Command {
        name,
        summary,
        description,
        usage,
        exits,
        stop,
        env,
    } = c;
    let mut r = Roff::new();
    header(&mut r, name, version);
    r.control("SH", ["NAME"]);
    r.text([roman(format!("{name} - {summary}"))]);
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(description)]);
    r.control("SH", ["USAGE"]);
    verbatim(&mut r, usage);
    exit_status(&mut r, exits);
    stop_signals(&mut r, stop);
    environment(&mut r, env);
    see_also(&mut r, &["fabdiag"]);
    Page {
        name: name.into(),
        roff: r.render(),
    }
}

/// Every page fabdiag installs.
pub fn pages(version: &str) -> Vec<Page> {
    let mut out = vec![overview_page(version)];
    for t in Tool::all() {
        out.push(tool_page(t, t.original_name(), t.original_name(), version));
        let sub = format!("fabdiag-{}", t.subcommand());
        out.push(tool_page(t, &sub, &format!("fabdiag {}", t.subcommand()), version));
    }
    // the loopback tool's other names get pages too, so a package installs
    // them as commands
    for alias in fabdiag_model::catalog::LOOPBACK_ALIASES {
        out.push(tool_page(Tool::GpuLoopbackBw, alias, alias, version));
    }
    out.push(text_page(
        Command {
            name: "fabdiag-serve",
            summary: "one server for every fabdiag tool",
            description: "fabdiag serve answers any fabdiag client, of any tool and under any name, client after client, like iperf3 -s. Each test runs in its own worker process, so a client that dies, stalls or lies, or a provider that crashes, ends only its own test. One test runs at a time; a client arriving meanwhile is told the server is busy. Every connection ends in one log line, or one JSON line with --json. SIGINT and SIGTERM stop it cleanly.",
            usage: &serve::serve_usage("fabdiag serve"),
            exits: SERVE_EXIT_STATUS,
            stop: SERVE_STOP,
            env: &[],
        },
        version,
    ));
    out.push(text_page(
        Command {
            name: "fabdiag-sweep",
            summary: "test every pair of ranks and name the slow link or node",
            description: "fabdiag sweep runs one pair test (the same session code as fabdiag write-bw and the other tools) between every pair of ranks exactly once, in rounds of disjoint pairs, under srun, mpirun or any launcher that sets a rank and a size, and reports the slow links and nodes: a text summary on rank 0, or the JSON document (schema fabdiag-sweep/1, described in /usr/share/doc/fabdiag/README.md, section sweep) with --json. Every wait is bounded: ranks that never join or stop answering are reported with their untested pairs, and a control connection whose other host has acknowledged nothing for 20 s (its link or node down) is given up on either side, so a rank cut off, or every rank when rank 0's node is, ends within half a minute.",
            usage: &sweep::sweep_usage("fabdiag sweep"),
            exits: SWEEP_EXIT_STATUS,
            stop: SWEEP_STOP,
            env: SWEEP_ENV,
        },
        version,
    ));
    let traffic_desc = "Host <-> GPU memory <-> compute traffic on NVIDIA GPUs, as Graphcore's gc-hosttraffictest: the host copies to and from a device buffer through the copy engines while kernels read or write the same buffer, and each figure is its own bytes over its own time.";
    for name in ["gc-hosttraffictest", "fabdiag-host-traffic"] {
        let prog = if name == "gc-hosttraffictest" {
            name
        } else {
            "fabdiag host-traffic"
        };
        out.push(text_page(
            Command {
                name,
                summary: "host and GPU memory traffic test",
                description: traffic_desc,
                usage: &traffic::usage(prog),
                exits: TRAFFIC_EXIT_STATUS,
                stop: TRAFFIC_STOP,
                env: &[],
            },
            version,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_page_under_both_names_with_every_option_of_its_help() {
        let pages = pages("9.9.9");
        for t in Tool::all() {
            for name in [t.original_name().to_string(), format!("fabdiag-{}", t.subcommand())] {
                let p = pages
                    .iter()
                    .find(|p| p.name == name)
                    .unwrap_or_else(|| panic!("{name}"));
                assert!(
                    p.roff.contains(&format!("\n.TH {} 1 9.9.9", name.to_ascii_uppercase())),
                    "{name}"
                );
                // what a stop signal does, with the exit codes
                assert!(
                    p.roff.contains("SIGINT, SIGTERM") && p.roff.contains("interrupted"),
                    "{name}"
                );
                // every option the tool's -h shows is on its page
                for d in layout(t).documented() {
                    let shown = d.left.trim().replace('-', "\\-");
                    assert!(p.roff.contains(&shown), "{name}: {}", d.left);
                }
                for section in [
                    "SYNOPSIS",
                    "OPTIONS",
                    "FABDIAG OPTIONS",
                    "EXIT STATUS",
                    "JSON",
                    "DIFFERENCES",
                ] {
                    assert!(
                        p.roff.contains(&format!(".SH {section}")) || p.roff.contains(&format!(".SH \"{section}")),
                        "{name}: {section}"
                    );
                }
            }
        }
        for name in [
            "fabdiag",
            "fabdiag-serve",
            "fabdiag-sweep",
            "gc-hosttraffictest",
            "fabdiag-host-traffic",
        ] {
            assert!(pages.iter().any(|p| p.name == name), "{name}");
        }
    }

    /// serve, sweep and host-traffic each document their own exit codes
    /// and stop signals, not the pair tools' (which name --min-bw and a
    /// peer they do not have).
    #[test]
    fn each_command_page_has_its_own_exit_codes() {
        let pages = pages("9.9.9");
        let page = |name: &str| {
            pages
                .iter()
                .find(|p| p.name == name)
                .map(|p| p.roff.replace("\\-", "-"))
                .unwrap_or_else(|| panic!("{name}"))
        };
        let exits = |roff: &str| -> String {
            let start = roff.find(".SH \"EXIT STATUS\"").unwrap_or(0);
            let end = roff.find(".SH \"SEE ALSO\"").unwrap_or(roff.len());
            roff[start..end].to_string()
        };
        let sweep = exits(&page("fabdiag-sweep"));
        assert!(
            sweep.contains("\\fB5\\fR") && sweep.contains("Slow links or nodes"),
            "{sweep}"
        );
        assert!(sweep.contains("rounds left as not tested"), "{sweep}");
        for name in ["gc-hosttraffictest", "fabdiag-host-traffic"] {
            let t = exits(&page(name));
            assert!(t.contains("--min-tile-bandwidth") && !t.contains("--min-bw"), "{t}");
            assert!(t.contains("every finished test"), "{t}");
        }
        let serve = exits(&page("fabdiag-serve"));
        assert!(
            serve.contains("Stopped by SIGINT or SIGTERM") && !serve.contains("--min-bw"),
            "{serve}"
        );
        let overview = exits(&page("fabdiag"));
        assert!(overview.contains("fabdiag sweep only"), "{overview}");
        // the sweep's own variables, and the shared ones on every command page
        let sweep = page("fabdiag-sweep");
        for var in [
            "FABDIAG_RANK",
            "FABDIAG_COORDINATOR",
            "FABDIAG_NODE_NAME",
            "FABDIAG_PROGRESS_SECS",
        ] {
            assert!(sweep.contains(var), "{var}: {sweep}");
        }
        for name in ["fabdiag-serve", "fabdiag-sweep", "fabdiag-host-traffic"] {
            assert!(page(name).contains("FABDIAG_LIBFABRIC"), "{name}");
        }
    }
}
