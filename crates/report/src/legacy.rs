//! The originals' fixed text: widths, labels, titles and column headers.
//! Where the original documents (001_*, 002_*) and the newer upstream source
//! disagree, these follow the original documents.

/// Banner labels are left-aligned in this many columns, then ": ".
pub const LABEL_WIDTH: usize = 17;

/// Table column widths (utils_common.h): size, count, bandwidth, rate.
pub const SIZE_W: usize = 12;
pub const COUNT_W: usize = 10;
pub const BW_W: usize = 8;
pub const BW_DECIMALS: usize = 2;
pub const MRATE_W: usize = 15;
pub const MRATE_DECIMALS: usize = 6;
/// Columns are separated by two spaces.
pub const GAP: &str = "  ";
/// Shown in the count column by a side that initiated nothing.
pub const NO_COUNT: &str = "-";

pub const WRITE_BW_TITLE: &str = "CXI RDMA Write Bandwidth Test";
pub const READ_BW_TITLE: &str = "CXI RDMA Read Bandwidth Test";
pub const SEND_BW_TITLE: &str = "CXI RDMA Send Bandwidth Test";
pub const LOOPBACK_BW_TITLE: &str = "CXI Loopback Bandwidth Test";
/// Titles are indented by four spaces.
pub const TITLE_INDENT: &str = "    ";

pub const WRITE_BW_HEADER: &str = "RDMA Size[B]      Writes  BW[MB/s]  PktRate[Mpkt/s]";
pub const READ_BW_HEADER: &str = "RDMA Size[B]       Reads  BW[MB/s]  PktRate[Mpkt/s]";
pub const SEND_BW_HEADER: &str = "Send Size[B]       Sends  BW[MB/s]  PktRate[Mpkt/s]";
/// gpu_loopback_bw prints its bandwidth in Gb/s (MB/s × 8 / 1000).
pub const LOOPBACK_BW_HEADER: &str = "RDMA Size[B]      Writes  BW[Gb/s]  PktRate[Mpkt/s]";

/// Latency tables (original 002_*): size and count 10 wide, each latency
/// `%7lu.%02lu` (10 wide), report-all latencies `%7lu.%03lu` (11 wide).
pub const LAT_SIZE_W: usize = 10;
pub const LAT_W: usize = 10;
pub const LAT_ALL_W: usize = 11;

pub const SEND_LAT_TITLE: &str = "CXI RDMA Send Latency Test";
pub const WRITE_LAT_TITLE: &str = "CXI RDMA Write Latency Test";
pub const READ_LAT_TITLE: &str = "CXI RDMA Read Latency Test";

pub const SEND_LAT_HEADER: &str = "     Bytes       Sends     Min[us]     Max[us]    Mean[us]  StdDev[us]";
pub const WRITE_LAT_HEADER: &str = "     Bytes      Writes     Min[us]     Max[us]    Mean[us]  StdDev[us]";
pub const READ_LAT_HEADER: &str = "     Bytes       Reads     Min[us]     Max[us]    Mean[us]  StdDev[us]";
/// fabdiag's opt-in percentile table, in the same widths.
pub const PERCENTILE_HEADER: &str = "     Bytes     p50[us]     p90[us]     p99[us]   p99.9[us]";

pub const SEND_LAT_ALL_HEADER: &str = "   SendNum  Latency[us]";
pub const WRITE_LAT_ALL_HEADER: &str = "  WriteNum  Latency[us]";
pub const READ_LAT_ALL_HEADER: &str = "   ReadNum  Latency[us]";

/// atomic_bw (original 001_*): 48-dash separators, size 11 wide, rate 13 wide.
pub const ATOMIC_BW_TITLE: &str = "CXI Atomic Memory Operation Bandwidth Test";
pub const ATOMIC_LAT_TITLE: &str = "CXI Atomic Memory Operation Latency Test";
pub const ATOMIC_BW_HEADER: &str = "AMO Size[B]         Ops  BW[MB/s]    OpRate[M/s]";
pub const AMO_SIZE_W: usize = 11;
pub const AMO_RATE_W: usize = 13;
pub const ATOMIC_LAT_HEADER: &str = "     Bytes         Ops     Min[us]     Max[us]    Mean[us]  StdDev[us]";
pub const ATOMIC_LAT_ALL_HEADER: &str = "     OpNum  Latency[us]";

/// The latency server's only result line.
pub const SEE_CLIENT: &str = "See client for results.";

/// The server's first line.
pub fn listening(port: u16) -> String {
    format!("Listening on port {port} for client to connect...")
}

/// A separator as long as the table's header.
pub fn separator(header: &str) -> String {
    "-".repeat(header.len())
}

/// The switch and memory words, which the run model itself carries.
pub use fabdiag_model::words::{DISABLED, ENABLED, NOT_APPLICABLE, SYSTEM_MEM};

/// The line after the banner when a buffer is on a GPU.
pub fn gpus_found(n: u32) -> String {
    format!("Found {n} GPU(s)")
}
