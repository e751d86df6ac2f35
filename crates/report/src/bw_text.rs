//! The bandwidth tools' text output (banner, header, rows, footer), byte
//! for byte as the seed document shows it. Pure functions of their inputs.

use crate::banner::{self, line};
use crate::legacy::*;
use crate::model::{BwRun, BwTool, Hugepages, RowView};

pub fn title(tool: BwTool) -> &'static str {
    match tool {
        BwTool::WriteBw => WRITE_BW_TITLE,
        BwTool::ReadBw => READ_BW_TITLE,
        BwTool::SendBw => SEND_BW_TITLE,
    }
}

pub fn header(tool: BwTool) -> &'static str {
    match tool {
        BwTool::WriteBw => WRITE_BW_HEADER,
        BwTool::ReadBw => READ_BW_HEADER,
        BwTool::SendBw => SEND_BW_HEADER,
    }
}

fn enabled(b: bool) -> &'static str {
    if b {
        ENABLED
    } else {
        DISABLED
    }
}

pub fn hugepages_value(h: &Hugepages) -> String {
    match h {
        Hugepages::Disabled => DISABLED.into(),
        Hugepages::NotApplicable => NOT_APPLICABLE.into(),
        Hugepages::Enabled { size, pages } => format!("{ENABLED} ({size} - {pages} pages)"),
    }
}

/// Everything from the first separator through the column header.
pub fn banner(run: &BwRun) -> String {
    let hdr = header(run.tool);
    let sep = separator(hdr);
    let word = run.tool.word();
    let mut o = String::new();
    o.push_str(&sep);
    o.push('\n');
    o.push_str(TITLE_INDENT);
    o.push_str(title(run.tool));
    o.push('\n');
    line(&mut o, "Device", &run.device);
    line(&mut o, "Service ID", run.service_id);
    line(&mut o, "Client TX Mem", SYSTEM_MEM);
    line(&mut o, "Server RX Mem", SYSTEM_MEM);
    banner::mode(&mut o, run.mode);
    if run.min_size_bytes == run.max_size_bytes {
        line(&mut o, &format!("{word} Size"), run.min_size_bytes);
    } else {
        line(&mut o, &format!("Min {word} Size"), run.min_size_bytes);
        line(&mut o, &format!("Max {word} Size"), run.max_size_bytes);
    }
    line(&mut o, "List Size", run.list_size);
    if let Some(h) = &run.hrp {
        line(&mut o, "HRP", h);
    }
    if let Some(i) = &run.idc {
        line(&mut o, "IDC", i);
    }
    line(&mut o, "Bidirectional", enabled(run.bidirectional));
    line(
        &mut o,
        "Max RDMA Buf",
        format!("{} ({} used)", run.max_buf_bytes, run.buf_used_bytes),
    );
    line(&mut o, "RDMA Buf Align", run.buf_align_bytes);
    line(&mut o, "Hugepages", hugepages_value(&run.hugepages));
    banner::addresses(&mut o, run.role, &run.local_address, &run.remote_address);
    o.push_str(&sep);
    o.push('\n');
    o.push_str(hdr);
    o.push('\n');
    o
}

pub fn row(r: &RowView) -> String {
    let count = match r.count {
        Some(c) => c.to_string(),
        None => NO_COUNT.to_string(),
    };
    format!(
        "{:>SIZE_W$}{GAP}{:>COUNT_W$}{GAP}{:>BW_W$.BW_DECIMALS$}{GAP}{:>MRATE_W$.MRATE_DECIMALS$}\n",
        r.size, count, r.bw_mb_s, r.rate_mpkt_s
    )
}

pub fn footer(tool: BwTool) -> String {
    format!("{}\n", separator(header(tool)))
}

/// A whole run as one string (the server's `Listening…` line excluded).
pub fn render(run: &BwRun, rows: &[RowView]) -> String {
    let mut o = banner(run);
    for r in rows {
        o.push_str(&row(r));
    }
    o.push_str(&footer(run.tool));
    o
}
