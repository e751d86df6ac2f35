//! A pattern's victim in its report: one pair measured alone, then
//! beside every step of the pattern on the other ranks (GPCNET's
//! congestion impact): a latency victim's p50, p99 and p99.9 alone and
//! loaded and their ratios, a bandwidth victim's figure and its ratio;
//! the step that hurt it most. Pure.

use super::doc::{host, PatternDoc, VictimFigures, VictimSummary};
use fabdiag_sweep_judge::doc::Metric;
use fabdiag_sweep_plan::{PatternStep, Shape, VictimRecord};
use std::fmt::Write as _;

fn figures(step: &PatternStep, v: &VictimRecord) -> VictimFigures {
    let quiet = step.shape == Shape::Quiet;
    VictimFigures {
        index: (!quiet).then_some(step.index),
        step: step.shape.label(step.index),
        value: v.record.value,
        lat: v.lat.filter(|_| v.record.value.is_some()),
        ratio: None,
        ratios: None,
        error: v.record.error.as_deref().map(str::to_string),
    }
}

/// The victim's figures of `steps`, into `doc` (`metric`: what it ran).
pub(super) fn fill(doc: &mut PatternDoc, steps: &[PatternStep], metric: Metric) {
    let Some(pair) = steps.iter().find_map(|s| s.victim.as_ref()).map(|v| &v.record) else {
        return;
    };
    let (client, server) = (pair.client, pair.server);
    let mut alone = None;
    let mut loaded = Vec::new();
    for st in steps {
        let Some(v) = &st.victim else { continue };
        match st.shape {
            Shape::Quiet => alone = Some(figures(st, v)),
            _ => loaded.push(figures(st, v)),
        }
    }
    let base = alone.as_ref();
    for l in &mut loaded {
        let over = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        l.ratio = match (l.value, base.and_then(|b| b.value)) {
            (Some(a), Some(b)) => over(a, b),
            _ => None,
        };
        l.ratios = match (l.lat, base.and_then(|b| b.lat)) {
            (Some(a), Some(b)) => match (
                over(a.p50_us, b.p50_us),
                over(a.p99_us, b.p99_us),
                over(a.p999_us, b.p999_us),
            ) {
                (Some(x), Some(y), Some(z)) => Some([x, y, z]),
                _ => None,
            },
            _ => None,
        };
    }
    let hurt = |l: &VictimFigures| match (l.ratios, l.ratio) {
        (Some([_, p99, _]), _) => Some(p99),
        (None, Some(r)) => Some(1.0 / r.max(f64::MIN_POSITIVE)),
        _ => None,
    };
    let worst = loaded
        .iter()
        .filter_map(|l| Some((l.index?, hurt(l)?)))
        // (the first of equals)
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
        .map(|(i, _)| i);
    doc.victim = Some(VictimSummary {
        client,
        server,
        metric,
        alone,
        loaded,
        worst,
    });
}

/// One line's figures: p50, p99 and p99.9 (with their ratios), or the
/// figure (with its ratio), or why there is none.
fn said(f: &VictimFigures, unit: &str) -> String {
    match (f.lat, f.value, &f.error) {
        (Some(l), _, _) => {
            let r = |k: usize| f.ratios.map(|x| format!(" ({:.1} x)", x[k])).unwrap_or_default();
            format!(
                "p50 {:.1} us{}, p99 {:.1} us{}, p99.9 {:.1} us{}",
                l.p50_us,
                r(0),
                l.p99_us,
                r(1),
                l.p999_us,
                r(2)
            )
        }
        (None, Some(v), _) => {
            let r = f.ratio.map(|x| format!(" ({x:.2} x)")).unwrap_or_default();
            format!("{v:.1} {unit}{r}")
        }
        (None, None, Some(e)) => format!("failed: {e}"),
        (None, None, None) => "no figure".into(),
    }
}

pub(super) fn text(o: &mut String, doc: &PatternDoc) {
    let Some(v) = &doc.victim else { return };
    let u = &v.metric.unit;
    let alone = v.alone.as_ref().map_or("not run".into(), |a| said(a, u));
    let _ = writeln!(
        o,
        "victim {} -> {}, {}: alone {alone}",
        host(doc, v.client),
        host(doc, v.server),
        v.metric.test
    );
    for l in &v.loaded {
        let worst = if v.worst == l.index && v.loaded.len() > 1 {
            " (worst)"
        } else {
            ""
        };
        let _ = writeln!(o, "  beside {}: {}{worst}", l.step, said(l, u));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{doc_of, flow};
    use super::*;
    use fabdiag_sweep_plan::{LatFigures, Pattern, PatternStep};

    fn lat(p50: f64) -> LatFigures {
        LatFigures {
            mean_us: p50,
            p50_us: p50,
            p99_us: 2.0 * p50,
            p999_us: 4.0 * p50,
            max_us: 8.0 * p50,
        }
    }

    fn step(index: usize, shape: Shape, p50: Option<f64>) -> PatternStep {
        let flows = match shape {
            Shape::Quiet => vec![],
            _ => vec![flow(1, 2, Some(10.0)), flow(2, 1, Some(10.0))],
        };
        PatternStep {
            index,
            shape,
            flows,
            victim: Some(VictimRecord {
                record: flow(0, 3, p50),
                lat: p50.map(lat),
            }),
        }
    }

    #[test]
    fn a_latency_victim_is_held_against_itself_alone_and_the_step_that_hurt_it_most_is_named() {
        let steps = vec![
            step(0, Shape::Quiet, Some(10.0)),
            step(1, Shape::Phase { shift: 1 }, Some(250.0)),
            step(2, Shape::Phase { shift: 2 }, None),
        ];
        let mut d = doc_of(Pattern::AllToAll, steps.clone(), None, false);
        assert!(d.victim.is_none(), "no victim without its metric");
        assert_eq!(d.verdict.failed_flows, 1, "the victim's failure counts");
        let metric = Metric {
            name: "latency".into(),
            unit: "us".into(),
            better: fabdiag_sweep_judge::analysis::Better::Lower,
            test: "write-lat 8 B".into(),
        };
        fill(&mut d, &steps, metric);
        let v = d.victim.as_ref().expect("a victim");
        assert_eq!((v.client, v.server, v.worst), (0, 3, Some(1)));
        assert_eq!(v.loaded[0].ratios, Some([25.0, 25.0, 25.0]));
        assert_eq!(v.loaded[1].error.as_deref(), Some("cannot connect"));
        let mut t = String::new();
        text(&mut t, &d);
        assert_eq!(
            t,
            "victim 0 (node0) -> 3 (node3), write-lat 8 B: alone p50 10.0 us, p99 20.0 us, p99.9 40.0 us\n  beside phase 1: p50 250.0 us (25.0 x), p99 500.0 us (25.0 x), p99.9 1000.0 us (25.0 x) (worst)\n  beside phase 2: failed: cannot connect\n"
        );
    }

    #[test]
    fn a_bandwidth_victim_is_given_its_share_of_alone_and_the_lowest_is_worst() {
        let bw = |index: usize, shape: Shape, v: f64| PatternStep {
            index,
            shape,
            flows: vec![],
            victim: Some(VictimRecord {
                record: flow(0, 3, Some(v)),
                lat: None,
            }),
        };
        let steps = vec![
            bw(0, Shape::Quiet, 10.0),
            bw(0, Shape::Phase { shift: 1 }, 8.0),
            bw(1, Shape::Phase { shift: 2 }, 2.5),
        ];
        let mut d = doc_of(Pattern::AllToAll, steps.clone(), None, false);
        let metric = Metric {
            name: "bandwidth".into(),
            unit: "MB/s".into(),
            better: fabdiag_sweep_judge::analysis::Better::Higher,
            test: "write-bw 65536 B".into(),
        };
        fill(&mut d, &steps, metric);
        let v = d.victim.as_ref().expect("a victim");
        let ratios: Vec<Option<f64>> = v.loaded.iter().map(|l| l.ratio).collect();
        assert_eq!((ratios, v.worst), (vec![Some(0.8), Some(0.25)], Some(1)));
        let mut t = String::new();
        text(&mut t, &d);
        assert!(t.ends_with("  beside phase 2: 2.5 MB/s (0.25 x) (worst)\n"), "{t}");
    }
}
