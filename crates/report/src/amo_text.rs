//! The atomic tools' text output. atomic_bw follows the original document
//! (001_*) byte for byte: 48-dash separators, 17-character labels, the
//! `AMO Size[B]` header. atomic_lat uses the latency tables' layout with
//! `Ops` and `OpNum` (the original's send_lat layout).

use crate::banner::{self, line};
use crate::lat_text::LatTable;
use crate::legacy::*;
use fabdiag_engine::SizeResult;
use fabdiag_model::AmoRun;

fn header(run: &AmoRun) -> &'static str {
    if run.is_latency() {
        ATOMIC_LAT_HEADER
    } else {
        ATOMIC_BW_HEADER
    }
}

/// atomic_lat's table, laid out as the latency tools' tables are.
pub fn table_of(run: &AmoRun) -> LatTable {
    LatTable {
        header: ATOMIC_LAT_HEADER,
        all_header: ATOMIC_LAT_ALL_HEADER,
        report_all: run.report_all.unwrap_or(false),
    }
}

fn sep(run: &AmoRun) -> String {
    format!("{}\n", separator(header(run)))
}

/// From the first separator through the one closing the banner; atomic_bw
/// adds its column header.
pub fn banner(run: &AmoRun) -> String {
    let mut o = sep(run);
    o.push_str(TITLE_INDENT);
    o.push_str(if run.is_latency() {
        ATOMIC_LAT_TITLE
    } else {
        ATOMIC_BW_TITLE
    });
    o.push('\n');
    line(&mut o, "Device", &run.device);
    line(&mut o, "Service ID", run.service_id);
    banner::mode(&mut o, run.mode);
    if let Some(w) = run.warmup_iterations {
        line(&mut o, "Warmup Iters", w);
    }
    if let Some(g) = run.gap_us {
        line(&mut o, "Inter-Iter Gap", format!("{g} microseconds"));
    }
    line(&mut o, "Atomic Op", &run.atomic_op);
    line(&mut o, "Atomic Type", &run.atomic_type);
    if let Some(l) = run.list_size {
        line(&mut o, "List Size", l);
    }
    if let Some(h) = &run.hrp {
        line(&mut o, "HRP", h);
    }
    line(&mut o, "IDC", &run.idc);
    line(&mut o, "Matching LEs", &run.matching);
    line(&mut o, "Restricted", &run.restricted);
    if let Some(ll) = &run.ll {
        line(&mut o, "LL Cmd Launch", ll);
    }
    if let Some(r) = run.report_all {
        line(&mut o, "Results Reported", if r { "All" } else { "Summary" });
    }
    if let Some(b) = run.bidirectional {
        line(&mut o, "Bidirectional", if b { ENABLED } else { DISABLED });
    }
    banner::addresses(&mut o, run.role, &run.local_address, &run.remote_address);
    o.push_str(&sep(run));
    if !run.is_latency() {
        o.push_str(ATOMIC_BW_HEADER);
        o.push('\n');
    }
    o
}

/// atomic_bw's row: `%11lu  %10lu  %8.2Lf  %13.6Lf`; `-` for a side that
/// initiated nothing.
pub fn bw_row(r: &SizeResult) -> String {
    let count = if r.initiated {
        r.own.ops.to_string()
    } else {
        NO_COUNT.to_string()
    };
    format!(
        "{:>AMO_SIZE_W$}{GAP}{:>COUNT_W$}{GAP}{:>BW_W$.BW_DECIMALS$}{GAP}{:>AMO_RATE_W$.MRATE_DECIMALS$}\n",
        r.size, count, r.bw_mb_s, r.pkt_rate_mpkt_s
    )
}

pub fn bw_footer(run: &AmoRun) -> String {
    sep(run)
}
