//! The bandwidth tools' text output (banner, header, rows, footer), byte
//! for byte as the original document shows it. Pure functions of their inputs.

use crate::banner::{self, line};
use crate::legacy::*;
use fabdiag_model::units::gbit_s;
use fabdiag_model::{BwRun, BwTool, Hugepages, Mem, RowView, SideMem};

pub fn title(tool: BwTool) -> &'static str {
    match tool {
        BwTool::WriteBw => WRITE_BW_TITLE,
        BwTool::ReadBw => READ_BW_TITLE,
        BwTool::SendBw => SEND_BW_TITLE,
        BwTool::GpuLoopbackBw => LOOPBACK_BW_TITLE,
    }
}

pub fn header(tool: BwTool) -> &'static str {
    match tool {
        BwTool::WriteBw => WRITE_BW_HEADER,
        BwTool::ReadBw => READ_BW_HEADER,
        BwTool::SendBw => SEND_BW_HEADER,
        BwTool::GpuLoopbackBw => LOOPBACK_BW_HEADER,
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

/// The memory lines of a client/server tool: the client's TX and the
/// server's RX buffer, each side's GPU type after its line when that buffer
/// is on a GPU (originals §2.7). The newer upstream adds the client's RX and the
/// server's TX buffer when bidirectional; the original's bidirectional run
/// shows only these two, and the original wins.
pub fn memory_lines(o: &mut String, client: &SideMem, server: &SideMem) {
    line(o, "Client TX Mem", client.tx);
    if let (Mem::Gpu { .. }, Some(t)) = (client.tx, &client.gpu_type) {
        line(o, "Client GPU Type", t);
    }
    line(o, "Server RX Mem", server.rx);
    if let (Mem::Gpu { .. }, Some(t)) = (server.rx, &server.gpu_type) {
        line(o, "Server GPU Type", t);
    }
}

/// A banner's first lines: the separator and the indented title.
fn open(tool: BwTool) -> String {
    format!("{}\n{TITLE_INDENT}{}\n", separator(header(tool)), title(tool))
}

/// A banner's last lines: `Found N GPU(s)` when a buffer is on a GPU,
/// the separator, the column header.
fn close(o: &mut String, tool: BwTool, gpus: Option<u32>) {
    if let Some(n) = gpus {
        o.push_str(&gpus_found(n));
        o.push('\n');
    }
    let hdr = header(tool);
    o.push_str(&separator(hdr));
    o.push('\n');
    o.push_str(hdr);
    o.push('\n');
}

/// Everything from the first separator through the column header.
pub fn banner(run: &BwRun) -> String {
    if run.tool == BwTool::GpuLoopbackBw {
        return loopback_banner(run);
    }
    let word = run.tool.word();
    let mut o = open(run.tool);
    line(&mut o, "Device", &run.device);
    line(&mut o, "Service ID", run.service_id);
    memory_lines(&mut o, &run.client_mem, &run.server_mem);
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
    close(&mut o, run.tool, run.gpus_found);
    o
}

/// cxi_gpu_loopback_bw's banner (originals §3.5): one process, so its own TX
/// and RX buffers, one size and the writes per iteration.
fn loopback_banner(run: &BwRun) -> String {
    let m = &run.client_mem;
    let mut o = open(run.tool);
    line(&mut o, "Device", &run.device);
    line(&mut o, "Service ID", run.service_id);
    line(&mut o, "TX Mem", m.tx);
    line(&mut o, "RX Mem", m.rx);
    if let (true, Some(t)) = (m.tx != Mem::System || m.rx != Mem::System, &m.gpu_type) {
        line(&mut o, "GPU Type", t);
    }
    banner::mode(&mut o, run.mode);
    line(&mut o, "Write Size (B)", run.max_size_bytes);
    line(&mut o, "Cmds per iter", run.list_size);
    line(&mut o, "Hugepages", hugepages_value(&run.hugepages));
    close(&mut o, run.tool, run.gpus_found);
    o
}

pub fn row(tool: BwTool, r: &RowView) -> String {
    let count = match r.count {
        Some(c) => c.to_string(),
        None => NO_COUNT.to_string(),
    };
    let bw = if tool == BwTool::GpuLoopbackBw {
        gbit_s(r.bw_mb_s)
    } else {
        r.bw_mb_s
    };
    format!(
        "{:>SIZE_W$}{GAP}{:>COUNT_W$}{GAP}{:>BW_W$.BW_DECIMALS$}{GAP}{:>MRATE_W$.MRATE_DECIMALS$}\n",
        r.size, count, bw, r.rate_mpkt_s
    )
}

pub fn footer(tool: BwTool) -> String {
    format!("{}\n", separator(header(tool)))
}

/// A whole run as one string (the server's `Listening…` line excluded).
pub fn render(run: &BwRun, rows: &[RowView]) -> String {
    let mut o = banner(run);
    for r in rows {
        o.push_str(&row(run.tool, r));
    }
    o.push_str(&footer(run.tool));
    o
}
