//! The latency tools' text output, byte for byte as the original document
//! (002_*, cxi_send_lat) shows it: 70-dash separators, `Bytes` header,
//! the report-all block, and the server's single `See client for results.`.

use crate::banner::{self, line};
use crate::bw_text::hugepages_value;
use crate::legacy::*;
use fabdiag_engine::LatResult;
use fabdiag_model::{LatRun, LatTool};

pub fn title(tool: LatTool) -> &'static str {
    match tool {
        LatTool::SendLat => SEND_LAT_TITLE,
        LatTool::WriteLat => WRITE_LAT_TITLE,
        LatTool::ReadLat => READ_LAT_TITLE,
    }
}

/// The strings and mode that shape a latency table; every latency-style
/// tool (send/write/read_lat, atomic_lat) supplies one.
#[derive(Clone, Copy, Debug)]
pub struct LatTable {
    pub header: &'static str,
    pub all_header: &'static str,
    pub report_all: bool,
}

/// The table a latency tool's run prints.
pub fn table_of(run: &LatRun) -> LatTable {
    LatTable {
        header: header(run.tool),
        all_header: all_header(run.tool),
        report_all: run.report_all,
    }
}

pub fn header(tool: LatTool) -> &'static str {
    match tool {
        LatTool::SendLat => SEND_LAT_HEADER,
        LatTool::WriteLat => WRITE_LAT_HEADER,
        LatTool::ReadLat => READ_LAT_HEADER,
    }
}

fn all_header(tool: LatTool) -> &'static str {
    match tool {
        LatTool::SendLat => SEND_LAT_ALL_HEADER,
        LatTool::WriteLat => WRITE_LAT_ALL_HEADER,
        LatTool::ReadLat => READ_LAT_ALL_HEADER,
    }
}

fn tsep(t: &LatTable) -> String {
    format!("{}\n", separator(t.header))
}

/// µs with two truncated decimals, `%7lu.%02lu` (originals §4).
pub fn us2(ns: u64) -> String {
    format!("{:>7}.{:02}", ns / 1000, (ns % 1000) / 10)
}

/// µs with three decimals, `%7lu.%03lu`.
pub fn us3(ns: u64) -> String {
    format!("{:>7}.{:03}", ns / 1000, ns % 1000)
}

/// From the first separator through the separator that closes the banner.
pub fn banner(run: &LatRun) -> String {
    let word = run.tool.word();
    let mut o = tsep(&table_of(run));
    o.push_str(TITLE_INDENT);
    o.push_str(title(run.tool));
    o.push('\n');
    line(&mut o, "Device", &run.device);
    line(&mut o, "Service ID", run.service_id);
    crate::bw_text::memory_lines(&mut o, &run.client_mem, &run.server_mem);
    banner::mode(&mut o, run.mode);
    line(&mut o, "Warmup Iters", run.warmup_iterations);
    line(&mut o, "Inter-Iter Gap", format!("{} microseconds", run.gap_us));
    if run.min_size_bytes == run.max_size_bytes {
        line(&mut o, &format!("{word} Size"), run.min_size_bytes);
    } else {
        line(&mut o, &format!("Min {word} Size"), run.min_size_bytes);
        line(&mut o, &format!("Max {word} Size"), run.max_size_bytes);
    }
    if let Some(idc) = &run.idc {
        line(&mut o, "IDC", idc);
    }
    line(&mut o, "LL Cmd Launch", &run.ll);
    line(
        &mut o,
        "Results Reported",
        if run.report_all { "All" } else { "Summary" },
    );
    line(&mut o, "Hugepages", hugepages_value(&run.hugepages));
    banner::addresses(&mut o, run.role, &run.local_address, &run.remote_address);
    if let Some(n) = run.gpus_found {
        o.push_str(&gpus_found(n));
        o.push('\n');
    }
    o.push_str(&tsep(&table_of(run)));
    o
}

/// What the client prints before the first size (summary mode only).
pub fn table_start(t: &LatTable) -> String {
    if t.report_all {
        String::new()
    } else {
        format!("{}\n", t.header)
    }
}

pub fn summary_row(r: &LatResult) -> String {
    let s = &r.stats;
    format!(
        "{:>LAT_SIZE_W$}{GAP}{:>COUNT_W$}{GAP}{}{GAP}{}{GAP}{}{GAP}{}\n",
        r.size,
        s.count,
        us2(s.min_ns),
        us2(s.max_ns),
        us2(s.mean_ns),
        us2(s.stddev_ns)
    )
}

/// One size on the client: the summary row, or in report-all mode every
/// sample, a separator, the header and the summary row. Sizes after the
/// first are preceded by a separator in report-all mode.
pub fn size_block(t: &LatTable, r: &LatResult, first: bool) -> String {
    if !t.report_all {
        return summary_row(r);
    }
    let mut o = String::new();
    if !first {
        o.push_str(&tsep(t));
    }
    o.push_str(t.all_header);
    o.push('\n');
    for (i, ns) in r.samples.iter().flatten().enumerate() {
        o.push_str(&format!("{i:>COUNT_W$}{GAP}{:>LAT_ALL_W$}\n", us3(*ns)));
    }
    o.push_str(&tsep(t));
    o.push_str(t.header);
    o.push('\n');
    o.push_str(&summary_row(r));
    o
}

/// The client's closing lines; with `percentiles`, fabdiag's extra table.
pub fn client_footer(t: &LatTable, results: &[LatResult], percentiles: bool) -> String {
    let mut o = tsep(t);
    if percentiles {
        o.push_str(PERCENTILE_HEADER);
        o.push('\n');
        for r in results {
            let s = &r.stats;
            o.push_str(&format!(
                "{:>LAT_SIZE_W$}{GAP}{}{GAP}{}{GAP}{}{GAP}{}\n",
                r.size,
                us2(s.p50_ns),
                us2(s.p90_ns),
                us2(s.p99_ns),
                us2(s.p999_ns)
            ));
        }
        o.push_str(&tsep(t));
    }
    o
}

/// Everything the server prints after its banner.
pub fn server_tail(t: &LatTable) -> String {
    format!("{SEE_CLIENT}\n{}", tsep(t))
}
