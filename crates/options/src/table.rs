//! The option table of the client/server tools. `SPECS` defines every
//! option once, with help text that each tool fills in (`Layout`); both
//! the getopt parser and the `-h` text come from it, and the usage text
//! keeps the originals' layout. Nothing here validates values or prints.

use crate::getopt::{self, Parsed};
use crate::row::{self, Row, Style};
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

/// Every option of the pair tools; each tool takes the ones its `Layout`
/// lists. Help lines' `{Word}`, `{words}`, `{iters}` and `{size}` are filled
/// in per tool.
const SPECS: &[Row<Opt>] = &[
    Row::valued(
        Opt::Device,
        Some('d'),
        "device",
        "DEV",
        &[
            "Device (libfabric domain) name, e.g. cxi0, mlx5_0, lo",
            "(default: the domain that reaches the peer)",
        ],
    ),
    Row::valued(Opt::SvcId, Some('v'), "svc-id", "SVC_ID", &["Service ID (default: 1)"]),
    Row::valued(
        Opt::Port,
        Some('p'),
        "port",
        "PORT",
        &["The port to listen on/connect to (default: 49194)"],
    ),
    Row::valued(
        Opt::TxGpu,
        Some('t'),
        "tx-gpu",
        "GPU",
        &["GPU index for allocating TX buf (default: no GPU)"],
    ),
    Row::valued(
        Opt::RxGpu,
        Some('r'),
        "rx-gpu",
        "GPU",
        &["GPU index for allocating RX buf (default: no GPU)"],
    ),
    Row::valued(
        Opt::GpuType,
        Some('g'),
        "gpu-type",
        "TYPE",
        &[
            "GPU type (AMD or NVIDIA or INTEL) (default type determined",
            "by discovered GPU files on system)",
        ],
    ),
    Row::valued(
        Opt::Iters,
        Some('n'),
        "iters",
        "ITERS",
        &["Number of iterations to run (default: {iters})"],
    ),
    Row::valued(
        Opt::Duration,
        Some('D'),
        "duration",
        "SEC",
        &["Run for the specified number of seconds"],
    ),
    Row::valued(
        Opt::Warmup,
        None,
        "warmup",
        "WARMUP",
        &["Number of warmup iterations to run (default: 10)"],
    ),
    Row::valued(
        Opt::LatencyGap,
        None,
        "latency-gap",
        "USEC",
        &[
            "Number of microseconds to wait between each",
            "iteration (default: 1000)",
        ],
    ),
    Row::valued(
        Opt::Size,
        Some('s'),
        "size",
        "MIN[:MAX]",
        &[
            "{Word} size or range to use (default: {size})",
            "Ranges must be powers of 2 (e.g. \"1:8192\")",
            "The maximum size is 4294967295",
        ],
    ),
    Row::valued(
        Opt::ListSize,
        Some('l'),
        "list-size",
        "SIZE",
        &[
            "Number of {words} per iteration, all pushed to",
            "the Tx CQ prior to initiating xfer (default: 256)",
        ],
    ),
    Row::flag(
        Opt::Bidir,
        Some('b'),
        "bidirectional",
        &["Measure bidirectional bandwidth"],
    ),
    Row::flag(Opt::Rdzv, Some('R'), "rdzv", &["Use rendezvous PUTs"]),
    Row::flag(Opt::Unrestricted, None, "unrestricted", &["Use unrestricted {words}"]),
    Row::flag(
        Opt::NoHrp,
        None,
        "no-hrp",
        &["Do not use High Rate Puts for sizes <= 2048 bytes"],
    ),
    Row::flag(Opt::NoIdc, None, "no-idc", &["Do not use Immediate Data Cmds"]),
    Row::flag(
        Opt::NoIdcSend,
        None,
        "no-idc",
        &["Do not use Immediate Data Cmds for sizes <= 192 bytes"],
    ),
    Row::flag(Opt::NoLl, None, "no-ll", &["Do not use Low-Latency command issuing"]),
    Row::flag(
        Opt::ReportAll,
        None,
        "report-all",
        &[
            "Report all latency measurements individually",
            "This option is ignored when using --duration",
        ],
    ),
    Row::valued(
        Opt::BufSz,
        None,
        "buf-sz",
        "SIZE",
        &[
            "The max TX/RDMA buffer size, specified in bytes",
            "If (size * list_size) > buf_sz, {words} will overlap",
            "(default: 4294967296)",
        ],
    ),
    Row::valued(
        Opt::BufAlign,
        None,
        "buf-align",
        "ALIGN",
        &["Byte-alignment of {words} in the buffer (default: 64)"],
    ),
    // cxi_read_bw's usage printed this spelling (originals §6.13); accept it too.
    Row::valued(Opt::BufAlignUnderscore, None, "buf_align", "ALIGN", &[]).hidden(),
    Row::valued(
        Opt::UseHp,
        None,
        "use-hp",
        "SIZE",
        &[
            "Attempt to use huge pages when allocating",
            "Size may be \"2M\" or \"1G\"",
        ],
    ),
    Row::valued(
        Opt::Clock,
        Some('c'),
        "clock",
        "TYPE",
        &[
            "Clock type used to calculate latency.",
            "Valid options are: cycles or clock_gettime.",
            "Default is clock_gettime.",
        ],
    ),
    Row::flag(
        Opt::IgnoreCpuFreq,
        None,
        "ignore-cpu-freq-mismatch",
        &[
            "Used when clock type is cycles. Ignore CPU frequency",
            "mismatch. Mismatch can occur when ondemand CPU frequency",
            "is enabled such as cpufreq_ondemand governor.",
        ],
    ),
    Row::flag(Opt::EmuMode, None, "emu-mode", &[]).hidden(),
    Row::flag(Opt::Help, Some('h'), "help", &["Print this help text and exit"]),
    Row::flag(Opt::Version, Some('V'), "version", &["Print the version and exit"]),
    Row::valued(
        Opt::Provider,
        Some('P'),
        "provider",
        "PROV",
        &[
            "libfabric provider, e.g. cxi, verbs, efa, tcp, shm",
            "(default: the best one with the needed capabilities)",
        ],
    ),
    Row::flag(
        Opt::Json,
        None,
        "json",
        &["Print one JSON document on stdout instead of tables"],
    ),
    Row::valued(
        Opt::MinBw,
        None,
        "min-bw",
        "MB/S",
        &["Fail (exit 3) if any size's bandwidth is below MB/S"],
    ),
    Row::valued(
        Opt::MaxLat,
        None,
        "max-lat",
        "USEC",
        &["Fail (exit 3) if any size's mean latency is above USEC"],
    ),
    Row::flag(
        Opt::Percentiles,
        None,
        "percentiles",
        &["Also print p50/p90/p99/p99.9 latencies per size"],
    ),
    Row::flag(
        Opt::Counters,
        None,
        "counters",
        &["Also print the NIC counters that rose on either side during the test"],
    ),
    Row::valued(
        Opt::Metrics,
        None,
        "metrics",
        "FILE",
        &[
            "Also write the results to FILE in Prometheus's text format",
            "(written whole, then renamed into place: node_exporter's textfile",
            "collector reads *.prom files)",
        ],
    ),
    Row::valued(
        Opt::AuthKey,
        None,
        "auth-key",
        "FILE",
        &[
            "Prove the shared key in FILE to the other side, and have it",
            "prove the key in turn, before the test (both sides need it)",
        ],
    ),
    Row::flag(
        Opt::AuthMunge,
        None,
        "auth-munge",
        &[
            "Prove who this side is with a MUNGE credential from this node's",
            "munged, and check the other side's, before the test (both sides",
            "need it, and munged running with the cluster's munge key)",
        ],
    ),
    Row::flag(
        Opt::Local,
        None,
        "local",
        &["Run server and client on this machine in one command"],
    ),
    Row::valued(
        Opt::Poll,
        None,
        "poll",
        "MODE",
        &[
            "What this side does when its completion queue is empty: spin",
            "(poll again at once; the default) or yield (let any other",
            "thread ready to run on the CPU have it first: for more busy",
            "ranks than cores; each side chooses its own)",
        ],
    ),
    Row::valued(
        Opt::AtomicOp,
        Some('A'),
        "atomic-op",
        "OP",
        &["The atomic operation to use (default: SUM)"],
    )
    .left("-A, --atomic-op"),
    Row::valued(
        Opt::CswapOp,
        Some('C'),
        "cswap-op",
        "OP",
        &["The CSWAP operation to use (default: EQ)"],
    )
    .left("-C, --cswap-op"),
    Row::valued(
        Opt::AtomicType,
        Some('T'),
        "atomic-type",
        "TYPE",
        &["The atomic type to use (default: UINT64)"],
    )
    .left("-T, --atomic-type"),
    Row::flag(Opt::Fetching, None, "fetching", &["Use fetching AMOs"]),
    Row::flag(
        Opt::Matching,
        None,
        "matching",
        &["Use matching list entries at the target"],
    ),
    Row::valued(
        Opt::ListSizeAmo,
        Some('l'),
        "list-size",
        "SIZE",
        &[
            "Number of writes per iteration, all pushed to the",
            "initiator CQ prior to initiating xfer (default: 4096)",
        ],
    ),
    Row::flag(Opt::NoHrpAmo, None, "no-hrp", &["Do not use High Rate Puts"]),
    Row::flag(
        Opt::ReportAllAmo,
        None,
        "report-all",
        &["Report all latency measurements individually"],
    ),
    Row::valued(
        Opt::DeviceLoop,
        Some('d'),
        "device",
        "DEV",
        &[
            "Device (libfabric domain) name, e.g. cxi0, mlx5_0, lo",
            "(default: the provider's first domain)",
        ],
    ),
    Row::valued(
        Opt::LoopIters,
        Some('i'),
        "iters",
        "ITERS",
        &[
            "Number of iterations to run if duration not",
            "specified (default: {iters})",
        ],
    ),
    Row::valued(
        Opt::NumXfers,
        Some('n'),
        "num-xfers",
        "XFERS",
        &[
            "Number of transfers per iteration, all pushed to",
            "the Tx CQ prior to initiating xfer (default: 8192)",
        ],
    ),
    Row::valued(
        Opt::LoopSize,
        Some('s'),
        "size",
        "SIZE",
        &[
            "Transfer Size in Bytes (default: {size})",
            "The maximum size is 4294967295 bytes",
        ],
    ),
    Row::valued(
        Opt::GpuTypeLoop,
        Some('g'),
        "gpu-type",
        "TYPE",
        &[
            "GPU type (AMD or NVIDIA or INTEL). Default type determined by",
            "discovered GPU files on system.",
        ],
    ),
    Row::valued(
        Opt::UseHpLoop,
        None,
        "use-hp",
        "SIZE",
        &[
            "Attempt to use huge pages when allocating",
            "Size may be \"2M\" or \"1G\"",
            "system memory",
        ],
    )
    .left("--use-hp=SIZE"),
    Row::valued(
        Opt::MinBwGbit,
        None,
        "min-bw",
        "GBIT/S",
        &["Fail (exit 3) if the bandwidth is below GBIT/S (Gb/s)"],
    ),
    Row::flag(
        Opt::Verify,
        None,
        "verify",
        &[
            "Stamp each size's source with its own pattern and check",
            "the target after the size (on by default for GPU buffers)",
        ],
    ),
    Row::flag(
        Opt::NoVerify,
        None,
        "no-verify",
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
    pub fn given(&self, names: &[(Opt, String)]) -> Vec<String> {
        names
            .iter()
            .filter(|(o, _)| self.has(*o))
            .map(|(_, n)| n.clone())
            .collect()
    }
}

/// One option as `-h`, man pages and completions show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDoc {
    pub short: Option<char>,
    pub long: &'static str,
    pub takes_arg: bool,
    /// The usage text's left column, e.g. "-s, --size=MIN[:MAX]".
    pub left: String,
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
    fn rows(ids: &[Opt]) -> impl Iterator<Item = &'static Row<Opt>> + '_ {
        ids.iter().filter_map(|id| SPECS.iter().find(|s| s.id == *id))
    }

    fn style(&self) -> Style {
        Style::Getopt { width: self.width }
    }

    /// `run`, each option with the name its usage line gives it ("-s",
    /// "--no-idc"), as a server's warning names them.
    pub(crate) fn run_options(&self) -> Vec<(Opt, String)> {
        Self::rows(self.run)
            .filter_map(|s| {
                let column = s.column(self.style())?;
                let left = column.trim_start();
                let end = left.find([',', '=']).unwrap_or(left.len());
                Some((s.id, left[..end].to_string()))
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
            for s in Self::rows(ids) {
                let Some(left) = s.column(self.style()) else { continue };
                out.push(OptionDoc {
                    short: s.short,
                    long: s.long,
                    takes_arg: s.takes_arg(),
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
        let fill = |l: &str| self.fill(l);
        for (title, ids, fabdiag) in [
            ("Options:", self.opts, false),
            ("fabdiag options:", self.extensions, true),
        ] {
            if fabdiag {
                o.push_str(self.trailer);
            }
            let rows: Vec<Row<Opt>> = Self::rows(ids).copied().collect();
            o.push_str(&format!("\n{title}\n"));
            o.push_str(&row::help_block(&rows, self.style(), &fill));
        }
        o
    }

    /// Every row this tool takes, its originals' first.
    fn taken(&self) -> Vec<Row<Opt>> {
        Self::rows(self.opts)
            .chain(Self::rows(self.extensions))
            .copied()
            .collect()
    }

    /// Every option shown in `-h`, as the shells' completions offer it.
    pub fn completions(&self) -> Vec<row::Completion> {
        row::completions(&self.taken(), &|l| self.fill(l))
    }

    pub fn parse(&self, args: &[String]) -> Result<Raw, String> {
        let rows = self.taken();
        let mut raw = Raw::default();
        for p in getopt::parse(&rows, args)? {
            match p {
                Parsed::Opt(id, v) => raw.values.push((id.meaning(), v)),
                Parsed::Operand(s) => raw.operands.push(s),
            }
        }
        Ok(raw)
    }
}
