//! The sweep's one-page report as a self-contained HTML document: the
//! verdict, the heatmap and histogram (PNG embedded as data URIs, so the
//! one file can be mailed or attached to a ticket), the outlier tables,
//! missing nodes, failed pairs and every node's median. A pure function of
//! a finished `SweepDoc` and its pictures; everything that came from a
//! rank (host names, error text) is escaped.

use crate::phrases::{self, count};
use crate::picture::Pictures;
use base64::Engine;
use fabdiag_sweep_judge::analysis::NodeRule;
use fabdiag_sweep_judge::doc::{Comparison, ErrorRates};
use fabdiag_sweep_judge::doc::{RetestVerdict, SweepDoc};
use fabdiag_sweep_plan::NodeStatus;
use std::fmt::Write;

/// `s` as HTML text.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn img(png: &[u8], alt: &str) -> String {
    format!(
        "<img alt=\"{}\" src=\"data:image/png;base64,{}\">",
        escape(alt),
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

pub(crate) const STYLE: &str =
    "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #ccc}
.meta{color:#555;font-size:13px}.verdict{padding:10px 14px;margin:12px 0;font-size:16px;font-weight:bold}
.ok{background:#e3f4e3;border-left:6px solid #2e8b2e}.bad{background:#fbe3e3;border-left:6px solid #c81e1e}
table{border-collapse:collapse;font-size:13px;margin:4px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}.slow{color:#c81e1e;font-weight:bold}
img{max-width:100%;border:1px solid #ddd;margin:4px 0}.none{color:#555;font-style:italic}";

pub(crate) fn table(o: &mut String, head: &[&str], rows: Vec<Vec<String>>, empty: &str) {
    if rows.is_empty() {
        let _ = writeln!(o, "<p class=\"none\">{}</p>", escape(empty));
        return;
    }
    o.push_str("<table><tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", escape(h));
    }
    o.push_str("</tr>\n");
    for r in rows {
        o.push_str("<tr>");
        for cell in r {
            // cells are escaped by the caller; numbers are right-aligned
            let numeric = cell.chars().next().is_some_and(|c| c.is_ascii_digit() || c == '-');
            if numeric {
                let _ = write!(o, "<td class=\"n\">{cell}</td>");
            } else {
                let _ = write!(o, "<td>{cell}</td>");
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

fn num(v: f64) -> String {
    format!("{v:.2}")
}

/// The report page: one section after another, each its own function.
pub fn page(doc: &SweepDoc, pictures: &Pictures) -> String {
    let names = phrases::Names::new(doc);
    let who = |r: usize| escape(&names.of(r));
    let mut o = String::new();
    head(&mut o, doc);
    verdict(&mut o, doc);
    fabric(&mut o, doc, &names);
    figures(&mut o, doc, pictures);
    slow_nodes(&mut o, doc, &who);
    slow_links(&mut o, doc, &who);
    nic_counters(&mut o, doc, &names);
    rails(&mut o, doc);
    if let Some(c) = &doc.baseline {
        baseline_section(&mut o, c, pictures.change.as_deref(), &who, &doc.metric.unit);
    }
    cleared(&mut o, doc, &who);
    lost(&mut o, doc, &who);
    failed(&mut o, doc, &who);
    untested(&mut o, doc);
    nodes(&mut o, doc, &who);
    let _ = writeln!(
        o,
        "<p class=\"meta\">Overhead: {}</p>",
        escape(&phrases::overhead_line(doc))
    );
    o.push_str("</body></html>\n");
    o
}

/// The document's head, the title and what ran when with what.
fn head(o: &mut String, doc: &SweepDoc) {
    let title = format!("fabdiag sweep: {} nodes, {}", doc.nodes.len(), doc.metric.test);
    let _ = writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>",
        escape(&title)
    );
    let _ = writeln!(o, "<h1>{}</h1>", escape(&title));
    let _ = writeln!(
        o,
        "<p class=\"meta\">{} pairs{} in {} rounds; {} to {}; fabdiag {}, libfabric {}; schema {}</p>",
        doc.schedule.total_pairs,
        escape(&phrases::rails_note(doc.schedule.rails)),
        doc.schedule.rounds,
        escape(&doc.started),
        escape(&doc.ended),
        escape(&doc.fabdiag_version),
        escape(doc.libfabric_version.as_deref().unwrap_or("-")),
        escape(&doc.schema)
    );
    if let Some(from) = phrases::remade_from(doc) {
        let _ = writeln!(o, "<p class=\"meta\">{}</p>", escape(&from));
    }
}

/// The verdict box: every problem in one line, or none; the hosts to
/// look at.
fn verdict(o: &mut String, doc: &SweepDoc) {
    let v = &doc.verdict;
    let mut problems = Vec::new();
    if !v.lost_nodes.is_empty() {
        problems.push(count(v.lost_nodes.len(), "missing or lost node"));
    }
    if v.all_others_lost {
        problems.push(phrases::ALL_OTHERS_LOST.into());
    }
    if v.failed_pairs > 0 {
        problems.push(count(v.failed_pairs, "failed pair"));
    }
    if v.untested_pairs > 0 {
        let why = match &doc.stopped {
            Some(sig) => format!(" (stopped by {})", escape(sig)),
            None => String::new(),
        };
        problems.push(format!("{} not tested{why}", count(v.untested_pairs, "pair")));
    }
    if v.slow_nodes > 0 {
        problems.push(count(v.slow_nodes, "slow node"));
    }
    if v.slow_links > 0 {
        problems.push(count(v.slow_links, "slow link"));
    }
    if !v.slow_rails.is_empty() {
        problems.push(count(v.slow_rails.len(), "slow rail"));
    }
    if v.fabric_regressed {
        problems.push("the fabric below its baseline".into());
    }
    if v.regressed_nodes > 0 {
        problems.push(format!("{} below its baseline", count(v.regressed_nodes, "node")));
    }
    if v.regressed_links > 0 {
        problems.push(format!("{} below its baseline", count(v.regressed_links, "link")));
    }
    if !v.threshold_pairs.is_empty() || !v.threshold_nodes.is_empty() {
        let limit = phrases::threshold(doc).unwrap_or_default();
        problems.push(format!(
            "{} missed the threshold, {limit}",
            phrases::threshold_missed(v)
        ));
    }
    if problems.is_empty() {
        let _ = writeln!(o, "<div class=\"verdict ok\">No slow link or node, no failure</div>");
    } else {
        let _ = writeln!(o, "<div class=\"verdict bad\">{}</div>", escape(&problems.join("; ")));
        let _ = writeln!(o, "<p>{}</p>", escape(&phrases::suspects_line(doc)));
    }
}

/// With the fabric's map: the blamed elements and their evidence, as
/// the text says them, and the fabric drawn.
fn fabric(o: &mut String, doc: &SweepDoc, names: &phrases::Names) {
    if doc.fabric.is_none() {
        return;
    }
    let mut said = String::new();
    crate::fabric::fabric_text(&mut said, doc, names);
    o.push_str("<h2>Fabric</h2>\n<pre style=\"white-space: pre-wrap\">");
    o.push_str(&escape(said.trim_end()));
    o.push_str("</pre>\n");
    if let Some(svg) = doc.fabric.as_ref().and_then(|f| crate::fabric::fabric_svg(f, &escape)) {
        o.push_str(&svg);
        o.push('\n');
    }
}

/// The pairs' figures and rules in a sentence, the heatmap and the
/// histogram.
fn figures(o: &mut String, doc: &SweepDoc, pictures: &Pictures) {
    let u = escape(&doc.metric.unit);
    let an = &doc.analysis;
    let measured = doc
        .pairs
        .iter()
        .filter(|p| p.round.is_some() && p.value.is_some())
        .count();
    let _ = writeln!(
        o,
        "<p>{measured} pairs measured: median {} {u}, best {}, worst {}. Rules: {}.</p>",
        num(an.stats.median),
        num(an.stats.best),
        num(an.stats.worst),
        escape(&phrases::rules(an)),
    );
    o.push_str("<h2>Heatmap</h2>\n");
    o.push_str(&img(&pictures.heatmap, "heatmap of every pair's result"));
    o.push_str("\n<h2>Distribution</h2>\n");
    o.push_str(&img(&pictures.histogram, "histogram of pair results"));
}

/// The slow nodes: their medians, the rule that named each, the re-test.
fn slow_nodes(o: &mut String, doc: &SweepDoc, who: &dyn Fn(usize) -> String) {
    o.push_str("\n<h2>Slow nodes</h2>\n");
    table(
        o,
        &[
            "node",
            &format!("median ({})", doc.metric.unit),
            "slow pairs",
            "low pairs",
            "measured pairs",
            "named by",
            "re-test alone",
        ],
        doc.analysis
            .slow_nodes
            .iter()
            .map(|f| {
                vec![
                    who(f.node),
                    num(f.median),
                    f.outlier_pairs.to_string(),
                    f.low_pairs.to_string(),
                    f.measured_pairs.to_string(),
                    match f.rule {
                        NodeRule::Pairs => "its slow pairs".to_string(),
                        NodeRule::Median => format!("its median, {:.1} MADs out", f.median_score),
                    },
                    phrases::retest_of_node(doc, f.node).map_or_else(
                        || "not re-tested".into(),
                        |(partner, r)| format!("with {}, {}", who(partner), escape(&phrases::alone(r))),
                    ),
                ]
            })
            .collect(),
        "none",
    );
}

/// The ranks whose own NIC counters rose, and those whose counters could
/// not be read (nothing when no rank read any: a simulated sweep).
fn nic_counters(o: &mut String, doc: &SweepDoc, names: &phrases::Names) {
    if doc.nodes.iter().all(|n| n.node.counters.is_none()) {
        return;
    }
    o.push_str("<h2>NIC counters</h2>\n");
    let name = |r: usize| names.of(r).into_owned();
    if doc.counters.named.is_empty() {
        o.push_str("<p>No rank's own fault counters named it.</p>\n");
    } else {
        o.push_str("<ul>\n");
        for c in &doc.counters.named {
            let _ = writeln!(o, "<li>{}</li>", escape(&phrases::counters_line(c, &name)));
        }
        o.push_str("</ul>\n");
    }
    if let Some(line) = phrases::scattered_line(doc) {
        let _ = writeln!(o, "<p>{}</p>", escape(&line));
    }
    for (why, k) in phrases::counters_unavailable(doc) {
        let _ = writeln!(
            o,
            "<p>NIC counters not available on {}: {}</p>",
            phrases::count(k, "rank"),
            escape(why)
        );
    }
}

/// The slow links: how far off each is, and its re-test.
fn slow_links(o: &mut String, doc: &SweepDoc, who: &dyn Fn(usize) -> String) {
    o.push_str("<h2>Slow links</h2>\n");
    table(
        o,
        &[
            "pair",
            &format!("result ({})", doc.metric.unit),
            "of median",
            "of best",
            "score",
            "re-test alone",
        ],
        doc.analysis
            .slow_links
            .iter()
            .map(|f| {
                let re = phrases::retest_for(doc, f.a, f.b).map_or_else(|| "not re-tested".into(), phrases::alone);
                vec![
                    format!("{} &harr; {}", who(f.a), who(f.b)),
                    num(f.value),
                    phrases::fraction(f.of_median),
                    phrases::fraction(f.of_best),
                    format!("{:.1}", f.score),
                    escape(&re),
                ]
            })
            .collect(),
        "none",
    );
}

/// Each rail's median and slow ranks, on rails.
fn rails(o: &mut String, doc: &SweepDoc) {
    if doc.rails.is_empty() {
        return;
    }
    o.push_str("<h2>Rails</h2>\n");
    table(
        o,
        &[
            "rail",
            &format!("median ({})", doc.metric.unit),
            "slow ranks",
            "ranks",
            "",
        ],
        doc.rails
            .iter()
            .map(|r| {
                vec![
                    r.rail.to_string(),
                    r.median.map_or("-".into(), num),
                    r.slow_ranks.to_string(),
                    r.ranks.to_string(),
                    if r.slow {
                        escape(phrases::SLOW_RAIL)
                    } else {
                        String::new()
                    },
                ]
            })
            .collect(),
        "none",
    );
}

/// The suspects a re-test alone cleared, when any did.
fn cleared(o: &mut String, doc: &SweepDoc, who: &dyn Fn(usize) -> String) {
    let cleared: Vec<Vec<String>> = doc
        .retests
        .iter()
        .filter(|r| r.verdict == RetestVerdict::Cleared)
        .map(|r| {
            vec![
                phrases::retested(r, who, " &harr; "),
                num(r.first.unwrap_or(0.0)),
                num(r.alone.unwrap_or(0.0)),
            ]
        })
        .collect();
    if !cleared.is_empty() {
        o.push_str("<h2>Cleared by re-test</h2>\n");
        table(o, &["re-tested", "in the sweep", "alone"], cleared, "none");
    }
}

/// The nodes that never joined or were lost, and why.
fn lost(o: &mut String, doc: &SweepDoc, who: &dyn Fn(usize) -> String) {
    o.push_str("<h2>Missing or lost nodes</h2>\n");
    table(
        o,
        &["node", "status", "reason"],
        doc.nodes
            .iter()
            .filter(|x| x.node.status != NodeStatus::Ok)
            .map(|x| {
                vec![
                    who(x.node.rank),
                    match x.node.status {
                        NodeStatus::Missing => "never joined".into(),
                        NodeStatus::Lost => "lost".into(),
                        NodeStatus::Ok => "ok".into(),
                    },
                    escape(x.node.reason.as_deref().unwrap_or("unknown")),
                ]
            })
            .collect(),
        "none",
    );
}

/// Pairs that ran and failed, the first 200 of them.
fn failed(o: &mut String, doc: &SweepDoc, who: &dyn Fn(usize) -> String) {
    let failed: Vec<_> = doc.pairs.iter().filter(|p| p.error.is_some() && !p.untested).collect();
    let _ = writeln!(o, "<h2>Failed pairs ({})</h2>", failed.len());
    table(
        o,
        &["pair", "error"],
        failed
            .iter()
            .take(200)
            .map(|p| {
                vec![
                    format!("{} &harr; {}", who(p.a), who(p.b)),
                    escape(p.error.as_deref().unwrap_or("")),
                ]
            })
            .collect(),
        "none",
    );
    if failed.len() > 200 {
        let _ = writeln!(o, "<p class=\"none\">{} more in sweep.json</p>", failed.len() - 200);
    }
}

/// Pairs not tested, counted by reason.
fn untested(o: &mut String, doc: &SweepDoc) {
    let untested = phrases::untested_by_reason(doc);
    if !untested.is_empty() {
        o.push_str("<h2>Not tested</h2>\n");
        table(
            o,
            &["pairs", "why"],
            untested
                .iter()
                .map(|(why, n)| vec![n.to_string(), escape(why)])
                .collect(),
            "none",
        );
    }
}

/// Every node: its median and its measured and failed pairs.
fn nodes(o: &mut String, doc: &SweepDoc, who: &dyn Fn(usize) -> String) {
    o.push_str("<h2>Nodes</h2>\n");
    table(
        o,
        &[
            "node",
            &format!("median ({})", doc.metric.unit),
            "measured",
            "failed",
            "",
        ],
        doc.nodes
            .iter()
            .map(|x| {
                vec![
                    who(x.node.rank),
                    x.median.map_or("-".into(), num),
                    x.pairs_measured.to_string(),
                    x.pairs_failed.to_string(),
                    if x.slow {
                        "<span class=\"slow\">slow</span>".into()
                    } else {
                        String::new()
                    },
                ]
            })
            .collect(),
        "none",
    );
}

/// The most rows a baseline list shows (sweep.json has every one).
const SHOWN: usize = 200;

/// This sweep against `--baseline`: the rule, the fabric's own change,
/// and the nodes and links below their earlier figures.
fn baseline_section(o: &mut String, c: &Comparison, change: Option<&[u8]>, who: &dyn Fn(usize) -> String, unit: &str) {
    o.push_str("<h2>Against the baseline</h2>\n");
    let _ = writeln!(o, "<p>{}.</p>", escape(&phrases::baseline_line(c)));
    if c.fabric_regressed {
        let _ = writeln!(o, "<p class=\"slow\">{}</p>", escape(&phrases::fabric_regressed(c)));
    }
    if c.compared_pairs == 0 {
        return;
    }
    if let Some(png) = change {
        o.push_str(&img(png, "each pair's result against its baseline"));
        o.push('\n');
    }
    table(
        o,
        &[
            "node",
            "of its baseline (median)",
            "regressed pairs",
            "compared pairs",
            "rank in the baseline",
        ],
        c.nodes
            .iter()
            .map(|x| {
                vec![
                    who(x.rank),
                    phrases::fraction(x.of_baseline),
                    x.regressed_pairs.to_string(),
                    x.compared_pairs.to_string(),
                    x.baseline_rank.to_string(),
                ]
            })
            .collect(),
        "no node below its baseline",
    );
    table(
        o,
        &[
            "pair",
            &format!("result ({unit})"),
            "in the baseline",
            "of the baseline",
        ],
        c.links
            .iter()
            .take(SHOWN)
            .map(|x| {
                vec![
                    format!("{} &harr; {}", who(x.a), who(x.b)),
                    num(x.value),
                    num(x.baseline),
                    phrases::fraction(x.of_baseline),
                ]
            })
            .collect(),
        "no link below its baseline",
    );
    if c.links.len() > SHOWN {
        let _ = writeln!(o, "<p class=\"none\">{} more in sweep.json</p>", c.links.len() - SHOWN);
    }
    error_rates_section(o, &c.error_rates, who);
    let mut elsewhere = Vec::new();
    if !c.new_nodes.is_empty() {
        let names: Vec<String> = c.new_nodes.iter().take(SHOWN).map(|&r| who(r)).collect();
        elsewhere.push(format!("Not in the baseline: {}.", names.join(", ")));
    }
    if !c.absent_nodes.is_empty() {
        let names: Vec<String> = c
            .absent_nodes
            .iter()
            .take(SHOWN)
            .map(|x| escape(&phrases::absent(x)))
            .collect();
        elsewhere.push(format!("In the baseline, not in this sweep: {}.", names.join(", ")));
    }
    for line in elsewhere {
        let _ = writeln!(o, "<p>{line}</p>");
    }
}

/// The NIC error rates against the baseline: what rose, what fell.
fn error_rates_section(o: &mut String, e: &ErrorRates, who: &dyn Fn(usize) -> String) {
    let _ = writeln!(o, "<p>{}.</p>", escape(&phrases::error_rates_line(e)));
    for (title, list, class) in [("Risen", &e.risen, "slow"), ("Fallen", &e.fallen, "none")] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o, "<p class=\"{class}\">{title} since the baseline:</p>\n<ul>");
        for x in list.iter().take(SHOWN) {
            let _ = writeln!(o, "<li>{}</li>", escape(&phrases::error_rate_change(x, &who(x.rank))));
        }
        o.push_str("</ul>\n");
        if list.len() > SHOWN {
            let _ = writeln!(o, "<p class=\"none\">{} more in sweep.json</p>", list.len() - SHOWN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_sweep_judge::fixtures::{doc_with, inputs, sweep_with};

    #[test]
    fn escapes_what_a_rank_sent() {
        assert_eq!(escape("<a href='x'>&\""), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
        let doc = doc_with(4, &[], &[(0, 2)], &[3]);
        let html = page(&doc, &Pictures::default());
        // host names are "host<r>" in the test document
        assert!(!html.contains("host<"), "an unescaped host name: {html}");
        assert!(html.contains("host&lt;3&gt;"));
        assert!(html.contains("never joined"));
        assert!(html.contains("provider error"));
    }

    #[test]
    fn the_page_carries_its_pictures_and_verdict() {
        let pictures = Pictures {
            heatmap: b"heat".to_vec(),
            histogram: b"hist".to_vec(),
            change: None,
        };
        let ok = page(&doc_with(4, &[], &[], &[]), &pictures);
        assert!(ok.contains("No slow link or node"));
        assert!(ok.contains("data:image/png;base64,aGVhdA=="));
        assert!(ok.contains("data:image/png;base64,aGlzdA=="));
        assert!(ok.starts_with("<!DOCTYPE html>") && ok.trim_end().ends_with("</html>"));
        let bad = page(&doc_with(6, &[((1, 4), 20.0)], &[], &[]), &Pictures::default());
        assert!(bad.contains("1 slow link<") || bad.contains("1 slow link;"), "{bad}");
        assert!(bad.contains("class=\"verdict bad\""));
        assert!(!ok.contains("hosts to look at"));
        let lost = page(&doc_with(4, &[], &[], &[2]), &Pictures::default());
        assert!(lost.contains("<p>hosts to look at: host&lt;2&gt;</p>"), "{lost}");
        // a threshold: what it was and who missed it
        let d = fabdiag_sweep_judge::build::build(fabdiag_sweep_judge::build::Inputs {
            limits: fabdiag_sweep_judge::doc::Limits {
                min_bw_mb_s: Some(95.0),
                max_lat_us: None,
            },
            ..inputs(sweep_with(4, &[((1, 2), 90.0)], &[], &[]), None)
        });
        let missed = page(&d, &Pictures::default());
        assert!(
            missed.contains(
                "1 pair and 0 nodes missed the threshold, at least 95.00 MB/s for every pair and node (--min-bw)"
            ),
            "{missed}"
        );
    }
}
