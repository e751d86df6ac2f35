//! gc-hosttraffictest's options (reference document 004_*), for CUDA GPUs.
//! Validation only; nothing here touches a GPU.

use crate::getopt::{self, Parsed};
use crate::numbers::parse_strtoul;
use crate::row::{self, Row, Style};
use fabdiag_model::host_traffic::BLOCKS_PER_SM;
use fabdiag_model::host_traffic::{Dir, TrafficTest};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TrafficOpt {
    Json,
    Device,
    Tiles,
    Payload,
    Iters,
    Duration,
    TileRead,
    TileWrite,
    Tile,
    HostRead,
    HostWrite,
    Host,
    MinTile,
    MinHost,
    NoTimeout,
    Repeat,
    Verbose,
    Help,
    Version,
    Chunk,
    RemoteBuffers,
    NoReset,
    SecondaryPcie,
    DumpTiles,
}

/// Boost.Program_options' layout, as the original prints its options.
const STYLE: Style = Style::Boost { width: 32 };

/// In the original's `-h` order.
const ROWS: &[Row<TrafficOpt>] = &[
    Row::flag(TrafficOpt::Json, Some('j'), "json-output", &["Emit JSON output"]),
    Row::valued(
        TrafficOpt::Device,
        Some('d'),
        "device-id",
        "arg",
        &["GPU: CUDA ordinal, UUID (GPU-...) or PCI bus id (default: 0)"],
    ),
    Row::valued(
        TrafficOpt::Tiles,
        Some('n'),
        "num-tiles",
        "arg",
        &["Thread blocks doing tile traffic (default: {BLOCKS_PER_SM} per SM)"],
    ),
    Row::valued(
        TrafficOpt::Payload,
        Some('p'),
        "payload-blocks",
        "arg",
        &["Number of 64 byte blocks per transfer: 2|4 (default: 4)"],
    ),
    Row::valued(
        TrafficOpt::Iters,
        Some('i'),
        "iterations",
        "arg",
        &["Number of 4KB transfers per tile (default: {DEFAULT_ITERATIONS})"],
    ),
    Row::valued(
        TrafficOpt::Duration,
        None,
        "test-duration",
        "arg",
        &["Test duration in seconds for tests without tile access (default: 5)"],
    ),
    Row::flag(
        TrafficOpt::TileRead,
        None,
        "tile-read",
        &["Measure tile read performance"],
    ),
    Row::flag(
        TrafficOpt::TileWrite,
        None,
        "tile-write",
        &["Measure tile write performance"],
    ),
    Row::flag(
        TrafficOpt::Tile,
        None,
        "tile",
        &["Alternative for --tile-read --tile-write"],
    ),
    Row::flag(
        TrafficOpt::HostRead,
        None,
        "host-read",
        &["Measure host read (device to host) performance"],
    ),
    Row::flag(
        TrafficOpt::HostWrite,
        None,
        "host-write",
        &["Measure host write (host to device) performance"],
    ),
    Row::flag(
        TrafficOpt::Host,
        None,
        "host",
        &["Alternative for --host-read --host-write"],
    ),
    Row::valued(
        TrafficOpt::MinTile,
        None,
        "min-tile-bandwidth",
        "arg",
        &["Minimum tile bandwidth (Gbps) expected - fails (exit 3) if not reached"],
    ),
    Row::valued(
        TrafficOpt::MinHost,
        None,
        "min-host-bandwidth",
        "arg",
        &["Minimum host bandwidth (Gbps) expected - fails (exit 3) if not reached"],
    ),
    Row::flag(TrafficOpt::NoTimeout, None, "no-timeout", &["Suppress test timeout"]),
    Row::valued(
        TrafficOpt::Repeat,
        Some('R'),
        "repeat",
        "arg",
        &["Number of times to repeat test (default: 1)"],
    ),
    Row::flag(
        TrafficOpt::Verbose,
        Some('v'),
        "verbose",
        &["Verbose output, with a progress bar on stderr"],
    ),
    Row::valued(
        TrafficOpt::Chunk,
        None,
        "chunk-size",
        "arg",
        &["Host copy chunk in bytes (default: 16777216)"],
    ),
    Row::flag(
        TrafficOpt::RemoteBuffers,
        Some('r'),
        "remote-buffers",
        &["Accepted; on a GPU the buffer is always device memory"],
    ),
    Row::flag(
        TrafficOpt::NoReset,
        None,
        "no-reset",
        &["Accepted; fabdiag never resets a GPU"],
    ),
    Row::flag(
        TrafficOpt::SecondaryPcie,
        None,
        "secondary-pcie",
        &["Accepted and ignored (C600 cards only)"],
    ),
    Row::flag(
        TrafficOpt::DumpTiles,
        None,
        "dump-tiles",
        &["On a failure, print each thread block's progress"],
    ),
    Row::flag(TrafficOpt::Help, Some('h'), "help", &["Produce help message"]),
    Row::flag(TrafficOpt::Version, None, "version", &["Version number"]),
];

/// Every option: what the shells' completions offer.
pub fn completions() -> Vec<row::Completion> {
    row::completions(ROWS, &fill)
}

fn fill(line: &str) -> String {
    let pairs = [
        ("BLOCKS_PER_SM", BLOCKS_PER_SM.to_string()),
        ("DEFAULT_ITERATIONS", DEFAULT_ITERATIONS.to_string()),
    ];
    row::fill_in(line, &pairs)
}

/// What the original's IPU-only options mean on a GPU, as the one line
/// printed when one is given (README "host-traffic" lists them too).
pub const REMOTE_BUFFERS_NOTE: &str = "-r/--remote-buffers: on a GPU the buffer is always device memory that the host reaches through the copy engines, the remote-buffer arrangement; nothing changes";
pub const NO_RESET_NOTE: &str =
    "--no-reset: fabdiag never resets a GPU after a failure, so there is nothing to suppress";
pub const SECONDARY_PCIE_NOTE: &str =
    "--secondary-pcie: a GPU has no secondary PCIe interface (C600 cards only); ignored";

/// Default tile work: 4 KiB transfers per thread block. Scaled up from the
/// original's 100000 so that the tile side of a test moves about 1 TB on a
/// 132-SM GPU with its default `BLOCKS_PER_SM` (4) blocks per SM, 528 in all,
/// well past the L2, so device memory is what is measured. Measured 2026-11-26: a tile test
/// took 0.34 to 0.39 s on an H100 and 0.24 to 0.28 s on an H200, a whole
/// default run (four tests, checks, the GPU's opening) 2.2 s and 1.9 s
/// (docs/results/host-traffic-h100.md, host-traffic-h200.md).
pub const DEFAULT_ITERATIONS: u64 = 500_000;
pub const DEFAULT_DURATION_S: f64 = 5.0;
/// Host copies are issued in chunks of this size (the original's host
/// byte counts are whole multiples of 16 MiB).
pub const DEFAULT_CHUNK: u64 = 16 << 20;

pub fn usage(prog: &str) -> String {
    format!(
        "Usage: {prog} -d DEVICE [options]

Host <-> GPU memory <-> compute traffic test (gc-hosttraffictest for CUDA GPUs).
The GPU's memory is the buffer; host copies run on the copy engines while
thread blocks (\"tiles\") read or write the same buffer.

Allowed options:
{}",
        row::help_block(ROWS, STYLE, &fill)
    )
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrafficOptions {
    pub json: bool,
    pub device: String,
    /// None: `BLOCKS_PER_SM` thread blocks per SM.
    pub tiles: Option<u32>,
    pub payload_blocks: u32,
    pub iterations: u64,
    pub duration_s: f64,
    pub tests: Vec<TrafficTest>,
    pub min_tile_gbps: f64,
    pub min_host_gbps: f64,
    pub timeout: bool,
    pub repeat: u32,
    pub verbose: bool,
    pub chunk: u64,
    /// `--dump-tiles`: on a failure, each thread block's progress.
    pub dump_tiles: bool,
    /// One line per IPU-only option given that has no GPU effect.
    pub notes: Vec<&'static str>,
}

#[derive(Debug, PartialEq)]
pub enum TrafficAction {
    Help,
    Version,
    Run(TrafficOptions),
}

/// The tests a selection of flags asks for: none given, the four
/// simultaneous tests; only tile or only host flags, those alone; both,
/// each chosen host direction together with each chosen tile direction.
pub fn select(tile: &[Dir], host: &[Dir]) -> Vec<TrafficTest> {
    match (tile.is_empty(), host.is_empty()) {
        (true, true) => TrafficTest::SIMULTANEOUS.to_vec(),
        (false, true) => tile
            .iter()
            .map(|&t| TrafficTest {
                host: None,
                tile: Some(t),
            })
            .collect(),
        (true, false) => host
            .iter()
            .map(|&h| TrafficTest {
                host: Some(h),
                tile: None,
            })
            .collect(),
        (false, false) => TrafficTest::SIMULTANEOUS
            .into_iter()
            .filter(|t| t.host.is_some_and(|h| host.contains(&h)) && t.tile.is_some_and(|x| tile.contains(&x)))
            .collect(),
    }
}

/// The options as given, in order, each with its value.
struct Given(Vec<(TrafficOpt, Option<String>)>);

impl Given {
    fn has(&self, id: TrafficOpt) -> bool {
        self.0.iter().any(|(o, _)| *o == id)
    }

    /// The last value given (later ones override earlier ones).
    fn last(&self, id: TrafficOpt) -> Option<String> {
        self.0.iter().rev().find(|(o, _)| *o == id).and_then(|(_, v)| v.clone())
    }

    /// A whole number (as strtoul reads it) that `ok` accepts, or `default`.
    fn whole(&self, id: TrafficOpt, what: &str, ok: &dyn Fn(u64) -> bool, default: u64) -> Result<u64, String> {
        match self.last(id) {
            None => Ok(default),
            Some(s) => parse_strtoul(&s)
                .filter(|v| ok(*v))
                .ok_or_else(|| format!("Invalid {what}: {s}")),
        }
    }

    /// A finite real number above 0 (`min_exclusive`) or at least 0.
    fn real(&self, id: TrafficOpt, what: &str, min_exclusive: bool, default: f64) -> Result<f64, String> {
        match self.last(id) {
            None => Ok(default),
            Some(s) => s
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && if min_exclusive { *v > 0.0 } else { *v >= 0.0 })
                .ok_or_else(|| format!("Invalid {what}: {s}")),
        }
    }

    /// The directions asked for by the `one` flags, or by `both`.
    fn directions(&self, write: TrafficOpt, read: TrafficOpt, both: TrafficOpt) -> Vec<Dir> {
        let mut out = Vec::new();
        if self.has(write) || self.has(both) {
            out.push(Dir::Write);
        }
        if self.has(read) || self.has(both) {
            out.push(Dir::Read);
        }
        out
    }
}

pub fn parse(args: &[String]) -> Result<TrafficAction, String> {
    let mut given = Given(Vec::new());
    for p in getopt::parse(ROWS, args)? {
        match p {
            Parsed::Opt(id, v) => given.0.push((id, v)),
            Parsed::Operand(s) => return Err(format!("unexpected argument: {s}")),
        }
    }
    if given.has(TrafficOpt::Help) {
        return Ok(TrafficAction::Help);
    }
    if given.has(TrafficOpt::Version) {
        return Ok(TrafficAction::Version);
    }
    settings(&given).map(TrafficAction::Run)
}

fn settings(g: &Given) -> Result<TrafficOptions, String> {
    use TrafficOpt as T;
    let device = match g.last(T::Device) {
        Some(d) if d.trim().is_empty() => return Err("Invalid device id: ''".into()),
        Some(d) => d,
        None => "0".into(),
    };
    let tiles = match g.last(T::Tiles) {
        None => None,
        Some(_) => Some(g.whole(T::Tiles, "number of tiles", &|v| (1..=65535).contains(&v), 0)? as u32),
    };
    let chunk_ok = |v: u64| v >= 4096 && v.is_multiple_of(4096);
    let tile = g.directions(T::TileWrite, T::TileRead, T::Tile);
    let host = g.directions(T::HostWrite, T::HostRead, T::Host);
    Ok(TrafficOptions {
        json: g.has(T::Json),
        device,
        tiles,
        payload_blocks: g.whole(T::Payload, "payload blocks (2 or 4)", &|v| v == 2 || v == 4, 4)? as u32,
        iterations: g.whole(T::Iters, "iterations", &|v| v > 0, DEFAULT_ITERATIONS)?,
        duration_s: g.real(T::Duration, "test duration", true, DEFAULT_DURATION_S)?,
        tests: select(&tile, &host),
        min_tile_gbps: g.real(T::MinTile, "minimum tile bandwidth", false, 0.0)?,
        min_host_gbps: g.real(T::MinHost, "minimum host bandwidth", false, 0.0)?,
        timeout: !g.has(T::NoTimeout),
        repeat: g.whole(T::Repeat, "repeat count", &|v| (1..=100000).contains(&v), 1)? as u32,
        verbose: g.has(T::Verbose),
        chunk: g.whole(
            T::Chunk,
            "chunk size (bytes, a multiple of 4096)",
            &chunk_ok,
            DEFAULT_CHUNK,
        )?,
        dump_tiles: g.has(T::DumpTiles),
        notes: [
            (T::RemoteBuffers, REMOTE_BUFFERS_NOTE),
            (T::NoReset, NO_RESET_NOTE),
            (T::SecondaryPcie, SECONDARY_PCIE_NOTE),
        ]
        .into_iter()
        .filter(|(t, _)| g.has(*t))
        .map(|(_, n)| n)
        .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<TrafficAction, String> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn opts(a: &[&str]) -> TrafficOptions {
        match p(a).unwrap() {
            TrafficAction::Run(o) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_and_selection() {
        let o = opts(&["-d", "0", "-j"]);
        assert!(o.json && o.timeout && o.tiles.is_none());
        assert_eq!(
            (o.payload_blocks, o.repeat, o.chunk, o.iterations),
            (4, 1, 16 << 20, DEFAULT_ITERATIONS)
        );
        assert_eq!(o.tests, TrafficTest::SIMULTANEOUS.to_vec());
        let t: Vec<String> = opts(&["--tile"]).tests.iter().map(|t| t.description()).collect();
        assert_eq!(t, ["buffer <- tile", "buffer -> tile"]);
        let h: Vec<String> = opts(&["--host"]).tests.iter().map(|t| t.description()).collect();
        assert_eq!(h, ["host -> buffer", "host <- buffer"]);
        let both: Vec<String> = opts(&["--tile-read", "--host-write"])
            .tests
            .iter()
            .map(|t| t.description())
            .collect();
        assert_eq!(both, ["host -> buffer -> tile"]);
        assert_eq!(
            opts(&["-d", "GPU-4c9a", "-n", "8", "-p", "2", "-R", "3", "--no-timeout"]).device,
            "GPU-4c9a"
        );
    }

    #[test]
    fn the_ipu_only_options_are_accepted_with_their_gpu_meaning() {
        let o = opts(&["-r", "--no-reset", "--secondary-pcie", "--dump-tiles"]);
        assert_eq!(o.notes, [REMOTE_BUFFERS_NOTE, NO_RESET_NOTE, SECONDARY_PCIE_NOTE]);
        assert!(o.dump_tiles);
        assert_eq!(opts(&["--remote-buffers"]).notes, [REMOTE_BUFFERS_NOTE]);
        let plain = opts(&[]);
        assert!(plain.notes.is_empty() && !plain.dump_tiles);
        // every one is in -h
        for name in ["--remote-buffers", "--no-reset", "--secondary-pcie", "--dump-tiles"] {
            assert!(usage("x").contains(name), "{name}");
        }
    }

    #[test]
    fn bad_input() {
        assert_eq!(p(&["-p", "3"]).unwrap_err(), "Invalid payload blocks (2 or 4): 3");
        assert_eq!(p(&["-n", "0"]).unwrap_err(), "Invalid number of tiles: 0");
        assert_eq!(p(&["-i", "-5"]).unwrap_err(), "Invalid iterations: -5");
        assert_eq!(p(&["--test-duration", "0"]).unwrap_err(), "Invalid test duration: 0");
        assert_eq!(
            p(&["--min-host-bandwidth", "-1"]).unwrap_err(),
            "Invalid minimum host bandwidth: -1"
        );
        assert_eq!(p(&["-R", "0"]).unwrap_err(), "Invalid repeat count: 0");
        assert_eq!(
            p(&["--chunk-size", "1000"]).unwrap_err(),
            "Invalid chunk size (bytes, a multiple of 4096): 1000"
        );
        assert_eq!(p(&["-d", ""]).unwrap_err(), "Invalid device id: ''");
        assert_eq!(p(&["extra"]).unwrap_err(), "unexpected argument: extra");
        assert_eq!(p(&["--bogus"]).unwrap_err(), "unrecognized option '--bogus'");
        assert_eq!(p(&["--dump"]).unwrap(), p(&["--dump-tiles"]).unwrap());
        assert_eq!(p(&["-h"]).unwrap(), TrafficAction::Help);
    }
}
