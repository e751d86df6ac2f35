//! Made-up sweeps for tests and examples: a finished sweep of N ranks
//! with chosen slow pairs, failed pairs and missing ranks, its document,
//! and the figures of a real CI run. Built with `cfg(test)` and, for
//! other crates' tests, with the `fixtures` feature; never in fabdiag
//! itself. Inputs are the caller's constants, so a bad one panics.

use crate::analysis::{Better, Matrix, Reference, Rules};
use crate::baseline::Baseline;
use crate::build::{build, Inputs};
use crate::doc::{Limits, Metric, SweepDoc};
use fabdiag_model::counters::{Change, Class, Family, Noted};
use fabdiag_sweep_plan::{Coordinated, Node, NodeStatus, Pair, PairNoted, PairRecord};

/// A matrix from "a-b:value" figures, as a sweep's summary lists them.
pub fn figures(n: usize, text: &str) -> Matrix {
    let mut m = Matrix::new(n);
    for pair in text.split_whitespace() {
        let (ab, v) = pair.split_once(':').expect("a-b:value");
        let (a, b) = ab.split_once('-').expect("a-b");
        m.set(
            a.parse().expect("rank"),
            b.parse().expect("rank"),
            v.parse().expect("value"),
        );
    }
    m
}

/// A CI run of the namespace sweep test on a loaded machine (MB/s):
/// healthy pairs spread 25 to 105, node 6 was slowed (all its pairs
/// 4.5-4.7, 0.09 of the median) and link 2-5.
pub const CI_RUN: &str = "0-7:27.6 1-6:4.5 2-5:2.3 3-4:59.8 1-7:25.4 0-2:28.3 3-6:4.5 4-5:39.0 2-7:81.5 \
    1-3:103.0 0-4:51.3 5-6:4.7 3-7:104.3 2-4:67.2 1-5:59.5 0-6:4.7 4-7:49.9 3-5:25.0 2-6:4.7 0-1:31.7 \
    5-7:77.5 4-6:4.6 0-3:80.6 1-2:104.8 6-7:4.7 0-5:47.7 1-4:39.4 2-3:95.3";

/// The CI run's figures, as (pair, value).
pub fn ci_run() -> Vec<((usize, usize), f64)> {
    figures(8, CI_RUN).measured().map(|(a, b, v)| ((a, b), v)).collect()
}

/// A finished bandwidth sweep of `n` ranks: every pair at 100 MB/s
/// except `values`; `failed` pairs ran and failed; `missing` ranks never
/// joined (their pairs untested).
pub fn doc_with(n: usize, values: &[((usize, usize), f64)], failed: &[(usize, usize)], missing: &[usize]) -> SweepDoc {
    doc_of(&sweep_with(n, values, failed, missing))
}

pub fn sweep_with(
    n: usize,
    values: &[((usize, usize), f64)],
    failed: &[(usize, usize)],
    missing: &[usize],
) -> Coordinated {
    let nodes = (0..n)
        .map(|rank| Node {
            host: Some(format!("host<{rank}>")),
            addr: Some(format!("198.18.0.{}:4000", rank % 250)),
            status: if missing.contains(&rank) {
                NodeStatus::Missing
            } else {
                NodeStatus::Ok
            },
            reason: missing.contains(&rank).then(|| "never joined".to_string()),
            endpoint_opens: 1,
            endpoint_open_s: 0.01,
            ..Node::awaited(rank)
        })
        .collect();
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let untested = missing.contains(&a) || missing.contains(&b);
            let fail = failed.contains(&(a, b));
            let value = values.iter().find(|(p, _)| *p == (a, b)).map_or(100.0, |(_, v)| *v);
            pairs.push(PairRecord {
                value: (!untested && !fail).then_some(value),
                error: if untested {
                    Some("rank missing".into())
                } else if fail {
                    Some("provider error".into())
                } else {
                    None
                },
                untested,
                elapsed_s: 0.1,
                measure_s: 0.1,
                ..PairRecord::planned(&Pair { client: a, server: b }, Some(0))
            });
        }
    }
    Coordinated::of(nodes, pairs)
}

/// A fault counter's change on one side of a pair test, as a rank reports
/// it ("tcp" is the TCP family, any other device a netdev).
pub fn noted(device: &str, name: &str, class: Class, change: Change) -> Noted {
    Noted {
        family: if device == "tcp" { Family::Tcp } else { Family::Netdev },
        device: device.into(),
        name: name.into(),
        class,
        fault: true,
        change,
    }
}

/// The lines of the text summary's section `title` ("failed pairs:"),
/// indented as printed.
pub fn section_of<'a>(t: &'a str, title: &str) -> Vec<&'a str> {
    t.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect()
}

pub fn doc_of(sweep: &Coordinated) -> SweepDoc {
    build_with(sweep.clone(), None)
}

/// `sweep`'s document, as a bandwidth sweep of 64 KiB writes, against
/// `baseline` when given.
pub fn build_with(sweep: Coordinated, baseline: Option<(&Baseline, f64)>) -> SweepDoc {
    build(inputs(sweep, baseline))
}

/// What `build_with` builds from.
pub fn inputs(sweep: Coordinated, baseline: Option<(&Baseline, f64)>) -> Inputs<'_> {
    Inputs {
        sweep,
        metric: Metric {
            name: "bandwidth".into(),
            unit: "MB/s".into(),
            better: Better::Higher,
            test: "write-bw 65536 B".into(),
        },
        rules: Rules {
            fraction: 0.75,
            reference: Reference::Median,
            z: 3.5,
            node_fraction: 0.5,
        },
        limits: Limits::default(),
        options: Default::default(),
        fabdiag_version: "test",
        libfabric_version: None,
        baseline,
        fabric: None,
    }
}

/// The CI run's sweep with re-tests alone of (a, b) at these figures.
pub fn ci_with_retests(alone: &[((usize, usize), Option<f64>)]) -> SweepDoc {
    let mut sweep = sweep_with(8, &ci_run(), &[], &[]);
    for &((a, b), v) in alone {
        let mut rec = sweep
            .pairs
            .iter()
            .find(|p| (p.a, p.b) == (a, b))
            .expect("a swept pair")
            .clone();
        rec.round = None;
        rec.value = v;
        rec.error = v.is_none().then(|| "peer lost".into());
        sweep.retests.push(rec);
    }
    doc_of(&sweep)
}

/// Six ranks at 100 MB/s but rank 2's pairs at 40: rank 2's port
/// flapped in two tests; rank 4 resent in all of its tests (a lossy
/// link with nothing on its port); rank 1 resent only in its test with
/// rank 4; rank 5 resent once, with rank 0; rank 3's port dropped
/// packets in one test at full speed, and one of its tests failed.
pub fn counters_sweep() -> Coordinated {
    let slow: Vec<((usize, usize), f64)> = [0, 1, 3, 4, 5].iter().map(|&o| ((o.min(2), o.max(2)), 40.0)).collect();
    let mut sweep = sweep_with(6, &slow, &[(3, 5)], &[]);
    for p in sweep.pairs.iter_mut() {
        let mut n = PairNoted::default();
        let mut side = |rank: usize, x: Noted| {
            if rank == p.client {
                n.client.push(x)
            } else {
                n.server.push(x)
            }
        };
        let key = (p.a, p.b);
        if key == (0, 2) || key == (2, 3) {
            side(2, rose("eth0", "carrier_changes", Class::Flap, 2));
        }
        if p.a == 4 || p.b == 4 {
            side(4, rose("tcp", "RetransSegs", Class::Retransmit, 100));
        }
        if key == (1, 4) {
            side(1, rose("tcp", "RetransSegs", Class::Retransmit, 30));
        }
        if key == (0, 5) {
            side(5, rose("tcp", "RetransSegs", Class::Retransmit, 1));
        }
        if key == (1, 3) {
            side(3, rose("eth0", "rx_dropped", Class::Drop, 7));
        }
        if !n.client.is_empty() || !n.server.is_empty() {
            p.counters = Some(Box::new(n));
        }
    }
    sweep
}

fn rose(device: &str, name: &str, class: Class, by: u64) -> Noted {
    noted(device, name, class, Change::Rose { by })
}

/// `doc` as `--output` writes it, read back as a baseline.
pub fn baseline_of(doc: &SweepDoc) -> Baseline {
    let json = serde_json::to_vec(doc).expect("a document serializes");
    Baseline::from_reader("base/sweep.json", json.as_slice()).expect("a sweep document reads")
}

/// A sweep of `n` ranks at 100 except `values`, its rank r on host
/// `host(r)`.
pub fn sweep_on(n: usize, values: &[((usize, usize), f64)], host: impl Fn(usize) -> String) -> SweepDoc {
    let mut s = sweep_with(n, values, &[], &[]);
    for x in &mut s.nodes {
        x.host = Some(host(x.rank));
    }
    build_with(s, None)
}

/// Four ranks whose counters were read, rank r on host
/// node((r + shift) mod 4), `flapping`'s carrier changing by 2 in each
/// of its pair tests.
pub fn flapping_on(shift: usize, flapping: usize) -> SweepDoc {
    let mut s = sweep_with(4, &[], &[], &[]);
    for x in &mut s.nodes {
        x.host = Some(format!("node{}", (x.rank + shift) % 4));
        x.counters = Some("eth0 + tcp".into());
    }
    for p in s
        .pairs
        .iter_mut()
        .filter(|p| p.client == flapping || p.server == flapping)
    {
        let flap = noted("eth0", "carrier_changes", Class::Flap, Change::Rose { by: 2 });
        let mut noted = PairNoted::default();
        match p.client == flapping {
            true => noted.client.push(flap),
            false => noted.server.push(flap),
        }
        p.counters = Some(Box::new(noted));
    }
    build_with(s, None)
}

/// The finished sweep behind `doc`, to build again against a baseline.
pub fn now_sweep(doc: &SweepDoc) -> fabdiag_sweep_plan::Coordinated {
    fabdiag_sweep_plan::Coordinated::of(doc.nodes.iter().map(|x| x.node.clone()).collect(), doc.pairs.clone())
}
