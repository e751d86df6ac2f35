//! An `--output` folder whose rank 0 ended before its report, as
//! `--report` and `--resume` read it back: any bytes split at the first
//! two NULs into meta.json, nodes.json and pairs.jsonl (fabdiag-sweep's
//! records_in, fabdiag-sweep-judge's recorded). Reading never panics;
//! what it accepts is made into a report without panicking.
#![no_main]
use fabdiag_sweep::folder::records_in;
use fabdiag_sweep_plan::folder::Meta;
use fabdiag_sweep_plan::PairRecord;
use fabdiag_sweep_judge::reread::{self, RecordedFiles};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::time::SystemTime;

mod report;

struct Folder<'a> {
    meta: &'a [u8],
    nodes: &'a [u8],
    pairs: &'a [u8],
}

impl RecordedFiles for Folder<'_> {
    fn meta(&self) -> Result<Meta, String> {
        serde_json::from_slice(self.meta).map_err(|e| e.to_string())
    }
    fn nodes(&self) -> Result<Option<Vec<u8>>, String> {
        Ok((!self.nodes.is_empty()).then(|| self.nodes.to_vec()))
    }
    fn records(&self, size: usize) -> Result<Vec<PairRecord>, String> {
        records_in(self.pairs, size)
    }
    fn modified(&self, _name: &str) -> SystemTime {
        SystemTime::UNIX_EPOCH
    }
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let folder = Folder {
        meta: parts.next().unwrap_or_default(),
        nodes: parts.next().unwrap_or_default(),
        pairs: parts.next().unwrap_or_default(),
    };
    let Ok(f) = reread::recorded(Path::new("out"), &folder) else {
        return;
    };
    report::report(f, None);
});
