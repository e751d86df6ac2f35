//! The sweep's `--output` folder as a format: the name of every file a
//! sweep or a pattern run leaves there, and the typed `meta.json` and run
//! options that `--resume`, `--report` and `--baseline` read back months
//! later. Every field a folder written so far may lack has a default, so
//! every such folder still reads; a key this release does not know is
//! kept as it was. Pure: reading and writing the files is
//! fabdiag-sweep's `folder`; nothing here touches a disk.

use crate::pattern::Pattern;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Written before the first round: the sweep's size, rails, pair test and
/// options (`Meta`), so a report can be made from the folder alone.
pub const META: &str = "meta.json";
/// Every pair and re-test record as it arrived, one JSON line each.
pub const PAIRS: &str = "pairs.jsonl";
/// The ranks that joined: host, device, status.
pub const NODES: &str = "nodes.json";
/// The finished sweep's document (schema fabdiag-sweep/1).
pub const DOCUMENT: &str = "sweep.json";
/// The report as text (a sweep's or a pattern run's).
pub const SUMMARY: &str = "summary.txt";
/// The report as one HTML page (a sweep's or a pattern run's).
pub const PAGE: &str = "report.html";
/// The sweep's heatmap of every pair.
pub const HEATMAP: &str = "heatmap.png";
/// The change against `--baseline`, pair by pair.
pub const CHANGE: &str = "change.png";
/// A traffic pattern's document (in place of a sweep's).
pub const PATTERN: &str = "pattern.json";

/// Every file a run leaves in its folder: what `--replace` clears and what
/// makes a folder already hold results.
pub const RESULTS: &[&str] = &[META, PAIRS, NODES, DOCUMENT, SUMMARY, PAGE, HEATMAP, CHANGE, PATTERN];

/// `meta.json`: what the sweep is, written before its first round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// How many ranks (0: the file does not say, which no sweep writes).
    #[serde(default)]
    pub size: u64,
    /// Pairs only of ranks with the same rank mod `rails` (a folder from
    /// before `--rails` paired every rank: 1).
    #[serde(default = "one")]
    pub rails: u64,
    /// The pair test, as the Config message carries it (a `TestSpec`'s
    /// wire form; compared as written, so a folder's test is never
    /// re-spelled; null when the file does not say).
    #[serde(default)]
    pub test: Value,
    /// The sweep's options (a folder from before they were kept has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<RunOptions>,
    /// The fabdiag that wrote the folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabdiag_version: Option<String>,
}

fn one() -> u64 {
    1
}

/// The options a sweep ran with, as `meta.json` and the document's
/// `options` keep them, in the order they are written. Each is optional:
/// a document or folder from an earlier release may lack any of them, and
/// one read back is written again as it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOptions {
    /// The pair tool's subcommand (`write-bw`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The pair tool's own options, as given after `--`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_options: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retest: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rails: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_timeout_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_timeout_s: Option<u64>,
    /// The pair test (a `TestSpec`'s wire form, as `Meta::test`).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub test: Option<Value>,
    /// `-P` as given (null: none given). The figure depends on it and the
    /// test does not hold it, so a baseline of another provider is refused.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub provider: Option<Value>,
    /// `GPU` or `system`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_memory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_memory: Option<String>,
    /// What a latency pair was judged by (`mean`, `p50`, ...); absent for
    /// bandwidth, and in folders from before `--figure` (the mean).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<String>,
    /// A pattern's victim's pair test (`--victim`).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub victim_test: Option<Value>,
    /// How the ranks were started (`mpirun`, `srun`, ...).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub launcher: Option<Value>,
    /// A traffic pattern's shape (`--pattern`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Pattern>,
    /// A pattern's victim pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub victim: Option<VictimPair>,
    /// With `--report`: the document or folder the report was made from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_from: Option<String>,
    /// With `--report`: the fabdiag that made the report again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_fabdiag_version: Option<String>,
    /// Keys this release does not know (a later release's), kept as read.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A key that is there, null included: `Some` (serde reads a null as
/// `None`, which would drop `"provider": null` when written again).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A pattern's victim pair: client and server rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VictimPair {
    pub client: usize,
    pub server: usize,
}

/// The options a pair test's figure depends on besides its test: a
/// baseline that differs in one of them is another test.
pub const COMPARED: &[&str] = &["tool", "provider", "tx_memory", "rx_memory"];

impl RunOptions {
    /// The value of one of the `COMPARED` options, as written (None when
    /// the document does not say: one from before it was kept).
    pub fn compared(&self, key: &str) -> Option<Value> {
        let text = |s: &Option<String>| s.clone().map(Value::String);
        match key {
            "tool" => text(&self.tool),
            "provider" => self.provider.clone(),
            "tx_memory" => text(&self.tx_memory),
            "rx_memory" => text(&self.rx_memory),
            other => self.other.get(other).cloned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options of a default write-bw sweep, as the current release
    /// writes them, read and written again to the byte.
    #[test]
    fn options_read_back_are_written_again_as_they_were() {
        let text = r#"{"tool":"write-bw","tool_options":[],"retest":8,"rails":1,"join_timeout_s":60,"pair_timeout_s":231,"test":{"tool":"cxi_write_bw","iterations":1000},"provider":null,"tx_memory":"system","rx_memory":"system","launcher":"mpirun","report_from":"x/sweep.json","report_fabdiag_version":"0.1.0","later":{"a":1}}"#;
        let o: RunOptions = serde_json::from_str(text).expect("decodes");
        assert_eq!(o.tool.as_deref(), Some("write-bw"));
        assert_eq!(o.provider, Some(Value::Null));
        assert_eq!(o.other.get("later"), Some(&serde_json::json!({"a": 1})));
        assert_eq!(serde_json::to_string(&o).expect("encodes"), text);
    }

    /// A folder from before the options and rails were kept reads.
    #[test]
    fn an_early_meta_reads_with_its_defaults() {
        let m: Meta = serde_json::from_str(r#"{"size":4,"test":{"tool":"cxi_write_bw"}}"#).expect("decodes");
        assert_eq!((m.size, m.rails, m.options, m.fabdiag_version), (4, 1, None, None));
    }

    #[test]
    fn the_compared_options_are_read_by_name() {
        let o = RunOptions {
            tool: Some("send-lat".into()),
            provider: Some(Value::String("tcp".into())),
            ..Default::default()
        };
        assert_eq!(o.compared("tool"), Some(Value::String("send-lat".into())));
        assert_eq!(o.compared("provider"), Some(Value::String("tcp".into())));
        assert_eq!(o.compared("tx_memory"), None);
    }
}
