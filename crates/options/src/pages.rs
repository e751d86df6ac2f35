//! What every manual page says, as plain data (`PageDoc`: sections of
//! paragraphs, option items, verbatim blocks, bullets), made from the same
//! option tables that print `-h` and from docs/differences.md, so a page,
//! the help and the guide cannot drift apart. `man` renders it as roff,
//! `markdown` as the guide's reference pages. Nothing here formats.

use crate::table::OptionDoc;
use crate::{health, host_traffic, layout, monitor, serve, sweep};
use fabdiag_model::{Family, Tool, HOST_TRAFFIC_ORIGINAL};

/// A run of text in one face.
#[derive(Clone, Debug, PartialEq)]
pub enum Span {
    Roman(String),
    Bold(String),
    Italic(String),
}

/// One block of a section.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A line of text.
    Text(Vec<Span>),
    /// A line break between two `Text` lines (a synopsis).
    Break,
    /// A paragraph of its own.
    Para(String),
    /// Shown exactly as the program prints it.
    Verbatim(String),
    /// A term (an option, an exit code, a variable) and its lines.
    Item { term: Vec<Span>, lines: Vec<String> },
    /// One point of a list.
    Bullet(String),
}

pub struct Section {
    pub title: &'static str,
    pub blocks: Vec<Block>,
}

/// One page: its name (`cxi_write_bw`, `fabdiag-serve`), the version it
/// documents, and its sections in order.
pub struct PageDoc {
    pub name: String,
    pub version: String,
    pub sections: Vec<Section>,
}

fn roman(s: impl Into<String>) -> Span {
    Span::Roman(s.into())
}

fn bold(s: impl Into<String>) -> Span {
    Span::Bold(s.into())
}

fn text(s: impl Into<String>) -> Block {
    Block::Text(vec![roman(s)])
}

/// A table of terms (exit codes, variables) and what each means, as items.
fn terms(table: &[(&str, &str)]) -> Vec<Block> {
    table
        .iter()
        .map(|(term, what)| Block::Item {
            term: vec![bold(*term)],
            lines: vec![what.to_string()],
        })
        .collect()
}

/// Options as items, each help line as `-h` shows it.
fn options(docs: &[&OptionDoc]) -> Vec<Block> {
    docs.iter()
        .map(|d| Block::Item {
            term: vec![bold(d.left.trim())],
            lines: d.help.clone(),
        })
        .collect()
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
    (
        "5",
        "Slow links or nodes were found, or (with --baseline) links, nodes or the fabric below their earlier figures. A missed threshold (3) outranks this code, and a failure (2) outranks both.",
    ),
];

/// Nagios's plugin codes, which NHC wrappers and monitoring read.
const HEALTH_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "OK: every check passed (or --topology, -h)."),
    ("1", "WARNING: something to look at that does not stop jobs (a downtrained PCIe link, ACS redirection, a GPU across sockets from its nearest NIC, a low locked-memory limit)."),
    ("2", "CRITICAL: something absent, broken or below the expectations file: with --slurm the node is drained."),
    ("3", "UNKNOWN: the budget ran out before every check was made (a provider call held, a GPU hung), or an invalid option or expectations file. Nothing is drained or resumed."),
];

const HEALTH_STOP: &str = "The signal ends it at once, printing nothing more; nothing is drained or resumed.";

const HEALTH_ENV: &[(&str, &str)] = &[
    (
        "SLURMD_NODENAME",
        "The Slurm node name --slurm acts on when --node is not given (else the short host name).",
    ),
    ("SLURM_CONF", "Read by scontrol, which --slurm runs."),
];

const MONITOR_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Stopped by SIGINT or SIGTERM."),
    ("1", "Invalid option or argument; a peers file that cannot be read or has a bad line (named); a partition sinfo cannot list or that has no node but this one."),
    ("2", "It cannot listen on --listen's address, start its probes or watch for signals."),
];

const MONITOR_STOP: &str = "The probes running are stopped (their processes killed and waited for) and the monitor exits 0. A second signal ends it at once.";

const MONITOR_ENV: &[(&str, &str)] = &[
    (
        "SLURMD_NODENAME",
        "With --partition, this node's name, left out of the peers (else the short host name).",
    ),
    ("SLURM_CONF", "Read by sinfo, which --partition runs."),
];

const TOPOLOGY_EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "The map was read (and, with --expect, matches the expected wiring), or -h."),
    ("1", "Invalid option, or a map that cannot be used: a file that cannot be read, a syntax error (its line named), a name used twice, a host under a switch the map lacks, a Slurm switch under itself, two sources that disagree."),
    ("3", "With --expect: something differs from the expected wiring (each difference a line)."),
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

/// The exit codes, and what a stop signal does after them.
fn exit_status(table: &[(&str, &str)], stop: &str) -> Section {
    let mut blocks = terms(table);
    blocks.extend(terms(&[("SIGINT, SIGTERM", stop)]));
    Section {
        title: "EXIT STATUS",
        blocks,
    }
}

/// The variables every page names, after a command's own `extra` ones.
fn environment(extra: &[(&str, &str)]) -> Section {
    let mut all: Vec<(&str, &str)> = extra.to_vec();
    all.push((
        "FABDIAG_LIBFABRIC",
        "The libfabric shared object to load instead of libfabric.so.1 (libfabric is loaded at run time).",
    ));
    all.push((
        "FI_PROVIDER, FI_LOG_LEVEL, FI_CXI_*, ...",
        "libfabric's own variables apply as usual.",
    ));
    Section {
        title: "ENVIRONMENT",
        blocks: terms(&all),
    }
}

fn see_also(pages: &[&str]) -> Section {
    let mut line: Vec<Span> = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(*p));
        line.push(roman("(1)"));
    }
    line.push(roman(", "));
    line.push(bold("fi_info"));
    line.push(roman("(1), and the guide in /usr/share/doc/fabdiag/docs"));
    Section {
        title: "SEE ALSO",
        blocks: vec![Block::Text(line)],
    }
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

/// The guide's page of differences from the originals, compiled in: the
/// manual pages take their DIFFERENCES section from it.
const DIFFERENCES: &str = include_str!("../../../docs/differences.md");

/// The sections of docs/differences.md that a pair tool's page carries.
fn difference_sections(tool: Tool) -> [&'static str; 2] {
    let family = match tool.family() {
        Family::Bandwidth(_) if !tool.has_server() => "gpu-loopback-bw",
        Family::Bandwidth(_) => "The bandwidth tools",
        Family::Latency(_) => "The latency tools",
        Family::Atomic { .. } => "The atomic tools",
    };
    ["Every pair tool", family]
}

/// `md` as plain text: no emphasis marks, no code marks, links as their
/// text.
fn plain(md: &str) -> String {
    let mut s = md.replace("**", "").replace('`', "");
    while let (Some(open), Some(mid)) = (s.find('['), s.find("](")) {
        let Some(close) = s[mid..].find(')').map(|c| mid + c) else {
            break;
        };
        if open > mid {
            break;
        }
        s = format!("{}{}{}", &s[..open], &s[open + 1..mid], &s[close + 1..]);
    }
    s
}

/// The deliberate differences from the originals that apply to `tool`:
/// the bullets of docs/differences.md's sections for every pair tool and
/// for its family, as plain text.
pub fn differences(tool: Tool) -> Vec<String> {
    let wanted = difference_sections(tool);
    let mut out = Vec::new();
    let mut take = false;
    for line in DIFFERENCES.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            take = wanted.contains(&title.trim());
        } else if !take {
        } else if let Some(point) = line.strip_prefix("- ") {
            out.push(point.trim().to_string());
        } else if let (Some(last), Some(more)) = (out.last_mut(), line.strip_prefix("  ")) {
            last.push(' ');
            last.push_str(more.trim());
        }
    }
    out.iter().map(|d| plain(d)).collect()
}

fn tool_page(tool: Tool, name: &str, synopsis_prog: &str, version: &str) -> PageDoc {
    let lay = layout(tool);
    let docs = lay.documented();
    let synopsis = if lay.one_process {
        vec![Block::Text(vec![bold(synopsis_prog), roman(" [OPTIONS]")])]
    } else {
        vec![
            Block::Text(vec![bold(synopsis_prog), roman(" [-d DEV] [-p PORT]")]),
            Block::Break,
            Block::Text(vec![
                bold(synopsis_prog),
                roman(" "),
                Span::Italic("ADDR".into()),
                roman(" [OPTIONS]"),
            ]),
        ]
    };
    let mut original = options(&docs.iter().filter(|d| !d.fabdiag).collect::<Vec<_>>());
    if !lay.trailer.is_empty() {
        original.push(Block::Para("Names are accepted in any letter case:".into()));
        original.push(Block::Verbatim(lay.trailer.trim().to_string()));
    }
    let mut additions = vec![Block::Para("Additions to the original options.".into())];
    additions.extend(options(&docs.iter().filter(|d| d.fabdiag).collect::<Vec<_>>()));
    PageDoc {
        name: name.into(),
        version: version.into(),
        sections: vec![
            Section {
                title: "NAME",
                blocks: vec![text(format!(
                    "{}, fabdiag {} - {} over libfabric",
                    tool.original_name(),
                    tool.subcommand(),
                    what(tool)
                ))],
            },
            Section {
                title: "SYNOPSIS",
                blocks: synopsis,
            },
            Section {
                title: "DESCRIPTION",
                blocks: vec![text(description(tool))],
            },
            Section {
                title: "OPTIONS",
                blocks: original,
            },
            Section {
                title: "FABDIAG OPTIONS",
                blocks: additions,
            },
            exit_status(EXIT_STATUS, PAIR_STOP),
            Section {
                title: "JSON",
                blocks: vec![text(
                    "With --json the tool prints one JSON document on stdout (schema_version 1: the run's configuration, one result per size, the threshold verdict, and the error of a failed run, with the sizes that finished). The schema is described in /usr/share/doc/fabdiag/docs/json.md.",
                )],
            },
            Section {
                title: "DIFFERENCES FROM THE ORIGINALS",
                blocks: differences(tool).into_iter().map(Block::Bullet).collect(),
            },
            environment(&[]),
            see_also(&["fabdiag", "fabdiag-serve"]),
        ],
    }
}

fn overview_page(version: &str) -> PageDoc {
    let also: Vec<String> = Tool::all()
        .map(|t| t.original_name().to_string())
        .chain(["fabdiag-serve", "fabdiag-sweep", HOST_TRAFFIC_ORIGINAL].map(String::from))
        .collect();
    let refs: Vec<&str> = also.iter().map(String::as_str).collect();
    PageDoc {
        name: "fabdiag".into(),
        version: version.into(),
        sections: vec![
            Section {
                title: "NAME",
                blocks: vec![text("fabdiag - fabric and accelerator-link diagnostics on libfabric")],
            },
            Section {
                title: "SYNOPSIS",
                blocks: vec![Block::Text(vec![
                    bold("fabdiag"),
                    roman(" "),
                    Span::Italic("COMMAND".into()),
                    roman(" [OPTIONS]"),
                ])],
            },
            Section {
                title: "DESCRIPTION",
                blocks: vec![text(
                    "fabdiag re-creates HPE Slingshot's CXI diagnostics and Graphcore's gc-hosttraffictest on libfabric, so the same command lines and text output work on any fabric libfabric drives, and adds JSON, thresholds with their own exit codes, a server for every tool, and clear one-line errors for every fault. Installed under an original name (cxi_write_bw, ...), fabdiag behaves as that tool.",
                )],
            },
            Section {
                title: "COMMANDS",
                blocks: vec![
                    Block::Verbatim(fabdiag_report::support::overview(version)),
                    Block::Item {
                        term: vec![bold("fabdiag completions"), roman(" bash|zsh|fish")],
                        lines: vec!["Print a shell completion script.".into()],
                    },
                    Block::Item {
                        term: vec![bold("fabdiag manpages"), roman(" DIR")],
                        lines: vec!["Write these manual pages into DIR.".into()],
                    },
                ],
            },
            Section {
                title: "EXIT STATUS",
                blocks: terms(OVERVIEW_EXIT_STATUS),
            },
            environment(&[]),
            see_also(&refs),
        ],
    }
}

const SWEEP_ENV: &[(&str, &str)] = &[
    ("FABDIAG_RANK, FABDIAG_SIZE", "This rank and the number of ranks, read first; else Open MPI's, Slurm's, MPICH's or PMIx's own variables."),
    ("FABDIAG_COORDINATOR", "Rank 0's HOST:PORT when --coordinator is not given (under Slurm the default is the step's first node)."),
    ("FABDIAG_NODE_NAME", "This node's name in the report (default: the host name), and the host --topology's map places it on."),
    ("FABDIAG_LLDPCTL", "With --topology lldp: the command each rank runs, before it joins, to print its LLDP neighbours as JSON (default: lldpctl -f json; words split on spaces; ended after 5 s)."),
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

fn text_page(c: Command<'_>, version: &str) -> PageDoc {
    PageDoc {
        name: c.name.into(),
        version: version.into(),
        sections: vec![
            Section {
                title: "NAME",
                blocks: vec![text(format!("{} - {}", c.name, c.summary))],
            },
            Section {
                title: "DESCRIPTION",
                blocks: vec![text(c.description)],
            },
            Section {
                title: "USAGE",
                blocks: vec![Block::Verbatim(c.usage.to_string())],
            },
            exit_status(c.exits, c.stop),
            environment(c.env),
            see_also(&["fabdiag"]),
        ],
    }
}

/// Every page fabdiag installs.
pub fn pages(version: &str) -> Vec<PageDoc> {
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
            description: "fabdiag sweep runs one pair test (the same session code as fabdiag write-bw and the other tools) between every pair of ranks exactly once, in rounds of disjoint pairs, under srun, mpirun or any launcher that sets a rank and a size, and reports the slow links and nodes: a text summary on rank 0, or the JSON document (schema fabdiag-sweep/1, described in /usr/share/doc/fabdiag/docs/json.md) with --json. Every wait is bounded: ranks that never join or stop answering are reported with their untested pairs, and a control connection whose other host has acknowledged nothing for 20 s (its link or node down) is given up on either side, so a rank cut off, or every rank when rank 0's node is, ends within half a minute.",
            usage: &sweep::sweep_usage("fabdiag sweep"),
            exits: SWEEP_EXIT_STATUS,
            stop: SWEEP_STOP,
            env: SWEEP_ENV,
        },
        version,
    ));
    out.push(text_page(
        Command {
            name: "fabdiag-health",
            summary: "a verdict on this node for Slurm and NHC",
            description: "fabdiag health checks this node within a time budget (10 s by default) and prints one summary line, then a line per check: libfabric loads, the providers and domains the expectations file names are there, the locked-memory limit, each NIC's link state, rate and flaps (from sysfs), a one-second loopback write-bw and send-lat on each NIC, each NVIDIA GPU's copy bandwidth host -> GPU and back, and the PCI tree: each GPU's nearest NIC with nvidia-smi topo -m's classes (PIX, PXB, PHB, NODE, SYS), PCIe links trained below what both ends can do, ACS redirection between a GPU and its NIC. The expectations file (/etc/fabdiag/health.toml, TOML) holds the site's limits; --write-expect makes one on a known-good node. With --slurm it drains the node on CRITICAL with a reason that starts \"fabdiag:\", and resumes it on OK only if such a reason drained it. A watchdog ends a run that outlasts its budget with UNKNOWN, so Slurm never has to kill it. /usr/share/fabdiag holds a HealthCheckProgram, a prolog example and an NHC check.",
            usage: &health::usage("fabdiag health"),
            exits: HEALTH_EXIT_STATUS,
            stop: HEALTH_STOP,
            env: HEALTH_ENV,
        },
        version,
    ));
    out.push(text_page(
        Command {
            name: "fabdiag-monitor",
            summary: "probe peers on a schedule and serve the figures for Prometheus",
            description: "fabdiag monitor watches a list of peers (a file, or the nodes of a Slurm partition) that each run fabdiag serve: it runs a small latency probe (send-lat, 100 iterations of 8 bytes) against each peer every --interval, and a short bandwidth probe (write-bw) every --bw-interval, the peers spread over the interval, and holds all probing to --budget percent of the link's time (1 % by default; a probe that took t seconds of the link delays the next of its kind by t divided by the budget's share). It keeps the last figures and rolling statistics of the last --window probes per peer, in memory bounded per peer, and serves them at http://ADDR/metrics (--listen, loopback by default) in Prometheus's text format. A peer that refuses, cannot be reached, stops answering or sends something else is fabdiag_monitor_peer_up 0 with the reason, never a hang: a probe is killed after --timeout. A peer busy with another client's test, or limiting its clients' tests per minute, is tried again shortly and is not counted down. Each change of a peer's state is one line on standard error. Its metrics are listed in /usr/share/doc/fabdiag/docs/metrics.md; a systemd unit, fabdiag-monitor.service, is installed disabled.",
            usage: &monitor::usage("fabdiag monitor"),
            exits: MONITOR_EXIT_STATUS,
            stop: MONITOR_STOP,
            env: MONITOR_ENV,
        },
        version,
    ));
    out.push(text_page(
        Command {
            name: "fabdiag-topology",
            summary: "the fabric's map: read, drawn, generated, or held against the expected wiring",
            description: "fabdiag topology reads the fabric's map, the same sources fabdiag sweep --topology takes: a map file (TOML: [[switch]] name, level and group; [[host]] name, switch and port; [[cable]] a and b, each SWITCH or SWITCH:PORT), Slurm's topology.conf or what scontrol show topology prints, ibnetdiscover's output, the switches' forwarding tables (dump_lfts or ibroute output: each pair's one way), or a folder of lldpctl -f json outputs, one per device named DEVICE.json. Several sources are made one map in the order given (a file for the switch layer, Slurm's for the hosts); where two disagree on a host's switch or a switch's level the map is refused naming both. It prints the map's size and each level's switches; --draw draws each switch under those above it with its hosts; --expect FILE lists every difference from the expected wiring: a switch or host missing or extra, a host under another switch or on another port, a cable missing, extra, on another port or switch, or a switch wired to another twice. --generate writes a map to start from: a two-level fat tree or a dragonfly, its hosts named node0.. in the order a sweep's ranks are given to them.",
            usage: &crate::topology::usage(),
            exits: TOPOLOGY_EXIT_STATUS,
            stop: "The signal ends it at once.",
            env: &[],
        },
        version,
    ));
    let traffic_desc = "Host <-> GPU memory <-> compute traffic on NVIDIA GPUs, as Graphcore's gc-hosttraffictest: the host copies to and from a device buffer through the copy engines while kernels read or write the same buffer, and each figure is its own bytes over its own time.";
    for name in [HOST_TRAFFIC_ORIGINAL, "fabdiag-host-traffic"] {
        let prog = if name == HOST_TRAFFIC_ORIGINAL {
            name
        } else {
            "fabdiag host-traffic"
        };
        out.push(text_page(
            Command {
                name,
                summary: "host and GPU memory traffic test",
                description: traffic_desc,
                usage: &host_traffic::usage(prog),
                exits: TRAFFIC_EXIT_STATUS,
                stop: TRAFFIC_STOP,
                env: &[],
            },
            version,
        ));
    }
    out
}
