//! The originals' fixed text: widths, labels, titles and column headers.
//! Where the seed documents (001_*, 002_*) and the newer upstream source
//! disagree, these follow the seed documents.

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
/// Titles are indented by four spaces.
pub const TITLE_INDENT: &str = "    ";

pub const WRITE_BW_HEADER: &str = "RDMA Size[B]      Writes  BW[MB/s]  PktRate[Mpkt/s]";
pub const READ_BW_HEADER: &str = "RDMA Size[B]       Reads  BW[MB/s]  PktRate[Mpkt/s]";
pub const SEND_BW_HEADER: &str = "Send Size[B]       Sends  BW[MB/s]  PktRate[Mpkt/s]";

/// The server's first line.
pub fn listening(port: u16) -> String {
    format!("Listening on port {port} for client to connect...")
}

/// A separator as long as the table's header.
pub fn separator(header: &str) -> String {
    "-".repeat(header.len())
}

pub const ENABLED: &str = "Enabled";
pub const DISABLED: &str = "Disabled";
pub const NOT_APPLICABLE: &str = "Disabled - Not Applicable";
pub const SYSTEM_MEM: &str = "System";
