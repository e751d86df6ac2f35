//! Any tool's text, by family: the banner, one result row, the closing
//! lines, and the one-line summary `fabdiag serve` logs per test. Sessions
//! emit the same events for every family and role; which of them print
//! what (a latency server prints no rows) is decided here.

use crate::{amo_text, bw_text, lat_text};
use fabdiag_engine::LatResult;
use fabdiag_model::Row;
use fabdiag_model::{Role, RowView, RunDesc};

/// From the first separator through the column header (a latency client
/// in summary mode gets its table header too).
pub fn banner(run: &RunDesc) -> String {
    match run {
        RunDesc::Bw(r) => bw_text::banner(r),
        RunDesc::Lat(r) => {
            let mut s = lat_text::banner(r);
            if r.role == Role::Client {
                s.push_str(&lat_text::table_start(&lat_text::table_of(r)));
            }
            s
        }
        RunDesc::Amo(r) => {
            let mut s = amo_text::banner(r);
            if r.is_latency() && r.role == Role::Client {
                s.push_str(&lat_text::table_start(&amo_text::table_of(r)));
            }
            s
        }
    }
}

/// The lines for result row number `index` of this run.
pub fn row(run: &RunDesc, row: &Row, index: usize) -> String {
    match (run, row) {
        (RunDesc::Bw(b), Row::Bw(r)) => bw_text::row(b.tool, &RowView::from(r)),
        (RunDesc::Lat(l), Row::Lat(r)) if l.role == Role::Client => {
            lat_text::size_block(&lat_text::table_of(l), r, index == 0)
        }
        (RunDesc::Amo(_), Row::AmoBw(a)) => amo_text::bw_row(&a.result),
        // atomic_lat runs one size: its block is always the first
        (RunDesc::Amo(a), Row::AmoLat(r)) if a.role == Role::Client => {
            lat_text::size_block(&amo_text::table_of(a), &r.result, true)
        }
        _ => String::new(),
    }
}

/// The closing lines; `percentiles` adds fabdiag's percentile table.
pub fn end(run: &RunDesc, rows: &[Row], percentiles: bool) -> String {
    let lat: Vec<LatResult> = rows
        .iter()
        .filter_map(|r| match r {
            Row::Lat(l) => Some(l.clone()),
            Row::AmoLat(a) => Some(a.result.clone()),
            _ => None,
        })
        .collect();
    match run {
        RunDesc::Bw(r) => bw_text::footer(r.tool),
        RunDesc::Lat(r) if r.role == Role::Client => lat_text::client_footer(&lat_text::table_of(r), &lat, percentiles),
        RunDesc::Lat(r) => lat_text::server_tail(&lat_text::table_of(r)),
        RunDesc::Amo(r) if !r.is_latency() => amo_text::bw_footer(r),
        RunDesc::Amo(r) if r.role == Role::Client => lat_text::client_footer(&amo_text::table_of(r), &lat, percentiles),
        RunDesc::Amo(r) => lat_text::server_tail(&amo_text::table_of(r)),
    }
}

/// One line for a server's log: provider and, per size, the figure this
/// side knows (bandwidth for the bandwidth forms; latency servers only see
/// how many operations arrived).
pub fn summary(run: &RunDesc, rows: &[Row]) -> String {
    let figures: Vec<String> = rows
        .iter()
        .map(|r| match r {
            Row::Bw(b) => format!("{} B {:.2} MB/s", b.size, b.bw_mb_s),
            Row::AmoBw(a) => format!("{} B {:.2} MB/s", a.result.size, a.result.bw_mb_s),
            Row::Lat(l) if l.iterations > 0 => {
                format!("{} B mean {} us", l.size, lat_text::us2(l.stats.mean_ns).trim())
            }
            Row::AmoLat(a) if a.result.iterations > 0 => {
                format!(
                    "{} B mean {} us",
                    a.result.size,
                    lat_text::us2(a.result.stats.mean_ns).trim()
                )
            }
            Row::Lat(l) => format!("{} B {} ops", l.size, l.peer_ops),
            Row::AmoLat(a) => format!("{} B {} ops", a.result.size, a.result.peer_ops),
        })
        .collect();
    let what = if figures.is_empty() {
        "no sizes".to_string()
    } else {
        figures.join(", ")
    };
    format!("{}: {what}", run.provider())
}
