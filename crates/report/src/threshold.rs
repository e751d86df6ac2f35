//! Verdicts on finished results against a threshold (`--min-bw`,
//! `--max-lat`; the `Threshold` itself is fabdiag-model's): a pure verdict
//! with its JSON form and, when missed, the one line that says which sizes
//! missed it.

use fabdiag_model::units::gbit_s;
use fabdiag_model::{Row, Threshold};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct ThresholdJson {
    pub min_bw_mb_per_s: f64,
    pub passed: bool,
    /// Sizes whose bandwidth fell short.
    pub failed_sizes_bytes: Vec<u64>,
}

/// gpu_loopback_bw's `--min-bw`, in the Gb/s its table prints.
#[derive(Clone, Debug, Serialize)]
pub struct GbitThresholdJson {
    pub min_bw_gbit_per_s: f64,
    pub passed: bool,
    pub failed_sizes_bytes: Vec<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LatThresholdJson {
    pub max_lat_us: f64,
    /// The statistic compared: the mean latency of each size.
    pub statistic: String,
    pub passed: bool,
    pub failed_sizes_bytes: Vec<u64>,
}

/// The verdict as the JSON document carries it.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum VerdictJson {
    MinBw(ThresholdJson),
    MinGbit(GbitThresholdJson),
    MaxLat(LatThresholdJson),
}

#[derive(Clone, Debug)]
pub struct Verdict {
    pub json: VerdictJson,
    /// Set when the threshold was missed.
    pub failure: Option<String>,
}

/// The sizes whose bandwidth, in `unit` (`in_unit` of MB/s), falls below
/// `min`, and the line that names them (None when every size met it).
fn below(rows: &[Row], min: f64, in_unit: fn(f64) -> f64, unit: &str) -> (Vec<u64>, Option<String>) {
    let failed: Vec<(u64, f64)> = rows
        .iter()
        .filter_map(|r| r.bw_mb_s().map(|bw| (r.size(), in_unit(bw))))
        .filter(|(_, bw)| *bw < min)
        .collect();
    let list: Vec<String> = failed
        .iter()
        .map(|(size, bw)| format!("{size} B at {bw:.2} {unit}"))
        .collect();
    let line = (!failed.is_empty()).then(|| format!("bandwidth below --min-bw {min} {unit}: {}", list.join(", ")));
    (failed.into_iter().map(|(size, _)| size).collect(), line)
}

pub fn judge(t: Threshold, rows: &[Row]) -> Verdict {
    match t {
        Threshold::MinBw(min) => {
            let (failed, failure) = below(rows, min, |mb_s| mb_s, "MB/s");
            Verdict {
                failure,
                json: VerdictJson::MinBw(ThresholdJson {
                    min_bw_mb_per_s: min,
                    passed: failed.is_empty(),
                    failed_sizes_bytes: failed,
                }),
            }
        }
        Threshold::MinGbit(min) => {
            let (failed, failure) = below(rows, min, gbit_s, "Gb/s");
            Verdict {
                failure,
                json: VerdictJson::MinGbit(GbitThresholdJson {
                    min_bw_gbit_per_s: min,
                    passed: failed.is_empty(),
                    failed_sizes_bytes: failed,
                }),
            }
        }
        Threshold::MaxLat(max) => {
            let failed: Vec<(u64, u64)> = rows
                .iter()
                .filter_map(|r| r.mean_ns().map(|ns| (r.size(), ns)))
                .filter(|(_, ns)| *ns as f64 > max * 1000.0)
                .collect();
            let list: Vec<String> = failed
                .iter()
                .map(|(size, ns)| format!("{size} B at {:.2} us", *ns as f64 / 1000.0))
                .collect();
            Verdict {
                failure: (!failed.is_empty())
                    .then(|| format!("mean latency above --max-lat {max} us: {}", list.join(", "))),
                json: VerdictJson::MaxLat(LatThresholdJson {
                    max_lat_us: max,
                    statistic: "mean".into(),
                    passed: failed.is_empty(),
                    failed_sizes_bytes: failed.iter().map(|(size, _)| *size).collect(),
                }),
            }
        }
    }
}
