//! gc-hosttraffictest's vocabulary: which way data moves at each end of
//! the buffer, the tests the original runs, one test's measurement, and
//! how many thread blocks a GPU gets by default. Describes; the plan and
//! the run are fabdiag-host-traffic's, the text and JSON fabdiag-report's.

use crate::units::gbps;

/// Thread blocks per SM when `-n` is not given. One block of 256 threads
/// per SM has too few loads in flight to read device memory at its speed:
/// on an H100 (132 SMs; scripts/dev/gpu/tile-blocks.sh, the same bytes per test)
/// tile reads ran at 15,112 Gbps with one block per SM, 22,158 with two,
/// 25,107 with four and 24,001 with eight, against 24,168 for a
/// device-to-device copy counted both ways; tile writes at 25,500 to
/// 25,800 with any of them. Issuing the walk's loads in batches of eight
/// in one block per SM instead was slower (10,406 Gbps), so the kernel
/// stays as it is and the default asks for more blocks.
pub const BLOCKS_PER_SM: u32 = 4;

/// Which way data moves at each end of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// host <- buffer (GPU: device to host) / buffer -> tile (tile reads)
    Read,
    /// host -> buffer (GPU: host to device) / buffer <- tile (tile writes)
    Write,
}

/// One test: a host side, a tile side, or both at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrafficTest {
    pub host: Option<Dir>,
    pub tile: Option<Dir>,
}

impl TrafficTest {
    /// The four simultaneous tests, in the original's order.
    pub const SIMULTANEOUS: [TrafficTest; 4] = [
        TrafficTest {
            host: Some(Dir::Read),
            tile: Some(Dir::Write),
        },
        TrafficTest {
            host: Some(Dir::Write),
            tile: Some(Dir::Read),
        },
        TrafficTest {
            host: Some(Dir::Write),
            tile: Some(Dir::Write),
        },
        TrafficTest {
            host: Some(Dir::Read),
            tile: Some(Dir::Read),
        },
    ];

    /// "host <- buffer <- tile", "buffer -> tile", "host -> buffer", ...
    pub fn description(self) -> String {
        let host = match self.host {
            Some(Dir::Read) => "host <- ",
            Some(Dir::Write) => "host -> ",
            None => "",
        };
        let tile = match self.tile {
            Some(Dir::Read) => " -> tile",
            Some(Dir::Write) => " <- tile",
            None => "",
        };
        format!("{host}buffer{tile}")
    }

    /// "host_from_buffer_from_tile", "buffer_to_tile", ...
    pub fn key(self) -> String {
        let host = match self.host {
            Some(Dir::Read) => "host_from_",
            Some(Dir::Write) => "host_to_",
            None => "",
        };
        let tile = match self.tile {
            Some(Dir::Read) => "_to_tile",
            Some(Dir::Write) => "_from_tile",
            None => "",
        };
        format!("{host}buffer{tile}")
    }
}

/// One test's measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficResult {
    pub test: TrafficTest,
    pub duration_s: f64,
    /// The host side's own elapsed time, when it is not the test's (a
    /// simultaneous test lasts as long as its tile work; the host's figure
    /// is its bytes over the span of the chunks it counted).
    pub host_duration_s: Option<f64>,
    pub host_bytes: u64,
    pub tile_bytes: u64,
    pub error: Option<String>,
}

impl TrafficResult {
    pub fn host_gbps(&self) -> f64 {
        gbps(self.host_bytes, self.host_duration_s.unwrap_or(self.duration_s))
    }

    pub fn tile_gbps(&self) -> f64 {
        gbps(self.tile_bytes, self.duration_s)
    }
}
