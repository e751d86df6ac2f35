//! A traffic pattern's report as one self-contained HTML page
//! (report.html): the verdict, then the pattern's own tables: every
//! split's aggregate (bisection), every receiver's incast against one
//! sender alone with Jain's index (incast), every phase's aggregate and
//! slowest flow and each rank's sides (all-to-all); each step's flows with
//! their share drawn as a bar, the slow or starved ones marked; and for
//! incast and all-to-all the heatmap of flows, sender by receiver; and a
//! victim's figures alone and beside each step. A pure
//! function of a finished `PatternDoc`; everything that came from a rank
//! (host names, error text) is escaped.

use crate::html::{escape, table, STYLE};
use crate::pattern::{Flow, Heatmap, PatternDoc, VictimFigures, VictimSummary};
use fabdiag_sweep_plan::Pattern;
use std::fmt::Write;

fn who(doc: &PatternDoc, rank: usize) -> String {
    escape(&crate::pattern::host(doc, rank))
}

pub fn page(doc: &PatternDoc) -> String {
    let mut o = String::new();
    let title = format!(
        "fabdiag {}: {} nodes, {}",
        doc.pattern.name(),
        doc.nodes.len(),
        doc.metric.test
    );
    let _ = writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{STYLE}\n.bar{{background:#4a7fb5;height:10px}}\n.heat td{{min-width:44px}}</style></head><body>\n<h1>{0}</h1>",
        escape(&title)
    );
    let _ = writeln!(
        o,
        "<p class=\"meta\">{} to {}; fabdiag {}, libfabric {}; schema {}</p>",
        escape(&doc.started),
        escape(&doc.ended),
        escape(&doc.fabdiag_version),
        escape(doc.libfabric_version.as_deref().unwrap_or("-")),
        escape(&doc.schema)
    );
    verdict(&mut o, doc);
    let u = escape(&doc.metric.unit);
    match doc.pattern {
        Pattern::Bisection { .. } => splits(&mut o, doc, &u),
        Pattern::Incast { .. } => incasts(&mut o, doc, &u),
        Pattern::AllToAll => phases(&mut o, doc, &u),
    }
    if let Some(v) = &doc.victim {
        victim(&mut o, doc, v);
    }
    if let Some(h) = &doc.heatmap {
        heatmap(&mut o, doc, h, &u);
    }
    o.push_str("</body></html>\n");
    o
}

fn list(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |f| format!("{:.0} %", f * 100.0))
}

fn splits(o: &mut String, doc: &PatternDoc, u: &str) {
    let rows = doc
        .splits
        .iter()
        .map(|x| {
            vec![
                (x.index + 1).to_string(),
                format!("{} | {}", list(&x.halves[0]), list(&x.halves[1])),
                format!("{} of {}", x.group.measured, x.group.flows.len()),
                format!("{:.1}", x.group.aggregate),
                pct(x.fraction),
                if doc.weakest == Some(x.index) {
                    "<b class=\"slow\">weakest</b>".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let _ = writeln!(o, "<h2>Splits</h2>");
    let agg = format!("aggregate ({u})");
    table(
        o,
        &["split", "halves", "flows", &agg, "of --expect", ""],
        rows,
        "no split ran",
    );
    for x in &doc.splits {
        let _ = writeln!(o, "<h2>Split {}</h2>", x.index + 1);
        flows(o, doc, &x.group.flows, u, "slow", "no flow crosses the halves");
    }
}

fn incasts(o: &mut String, doc: &PatternDoc, u: &str) {
    let rows = doc
        .incasts
        .iter()
        .map(|x| {
            let alone = x.single.as_ref().and_then(|g| g.flows.first());
            vec![
                who(doc, x.receiver),
                format!("{} of {}", x.group.measured, x.group.flows.len()),
                format!("{:.1}", x.group.aggregate),
                alone.and_then(|f| f.value).map_or("-".into(), |v| format!("{v:.1}")),
                x.against_single.map_or("-".into(), |r| format!("{r:.2}")),
                x.jain.map_or("-".into(), |j| format!("{j:.2}")),
                pct(x.fraction),
                x.starved.iter().map(|&r| who(doc, r)).collect::<Vec<_>>().join(", "),
            ]
        })
        .collect();
    let _ = writeln!(o, "<h2>Receivers</h2>");
    let (agg, one) = (format!("aggregate ({u})"), format!("one sender alone ({u})"));
    table(
        o,
        &[
            "receiver",
            "senders",
            &agg,
            &one,
            "x alone",
            "Jain's index",
            "of --expect",
            "starved",
        ],
        rows,
        "no incast ran",
    );
    for x in &doc.incasts {
        let _ = writeln!(o, "<h2>Incast into {}</h2>", who(doc, x.receiver));
        flows(o, doc, &x.group.flows, u, "starved", "no sender");
    }
}

fn phases(o: &mut String, doc: &PatternDoc, u: &str) {
    let rows = doc
        .phases
        .iter()
        .map(|p| {
            let slowest = p
                .slowest
                .and_then(|[c, s]| p.group.flows.iter().find(|f| f.client == c && f.server == s));
            vec![
                p.shift.to_string(),
                format!("{} of {}", p.group.measured, p.group.flows.len()),
                format!("{:.1}", p.group.aggregate),
                slowest.map_or("-".into(), |f| {
                    format!("{} &rarr; {}", who(doc, f.client), who(doc, f.server))
                }),
                slowest.and_then(|f| f.value).map_or("-".into(), |v| format!("{v:.1}")),
            ]
        })
        .collect();
    let _ = writeln!(o, "<h2>Phases (rank i to rank i+k in phase k)</h2>");
    let (agg, fig) = (format!("aggregate ({u})"), format!("its figure ({u})"));
    table(o, &["phase", "flows", &agg, "slowest flow", &fig], rows, "no phase ran");
    let Some(a) = &doc.alltoall else { return };
    let mark = |slow: bool| if slow { "<b class=\"slow\">slow</b>" } else { "" };
    let rows = a
        .ranks
        .iter()
        .map(|r| {
            let v = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.1}"));
            vec![
                who(doc, r.rank),
                v(r.send),
                mark(r.slow_send).into(),
                v(r.receive),
                mark(r.slow_receive).into(),
            ]
        })
        .collect();
    let _ = writeln!(o, "<h2>Each rank's sides (its median flow, all phases)</h2>");
    let (send, recv) = (format!("send ({u})"), format!("receive ({u})"));
    table(o, &["rank", &send, "", &recv, ""], rows, "no flow was measured");
}

/// The victim alone and beside each step: its figures and how many
/// times worse (latency) or what share (bandwidth) they were.
fn victim(o: &mut String, doc: &PatternDoc, v: &VictimSummary) {
    let _ = writeln!(
        o,
        "<h2>Victim: {} &rarr; {}, {}</h2>",
        who(doc, v.client),
        who(doc, v.server),
        escape(&v.metric.test)
    );
    let latency = v.alone.iter().chain(&v.loaded).any(|f| f.lat.is_some());
    let n = |x: f64| format!("{x:.1}");
    let row = |f: &VictimFigures| {
        let worst = if v.worst.is_some() && v.worst == f.index {
            "<b class=\"slow\">worst</b>"
        } else {
            ""
        };
        let mut cells = vec![escape(&f.step)];
        match (f.lat, f.value, latency) {
            (Some(l), _, _) => {
                let r = |k: usize| f.ratios.map_or("-".into(), |x| format!("{:.1} x", x[k]));
                cells.extend([n(l.p50_us), r(0), n(l.p99_us), r(1), n(l.p999_us), r(2)]);
            }
            (None, Some(x), false) => cells.extend([n(x), f.ratio.map_or("-".into(), |r| format!("{r:.2} x"))]),
            _ => {
                let why = escape(f.error.as_deref().unwrap_or("no figure"));
                cells.extend(
                    std::iter::once(why).chain(std::iter::repeat_n(String::new(), if latency { 5 } else { 1 })),
                );
            }
        }
        cells.push(worst.into());
        cells
    };
    let rows = v.alone.iter().chain(&v.loaded).map(row).collect();
    let head: &[&str] = if latency {
        &["step", "p50 (us)", "", "p99 (us)", "", "p99.9 (us)", "", ""]
    } else {
        &["step", "figure (MB/s)", "of alone", ""]
    };
    table(o, head, rows, "the victim did not run");
}

/// Every flow's figure, sender by receiver, each cell shaded from red
/// (the lowest) to green (the highest).
fn heatmap(o: &mut String, doc: &PatternDoc, h: &Heatmap, u: &str) {
    let top = h.values.iter().flatten().flatten().copied().fold(0.0_f64, f64::max);
    let _ = writeln!(o, "<h2>Flows, sender (row) by receiver (column), {u}</h2>");
    o.push_str("<table class=\"heat\"><tr><th></th>");
    for &r in &h.ranks {
        let _ = write!(o, "<th>{}</th>", who(doc, r));
    }
    o.push_str("</tr>\n");
    for (i, row) in h.values.iter().enumerate() {
        let _ = write!(o, "<tr><th>{}</th>", who(doc, h.ranks[i]));
        for v in row {
            match v {
                Some(v) if top > 0.0 => {
                    let hue = 120.0 * v / top;
                    let _ = write!(
                        o,
                        "<td class=\"n\" style=\"background:hsl({hue:.0},60%,78%)\">{v:.1}</td>"
                    );
                }
                _ => o.push_str("<td class=\"n\">-</td>"),
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

/// The pattern's headline, green when every flow ran.
fn verdict(o: &mut String, doc: &PatternDoc) {
    let v = &doc.verdict;
    let u = &doc.metric.unit;
    let headline = match doc.pattern {
        Pattern::Bisection { .. } => doc
            .weakest
            .and_then(|i| doc.splits.iter().find(|x| x.index == i))
            .map(|w| {
                format!(
                    "bisection {:.1} {u} (split {}, the weakest of {})",
                    w.group.aggregate,
                    w.index + 1,
                    doc.splits.len()
                )
            }),
        Pattern::Incast { .. } => doc
            .incasts
            .iter()
            .filter(|x| x.group.measured > 0)
            .min_by(|a, b| a.group.aggregate.total_cmp(&b.group.aggregate))
            .map(|x| {
                let starved: usize = doc.incasts.iter().map(|x| x.starved.len()).sum();
                format!(
                    "incast: the lowest aggregate {:.1} {u}, into {}; {starved} starved sender(s)",
                    x.group.aggregate,
                    crate::pattern::host(doc, x.receiver)
                )
            }),
        Pattern::AllToAll => doc
            .alltoall
            .as_ref()
            .filter(|_| v.measured_flows > 0)
            .map(|a| format!("all-to-all {:.1} {u} a phase on average", a.mean_aggregate)),
    };
    let (class, line) = match headline {
        Some(h) if v.failed_flows + v.untested_flows + v.lost_nodes.len() == 0 => ("ok", h),
        Some(h) => (
            "bad",
            format!(
                "{h} with {} flows failed, {} not run, {} nodes lost",
                v.failed_flows,
                v.untested_flows,
                v.lost_nodes.len()
            ),
        ),
        None => ("bad", "no flow was measured".into()),
    };
    let _ = writeln!(o, "<div class=\"verdict {class}\">{}</div>", escape(&line));
    if v.slow_flows > 0 {
        let what = if matches!(doc.pattern, Pattern::Incast { .. }) {
            "senders below the outlier fraction of their incast's median sender (starved)"
        } else {
            "flows below the outlier fraction of their step's median flow"
        };
        let _ = writeln!(o, "<p>{} {what}.</p>", v.slow_flows);
    }
    if let Some(w) = crate::pattern::overran_line(doc) {
        let _ = writeln!(o, "<p>{}</p>", escape(&w));
    }
}

/// A step's flows, each with its share of the step's aggregate as a bar,
/// those below the step's median marked `mark`.
fn flows(o: &mut String, doc: &PatternDoc, all: &[Flow], u: &str, mark: &str, empty: &str) {
    let rows = all
        .iter()
        .map(|f| {
            let (value, share) = match (f.value, &f.error) {
                (Some(v), _) => (
                    format!("{v:.1}"),
                    format!(
                        "<div class=\"bar\" style=\"width:{:.0}px\"></div>{:.1} %",
                        f.share.unwrap_or(0.0) * 400.0,
                        f.share.unwrap_or(0.0) * 100.0
                    ),
                ),
                (None, e) => ("-".into(), escape(e.as_deref().unwrap_or("no figure"))),
            };
            let m = if f.slow {
                format!("<b class=\"slow\">{mark}</b>")
            } else {
                String::new()
            };
            vec![who(doc, f.client), who(doc, f.server), value, share, m]
        })
        .collect();
    let fig = format!("figure ({u})");
    table(o, &["from", "to", &fig, "share of the aggregate", ""], rows, empty);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::tests::{doc, step};

    #[test]
    fn the_page_marks_the_weakest_split_and_the_slow_flow_and_escapes_what_ranks_sent() {
        let mut d = doc(
            vec![
                step(0, [Some(10.0); 4]),
                step(1, [Some(10.0), Some(2.0), Some(10.0), None]),
            ],
            None,
            false,
        );
        d.nodes[5].host = Some("<node5>".into());
        let p = page(&d);
        assert!(p.starts_with("<!DOCTYPE html>"), "{p}");
        assert!(
            p.contains(
                "<div class=\"verdict bad\">bisection 22.0 MB/s (split 2, the weakest of 2) with 1 flows failed, 0 not run, 0 nodes lost</div>"
            ),
            "{p}"
        );
        assert!(p.contains("<td class=\"n\">2</td><td class=\"n\">0 1 2 3 | 4 5 6 7</td><td class=\"n\">3 of 4</td><td class=\"n\">22.0</td><td class=\"n\">-</td><td><b class=\"slow\">weakest</b></td>"), "{p}");
        assert!(
            p.contains("<td class=\"n\">1 (node1)</td><td class=\"n\">5 (&lt;node5&gt;)</td><td class=\"n\">2.0</td>"),
            "{p}"
        );
        assert!(p.contains("<td>cannot connect</td>"), "{p}");
        assert!(!p.contains("<node5>"));
    }

    #[test]
    fn an_incasts_page_has_its_receivers_a_heatmap_and_the_victim() {
        use crate::pattern::tests::{doc_of, flow};
        use fabdiag_sweep_plan::{LatFigures, PatternStep, Shape, VictimRecord};
        let lat = |p50: f64| LatFigures {
            mean_us: p50,
            p50_us: p50,
            p99_us: 2.0 * p50,
            p999_us: 3.0 * p50,
            max_us: 4.0 * p50,
        };
        let victim = |p50: f64| {
            Some(VictimRecord {
                record: flow(0, 5, Some(p50)),
                lat: Some(lat(p50)),
            })
        };
        let steps = vec![
            PatternStep {
                index: 0,
                shape: Shape::Quiet,
                flows: vec![],
                victim: victim(10.0),
            },
            PatternStep {
                index: 0,
                shape: Shape::Single { receiver: 1 },
                flows: vec![flow(2, 1, Some(4.0))],
                victim: victim(20.0),
            },
            PatternStep {
                index: 1,
                shape: Shape::Incast { receiver: 1 },
                flows: vec![flow(2, 1, Some(2.0)), flow(3, 1, Some(2.0)), flow(4, 1, Some(0.5))],
                victim: victim(500.0),
            },
        ];
        let mut d = doc_of(Pattern::Incast { receivers: vec![1] }, steps.clone(), None, false);
        // (the CLI gives the victim's metric; here it is filled as document() would)
        let mut with = crate::pattern::PatternInputs {
            sweep: fabdiag_sweep_plan::Coordinated::of(d.nodes.clone(), Vec::new()),
            metric: d.metric.clone(),
            fraction: 0.75,
            expect: None,
            bidirectional: false,
            victim: Some(fabdiag_sweep_judge::doc::Metric {
                name: "latency".into(),
                unit: "us".into(),
                better: fabdiag_sweep_judge::analysis::Better::Lower,
                test: "write-lat 8 B".into(),
            }),
            options: Default::default(),
            fabdiag_version: "0.1.0",
            libfabric_version: None,
        };
        with.sweep.pattern = Some(fabdiag_sweep_plan::PatternRun {
            pattern: d.pattern.clone(),
            steps,
            victim: None,
        });
        d = crate::pattern::document(with).expect("a document");
        let p = page(&d);
        assert!(
            p.contains("<title>fabdiag incast: 8 nodes, write-bw 65536 B</title>"),
            "{p}"
        );
        assert!(p.contains("<div class=\"verdict ok\">incast: the lowest aggregate 4.5 MB/s, into 1 (node1); 1 starved sender(s)</div>"), "{p}");
        assert!(p.contains("<td class=\"n\">1 (node1)</td><td class=\"n\">3 of 3</td><td class=\"n\">4.5</td><td class=\"n\">4.0</td><td class=\"n\">1.12</td>"), "{p}");
        assert!(
            p.contains("<h2>Flows, sender (row) by receiver (column), MB/s</h2>"),
            "{p}"
        );
        // the starved sender's cell is the reddest: hue 120 x 0.5 / 2
        assert!(p.contains("style=\"background:hsl(30,60%,78%)\">0.5</td>"), "{p}");
        assert!(
            p.contains("<h2>Victim: 0 (node0) &rarr; 5 (node5), write-lat 8 B</h2>"),
            "{p}"
        );
        assert!(
            p.contains("<td>incast into rank 1</td><td class=\"n\">500.0</td><td class=\"n\">50.0 x</td>"),
            "{p}"
        );
        assert!(p.contains("<b class=\"slow\">worst</b>"), "{p}");
    }
}
