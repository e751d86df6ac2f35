//! A traffic pattern's report as one self-contained HTML page
//! (report.html): the verdict, every split's aggregate, and each split's
//! flows with their share of it drawn as a bar, the slow ones marked and
//! the weakest split first to the eye. A pure function of a finished
//! `PatternDoc`; everything that came from a rank (host names, error text)
//! is escaped.

use crate::html::{escape, table, STYLE};
use crate::pattern::{PatternDoc, SplitSummary};
use std::fmt::Write;

fn who(doc: &PatternDoc, rank: usize) -> String {
    escape(&crate::pattern::host(doc, rank))
}

pub fn page(doc: &PatternDoc) -> String {
    let mut o = String::new();
    let title = format!("fabdiag bisection: {} nodes, {}", doc.nodes.len(), doc.metric.test);
    let _ = writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{STYLE}\n.bar{{background:#4a7fb5;height:10px}}</style></head><body>\n<h1>{0}</h1>",
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
    let rows = doc
        .splits
        .iter()
        .map(|x| {
            vec![
                (x.index + 1).to_string(),
                format!("{} | {}", list(&x.halves[0]), list(&x.halves[1])),
                format!("{} of {}", x.measured, x.flows.len()),
                format!("{:.1}", x.aggregate),
                x.fraction.map_or("-".into(), |f| format!("{:.0} %", f * 100.0)),
                if doc.weakest == Some(x.index) {
                    "<b class=\"slow\">weakest</b>".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let _ = writeln!(o, "<h2>Splits</h2>");
    table(
        &mut o,
        &[
            "split",
            "halves",
            "flows",
            &format!("aggregate ({u})"),
            "of --expect",
            "",
        ],
        rows,
        "no split ran",
    );
    for x in &doc.splits {
        flows(&mut o, doc, x, &u);
    }
    o.push_str("</body></html>\n");
    o
}

fn list(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
}

fn verdict(o: &mut String, doc: &PatternDoc) {
    let v = &doc.verdict;
    let weakest = doc.weakest.and_then(|i| doc.splits.get(i));
    let (class, line) = match weakest {
        Some(w) if v.failed_flows + v.untested_flows + v.lost_nodes.len() == 0 => (
            "ok",
            format!(
                "bisection {:.1} {} (split {}, the weakest of {})",
                w.aggregate,
                doc.metric.unit,
                w.index + 1,
                doc.splits.len()
            ),
        ),
        Some(w) => (
            "bad",
            format!(
                "bisection {:.1} {} with {} flows failed, {} not run, {} nodes lost",
                w.aggregate,
                doc.metric.unit,
                v.failed_flows,
                v.untested_flows,
                v.lost_nodes.len()
            ),
        ),
        None => ("bad", "no flow was measured".into()),
    };
    let _ = writeln!(o, "<div class=\"verdict {class}\">{}</div>", escape(&line));
    if v.slow_flows > 0 {
        let _ = writeln!(
            o,
            "<p>{} flows below the outlier fraction of their split's median flow.</p>",
            v.slow_flows
        );
    }
}

fn flows(o: &mut String, doc: &PatternDoc, x: &SplitSummary, u: &str) {
    let _ = writeln!(o, "<h2>Split {}</h2>", x.index + 1);
    let rows = x
        .flows
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
            let mark = if f.slow { "<b class=\"slow\">slow</b>" } else { "" };
            vec![who(doc, f.client), who(doc, f.server), value, share, mark.into()]
        })
        .collect();
    table(
        o,
        &["from", "to", &format!("figure ({u})"), "share of the aggregate", ""],
        rows,
        "no flow crosses the halves",
    );
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
                "<div class=\"verdict bad\">bisection 22.0 MB/s with 1 flows failed, 0 not run, 0 nodes lost</div>"
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
}
