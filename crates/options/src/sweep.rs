//! The command line of `fabdiag sweep`: its own options (long only, from
//! one table that also prints `-h`) and, passed through untouched, the
//! pair tool's options (`-s`, `-n`, `-D`, `-b`, `-P`, `-d`, `--min-bw`,
//! `--max-lat`, ...), which the tool's own parser resolves. Nothing here
//! prints or touches the network.

use crate::getopt::{self, Parsed};
use crate::resolve::{Action, OptionError};
use crate::row::{self, Row, Style};
use fabdiag_engine::lat::LatFigure;
use fabdiag_model::Tool;
use fabdiag_sweep_plan::{Pattern, SplitBy};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SweepOpt {
    Tool,
    Lat,
    Figure,
    Coordinator,
    Output,
    Resume,
    Replace,
    Plan,
    Ranks,
    Rails,
    Json,
    Metrics,
    Fraction,
    Reference,
    Score,
    NodeFraction,
    Retest,
    Baseline,
    BaselineFraction,
    Report,
    JoinTimeout,
    PairTimeout,
    Simulate,
    SimPairMs,
    SimSlow,
    Topology,
    Flows,
    Pattern,
    SplitBy,
    Splits,
    Seed,
    Receivers,
    Victim,
    VictimRanks,
    Expect,
    Help,
}

/// The most flows `--flows` runs between one pair at once.
pub const MOST_FLOWS: usize = 16;

/// A sweep's own options, long only: every other word goes to the pair
/// tool. Each help is one line, which `-h` prints unwrapped.
const ROWS: &[Row<SweepOpt>] = &[
    Row::valued(
        SweepOpt::Tool,
        None,
        "tool",
        "TOOL",
        &["The pair test: write-bw (default), read-bw, send-bw, write-lat, read-lat, send-lat, atomic-bw, atomic-lat"],
    ),
    Row::flag(SweepOpt::Lat, None, "lat", &["Latency instead of bandwidth (--tool write-lat)"]),
    Row::valued(
        SweepOpt::Figure,
        None,
        "figure",
        "F",
        &["A latency test's figure each pair is judged by: mean (default, the originals'), p50, p90, p99, p999 or max"],
    ),
    Row::valued(
        SweepOpt::Coordinator,
        None,
        "coordinator",
        "HOST:PORT",
        &["Rank 0's address for the others (default: FABDIAG_COORDINATOR, or under Slurm the step's first node)"],
    ),
    Row::valued(
        SweepOpt::Output,
        None,
        "output",
        "DIR",
        &["Write results there as they arrive, and the report at the end"],
    ),
    Row::flag(SweepOpt::Resume, None, "resume", &["With --output: run only the pairs that have no measured result there"]),
    Row::flag(SweepOpt::Replace, None, "replace", &["With --output: discard the results already there (without it a sweep, or a --report into another folder, refuses a folder that holds results)"]),
    Row::flag(SweepOpt::Plan, None, "plan", &["Print the schedule and its cost without running it"]),
    Row::valued(
        SweepOpt::Ranks,
        None,
        "ranks",
        "N",
        &["The number of ranks for --plan (default: the launcher's)"],
    ),
    Row::valued(
        SweepOpt::Rails,
        None,
        "rails",
        "K",
        &["K ranks per node, one per NIC, placed in blocks of K: pair only ranks on one rail (rank mod K), all rails at once (default 1: every pair)"],
    ),
    Row::flag(SweepOpt::Json, None, "json", &["Print the JSON document instead of the text summary"]),
    Row::valued(
        SweepOpt::Metrics,
        None,
        "metrics",
        "FILE",
        &["Also write the verdict, every node's median and the slow links to FILE in Prometheus's text format (rank 0)"],
    ),
    Row::valued(
        SweepOpt::Fraction,
        None,
        "outlier-fraction",
        "F",
        &["A pair is an outlier below F of the reference ... (default 0.75)"],
    ),
    Row::valued(
        SweepOpt::Reference,
        None,
        "outlier-reference",
        "REF",
        &["... the median of all pairs (default) or the best"],
    ),
    Row::valued(
        SweepOpt::Score,
        None,
        "outlier-score",
        "Z",
        &["... and more than Z scaled MADs worse than the median (default 3.5)"],
    ),
    Row::valued(
        SweepOpt::NodeFraction,
        None,
        "node-fraction",
        "F",
        &["A node is slow when more than F of its pairs are outliers, or are below the fraction with a median 1.5 Z out (7+ pairs; default 0.5)"],
    ),
    Row::valued(
        SweepOpt::Retest,
        None,
        "retest",
        "N",
        &["Re-test up to N suspects alone: slow nodes (with a healthy partner), then slow links (default 8; 0: none)"],
    ),
    Row::valued(
        SweepOpt::Baseline,
        None,
        "baseline",
        "FILE",
        &["An earlier sweep's sweep.json (or its --output DIR) of the same test: name the links and nodes that have fallen below their own figures there"],
    ),
    Row::valued(
        SweepOpt::BaselineFraction,
        None,
        "baseline-fraction",
        "F",
        &["... a pair has fallen below F of its earlier figure (times the median's change when the whole fabric is slower; default 0.8)"],
    ),
    Row::valued(
        SweepOpt::Report,
        None,
        "report",
        "DIR",
        &["Run nothing: make a finished sweep's report again from its sweep.json (or --output DIR), with these rules, --baseline and --min-bw/--max-lat"],
    ),
    Row::valued(
        SweepOpt::JoinTimeout,
        None,
        "join-timeout",
        "SECS",
        &["How long rank 0 waits for every rank to join (default 60)"],
    ),
    Row::valued(
        SweepOpt::PairTimeout,
        None,
        "pair-timeout",
        "SECS",
        &["How long one round may take before a silent rank is lost (default: 60 plus what the pair test may take on a slow working link: its -D duration per size, or its data at 100 MB/s)"],
    ),
    Row::valued(
        SweepOpt::Simulate,
        None,
        "simulate",
        "N",
        &["Simulate N ranks in this process over loopback, each pair test a fixed pause"],
    ),
    Row::valued(
        SweepOpt::SimPairMs,
        None,
        "sim-pair-ms",
        "MS",
        &["The simulated pair test's length (default 1)"],
    ),
    Row::valued(
        SweepOpt::SimSlow,
        None,
        "sim-slow",
        "LIST",
        &["Simulated ranks (3), pairs (1-4) and, with --topology, the map's elements (a host, a switch, SWITCH-SWITCH for the cables between two) to make slow, comma-separated: what a report shows for them"],
    ),
    Row::valued(
        SweepOpt::Topology,
        None,
        "topology",
        "FILE",
        &["The fabric's map, to name the switch, uplink or cable the slow pairs share: a map file (TOML), Slurm's topology.conf or `scontrol show topology` output, ibnetdiscover's output, a folder of lldpctl -f json outputs (DEVICE.json), or the word lldp: every rank reads its own LLDP neighbours when it joins (FABDIAG_LLDPCTL); given again, the sources make one map (see fabdiag-topology(1)). Each rank is placed on the map by its host name; an unusable map is said once and the sweep goes on without it"],
    ),
    Row::valued(
        SweepOpt::Flows,
        None,
        "flows",
        "K",
        &["Run K flows (1 to 16, default 1) between each pair at once, each on connections of its own (other source ports, so ECMP hashes them onto other paths): each flow's figure is kept, the pair is judged by its best (a slow host slows every flow), each flow apart on the map (--topology), and a pair whose flows split into fast and slow is path-sensitive: a path is slow, not a host"],
    ),
    Row::valued(
        SweepOpt::Pattern,
        None,
        "pattern",
        "NAME",
        &["Run a traffic pattern instead of every pair in turn (needs the pair tool's -D): bisection (every rank of one half streams to its partner in the other, all at once), incast (every other rank into one receiver at once, after one sender alone), or alltoall (every rank to every other, in shifted phases)"],
    ),
    Row::valued(
        SweepOpt::SplitBy,
        None,
        "split-by",
        "HOW",
        &["How a bisection's halves are chosen: node (the first half of the nodes by name against the second; default), rank, or random"],
    ),
    Row::valued(
        SweepOpt::Splits,
        None,
        "splits",
        "N",
        &["Bisection splits to run, one after another (default 1; random ones are each drawn anew)"],
    ),
    Row::valued(
        SweepOpt::Seed,
        None,
        "seed",
        "S",
        &["The seed random splits are drawn from (default 1; the same seed, the same splits)"],
    ),
    Row::valued(
        SweepOpt::Receivers,
        None,
        "receivers",
        "LIST",
        &["The ranks an incast sends into, comma-separated (default: every rank in turn)"],
    ),
    Row::valued(
        SweepOpt::Victim,
        None,
        "victim",
        "TOOL",
        &["With --pattern: one pair runs TOOL (write-lat, send-lat, read-lat, or a bandwidth tool) alone, then beside every step of the pattern on the other ranks, and is held against itself alone"],
    ),
    Row::valued(
        SweepOpt::VictimRanks,
        None,
        "victim-ranks",
        "A,B",
        &["The victim pair: rank A runs its test against rank B (default: rank 0 and the last rank)"],
    ),
    Row::valued(
        SweepOpt::Expect,
        None,
        "expect",
        "MB/S",
        &["What one node's NIC can carry each way: a bisection's or an incast's aggregate is also given as a fraction of what its NICs could carry"],
    ),
    Row::flag(SweepOpt::Help, None, "help", &["Print this help text and exit"]),
];

/// Every option of a sweep's own: what its completion and manual page show.
pub fn completions() -> Vec<row::Completion> {
    row::completions(ROWS, &row::as_is)
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutlierReference {
    Median,
    Best,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SweepOptions {
    pub tool: Tool,
    /// What a latency pair is judged by (mean unless `--figure`).
    pub figure: LatFigure,
    /// The pair tool's options, for its own parser.
    pub tool_args: Vec<String>,
    pub coordinator: Option<String>,
    pub output: Option<std::path::PathBuf>,
    /// `--metrics FILE`: rank 0 writes the report's metrics there too.
    pub metrics: Option<String>,
    pub resume: bool,
    /// `--replace`: an --output folder's earlier results may be discarded.
    pub replace: bool,
    pub plan: bool,
    pub ranks: Option<usize>,
    /// Pair only ranks with the same rank mod `rails` (1: every pair).
    pub rails: usize,
    pub json: bool,
    pub fraction: f64,
    pub reference: OutlierReference,
    pub score: f64,
    pub node_fraction: f64,
    pub retest: usize,
    /// An earlier sweep's document, to compare with.
    pub baseline: Option<String>,
    pub baseline_fraction: f64,
    /// A finished sweep's document, to make its report again from.
    pub report: Option<String>,
    /// The long names of the sweep's own options given (a report made
    /// again keeps the sweep's rules but those given).
    pub given: Vec<&'static str>,
    pub join_timeout_s: u64,
    pub pair_timeout_s: Option<u64>,
    pub simulate: Option<usize>,
    pub sim_pair_ms: u64,
    pub sim_slow_nodes: Vec<usize>,
    /// Low rank first.
    pub sim_slow_links: Vec<(usize, usize)>,
    /// Elements of the map made slow, as the map names them.
    pub sim_slow_elements: Vec<String>,
    /// `--topology`: the map's sources, in the order given.
    pub topology: Vec<String>,
    /// `--flows`: flows between each pair at once.
    pub flows: usize,
    /// `--pattern`: a traffic pattern instead of every pair in turn.
    pub pattern: Option<Pattern>,
    /// `--expect`: one node's NIC's rate each way, MB/s.
    pub expect: Option<f64>,
    /// `--victim`: the pair tool a victim pair runs beside the pattern.
    pub victim: Option<Tool>,
    /// `--victim-ranks`: the victim pair (None: rank 0 and the last).
    pub victim_ranks: Option<(usize, usize)>,
    /// The pattern's own options as given, made into `pattern` once
    /// every option is read (they may come before `--pattern`).
    parts: PatternParts,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct PatternParts {
    by: Option<SplitBy>,
    splits: Option<usize>,
    seed: Option<u64>,
    receivers: Vec<usize>,
}

/// The outlier rules given on the command line, each only when it was
/// (a report made again keeps the sweep's own for the rest).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GivenRules {
    pub fraction: Option<f64>,
    pub reference: Option<OutlierReference>,
    pub score: Option<f64>,
    pub node_fraction: Option<f64>,
}

impl SweepOptions {
    /// What of these options cannot hold for a run of `size` ranks (an
    /// incast into a rank there is not).
    pub fn fits(&self, size: usize) -> Result<(), String> {
        if self.victim.is_some() {
            let (a, b) = self.victim_pair(size);
            if let Some(r) = [a, b].into_iter().find(|&r| r >= size) {
                return Err(format!(
                    "--victim-ranks names rank {r}, and the run has {size} ranks (0 to {})",
                    size.saturating_sub(1)
                ));
            }
            if size < 4 {
                return Err(format!(
                    "--victim needs 4 ranks or more: its pair and two to load the fabric (the run has {size})"
                ));
            }
            if let Some(Pattern::Incast { receivers }) = &self.pattern {
                if let Some(r) = receivers.iter().find(|&&r| r == a || r == b) {
                    return Err(format!(
                        "--receivers names rank {r}, the victim's: the load runs on the other ranks"
                    ));
                }
            }
        }
        match &self.pattern {
            Some(Pattern::Incast { receivers }) => match receivers.iter().find(|&&r| r >= size) {
                Some(r) => Err(format!(
                    "--receivers names rank {r}, and the run has {size} ranks (0 to {})",
                    size.saturating_sub(1)
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The victim pair of a run of `size` ranks: the ranks given, or rank
    /// 0 and the last rank (with ranks in blocks per node, two nodes).
    pub fn victim_pair(&self, size: usize) -> (usize, usize) {
        self.victim_ranks.unwrap_or((0, size.saturating_sub(1)))
    }

    pub fn given_rules(&self) -> GivenRules {
        let given = |name: &str| self.given.contains(&name);
        GivenRules {
            fraction: given("outlier-fraction").then_some(self.fraction),
            reference: given("outlier-reference").then_some(self.reference),
            score: given("outlier-score").then_some(self.score),
            node_fraction: given("node-fraction").then_some(self.node_fraction),
        }
    }
}

pub fn sweep_usage(prog: &str) -> String {
    let mut s = format!(
        "Usage:
  srun -N NODES {prog} [OPTIONS] [TOOL OPTIONS]
  mpirun -n RANKS {prog} [OPTIONS] [TOOL OPTIONS]
  FABDIAG_RANK=R FABDIAG_SIZE=N {prog} --coordinator HOST:PORT [OPTIONS] [TOOL OPTIONS]
                         Test every pair of ranks once and name the slow link or node

Options:
"
    );
    s.push_str(&row::help_block(ROWS, Style::Getopt { width: 25 }, &row::as_is));
    s.push_str(
        "
TOOL OPTIONS are the pair tool's own (see fabdiag TOOL -h): size (-s),
iterations (-n) or duration (-D), bidirectional (-b), provider (-P),
domain (-d; a comma-separated list is chosen from by local rank), GPU
buffers (-t, -r; a list likewise), --poll yield for ranks that share
cores, and --min-bw MB/s or --max-lat us, which every pair and node must
meet.

Exit status: 0 all pairs measured and none slow, 1 bad options, 2 pairs
failed or ranks were lost, 3 a threshold was missed, 4 unavailable here,
5 slow links or nodes found (or, with --baseline, links, nodes or the
fabric below their earlier figures). SIGINT or SIGTERM ends the sweep after the
round in progress with its report, then the process by the signal; a
second one ends it at once.
",
    );
    s
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, OptionError> {
    v.parse()
        .map_err(|_| OptionError::Invalid(format!("invalid --{name}: '{v}'")))
}

/// The longest a join or a round may be given: a time past it is a typo,
/// and one near the clock's end (u64::MAX s) would overflow it.
const WEEK_S: u64 = 7 * 24 * 3600;

/// A whole number no greater than `max` (`unit` names it in the message).
fn at_most(name: &str, v: &str, max: u64, unit: &str) -> Result<u64, OptionError> {
    let n: u64 = number(name, v)?;
    if n > max {
        return Err(OptionError::Invalid(format!(
            "invalid --{name}: '{v}' (at most {max} {unit})"
        )));
    }
    Ok(n)
}

fn fraction(name: &str, v: &str) -> Result<f64, OptionError> {
    let f: f64 = number(name, v)?;
    if f.is_finite() && f > 0.0 && f < 1.0 {
        Ok(f)
    } else {
        Err(OptionError::Invalid(format!(
            "invalid --{name}: '{v}' (must be between 0 and 1)"
        )))
    }
}

impl Default for SweepOptions {
    /// Every option at its default.
    fn default() -> SweepOptions {
        SweepOptions {
            tool: Tool::WriteBw,
            figure: LatFigure::Mean,
            tool_args: Vec::new(),
            coordinator: None,
            output: None,
            metrics: None,
            resume: false,
            replace: false,
            plan: false,
            ranks: None,
            rails: 1,
            json: false,
            fraction: 0.75,
            reference: OutlierReference::Median,
            score: 3.5,
            node_fraction: 0.5,
            retest: 8,
            baseline: None,
            baseline_fraction: 0.8,
            report: None,
            given: Vec::new(),
            join_timeout_s: 60,
            pair_timeout_s: None,
            simulate: None,
            sim_pair_ms: 1,
            sim_slow_nodes: Vec::new(),
            sim_slow_links: Vec::new(),
            sim_slow_elements: Vec::new(),
            topology: Vec::new(),
            flows: 1,
            pattern: None,
            expect: None,
            victim: None,
            victim_ranks: None,
            parts: PatternParts::default(),
        }
    }
}

pub fn sweep(args: &[String]) -> Result<Action<SweepOptions>, OptionError> {
    let mut o = SweepOptions::default();
    let mut tool_given = None;
    let (parsed, wrong) = getopt::parse_own(ROWS, args);
    for p in parsed {
        match p {
            Parsed::Operand(a) if a == "-h" => return Ok(Action::Help),
            Parsed::Operand(a) => o.tool_args.push(a),
            Parsed::Opt(SweepOpt::Help, _) => return Ok(Action::Help),
            Parsed::Opt(id, value) => {
                let name = ROWS.iter().find(|r| r.id == id).map_or("", |r| r.long);
                o.given.push(name);
                take(&mut o, &mut tool_given, id, name, value.unwrap_or_default())?;
            }
        }
    }
    if let Some(e) = wrong {
        return Err(OptionError::Invalid(e));
    }
    if let Some(t) = tool_given {
        o.tool = t;
    }
    checked(o).map(Action::Run)
}

/// One option `id` (given as `--name`) with its `value`, into `o`; the
/// tool `--tool` or `--lat` named, into `tool_given`.
fn take(
    o: &mut SweepOptions,
    tool_given: &mut Option<Tool>,
    id: SweepOpt,
    name: &str,
    value: String,
) -> Result<(), OptionError> {
    match id {
        SweepOpt::Help => {}
        SweepOpt::Tool => {
            let t = tool_named(&value)
                .ok_or_else(|| OptionError::Invalid(format!("invalid --tool: '{value}' (see -h)")))?;
            if !t.has_server() {
                return Err(OptionError::Invalid(format!(
                    "--tool {value}: {} runs in one process and measures no link between nodes",
                    t.subcommand()
                )));
            }
            *tool_given = Some(t);
        }
        SweepOpt::Lat => {
            if tool_given.is_none() {
                *tool_given = Some(Tool::WriteLat);
            }
            if tool_given.is_some_and(|t| !t.is_latency()) {
                return Err(OptionError::Invalid(
                    "--lat and a bandwidth --tool contradict each other".into(),
                ));
            }
        }
        SweepOpt::Figure => {
            o.figure = LatFigure::parse(&value)
                .ok_or_else(|| OptionError::Invalid(format!("invalid --figure: '{value}' ({})", LatFigure::names())))?
        }
        SweepOpt::Coordinator => o.coordinator = Some(value),
        SweepOpt::Output => o.output = Some(value.into()),
        SweepOpt::Resume => o.resume = true,
        SweepOpt::Replace => o.replace = true,
        SweepOpt::Plan => o.plan = true,
        SweepOpt::Ranks => o.ranks = Some(number(name, &value)?),
        SweepOpt::Rails => {
            o.rails = number(name, &value)?;
            if o.rails == 0 {
                return Err(OptionError::Invalid("invalid --rails: '0' (1 or more)".into()));
            }
        }
        SweepOpt::Json => o.json = true,
        SweepOpt::Metrics => o.metrics = Some(value),
        SweepOpt::Fraction | SweepOpt::NodeFraction | SweepOpt::Reference | SweepOpt::Score => {
            judging_option(o, id, name, &value)?
        }
        SweepOpt::Retest => o.retest = number(name, &value)?,
        SweepOpt::Baseline => o.baseline = Some(value),
        SweepOpt::BaselineFraction => o.baseline_fraction = fraction(name, &value)?,
        SweepOpt::Report => o.report = Some(value),
        SweepOpt::JoinTimeout => o.join_timeout_s = at_most(name, &value, WEEK_S, "s, a week")?,
        SweepOpt::PairTimeout => o.pair_timeout_s = Some(at_most(name, &value, WEEK_S, "s, a week")?),
        SweepOpt::Simulate | SweepOpt::SimPairMs | SweepOpt::SimSlow => simulation_option(o, id, name, &value)?,
        SweepOpt::Topology => o.topology.push(value),
        SweepOpt::Flows => {
            o.flows = number(name, &value)?;
            if !(1..=MOST_FLOWS).contains(&o.flows) {
                return Err(OptionError::Invalid(format!(
                    "invalid --flows: '{value}' (1 to {MOST_FLOWS})"
                )));
            }
        }
        SweepOpt::Pattern | SweepOpt::SplitBy | SweepOpt::Splits | SweepOpt::Seed | SweepOpt::Receivers => {
            pattern_option(o, id, name, &value)?
        }
        SweepOpt::Victim | SweepOpt::VictimRanks => victim_option(o, id, &value)?,
        SweepOpt::Expect => {
            let v: f64 = number(name, &value)?;
            if !(v.is_finite() && v > 0.0) {
                return Err(OptionError::Invalid(format!(
                    "invalid --expect: '{value}' (MB/s, above 0)"
                )));
            }
            o.expect = Some(v);
        }
    }
    Ok(())
}

/// How pairs and nodes are judged: `--outlier-*` and `--node-fraction`.
fn judging_option(o: &mut SweepOptions, id: SweepOpt, name: &str, value: &str) -> Result<(), OptionError> {
    match id {
        SweepOpt::Fraction => o.fraction = fraction(name, value)?,
        SweepOpt::NodeFraction => o.node_fraction = fraction(name, value)?,
        SweepOpt::Reference => {
            o.reference = match value {
                "median" => OutlierReference::Median,
                "best" => OutlierReference::Best,
                _ => {
                    return Err(OptionError::Invalid(format!(
                        "invalid --outlier-reference: '{value}' (median or best)"
                    )))
                }
            }
        }
        SweepOpt::Score => {
            o.score = number(name, value)?;
            if !(o.score.is_finite() && o.score >= 0.0) {
                return Err(OptionError::Invalid(format!("invalid --outlier-score: '{value}'")));
            }
        }
        _ => {}
    }
    Ok(())
}

/// `--simulate`, `--sim-pair-ms` and `--sim-slow` into `o`.
fn simulation_option(o: &mut SweepOptions, id: SweepOpt, name: &str, value: &str) -> Result<(), OptionError> {
    match id {
        SweepOpt::Simulate => o.simulate = Some(number(name, value)?),
        SweepOpt::SimPairMs => o.sim_pair_ms = at_most(name, value, 60_000, "ms")?,
        SweepOpt::SimSlow => {
            for item in value.split(',').filter(|x| !x.is_empty()) {
                // a word that is not a rank nor a pair of them names an
                // element of the map (leaf2, leaf2-spine1)
                let ranks = item
                    .split('-')
                    .all(|x| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()));
                if !ranks {
                    o.sim_slow_elements.push(item.to_string());
                    continue;
                }
                match item.split_once('-') {
                    Some((a, b)) => {
                        let (a, b): (usize, usize) = (number(name, a)?, number(name, b)?);
                        if a == b {
                            return Err(OptionError::Invalid(format!(
                                "invalid --{name}: '{item}' is not a pair of two ranks"
                            )));
                        }
                        o.sim_slow_links.push((a.min(b), a.max(b)));
                    }
                    None => o.sim_slow_nodes.push(number(name, item)?),
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The pair tool a `--tool` or `--victim` value names: fabdiag's
/// subcommand or the original's name.
fn tool_named(value: &str) -> Option<Tool> {
    Tool::from_subcommand(value).or_else(|| Tool::from_original(value))
}

/// `--victim` or `--victim-ranks` into `o`.
fn victim_option(o: &mut SweepOptions, id: SweepOpt, value: &str) -> Result<(), OptionError> {
    if id == SweepOpt::VictimRanks {
        let pair = value
            .split_once(',')
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .filter(|(a, b)| a != b)
            .ok_or_else(|| OptionError::Invalid(format!("invalid --victim-ranks: '{value}' (two ranks, A,B)")))?;
        o.victim_ranks = Some(pair);
        return Ok(());
    }
    let t = tool_named(value)
        .filter(|t| t.has_server() && !matches!(t, Tool::AtomicBw | Tool::AtomicLat))
        .ok_or_else(|| {
            OptionError::Invalid(format!(
                "invalid --victim: '{value}' (write-lat, send-lat, read-lat, write-bw, read-bw or send-bw)"
            ))
        })?;
    o.victim = Some(t);
    Ok(())
}

/// `--pattern`, or one of its own options, into `o` (its parts are put
/// together by `pattern_checks`).
fn pattern_option(o: &mut SweepOptions, id: SweepOpt, name: &str, value: &str) -> Result<(), OptionError> {
    let p = &mut o.parts;
    match id {
        SweepOpt::Pattern => {
            o.pattern = Some(match value {
                "bisection" => Pattern::Bisection {
                    by: SplitBy::Node,
                    splits: 1,
                    seed: 1,
                },
                "incast" => Pattern::Incast { receivers: Vec::new() },
                "alltoall" => Pattern::AllToAll,
                _ => {
                    return Err(OptionError::Invalid(format!(
                        "invalid --pattern: '{value}' (bisection, incast or alltoall)"
                    )))
                }
            })
        }
        SweepOpt::SplitBy => {
            p.by = Some(match value {
                "node" => SplitBy::Node,
                "rank" => SplitBy::Rank,
                "random" => SplitBy::Random,
                _ => {
                    return Err(OptionError::Invalid(format!(
                        "invalid --split-by: '{value}' (node, rank or random)"
                    )))
                }
            })
        }
        SweepOpt::Splits => {
            let n = at_most(name, value, 1000, "splits")? as usize;
            if n == 0 {
                return Err(OptionError::Invalid("invalid --splits: '0' (1 or more)".into()));
            }
            p.splits = Some(n);
        }
        SweepOpt::Receivers => {
            for item in value.split(',') {
                let r: usize = number(name, item)?;
                if !p.receivers.contains(&r) {
                    p.receivers.push(r);
                }
            }
        }
        _ => p.seed = Some(number(name, value)?),
    }
    Ok(())
}

/// The pattern with its own options put in, or what does not go with it.
fn pattern_parts(o: &mut SweepOptions) -> Result<(), OptionError> {
    let given = |n: &str| o.given.contains(&n);
    let p = std::mem::take(&mut o.parts);
    let belongs = |n: &str| match n {
        "receivers" => "incast",
        _ => "bisection",
    };
    match &mut o.pattern {
        Some(Pattern::Bisection { by, splits, seed }) => {
            *by = p.by.unwrap_or(*by);
            *splits = p.splits.unwrap_or(*splits);
            *seed = p.seed.unwrap_or(*seed);
        }
        Some(Pattern::Incast { receivers }) => *receivers = p.receivers,
        _ => {}
    }
    let name = o.pattern.as_ref().map(Pattern::name);
    if let Some(n) = ["split-by", "splits", "seed", "receivers"]
        .into_iter()
        .find(|n| given(n) && name != Some(belongs(n)))
    {
        return Err(OptionError::Invalid(format!(
            "--{n} goes with --pattern {}",
            belongs(n)
        )));
    }
    Ok(())
}

/// What a pattern run cannot take: a latency test, the sweep's own pair
/// bookkeeping (resume, re-tests, a baseline, rails, a plan), and pattern
/// options without `--pattern`.
fn pattern_checks(o: &mut SweepOptions) -> Result<(), OptionError> {
    pattern_parts(o)?;
    let given = |n: &str| o.given.contains(&n);
    if given("victim-ranks") && !given("victim") {
        return Err(OptionError::Invalid("--victim-ranks goes with --victim".into()));
    }
    let Some(name) = o.pattern.as_ref().map(Pattern::name) else {
        if given("victim") {
            return Err(OptionError::Invalid(
                "--victim goes with --pattern: the victim is measured beside a pattern's load".into(),
            ));
        }
        if given("expect") {
            return Err(OptionError::Invalid(
                "--expect goes with --pattern bisection or incast".into(),
            ));
        }
        return Ok(());
    };
    if o.tool.is_latency() {
        return Err(OptionError::Invalid(format!(
            "--pattern {name} streams bandwidth; {} measures latency (use write-bw, read-bw or send-bw)",
            o.tool.subcommand()
        )));
    }
    if given("expect") && name == "alltoall" {
        return Err(OptionError::Invalid(
            "--expect goes with --pattern bisection or incast".into(),
        ));
    }
    let alone = ["resume", "retest", "baseline", "rails", "plan", "report", "metrics"];
    if let Some(n) = alone.into_iter().find(|n| given(n)) {
        return Err(OptionError::Invalid(format!(
            "--{n} goes with a sweep of every pair, not with --pattern"
        )));
    }
    Ok(())
}

/// `o` whole, checked as a whole: what one option says against another.
fn checked(mut o: SweepOptions) -> Result<SweepOptions, OptionError> {
    pattern_checks(&mut o)?;
    if o.flows > 1 && o.pattern.is_some() {
        return Err(OptionError::Invalid(
            "--flows runs several flows between each pair in turn; a --pattern's flows are its own".into(),
        ));
    }
    if o.flows > 1 && o.baseline.is_some() {
        return Err(OptionError::Invalid(
            "--flows judges each pair by its best of several flows sharing its NICs, not as one flow: compare --flows sweeps by their reports, not with --baseline".into(),
        ));
    }
    if !o.topology.is_empty() && o.pattern.is_some() {
        return Err(OptionError::Invalid(
            "--topology judges the pairs of a sweep; a --pattern's report names flows and steps, not the fabric's elements".into(),
        ));
    }
    if o.given.contains(&"figure") && !o.tool.is_latency() && o.report.is_none() {
        return Err(OptionError::Invalid(format!(
            "--figure is for latency tests; {} pairs are judged by their bandwidth (add --lat or a latency --tool)",
            o.tool.subcommand()
        )));
    }
    if o.report.is_some() {
        // what a report is made from: nothing else may be given and ignored
        const REPORT_OPTIONS: &[&str] = &[
            "report",
            "output",
            "replace",
            "json",
            "metrics",
            "outlier-fraction",
            "outlier-reference",
            "outlier-score",
            "node-fraction",
            "baseline",
            "baseline-fraction",
            "topology",
        ];
        if let Some(other) = o.given.iter().find(|g| !REPORT_OPTIONS.contains(g)) {
            return Err(OptionError::Invalid(format!(
                "--{other} has no effect with --report, which runs nothing (it takes --output, --replace, --json, --metrics, the outlier rules, --baseline, --topology, --min-bw and --max-lat)"
            )));
        }
        let mut rest = o.tool_args.iter();
        while let Some(a) = rest.next() {
            let threshold = ["--min-bw", "--max-lat"]
                .iter()
                .any(|t| a == t || a.strip_prefix(t).is_some_and(|v| v.starts_with('=')));
            if !threshold {
                return Err(OptionError::Invalid(format!(
                    "'{a}' has no effect with --report, which runs no pair test (of the pair tool's options it takes --min-bw and --max-lat)"
                )));
            }
            if !a.contains('=') {
                rest.next();
            }
        }
    }
    if o.replace && (o.output.is_none() || o.resume) {
        return Err(OptionError::Invalid(
            "--replace goes with --output DIR, and not with --resume (which keeps the results there)".into(),
        ));
    }
    if o.resume && o.output.is_none() {
        return Err(OptionError::Invalid(
            "--resume needs --output DIR (where the earlier results are)".into(),
        ));
    }
    if o.join_timeout_s == 0 || o.pair_timeout_s == Some(0) {
        return Err(OptionError::Invalid(
            "--join-timeout and --pair-timeout must be at least 1 s".into(),
        ));
    }
    if o.simulate.is_some_and(|n| n < 2) || o.ranks.is_some_and(|n| n < 2) {
        return Err(OptionError::Invalid("a sweep needs at least 2 ranks".into()));
    }
    if let (Some(e), None, true) = (o.sim_slow_elements.first(), o.simulate, o.topology.is_empty()) {
        return Err(OptionError::Invalid(format!(
            "--sim-slow {e}: a rank is a number and a pair two joined by '-'; an element of the map needs --simulate N and --topology FILE"
        )));
    }
    if let (Some(e), true) = (o.sim_slow_elements.first(), o.topology.is_empty()) {
        return Err(OptionError::Invalid(format!(
            "--sim-slow {e}: an element of the map needs --topology FILE (a rank is a number)"
        )));
    }
    let slow_ranks = o.sim_slow_nodes.iter().chain(o.sim_slow_links.iter().map(|(_, b)| b));
    match (o.simulate, slow_ranks.max()) {
        (None, Some(_)) => {
            return Err(OptionError::Invalid("--sim-slow needs --simulate N".into()));
        }
        (None, None) if !o.sim_slow_elements.is_empty() => {
            return Err(OptionError::Invalid("--sim-slow needs --simulate N".into()));
        }
        (Some(n), Some(&r)) if r >= n => {
            return Err(OptionError::Invalid(format!(
                "--sim-slow names rank {r}, but --simulate has ranks 0 to {}",
                n - 1
            )));
        }
        _ => {}
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(a: &[&str]) -> Result<Action<SweepOptions>, OptionError> {
        sweep(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn ok(a: &[&str]) -> SweepOptions {
        match run(a) {
            Ok(Action::Run(o)) => o,
            other => panic!("{a:?}: {other:?}"),
        }
    }

    fn err(a: &[&str]) -> String {
        match run(a) {
            Err(OptionError::Invalid(m)) => m,
            other => panic!("{a:?}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn a_pattern_takes_its_own_options_and_refuses_the_sweeps() {
        let o = ok(&[
            "--pattern",
            "bisection",
            "-D",
            "5",
            "--split-by=random",
            "--splits",
            "3",
            "--seed",
            "7",
        ]);
        assert_eq!(
            o.pattern,
            Some(Pattern::Bisection {
                by: SplitBy::Random,
                splits: 3,
                seed: 7
            })
        );
        assert_eq!(o.tool_args, ["-D", "5"]);
        let d = ok(&["--pattern=bisection", "--expect", "12.5"]);
        assert_eq!(
            (d.pattern, d.expect),
            (
                Some(Pattern::Bisection {
                    by: SplitBy::Node,
                    splits: 1,
                    seed: 1
                }),
                Some(12.5)
            )
        );
        // the pattern's own options may come before it
        let i = ok(&["--receivers", "3,1,3", "--pattern", "incast", "--expect", "5"]);
        assert_eq!(i.pattern, Some(Pattern::Incast { receivers: vec![3, 1] }));
        assert_eq!(i.fits(4), Ok(()));
        assert_eq!(
            i.fits(3),
            Err("--receivers names rank 3, and the run has 3 ranks (0 to 2)".into())
        );
        assert_eq!(ok(&["--pattern", "alltoall"]).pattern, Some(Pattern::AllToAll));
        let v = ok(&["--pattern", "incast", "--receivers", "3", "--victim", "write-lat"]);
        assert_eq!(
            v.fits(4),
            Err("--receivers names rank 3, the victim's: the load runs on the other ranks".into())
        );
        assert_eq!((v.fits(5), v.victim_pair(5)), (Ok(()), (0, 4)));
        for (a, m) in [
            (
                &["--pattern", "ring"][..],
                "invalid --pattern: 'ring' (bisection, incast or alltoall)",
            ),
            (&["--splits", "2"][..], "--splits goes with --pattern bisection"),
            (
                &["--pattern", "incast", "--seed", "2"][..],
                "--seed goes with --pattern bisection",
            ),
            (
                &["--pattern", "bisection", "--receivers", "2"][..],
                "--receivers goes with --pattern incast",
            ),
            (
                &["--pattern", "incast", "--receivers", "2,x"][..],
                "invalid --receivers: 'x'",
            ),
            (
                &["--expect", "10"][..],
                "--expect goes with --pattern bisection or incast",
            ),
            (
                &["--pattern", "alltoall", "--expect", "10"][..],
                "--expect goes with --pattern bisection or incast",
            ),
            (
                &["--pattern", "bisection", "--split-by", "half"][..],
                "invalid --split-by: 'half' (node, rank or random)",
            ),
            (
                &["--pattern", "bisection", "--splits", "0"][..],
                "invalid --splits: '0' (1 or more)",
            ),
            (
                &["--pattern", "bisection", "--expect", "-1"][..],
                "invalid --expect: '-1' (MB/s, above 0)",
            ),
            (
                &["--pattern", "bisection", "--lat"][..],
                "--pattern bisection streams bandwidth; write-lat measures latency (use write-bw, read-bw or send-bw)",
            ),
            (
                &["--pattern", "bisection", "--retest", "2"][..],
                "--retest goes with a sweep of every pair, not with --pattern",
            ),
        ] {
            assert_eq!(err(a), m, "{a:?}");
        }
    }

    #[test]
    fn own_options_and_tool_options_are_split() {
        let o = ok(&[
            "-s",
            "4096",
            "--tool=read-bw",
            "--min-bw",
            "900",
            "--output",
            "/tmp/x",
            "-n",
            "50",
            "--retest",
            "2",
        ]);
        assert_eq!(o.tool, Tool::ReadBw);
        assert_eq!(o.tool_args, ["-s", "4096", "--min-bw", "900", "-n", "50"]);
        assert_eq!(
            (o.output.as_deref(), o.retest),
            (Some(std::path::Path::new("/tmp/x")), 2)
        );
        assert_eq!(ok(&["--lat"]).tool, Tool::WriteLat);
        assert_eq!(ok(&["--tool", "cxi_send_lat", "--lat"]).tool, Tool::SendLat);
        assert_eq!(ok(&[]).tool, Tool::WriteBw);
        assert_eq!(run(&["--help"]), Ok(Action::Help));
    }

    #[test]
    fn a_latency_sweep_takes_the_figure_its_pairs_are_judged_by() {
        assert_eq!(ok(&["--lat"]).figure, LatFigure::Mean);
        assert_eq!(ok(&["--lat", "--figure", "p99"]).figure, LatFigure::P99);
        assert_eq!(ok(&["--figure=max", "--tool", "send-lat"]).figure, LatFigure::Max);
        assert_eq!(
            err(&["--lat", "--figure", "p95"]),
            "invalid --figure: 'p95' (mean, p50, p90, p99, p999 or max)"
        );
        assert_eq!(
            err(&["--figure", "p99"]),
            "--figure is for latency tests; write-bw pairs are judged by their bandwidth (add --lat or a latency --tool)"
        );
        assert!(err(&["--report", "x", "--figure", "p99"]).starts_with("--figure has no effect with --report"));
    }

    #[test]
    fn bad_values_are_one_line_errors() {
        assert!(err(&["--tool", "nope"]).contains("--tool"));
        assert!(err(&["--outlier-fraction", "1.5"]).contains("between 0 and 1"));
        assert!(err(&["--retest", "-1"]).contains("--retest"));
        assert!(err(&["--resume"]).contains("--output"));
        assert!(err(&["--coordinator"]).contains("requires an argument"));
        assert!(err(&["--plan=yes"]).contains("doesn't allow"));
        // met in the order typed: help, or a wrong value, before a later
        // option's missing argument
        let words = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(sweep(&words(&["-h", "--output"])), Ok(Action::Help));
        assert!(err(&["--tool", "nope", "--coordinator"]).contains("invalid --tool: 'nope'"));
        assert!(err(&["--tool", "write-bw", "--lat"]).contains("contradict"));
        assert!(err(&["--simulate", "1"]).contains("at least 2"));
        assert!(err(&["--pair-timeout", "0"]).contains("at least 1 s"));
        assert!(err(&["--sim-slow", "3"]).contains("needs --simulate"));
        assert!(err(&["--simulate", "4", "--sim-slow", "1-4"]).contains("ranks 0 to 3"));
        assert!(err(&["--simulate", "4", "--sim-slow", "2-2"]).contains("two ranks"));
        assert!(err(&["--simulate", "4", "--sim-slow", "x"]).contains("needs --topology FILE"));
        assert!(err(&["--sim-slow", "leaf1"]).contains("needs --simulate N and --topology"));
        assert!(err(&["--topology", "m.toml", "--sim-slow", "leaf1"]).contains("needs --simulate N"));
        let o = ok(&[
            "--simulate",
            "8",
            "--topology",
            "m.toml",
            "--topology",
            "t.conf",
            "--sim-slow",
            "leaf2-spine1,3",
        ]);
        assert_eq!(
            (o.sim_slow_elements, o.sim_slow_nodes),
            (vec!["leaf2-spine1".to_string()], vec![3])
        );
        assert_eq!(o.topology, ["m.toml", "t.conf"]);
        assert_eq!(ok(&["--flows", "4"]).flows, 4);
        assert!(err(&["--flows", "0"]).contains("1 to 16"));
        assert!(err(&["--flows", "17"]).contains("1 to 16"));
        assert!(err(&["--flows", "2", "--pattern", "incast", "-D", "1"]).contains("a --pattern's flows"));
        assert!(err(&["--flows", "2", "--baseline", "b.json"]).contains("not with --baseline"));
        assert!(err(&["--topology", "m.toml", "--pattern", "incast"]).contains("not the fabric's elements"));
        assert!(err(&["--rails", "0"]).contains("--rails"));
        assert!(err(&["--rails", "two"]).contains("--rails"));
        assert_eq!((ok(&[]).rails, ok(&["--rails=8"]).rails), (1, 8));
        assert!(err(&["--baseline-fraction", "0"]).contains("between 0 and 1"));
        // (u64::MAX s panicked when added to the clock)
        for t in ["--join-timeout", "--pair-timeout"] {
            assert_eq!(
                err(&[t, "18446744073709551615"]),
                format!("invalid {t}: '18446744073709551615' (at most 604800 s, a week)")
            );
            assert!(run(&[t, "604800"]).is_ok());
        }
        assert!(err(&["--sim-pair-ms", "60001"]).contains("(at most 60000 ms)"));
        assert!(err(&["--baseline"]).contains("requires an argument"));
        let o = ok(&["--baseline", "old/sweep.json", "--baseline-fraction=0.9"]);
        assert_eq!(
            (o.baseline.as_deref(), o.baseline_fraction),
            (Some("old/sweep.json"), 0.9)
        );
        assert_eq!((ok(&[]).baseline, ok(&[]).baseline_fraction), (None, 0.8));
        let g = ok(&["--report", "d", "--outlier-score=2", "--outlier-reference", "best"]).given_rules();
        assert_eq!(
            g,
            GivenRules {
                fraction: None,
                reference: Some(OutlierReference::Best),
                score: Some(2.0),
                node_fraction: None
            }
        );
        assert_eq!(ok(&["--node-fraction", "0.3"]).given_rules().node_fraction, Some(0.3));
        assert_eq!(ok(&["--outlier-fraction", "0.3"]).given_rules().fraction, Some(0.3));
        assert!(err(&["--report", "d", "--resume"]).contains("--resume has no effect with --report"));
        let o = ok(&["--simulate", "8", "--sim-slow", "3,5-1"]);
        assert_eq!((o.sim_slow_nodes, o.sim_slow_links), (vec![3], vec![(1, 5)]));
    }

    #[test]
    fn help_lists_every_option() {
        let h = sweep_usage("fabdiag sweep");
        for r in ROWS {
            assert!(h.contains(&format!("--{}", r.long)), "{}", r.long);
        }
    }
}
