//! fabdiag's JSON documents. Field names carry their units; the schema is
//! versioned; a failed run still yields a valid document with `error` set.

use crate::threshold::{LatThresholdJson, ThresholdJson, VerdictJson};
use fabdiag_engine::amo::Verification;
use fabdiag_engine::lat::Bucket;
use fabdiag_engine::{LatResult, SizeResult};
use fabdiag_model::units::gbit_s;
use fabdiag_model::{AmoBw, AmoLat, AmoRun, BwRun, LatRun, PairCounters, Row, RunDesc};
use serde::Serialize;

/// Bumped on any incompatible change of the documents below.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Debug, Serialize)]
pub struct BwResultJson {
    pub size_bytes: u64,
    pub iterations: u64,
    /// Operations this side initiated; null when it initiated none.
    pub ops: Option<u64>,
    pub elapsed_ns: u64,
    pub peer_ops: u64,
    pub peer_elapsed_ns: u64,
    /// Both directions summed when bidirectional; MB = 10^6 bytes.
    pub bw_mb_per_s: f64,
    pub bw_gbit_per_s: f64,
    pub pkt_rate_mpkt_per_s: f64,
}

impl From<&SizeResult> for BwResultJson {
    fn from(r: &SizeResult) -> Self {
        BwResultJson {
            size_bytes: r.size,
            iterations: r.iterations,
            ops: r.initiated.then_some(r.own.ops),
            elapsed_ns: r.own.elapsed_ns,
            peer_ops: r.peer.ops,
            peer_elapsed_ns: r.peer.elapsed_ns,
            bw_mb_per_s: round(r.bw_mb_s, 4),
            bw_gbit_per_s: round(gbit_s(r.bw_mb_s), 6),
            pkt_rate_mpkt_per_s: round(r.pkt_rate_mpkt_s, 6),
        }
    }
}

fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round() / m
}

#[derive(Clone, Debug, Serialize)]
pub struct ErrorJson {
    /// "usage", "unavailable", "runtime" or "threshold".
    pub kind: String,
    pub message: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct LatResultJson {
    pub size_bytes: u64,
    /// Measured iterations (warmups excluded).
    pub iterations: u64,
    pub warmup_iterations: u64,
    /// Operations the server counted, warmups included (send_lat: echoes).
    pub peer_ops: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: u64,
    /// Population standard deviation, as the originals.
    pub stddev_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub percentiles_exact: bool,
    pub histogram: Vec<Bucket>,
    /// Every measurement, with --report-all.
    pub samples_ns: Option<Vec<u64>>,
}

impl From<&LatResult> for LatResultJson {
    fn from(r: &LatResult) -> Self {
        let s = &r.stats;
        LatResultJson {
            size_bytes: r.size,
            iterations: r.iterations,
            warmup_iterations: r.warmup,
            peer_ops: r.peer_ops,
            min_ns: s.min_ns,
            max_ns: s.max_ns,
            mean_ns: s.mean_ns,
            stddev_ns: s.stddev_ns,
            p50_ns: s.p50_ns,
            p90_ns: s.p90_ns,
            p99_ns: s.p99_ns,
            p999_ns: s.p999_ns,
            percentiles_exact: s.percentiles_exact,
            histogram: s.histogram.clone(),
            samples_ns: r.samples.clone(),
        }
    }
}

/// One run's document; `C` is the configuration, `R` a result row, `T`
/// the threshold verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Document<C, R, T> {
    pub schema_version: u32,
    pub fabdiag_version: String,
    /// The original tool's name, e.g. "cxi_write_bw".
    pub tool: String,
    pub role: Option<String>,
    pub config: Option<C>,
    pub results: Vec<R>,
    pub threshold: Option<T>,
    pub error: Option<ErrorJson>,
    /// Both sides' NIC counters across the measurement (schema 2); null
    /// when the run ended before its first reading.
    pub counters: Option<PairCounters>,
}

/// An atomic result: the bandwidth or latency figures and the verdict on
/// every target buffer the run hit.
#[derive(Clone, Debug, Serialize)]
pub struct AmoResultJson<T> {
    #[serde(flatten)]
    pub figures: T,
    pub verification: Vec<Verification>,
}

impl From<&AmoBw> for AmoResultJson<BwResultJson> {
    fn from(a: &AmoBw) -> Self {
        AmoResultJson {
            figures: BwResultJson::from(&a.result),
            verification: a.verification.clone(),
        }
    }
}

impl From<&AmoLat> for AmoResultJson<LatResultJson> {
    fn from(a: &AmoLat) -> Self {
        AmoResultJson {
            figures: LatResultJson::from(&a.result),
            verification: a.verification.clone(),
        }
    }
}

pub type BwDocument = Document<BwRun, BwResultJson, ThresholdJson>;
pub type AmoBwDocument = Document<AmoRun, AmoResultJson<BwResultJson>, ThresholdJson>;
pub type AmoLatDocument = Document<AmoRun, AmoResultJson<LatResultJson>, LatThresholdJson>;
pub type LatDocument = Document<LatRun, LatResultJson, LatThresholdJson>;

/// Any tool's result row in JSON: the family's own object.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum RowJson {
    Bw(BwResultJson),
    Lat(LatResultJson),
    AmoBw(AmoResultJson<BwResultJson>),
    AmoLat(AmoResultJson<LatResultJson>),
}

impl From<&Row> for RowJson {
    fn from(r: &Row) -> Self {
        match r {
            Row::Bw(b) => RowJson::Bw(b.into()),
            Row::Lat(l) => RowJson::Lat(l.into()),
            Row::AmoBw(a) => RowJson::AmoBw(a.into()),
            Row::AmoLat(a) => RowJson::AmoLat(a.into()),
        }
    }
}

/// Any pair tool's document.
pub type RunDocument = Document<RunDesc, RowJson, VerdictJson>;

pub fn render<C: Serialize, R: Serialize, T: Serialize>(doc: &Document<C, R, T>) -> String {
    // Serialising plain structs of numbers and strings cannot fail; keep a
    // valid document even if it somehow did.
    serde_json::to_string_pretty(doc).unwrap_or_else(|e| {
        format!("{{\"schema_version\":{SCHEMA_VERSION},\"error\":{{\"kind\":\"runtime\",\"message\":\"cannot encode JSON: {e}\"}}}}")
    })
}
