//! A sweep's document as `--report` and `--baseline` read it back
//! (fabdiag-sweep-judge's reread), fed any bytes as a damaged or hostile
//! sweep.json: reading it never panics, and a document it accepts is made
//! into a report (the document, its text, its picture's cells, and itself
//! as its own baseline) without panicking.
#![no_main]
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_judge::reread;
use fabdiag_sweep_report::picture;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

mod report;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = reread::document(Path::new("sweep.json"), || Ok::<_, String>(data)) else {
        return;
    };
    // the same document as its own baseline: the comparison's paths too
    let base = Baseline::from_reader("sweep.json", data).ok();
    let doc = report::report(f, base.as_ref());
    let _ = picture::cells(&doc, 1 << 12);
    if let Some(b) = &base {
        let _ = picture::change_cells(&doc, b);
    }
});
