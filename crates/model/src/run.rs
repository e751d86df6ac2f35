//! A run as this side saw it: its configuration (`BwRun`, `LatRun`,
//! `AmoRun`, one `RunDesc` for any of them) and its result rows (`Row`).
//! One struct feeds both the originals' banner and the JSON `config`
//! object, so they cannot disagree. Describes; never renders, measures or
//! does I/O (the renderers are fabdiag-report's).

use crate::catalog::{BwTool, LatTool, Tool};
use crate::own::PollMode;
use crate::words::{DISABLED, ENABLED, NOT_APPLICABLE, SYSTEM_MEM};
use fabdiag_engine::amo::Verification;
use fabdiag_engine::{LatResult, SizeResult};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Client,
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TestMode {
    Iterations { iterations: u64 },
    Duration { duration_s: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Hugepages {
    Disabled,
    /// Requested, but this side allocates no host buffer.
    NotApplicable,
    Enabled {
        size: String,
        pages: u64,
    },
}

/// Where a buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Mem {
    System,
    Gpu { index: u32 },
}

impl std::fmt::Display for Mem {
    /// As the banners print it: `System` or `GPU <n>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mem::System => f.write_str(SYSTEM_MEM),
            Mem::Gpu { index } => write!(f, "GPU {index}"),
        }
    }
}

/// One side's TX and RX buffers, and the GPU type when either is on a GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SideMem {
    pub tx: Mem,
    pub rx: Mem,
    /// "AMD", "NVIDIA" or "INTEL".
    pub gpu_type: Option<String>,
}

impl SideMem {
    pub fn system() -> SideMem {
        SideMem {
            tx: Mem::System,
            rx: Mem::System,
            gpu_type: None,
        }
    }
}

/// A run's configuration as this side sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BwRun {
    pub tool: BwTool,
    pub role: Role,
    pub provider: String,
    pub device: String,
    pub service_id: u32,
    pub mode: TestMode,
    pub min_size_bytes: u64,
    pub max_size_bytes: u64,
    pub list_size: u64,
    pub bidirectional: bool,
    /// "Enabled" / "Disabled" / "Disabled - Not Applicable"; None: no line.
    pub hrp: Option<String>,
    pub idc: Option<String>,
    pub max_buf_bytes: u64,
    pub buf_used_bytes: u64,
    pub buf_align_bytes: u64,
    pub hugepages: Hugepages,
    pub local_address: String,
    pub remote_address: String,
    /// Whether a completion means delivery at the target.
    pub delivery_complete: bool,
    /// `--poll`: what this side does when its completion queue is empty.
    pub poll: PollMode,
    /// The client's buffers and the server's (the loopback tool: its own
    /// in `client_mem`).
    pub client_mem: SideMem,
    pub server_mem: SideMem,
    /// GPUs the runtime reported, when a buffer is on a GPU.
    pub gpus_found: Option<u32>,
    /// `--verify`: every size's target was checked against the pattern.
    pub verify: bool,
}

/// One table row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowView {
    pub size: u64,
    /// None prints `-` (this side initiated nothing).
    pub count: Option<u64>,
    pub bw_mb_s: f64,
    pub rate_mpkt_s: f64,
}

impl From<&SizeResult> for RowView {
    fn from(r: &SizeResult) -> Self {
        RowView {
            size: r.size,
            count: r.initiated.then_some(r.own.ops),
            bw_mb_s: r.bw_mb_s,
            rate_mpkt_s: r.pkt_rate_mpkt_s,
        }
    }
}

/// A latency run's configuration as this side sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatRun {
    pub tool: LatTool,
    pub role: Role,
    pub provider: String,
    pub device: String,
    pub service_id: u32,
    pub mode: TestMode,
    pub warmup_iterations: u64,
    pub gap_us: u64,
    pub min_size_bytes: u64,
    pub max_size_bytes: u64,
    /// None: no IDC line (read_lat).
    pub idc: Option<String>,
    pub ll: String,
    pub report_all: bool,
    pub hugepages: Hugepages,
    pub local_address: String,
    pub remote_address: String,
    /// "clock_gettime" or "cycles".
    pub clock: String,
    /// Calibrated cycle-counter frequency, with `--clock cycles`.
    pub cycles_mhz: Option<f64>,
    /// What each timestamp is read with: "clock_gettime", or "rdtsc"
    /// (`--clock cycles`, or CLOCK_MONOTONIC_RAW read through the counter
    /// the kernel counts it by).
    pub clock_reads: String,
    pub delivery_complete: bool,
    /// `--poll`: what this side does when its completion queue is empty.
    pub poll: PollMode,
    pub client_mem: SideMem,
    pub server_mem: SideMem,
    pub gpus_found: Option<u32>,
}

/// An atomic run's configuration as this side sees it (atomic_bw or
/// atomic_lat; the fields of the other tool are None).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AmoRun {
    /// "atomic_bw" or "atomic_lat".
    pub tool: String,
    pub role: Role,
    pub provider: String,
    pub device: String,
    pub service_id: u32,
    pub mode: TestMode,
    /// The banner's "Atomic Op" value, e.g. "NON-FETCHING CSWAP EQ".
    pub atomic_op: String,
    pub op: String,
    pub cswap_op: Option<String>,
    pub atomic_type: String,
    pub size_bytes: u64,
    pub fetching: bool,
    /// What runs on the fabric, e.g. "FI_CSWAP" through "fi_compare_atomic".
    pub libfabric_op: String,
    pub libfabric_call: String,
    pub list_size: Option<u64>,
    pub bidirectional: Option<bool>,
    pub warmup_iterations: Option<u64>,
    pub gap_us: Option<u64>,
    pub hrp: Option<String>,
    pub idc: String,
    pub matching: String,
    pub restricted: String,
    pub ll: Option<String>,
    pub report_all: Option<bool>,
    pub local_address: String,
    pub remote_address: String,
    pub clock: Option<String>,
    pub cycles_mhz: Option<f64>,
    /// As `LatRun::clock_reads`, for atomic_lat.
    pub clock_reads: Option<String>,
    pub delivery_complete: bool,
    /// `--poll`: what this side does when its completion queue is empty.
    pub poll: PollMode,
}

impl AmoRun {
    /// atomic_lat's run (atomic_bw's otherwise).
    pub fn is_latency(&self) -> bool {
        self.tool == Tool::AtomicLat.json_name()
    }
}

/// A CXI switch as the banners show it. The words are the originals' and
/// live here only; sessions say which state, never how it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    Enabled,
    Disabled,
    /// A CXI feature with no libfabric control.
    NotApplicable,
}

impl Knob {
    pub fn on(enabled: bool) -> Knob {
        if enabled {
            Knob::Enabled
        } else {
            Knob::Disabled
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Knob::Enabled => ENABLED,
            Knob::Disabled => DISABLED,
            Knob::NotApplicable => NOT_APPLICABLE,
        }
    }
}

impl From<Knob> for String {
    fn from(k: Knob) -> String {
        k.label().to_string()
    }
}

/// Any tool's run description; serialises as the family's own object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RunDesc {
    Bw(BwRun),
    Lat(LatRun),
    Amo(Box<AmoRun>),
}

impl RunDesc {
    pub fn role(&self) -> Role {
        match self {
            RunDesc::Bw(r) => r.role,
            RunDesc::Lat(r) => r.role,
            RunDesc::Amo(r) => r.role,
        }
    }

    pub fn provider(&self) -> &str {
        match self {
            RunDesc::Bw(r) => &r.provider,
            RunDesc::Lat(r) => &r.provider,
            RunDesc::Amo(r) => &r.provider,
        }
    }
}

/// One result row of any tool.
#[derive(Clone, Debug)]
pub enum Row {
    Bw(SizeResult),
    Lat(LatResult),
    AmoBw(AmoBw),
    AmoLat(AmoLat),
}

impl Row {
    pub fn size(&self) -> u64 {
        match self {
            Row::Bw(r) => r.size,
            Row::Lat(r) => r.size,
            Row::AmoBw(a) => a.result.size,
            Row::AmoLat(a) => a.result.size,
        }
    }

    /// Bandwidth in MB/s, for the bandwidth forms.
    pub fn bw_mb_s(&self) -> Option<f64> {
        match self {
            Row::Bw(r) => Some(r.bw_mb_s),
            Row::AmoBw(a) => Some(a.result.bw_mb_s),
            Row::Lat(_) | Row::AmoLat(_) => None,
        }
    }

    /// Mean latency in ns, for the latency forms.
    pub fn mean_ns(&self) -> Option<u64> {
        self.lat_stats().map(|s| s.mean_ns)
    }

    /// The latency statistics, for the latency forms.
    pub fn lat_stats(&self) -> Option<&fabdiag_engine::lat::LatStats> {
        match self {
            Row::Lat(r) => Some(&r.stats),
            Row::AmoLat(a) => Some(&a.result.stats),
            Row::Bw(_) | Row::AmoBw(_) => None,
        }
    }
}

/// What the atomic tools' sessions produce per run: the bandwidth figures
/// and the verdict on every target buffer the run hit.
#[derive(Clone, Debug)]
pub struct AmoBw {
    pub result: SizeResult,
    pub verification: Vec<Verification>,
}

/// The same for atomic latency.
#[derive(Clone, Debug)]
pub struct AmoLat {
    pub result: LatResult,
    pub verification: Vec<Verification>,
}
