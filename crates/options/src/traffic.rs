//! gc-hosttraffictest's options (reference document 004_*), for CUDA GPUs.
//! Validation only; nothing here touches a GPU.

use crate::getopt::{self, OptDef, Parsed};
use crate::numbers::parse_strtoul;
use fabdiag_model::traffic::BLOCKS_PER_SM;
use fabdiag_model::traffic::{Dir, TrafficTest};

/// Every option as (short, long, takes an argument), for completions.
pub fn options() -> impl Iterator<Item = (Option<char>, &'static str, bool)> {
    DEFS.iter().map(|d| (d.short, d.long, d.takes_arg))
}

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

const DEFS: &[OptDef<TrafficOpt>] = &[
    OptDef {
        id: TrafficOpt::Json,
        short: Some('j'),
        long: "json-output",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Device,
        short: Some('d'),
        long: "device-id",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::Tiles,
        short: Some('n'),
        long: "num-tiles",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::Payload,
        short: Some('p'),
        long: "payload-blocks",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::Iters,
        short: Some('i'),
        long: "iterations",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::Duration,
        short: None,
        long: "test-duration",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::TileRead,
        short: None,
        long: "tile-read",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::TileWrite,
        short: None,
        long: "tile-write",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Tile,
        short: None,
        long: "tile",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::HostRead,
        short: None,
        long: "host-read",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::HostWrite,
        short: None,
        long: "host-write",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Host,
        short: None,
        long: "host",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::MinTile,
        short: None,
        long: "min-tile-bandwidth",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::MinHost,
        short: None,
        long: "min-host-bandwidth",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::NoTimeout,
        short: None,
        long: "no-timeout",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Repeat,
        short: Some('R'),
        long: "repeat",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::Verbose,
        short: Some('v'),
        long: "verbose",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Help,
        short: Some('h'),
        long: "help",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Version,
        short: None,
        long: "version",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::Chunk,
        short: None,
        long: "chunk-size",
        takes_arg: true,
    },
    OptDef {
        id: TrafficOpt::RemoteBuffers,
        short: Some('r'),
        long: "remote-buffers",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::NoReset,
        short: None,
        long: "no-reset",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::SecondaryPcie,
        short: None,
        long: "secondary-pcie",
        takes_arg: false,
    },
    OptDef {
        id: TrafficOpt::DumpTiles,
        short: None,
        long: "dump-tiles",
        takes_arg: false,
    },
];

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
  -j [ --json-output ]          Emit JSON output
  -d [ --device-id ] arg        GPU: CUDA ordinal, UUID (GPU-...) or PCI bus id (default: 0)
  -n [ --num-tiles ] arg        Thread blocks doing tile traffic (default: {BLOCKS_PER_SM} per SM)
  -p [ --payload-blocks ] arg   Number of 64 byte blocks per transfer: 2|4 (default: 4)
  -i [ --iterations ] arg       Number of 4KB transfers per tile (default: {DEFAULT_ITERATIONS})
  --test-duration arg           Test duration in seconds for tests without tile access (default: 5)
  --tile-read                   Measure tile read performance
  --tile-write                  Measure tile write performance
  --tile                        Alternative for --tile-read --tile-write
  --host-read                   Measure host read (device to host) performance
  --host-write                  Measure host write (host to device) performance
  --host                        Alternative for --host-read --host-write
  --min-tile-bandwidth arg      Minimum tile bandwidth (Gbps) expected - fails (exit 3) if not reached
  --min-host-bandwidth arg      Minimum host bandwidth (Gbps) expected - fails (exit 3) if not reached
  --no-timeout                  Suppress test timeout
  -R [ --repeat ] arg           Number of times to repeat test (default: 1)
  -v [ --verbose ]              Verbose output, with a progress bar on stderr
  --chunk-size arg              Host copy chunk in bytes (default: 16777216)
  -r [ --remote-buffers ]       Accepted; on a GPU the buffer is always device memory
  --no-reset                    Accepted; fabdiag never resets a GPU
  --secondary-pcie              Accepted and ignored (C600 cards only)
  --dump-tiles                  On a failure, print each thread block's progress
  -h [ --help ]                 Produce help message
  --version                     Version number
"
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

pub fn parse(args: &[String]) -> Result<TrafficAction, String> {
    let mut vals: Vec<(TrafficOpt, Option<String>)> = Vec::new();
    for p in getopt::parse(DEFS, args)? {
        match p {
            Parsed::Opt(id, v) => vals.push((id, v)),
            Parsed::Operand(s) => return Err(format!("unexpected argument: {s}")),
        }
    }
    let has = |id: TrafficOpt| vals.iter().any(|(o, _)| *o == id);
    let last = |id: TrafficOpt| vals.iter().rev().find(|(o, _)| *o == id).and_then(|(_, v)| v.clone());
    if has(TrafficOpt::Help) {
        return Ok(TrafficAction::Help);
    }
    if has(TrafficOpt::Version) {
        return Ok(TrafficAction::Version);
    }
    let num = |id: TrafficOpt, what: &str, ok: &dyn Fn(u64) -> bool, default: u64| -> Result<u64, String> {
        match last(id) {
            None => Ok(default),
            Some(s) => parse_strtoul(&s)
                .filter(|v| ok(*v))
                .ok_or_else(|| format!("Invalid {what}: {s}")),
        }
    };
    let real = |id: TrafficOpt, what: &str, min_exclusive: bool, default: f64| -> Result<f64, String> {
        match last(id) {
            None => Ok(default),
            Some(s) => s
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && if min_exclusive { *v > 0.0 } else { *v >= 0.0 })
                .ok_or_else(|| format!("Invalid {what}: {s}")),
        }
    };
    let device = match last(TrafficOpt::Device) {
        Some(d) if d.trim().is_empty() => return Err("Invalid device id: ''".into()),
        Some(d) => d,
        None => "0".into(),
    };
    let tiles = match last(TrafficOpt::Tiles) {
        None => None,
        Some(_) => Some(num(TrafficOpt::Tiles, "number of tiles", &|v| (1..=65535).contains(&v), 0)? as u32),
    };
    let payload_blocks = num(TrafficOpt::Payload, "payload blocks (2 or 4)", &|v| v == 2 || v == 4, 4)? as u32;
    let iterations = num(TrafficOpt::Iters, "iterations", &|v| v > 0, DEFAULT_ITERATIONS)?;
    let duration_s = real(TrafficOpt::Duration, "test duration", true, DEFAULT_DURATION_S)?;
    let min_tile_gbps = real(TrafficOpt::MinTile, "minimum tile bandwidth", false, 0.0)?;
    let min_host_gbps = real(TrafficOpt::MinHost, "minimum host bandwidth", false, 0.0)?;
    let repeat = num(TrafficOpt::Repeat, "repeat count", &|v| (1..=100000).contains(&v), 1)? as u32;
    let chunk = num(
        TrafficOpt::Chunk,
        "chunk size (bytes, a multiple of 4096)",
        &|v| v >= 4096 && v % 4096 == 0,
        DEFAULT_CHUNK,
    )?;
    let mut tile = Vec::new();
    if has(TrafficOpt::TileWrite) || has(TrafficOpt::Tile) {
        tile.push(Dir::Write);
    }
    if has(TrafficOpt::TileRead) || has(TrafficOpt::Tile) {
        tile.push(Dir::Read);
    }
    let mut host = Vec::new();
    if has(TrafficOpt::HostWrite) || has(TrafficOpt::Host) {
        host.push(Dir::Write);
    }
    if has(TrafficOpt::HostRead) || has(TrafficOpt::Host) {
        host.push(Dir::Read);
    }
    Ok(TrafficAction::Run(TrafficOptions {
        json: has(TrafficOpt::Json),
        device,
        tiles,
        payload_blocks,
        iterations,
        duration_s,
        tests: select(&tile, &host),
        min_tile_gbps,
        min_host_gbps,
        timeout: !has(TrafficOpt::NoTimeout),
        repeat,
        verbose: has(TrafficOpt::Verbose),
        chunk,
        dump_tiles: has(TrafficOpt::DumpTiles),
        notes: [
            (TrafficOpt::RemoteBuffers, REMOTE_BUFFERS_NOTE),
            (TrafficOpt::NoReset, NO_RESET_NOTE),
            (TrafficOpt::SecondaryPcie, SECONDARY_PCIE_NOTE),
        ]
        .into_iter()
        .filter(|(t, _)| has(*t))
        .map(|(_, n)| n)
        .collect(),
    }))
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
