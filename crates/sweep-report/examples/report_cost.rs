//! What rank 0's report costs at scale, without running a sweep: a
//! finished sweep of N ranks is made up in memory (every pair measured,
//! figures spread, one slow node, a few failed pairs), then each part of
//! the report is built and timed: the document with its analysis, the
//! JSON (written to nowhere), the text summary, the heatmap, the histogram
//! and the HTML page; then the document is written to a file, read back
//! as a `--baseline`, compared with itself and drawn against itself.
//! Prints the times and the process's peak memory. Not a test: the times
//! depend on the machine and its load.
//!
//! cargo run --release -p fabdiag-sweep-report --example report_cost -- 4000

use fabdiag_sweep_judge::analysis::{Better, Rules};
use fabdiag_sweep_judge::baseline::{self, Baseline};
use fabdiag_sweep_judge::{Inputs, Limits, Metric};
use fabdiag_sweep_plan::{Coordinated, Node, NodeStatus, Pair, PairRecord};
use fabdiag_sweep_report::{html, picture};
use std::time::{Instant, SystemTime};

fn sweep(n: usize) -> Coordinated {
    let nodes = (0..n)
        .map(|rank| Node {
            host: Some(format!("node{rank:05}")),
            addr: Some(format!("198.18.{}.{}:4000", rank / 250, rank % 250)),
            status: NodeStatus::Ok,
            endpoint_opens: 1,
            endpoint_open_s: 0.2,
            ..Node::awaited(rank)
        })
        .collect();
    let mut pairs = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for a in 0..n {
        for b in a + 1..n {
            // a repeatable spread of a few per cent; rank 3 at a tenth
            let spread = ((a * 7919 + b * 104_729) % 1000) as f64 / 1000.0;
            let slow = if a == 3 || b == 3 { 0.1 } else { 1.0 };
            let failed = (a * 31 + b) % 100_003 == 0;
            pairs.push(PairRecord {
                value: (!failed).then_some((10_000.0 + 500.0 * spread) * slow),
                error: failed.then(|| "provider error".into()),
                elapsed_s: 1.2,
                measure_s: 1.0,
                ..PairRecord::planned(&Pair { client: a, server: b }, Some(0))
            });
        }
    }
    Coordinated {
        join_s: 1.0,
        started: SystemTime::now(),
        ended: SystemTime::now(),
        ..Coordinated::of(nodes, pairs)
    }
}

/// The process's peak resident memory, from /proc (Linux).
fn peak() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.to_string()))
        .map_or_else(
            || "unknown".into(),
            |l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "),
        )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => a.parse().map_err(|_| format!("not a number of ranks: {a}"))?,
        None => 4000,
    };
    let t = Instant::now();
    let s = sweep(n);
    let pairs = s.pairs.len();
    println!(
        "{n} ranks, {pairs} pairs: made up in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let time = |what: &str, t: Instant| println!("  {what:<22} {:>7.2} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let doc = fabdiag_sweep_judge::build(Inputs {
        sweep: s,
        metric: Metric {
            name: "bandwidth".into(),
            unit: "MB/s".into(),
            better: Better::Higher,
            test: "write-bw 65536 B".into(),
        },
        rules: Rules::default(),
        limits: Limits::default(),
        options: Default::default(),
        fabdiag_version: env!("CARGO_PKG_VERSION"),
        libfabric_version: None,
        baseline: None,
        fabric: None,
    });
    time("document and analysis", t);
    let t = Instant::now();
    serde_json::to_writer(std::io::sink(), &doc)?;
    time("JSON", t);
    let t = Instant::now();
    let text = fabdiag_sweep_report::text(&doc);
    time("text summary", t);
    let t = Instant::now();
    let heat = picture::heatmap_png(&doc)?;
    time("heatmap", t);
    let t = Instant::now();
    let hist = picture::histogram_png(&doc)?;
    time("histogram", t);
    let t = Instant::now();
    let page = html::page(
        &doc,
        &picture::Pictures {
            heatmap: heat,
            histogram: hist,
            change: None,
        },
    );
    time("HTML page", t);
    println!(
        "  slow nodes named: {:?}; text {} B, page {} B; peak memory {}",
        doc.analysis.slow_nodes.iter().map(|f| f.node).collect::<Vec<_>>(),
        text.len(),
        page.len(),
        peak()
    );
    // the same sweep as its own baseline (--baseline): written as
    // --output writes it, read back streamed, and compared
    let file = std::env::temp_dir().join(format!("fabdiag-report-cost-{}.json", std::process::id()));
    let t = Instant::now();
    serde_json::to_writer(std::io::BufWriter::new(std::fs::File::create(&file)?), &doc)?;
    time("JSON to a file", t);
    let t = Instant::now();
    let base = std::fs::File::open(&file)
        .map_err(Box::<dyn std::error::Error>::from)
        .and_then(|f| {
            Ok(Baseline::from_reader(
                &file.display().to_string(),
                std::io::BufReader::new(f),
            )?)
        });
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&file);
    let base = base?;
    time("baseline read", t);
    let t = Instant::now();
    let nodes: Vec<Node> = doc.nodes.iter().map(|x| x.node.clone()).collect();
    let c = baseline::compare(&base, &nodes, &doc.pairs, &doc.matrix, Better::Higher, 0.8, 0.5);
    time("baseline compared", t);
    let t = Instant::now();
    let change = picture::change_png(&doc, &picture::change_cells(&doc, &base))?;
    time("change picture", t);
    println!(
        "  baseline: {} MB of JSON, {} pairs compared, {} regressed, change picture {} B; peak memory {}",
        size / 1_000_000,
        c.compared_pairs,
        c.regressed_pairs,
        change.len(),
        peak()
    );
    Ok(())
}
