//! The tool catalogue: every pair tool once, with its original name, its
//! subcommand, its name in JSON, its family and the words its texts use.
//! Dispatch, help, option tables, the control protocol's hello and the
//! renderers all take names from here; nothing here does I/O.
//! `BwTool` and `LatTool` are the tools of two families, for the
//! renderers that serve one family only.

use serde::Serialize;

/// A client/server tool of the CXI diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    WriteBw,
    ReadBw,
    SendBw,
    SendLat,
    WriteLat,
    ReadLat,
    AtomicBw,
    AtomicLat,
    /// One process, no server: writes from its TX buffer into its own RX
    /// buffer through the fabric.
    GpuLoopbackBw,
}

/// Which measurement a tool runs; each family has its own session code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Bandwidth(BwTool),
    Latency(LatTool),
    Atomic { latency: bool },
}

struct Entry {
    tool: Tool,
    original: &'static str,
    subcommand: &'static str,
    json: &'static str,
    family: Family,
    /// "Write" in `Write Size`, "AMO" in `AMO Size[B]`.
    word: &'static str,
    /// "writes" in the usage text's "Number of writes per iteration".
    words: &'static str,
    /// One line for `fabdiag -h`.
    summary: &'static str,
}

const CATALOG: [Entry; 9] = [
    Entry {
        tool: Tool::WriteBw,
        original: "cxi_write_bw",
        subcommand: "write-bw",
        json: "write_bw",
        family: Family::Bandwidth(BwTool::WriteBw),
        word: "Write",
        words: "writes",
        summary: "Write bandwidth",
    },
    Entry {
        tool: Tool::ReadBw,
        original: "cxi_read_bw",
        subcommand: "read-bw",
        json: "read_bw",
        family: Family::Bandwidth(BwTool::ReadBw),
        word: "Read",
        words: "reads",
        summary: "Read bandwidth",
    },
    Entry {
        tool: Tool::SendBw,
        original: "cxi_send_bw",
        subcommand: "send-bw",
        json: "send_bw",
        family: Family::Bandwidth(BwTool::SendBw),
        word: "Send",
        words: "sends",
        summary: "Send bandwidth",
    },
    Entry {
        tool: Tool::SendLat,
        original: "cxi_send_lat",
        subcommand: "send-lat",
        json: "send_lat",
        family: Family::Latency(LatTool::SendLat),
        word: "Send",
        words: "sends",
        summary: "Send latency",
    },
    Entry {
        tool: Tool::WriteLat,
        original: "cxi_write_lat",
        subcommand: "write-lat",
        json: "write_lat",
        family: Family::Latency(LatTool::WriteLat),
        word: "Write",
        words: "writes",
        summary: "Write latency",
    },
    Entry {
        tool: Tool::ReadLat,
        original: "cxi_read_lat",
        subcommand: "read-lat",
        json: "read_lat",
        family: Family::Latency(LatTool::ReadLat),
        word: "Read",
        words: "reads",
        summary: "Read latency",
    },
    Entry {
        tool: Tool::AtomicBw,
        original: "cxi_atomic_bw",
        subcommand: "atomic-bw",
        json: "atomic_bw",
        family: Family::Atomic { latency: false },
        word: "AMO",
        words: "AMOs",
        summary: "Atomic bandwidth",
    },
    Entry {
        tool: Tool::AtomicLat,
        original: "cxi_atomic_lat",
        subcommand: "atomic-lat",
        json: "atomic_lat",
        family: Family::Atomic { latency: true },
        word: "AMO",
        words: "AMOs",
        summary: "Atomic latency",
    },
    Entry {
        tool: Tool::GpuLoopbackBw,
        original: "cxi_gpu_loopback_bw",
        subcommand: "gpu-loopback-bw",
        json: "gpu_loopback_bw",
        family: Family::Bandwidth(BwTool::GpuLoopbackBw),
        word: "Write",
        words: "writes",
        summary: "Loopback write bandwidth in one process (GPU or system memory)",
    },
];

/// The other names the originals' documents use for cxi_gpu_loopback_bw: cxi_diags(7)
/// calls it `cxi_gpu_bw_loopback`, its usage text `cxi_loopback_bw`.
pub const LOOPBACK_ALIASES: [&str; 2] = ["cxi_gpu_bw_loopback", "cxi_loopback_bw"];

/// The name Graphcore's host traffic test goes by, which fabdiag answers
/// to as `fabdiag host-traffic`.
pub const HOST_TRAFFIC_ORIGINAL: &str = "gc-hosttraffictest";

impl Tool {
    /// Every tool, in the order help lists them.
    pub fn all() -> impl Iterator<Item = Tool> {
        CATALOG.iter().map(|e| e.tool)
    }

    fn entry(self) -> &'static Entry {
        // The catalogue holds every variant (checked by a test), so the
        // fallback is never taken; it keeps this free of panics.
        CATALOG.iter().find(|e| e.tool == self).unwrap_or(&CATALOG[0])
    }

    /// The original binary's name, e.g. "cxi_write_bw".
    pub fn original_name(self) -> &'static str {
        self.entry().original
    }

    /// fabdiag's subcommand, e.g. "write-bw".
    pub fn subcommand(self) -> &'static str {
        self.entry().subcommand
    }

    /// The name in JSON documents, e.g. "write_bw".
    pub fn json_name(self) -> &'static str {
        self.entry().json
    }

    pub fn family(self) -> Family {
        self.entry().family
    }

    pub fn word(self) -> &'static str {
        self.entry().word
    }

    pub fn words(self) -> &'static str {
        self.entry().words
    }

    pub fn summary(self) -> &'static str {
        self.entry().summary
    }

    pub fn from_original(name: &str) -> Option<Tool> {
        if LOOPBACK_ALIASES.contains(&name) {
            return Some(Tool::GpuLoopbackBw);
        }
        CATALOG.iter().find(|e| e.original == name).map(|e| e.tool)
    }

    /// A tool with a client and a server (every tool but the loopback one).
    pub fn has_server(self) -> bool {
        self != Tool::GpuLoopbackBw
    }

    pub fn from_subcommand(name: &str) -> Option<Tool> {
        CATALOG.iter().find(|e| e.subcommand == name).map(|e| e.tool)
    }

    /// The bandwidth, latency or atomic latency form, for their renderers.
    pub fn is_latency(self) -> bool {
        matches!(self.family(), Family::Latency(_) | Family::Atomic { latency: true })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BwTool {
    WriteBw,
    ReadBw,
    SendBw,
    /// cxi_gpu_loopback_bw: one process, its own TX buffer to its own RX
    /// buffer (originals §3.5).
    GpuLoopbackBw,
}

impl BwTool {
    /// The original binary's name.
    pub fn original_name(self) -> &'static str {
        Tool::from(self).original_name()
    }

    /// "Write", "Read", "Send" as used in banner labels.
    pub fn word(self) -> &'static str {
        Tool::from(self).word()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatTool {
    SendLat,
    WriteLat,
    ReadLat,
}

impl LatTool {
    pub fn original_name(self) -> &'static str {
        Tool::from(self).original_name()
    }

    /// "Send", "Write", "Read" as used in banner labels.
    pub fn word(self) -> &'static str {
        Tool::from(self).word()
    }
}

impl From<BwTool> for Tool {
    fn from(t: BwTool) -> Tool {
        match t {
            BwTool::WriteBw => Tool::WriteBw,
            BwTool::ReadBw => Tool::ReadBw,
            BwTool::SendBw => Tool::SendBw,
            BwTool::GpuLoopbackBw => Tool::GpuLoopbackBw,
        }
    }
}

impl From<LatTool> for Tool {
    fn from(t: LatTool) -> Tool {
        match t {
            LatTool::SendLat => Tool::SendLat,
            LatTool::WriteLat => Tool::WriteLat,
            LatTool::ReadLat => Tool::ReadLat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_one_entry_and_names_round_trip() {
        let all: Vec<Tool> = Tool::all().collect();
        assert_eq!(all.len(), CATALOG.len());
        for t in all {
            assert_eq!(CATALOG.iter().filter(|e| e.tool == t).count(), 1, "{t:?}");
            assert_eq!(Tool::from_original(t.original_name()), Some(t));
            assert_eq!(Tool::from_subcommand(t.subcommand()), Some(t));
            assert_eq!(t.json_name(), t.original_name().trim_start_matches("cxi_"));
            assert_eq!(t.subcommand().replace('-', "_"), t.json_name());
        }
        for alias in LOOPBACK_ALIASES {
            assert_eq!(Tool::from_original(alias), Some(Tool::GpuLoopbackBw));
        }
        assert!(!Tool::GpuLoopbackBw.has_server() && Tool::WriteBw.has_server());
        for b in [BwTool::WriteBw, BwTool::ReadBw, BwTool::SendBw, BwTool::GpuLoopbackBw] {
            assert_eq!(Tool::from(b).family(), Family::Bandwidth(b));
        }
        for l in [LatTool::SendLat, LatTool::WriteLat, LatTool::ReadLat] {
            assert_eq!(Tool::from(l).family(), Family::Latency(l));
        }
        assert!(Tool::AtomicLat.is_latency() && !Tool::AtomicBw.is_latency());
    }
}
