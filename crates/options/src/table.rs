//! The option table of the client/server tools. `SPECS` defines every
//! option once, with help text that each tool fills in (`Layout`); both
//! the getopt parser and the `-h` text come from it, and the usage text
//! keeps the originals' layout. Nothing here validates values or prints.

use crate::getopt::{self, OptDef, Parsed};
use fabdiag_model::Tool;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    Device,
    SvcId,
    Port,
    TxGpu,
    RxGpu,
    GpuType,
    Iters,
    Duration,
    Warmup,
    LatencyGap,
    Size,
    ListSize,
    Bidir,
    Rdzv,
    Unrestricted,
    NoHrp,
    NoIdc,
    NoIdcSend,
    NoLl,
    ReportAll,
    BufSz,
    BufAlign,
    BufAlignUnderscore,
    UseHp,
    Clock,
    IgnoreCpuFreq,
    EmuMode,
    Help,
    Version,
    Provider,
    Json,
    MinBw,
    MaxLat,
    Percentiles,
    Counters,
    Metrics,
    AuthKey,
    AuthMunge,
    Local,
    AtomicOp,
    CswapOp,
    AtomicType,
    Fetching,
    Matching,
    ListSizeAmo,
    NoHrpAmo,
    ReportAllAmo,
    // cxi_gpu_loopback_bw's letters and texts (originals §3.5)
    DeviceLoop,
    LoopIters,
    NumXfers,
    LoopSize,
    GpuTypeLoop,
    UseHpLoop,
    MinBwGbit,
    Verify,
    NoVerify,
    Poll,
}

impl Opt {
    /// The option this one is a spelling of: cxi_gpu_loopback_bw words
    /// some shared options' help differently, and the resolvers read them
    /// under the shared name.
    fn meaning(self) -> Opt {
        match self {
            Opt::DeviceLoop => Opt::Device,
            Opt::GpuTypeLoop => Opt::GpuType,
            Opt::UseHpLoop => Opt::UseHp,
            other => other,
        }
    }
}

struct Spec {
    pub def: OptDef<Opt>,
    /// Left column as the originals print it; None: accepted but hidden.
    left: Option<&'static str>,
    /// Help lines; `{Word}`, `{words}`, `{iters}`, `{size}` are filled in
    /// per tool.
    help: &'static [&'static str],
}

/// fabdiag's own options of the latency tools that take a clock
/// (send-lat, write-lat, atomic-lat).
pub(crate) const LATENCY_EXTENSIONS: &[Opt] = &[
    Opt::Clock,
    Opt::IgnoreCpuFreq,
    Opt::Provider,
    Opt::Json,
    Opt::MaxLat,
    Opt::Percentiles,
    Opt::Counters,
    Opt::Metrics,
    Opt::AuthKey,
    Opt::AuthMunge,
    Opt::Local,
    Opt::Poll,
];

const fn spec(
    id: Opt,
    short: Option<char>,
    long: &'static str,
    takes_arg: bool,
    left: Option<&'static str>,
    help: &'static [&'static str],
) -> Spec {
    Spec {
        def: OptDef {
            id,
            short,
            long,
            takes_arg,
        },
        left,
        help,
    }
}

const SPECS: &[Spec] = &[
    spec(
        Opt::Device,
        Some('d'),
        "device",
        true,
        Some("-d, --device=DEV"),
        &[
            "Device (libfabric domain) name, e.g. cxi0, mlx5_0, lo",
            "(default: the domain that reaches the peer)",
        ],
    ),
    spec(
        Opt::SvcId,
        Some('v'),
        "svc-id",
        true,
        Some("-v, --svc-id=SVC_ID"),
        &["Service ID (default: 1)"],
    ),
    spec(
        Opt::Port,
        Some('p'),
        "port",
        true,
        Some("-p, --port=PORT"),
        &["The port to listen on/connect to (default: 49194)"],
    ),
    spec(
        Opt::TxGpu,
        Some('t'),
        "tx-gpu",
        true,
        Some("-t, --tx-gpu=GPU"),
        &["GPU index for allocating TX buf (default: no GPU)"],
    ),
    spec(
        Opt::RxGpu,
        Some('r'),
        "rx-gpu",
        true,
        Some("-r, --rx-gpu=GPU"),
        &["GPU index for allocating RX buf (default: no GPU)"],
    ),
    spec(
        Opt::GpuType,
        Some('g'),
        "gpu-type",
        true,
        Some("-g, --gpu-type=TYPE"),
        &[
            "GPU type (AMD or NVIDIA or INTEL) (default type determined",
            "by discovered GPU files on system)",
        ],
    ),
    spec(
        Opt::Iters,
        Some('n'),
        "iters",
        true,
        Some("-n, --iters=ITERS"),
        &["Number of iterations to run (default: {iters})"],
    ),
    spec(
        Opt::Duration,
        Some('D'),
        "duration",
        true,
        Some("-D, --duration=SEC"),
        &["Run for the specified number of seconds"],
    ),
    spec(
        Opt::Warmup,
        None,
        "warmup",
        true,
        Some("    --warmup=WARMUP"),
        &["Number of warmup iterations to run (default: 10)"],
    ),
    spec(
        Opt::LatencyGap,
        None,
        "latency-gap",
        true,
        Some("    --latency-gap=USEC"),
        &[
            "Number of microseconds to wait between each",
            "iteration (default: 1000)",
        ],
    ),
    spec(
        Opt::Size,
        Some('s'),
        "size",
        true,
        Some("-s, --size=MIN[:MAX]"),
        &[
            "{Word} size or range to use (default: {size})",
            "Ranges must be powers of 2 (e.g. \"1:8192\")",
            "The maximum size is 4294967295",
        ],
    ),
    spec(
        Opt::ListSize,
        Some('l'),
        "list-size",
        true,
        Some("-l, --list-size=SIZE"),
        &[
            "Number of {words} per iteration, all pushed to",
            "the Tx CQ prior to initiating xfer (default: 256)",
        ],
    ),
    spec(
        Opt::Bidir,
        Some('b'),
        "bidirectional",
        false,
        Some("-b, --bidirectional"),
        &["Measure bidirectional bandwidth"],
    ),
    spec(
        Opt::Rdzv,
        Some('R'),
        "rdzv",
        false,
        Some("-R, --rdzv"),
        &["Use rendezvous PUTs"],
    ),
    spec(
        Opt::Unrestricted,
        None,
        "unrestricted",
        false,
        Some("    --unrestricted"),
        &["Use unrestricted {words}"],
    ),
    spec(
        Opt::NoHrp,
        None,
        "no-hrp",
        false,
        Some("    --no-hrp"),
        &["Do not use High Rate Puts for sizes <= 2048 bytes"],
    ),
    spec(
        Opt::NoIdc,
        None,
        "no-idc",
        false,
        Some("    --no-idc"),
        &["Do not use Immediate Data Cmds"],
    ),
    spec(
        Opt::NoIdcSend,
        None,
        "no-idc",
        false,
        Some("    --no-idc"),
        &["Do not use Immediate Data Cmds for sizes <= 192 bytes"],
    ),
    spec(
        Opt::NoLl,
        None,
        "no-ll",
        false,
        Some("    --no-ll"),
        &["Do not use Low-Latency command issuing"],
    ),
    spec(
        Opt::ReportAll,
        None,
        "report-all",
        false,
        Some("    --report-all"),
        &[
            "Report all latency measurements individually",
            "This option is ignored when using --duration",
        ],
    ),
    spec(
        Opt::BufSz,
        None,
        "buf-sz",
        true,
        Some("    --buf-sz=SIZE"),
        &[
            "The max TX/RDMA buffer size, specified in bytes",
            "If (size * list_size) > buf_sz, {words} will overlap",
            "(default: 4294967296)",
        ],
    ),
    spec(
        Opt::BufAlign,
        None,
        "buf-align",
        true,
        Some("    --buf-align=ALIGN"),
        &["Byte-alignment of {words} in the buffer (default: 64)"],
    ),
    // cxi_read_bw's usage printed this spelling (originals §6.13); accept it too.
    spec(Opt::BufAlignUnderscore, None, "buf_align", true, None, &[]),
    spec(
        Opt::UseHp,
        None,
        "use-hp",
        true,
        Some("    --use-hp=SIZE"),
        &[
            "Attempt to use huge pages when allocating",
            "Size may be \"2M\" or \"1G\"",
        ],
    ),
    spec(
        Opt::Clock,
        Some('c'),
        "clock",
        true,
        Some("-c, --clock=TYPE"),
        &[
            "Clock type used to calculate latency.",
            "Valid options are: cycles or clock_gettime.",
            "Default is clock_gettime.",
        ],
    ),
    spec(
        Opt::IgnoreCpuFreq,
        None,
        "ignore-cpu-freq-mismatch",
        false,
        Some("    --ignore-cpu-freq-mismatch"),
        &[
            "Used when clock type is cycles. Ignore CPU frequency",
            "mismatch. Mismatch can occur when ondemand CPU frequency",
            "is enabled such as cpufreq_ondemand governor.",
        ],
    ),
    spec(Opt::EmuMode, None, "emu-mode", false, None, &[]),
    spec(
        Opt::Help,
        Some('h'),
        "help",
        false,
        Some("-h, --help"),
        &["Print this help text and exit"],
    ),
    spec(
        Opt::Version,
        Some('V'),
        "version",
        false,
        Some("-V, --version"),
        &["Print the version and exit"],
    ),
    spec(
        Opt::Provider,
        Some('P'),
        "provider",
        true,
        Some("-P, --provider=PROV"),
        &[
            "libfabric provider, e.g. cxi, verbs, efa, tcp, shm",
            "(default: the best one with the needed capabilities)",
        ],
    ),
    spec(
        Opt::Json,
        None,
        "json",
        false,
        Some("    --json"),
        &["Print one JSON document on stdout instead of tables"],
    ),
    spec(
        Opt::MinBw,
        None,
        "min-bw",
        true,
        Some("    --min-bw=MB/S"),
        &["Fail (exit 3) if any size's bandwidth is below MB/S"],
    ),
    spec(
        Opt::MaxLat,
        None,
        "max-lat",
        true,
        Some("    --max-lat=USEC"),
        &["Fail (exit 3) if any size's mean latency is above USEC"],
    ),
    spec(
        Opt::Percentiles,
        None,
        "percentiles",
        false,
        Some("    --percentiles"),
        &["Also print p50/p90/p99/p99.9 latencies per size"],
    ),
    spec(
        Opt::Counters,
        None,
        "counters",
        false,
        Some("    --counters"),
        &["Also print the NIC counters that rose on either side during the test"],
    ),
    spec(
        Opt::Metrics,
        None,
        "metrics",
        true,
        Some("    --metrics=FILE"),
        &[
            "Also write the results to FILE in Prometheus's text format",
            "(written whole, then renamed into place: node_exporter's textfile",
            "collector reads *.prom files)",
        ],
    ),
    spec(
        Opt::AuthKey,
        None,
        "auth-key",
        true,
        Some("    --auth-key=FILE"),
        &[
            "Prove the shared key in FILE to the other side, and have it",
            "prove the key in turn, before the test (both sides need it)",
        ],
    ),
    spec(
        Opt::AuthMunge,
        None,
        "auth-munge",
        false,
        Some("    --auth-munge"),
        &[
            "Prove who this side is with a MUNGE credential from this node's",
            "munged, and check the other side's, before the test (both sides",
            "need it, and munged running with the cluster's munge key)",
        ],
    ),
    spec(
        Opt::Local,
        None,
        "local",
        false,
        Some("    --local"),
        &["Run server and client on this machine in one command"],
    ),
    spec(
        Opt::Poll,
        None,
        "poll",
        true,
        Some("    --poll=MODE"),
        &[
            "What this side does when its completion queue is empty: spin",
            "(poll again at once; the default) or yield (let any other",
            "thread ready to run on the CPU have it first: for more busy",
            "ranks than cores; each side chooses its own)",
        ],
    ),
    spec(
        Opt::AtomicOp,
        Some('A'),
        "atomic-op",
        true,
        Some("-A, --atomic-op"),
        &["The atomic operation to use (default: SUM)"],
    ),
    spec(
        Opt::CswapOp,
        Some('C'),
        "cswap-op",
        true,
        Some("-C, --cswap-op"),
        &["The CSWAP operation to use (default: EQ)"],
    ),
    spec(
        Opt::AtomicType,
        Some('T'),
        "atomic-type",
        true,
        Some("-T, --atomic-type"),
        &["The atomic type to use (default: UINT64)"],
    ),
    spec(
        Opt::Fetching,
        None,
        "fetching",
        false,
        Some("    --fetching"),
        &["Use fetching AMOs"],
    ),
    spec(
        Opt::Matching,
        None,
        "matching",
        false,
        Some("    --matching"),
        &["Use matching list entries at the target"],
    ),
    spec(
        Opt::ListSizeAmo,
        Some('l'),
        "list-size",
        true,
        Some("-l, --list-size=SIZE"),
        &[
            "Number of writes per iteration, all pushed to the",
            "initiator CQ prior to initiating xfer (default: 4096)",
        ],
    ),
    spec(
        Opt::NoHrpAmo,
        None,
        "no-hrp",
        false,
        Some("    --no-hrp"),
        &["Do not use High Rate Puts"],
    ),
    spec(
        Opt::ReportAllAmo,
        None,
        "report-all",
        false,
        Some("    --report-all"),
        &["Report all latency measurements individually"],
    ),
    spec(
        Opt::DeviceLoop,
        Some('d'),
        "device",
        true,
        Some("-d, --device=DEV"),
        &[
            "Device (libfabric domain) name, e.g. cxi0, mlx5_0, lo",
            "(default: the provider's first domain)",
        ],
    ),
    spec(
        Opt::LoopIters,
        Some('i'),
        "iters",
        true,
        Some("-i, --iters=ITERS"),
        &[
            "Number of iterations to run if duration not",
            "specified (default: {iters})",
        ],
    ),
    spec(
        Opt::NumXfers,
        Some('n'),
        "num-xfers",
        true,
        Some("-n, --num-xfers=XFERS"),
        &[
            "Number of transfers per iteration, all pushed to",
            "the Tx CQ prior to initiating xfer (default: 8192)",
        ],
    ),
    spec(
        Opt::LoopSize,
        Some('s'),
        "size",
        true,
        Some("-s, --size=SIZE"),
        &[
            "Transfer Size in Bytes (default: {size})",
            "The maximum size is 4294967295 bytes",
        ],
    ),
    spec(
        Opt::GpuTypeLoop,
        Some('g'),
        "gpu-type",
        true,
        Some("-g, --gpu-type=TYPE"),
        &[
            "GPU type (AMD or NVIDIA or INTEL). Default type determined by",
            "discovered GPU files on system.",
        ],
    ),
    spec(
        Opt::UseHpLoop,
        None,
        "use-hp",
        true,
        Some("--use-hp=SIZE"),
        &[
            "Attempt to use huge pages when allocating",
            "Size may be \"2M\" or \"1G\"",
            "system memory",
        ],
    ),
    spec(
        Opt::MinBwGbit,
        None,
        "min-bw",
        true,
        Some("    --min-bw=GBIT/S"),
        &["Fail (exit 3) if the bandwidth is below GBIT/S (Gb/s)"],
    ),
    spec(
        Opt::Verify,
        None,
        "verify",
        false,
        Some("    --verify"),
        &[
            "Stamp each size's source with its own pattern and check",
            "the target after the size (on by default for GPU buffers)",
        ],
    ),
    spec(
        Opt::NoVerify,
        None,
        "no-verify",
        false,
        Some("    --no-verify"),
        &["Do not check the target, even for GPU buffers"],
    ),
];

/// A command line as the table parsed it, before validation: every
/// option given, in order, with its value, and the operands.
#[derive(Clone, Debug, Default)]
pub struct Raw {
    pub values: Vec<(Opt, Option<String>)>,
    pub operands: Vec<String>,
}

impl Raw {
    pub fn last(&self, id: Opt) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(o, _)| *o == id)
            .and_then(|(_, v)| v.as_deref())
    }

    pub fn has(&self, id: Opt) -> bool {
        self.values.iter().any(|(o, _)| *o == id)
    }

    /// Run options given to a server (which the client overrides).
    pub fn given(&self, names: &[(Opt, &'static str)]) -> Vec<&'static str> {
        names.iter().filter(|(o, _)| self.has(*o)).map(|(_, n)| *n).collect()
    }
}

/// One option as `-h`, man pages and completions show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDoc {
    pub short: Option<char>,
    pub long: &'static str,
    pub takes_arg: bool,
    /// The usage text's left column, e.g. "-s, --size=MIN[:MAX]".
    pub left: &'static str,
    /// Help lines, filled in for the tool.
    pub help: Vec<String>,
    /// One of fabdiag's additions (not an original option).
    pub fabdiag: bool,
}

/// What differs between tools in their command line.
pub struct Layout {
    /// Original options, in the originals' usage order.
    pub opts: &'static [Opt],
    /// fabdiag's additions, listed in their own usage section.
    pub extensions: &'static [Opt],
    /// The run parameters among them, which the client decides: given to
    /// a server they change nothing, and the server says so, in this
    /// order. (A family's tools share one list; an option a tool does not
    /// take is never given.)
    pub run: &'static [Opt],
    /// Width of the usage's left column (25 for bw tools, 26 for lat).
    pub width: usize,
    /// The tool, for the words its help uses ("Write", "writes").
    pub tool: Tool,
    pub default_iters: u64,
    pub default_size: u64,
    /// Printed after the original options (the atomic tools' name lists).
    pub trailer: &'static str,
    /// One process, no server (cxi_gpu_loopback_bw): its usage line has
    /// no address.
    pub one_process: bool,
}

impl Layout {
    fn specs(&self) -> impl Iterator<Item = &'static Spec> + '_ {
        self.opts
            .iter()
            .chain(self.extensions)
            .filter_map(|id| SPECS.iter().find(|s| s.def.id == *id))
    }

    /// `run`, each option with the name its usage line gives it ("-s",
    /// "--no-idc"), as a server's warning names them.
    pub(crate) fn run_options(&self) -> Vec<(Opt, &'static str)> {
        self.run
            .iter()
            .filter_map(|id| SPECS.iter().find(|s| s.def.id == *id))
            .filter_map(|s| {
                let left = s.left?.trim_start();
                let end = left.find([',', '=']).unwrap_or(left.len());
                Some((s.def.id, &left[..end]))
            })
            .collect()
    }

    fn fill(&self, line: &str) -> String {
        line.replace("{Word}", self.tool.word())
            .replace("{words}", self.tool.words())
            .replace("{iters}", &self.default_iters.to_string())
            .replace("{size}", &self.default_size.to_string())
    }

    /// Every option shown in `-h`, as documentation needs it.
    pub fn documented(&self) -> Vec<OptionDoc> {
        let sections = [(false, self.opts), (true, self.extensions)];
        let mut out = Vec::new();
        for (fabdiag, ids) in sections {
            for s in ids.iter().filter_map(|id| SPECS.iter().find(|s| s.def.id == *id)) {
                let Some(left) = s.left else { continue };
                out.push(OptionDoc {
                    short: s.def.short,
                    long: s.def.long,
                    takes_arg: s.def.takes_arg,
                    left,
                    help: s.help.iter().map(|l| self.fill(l)).collect(),
                    fabdiag,
                });
            }
        }
        out
    }

    /// The `-h` text: the originals' layout, then fabdiag's own options.
    pub fn usage(&self, prog: &str) -> String {
        let w = self.width;
        let mut o = String::new();
        o.push_str("Usage:\n");
        if self.one_process {
            o.push_str(&format!("  {prog} [OPTIONS]\n"));
        } else {
            o.push_str(&format!("  {prog} [-d DEV] [-p PORT]\n"));
            o.push_str(&format!("{:w$}Start a server and wait for connection\n", ""));
            o.push_str(&format!("  {prog} ADDR [OPTIONS]\n"));
            o.push_str(&format!("{:w$}Connect to server with address ADDR\n", ""));
        }
        let docs = self.documented();
        for (title, fabdiag) in [("Options:", false), ("fabdiag options:", true)] {
            if fabdiag {
                o.push_str(self.trailer);
            }
            o.push_str(&format!("\n{title}\n"));
            for d in docs.iter().filter(|d| d.fabdiag == fabdiag) {
                let left = format!("  {}", d.left);
                let mut lines = d.help.iter();
                if left.len() >= w {
                    // too long for the column: on a line of its own
                    o.push_str(&format!("{left}\n"));
                } else if let Some(first) = lines.next() {
                    o.push_str(&format!("{left:w$}{first}\n"));
                }
                for l in lines {
                    o.push_str(&format!("{:w$}{l}\n", ""));
                }
            }
        }
        o
    }

    pub fn parse(&self, args: &[String]) -> Result<Raw, String> {
        let defs: Vec<OptDef<Opt>> = self.specs().map(|s| s.def).collect();
        let mut raw = Raw::default();
        for p in getopt::parse(&defs, args)? {
            match p {
                Parsed::Opt(id, v) => raw.values.push((id.meaning(), v)),
                Parsed::Operand(s) => raw.operands.push(s),
            }
        }
        Ok(raw)
    }
}
