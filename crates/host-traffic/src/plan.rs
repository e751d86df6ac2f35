//! From options and the GPU's facts to what a run allocates and launches.
//! The device buffer is two disjoint regions, so every test can check its
//! data (overlapping host and tile access to the same bytes is a race):
//! the host region, which host copies cycle through chunk by chunk, and
//! the tile region, split into one power-of-two slice per thread block and
//! sized to several times the L2 cache, so tiles measure device memory.

use fabdiag_gpu::launch::TileWalk;
use fabdiag_model::host_traffic::BLOCKS_PER_SM;
use thiserror::Error;

/// Bytes one tile transfer moves (the original's "4KB transfers").
pub const TRANSFER: u64 = 4096;
/// Threads per block: one 16-byte vector each per transfer.
pub const THREADS: u32 = (TRANSFER / 16) as u32;
/// Host chunks in flight on a copy stream (and slots of the host region).
pub const HOST_SLOTS: u64 = 4;
/// The tile region is at least this many times the L2 cache.
pub const L2_FACTOR: u64 = 4;
/// Never less than this per block, whatever the L2.
pub const MIN_BLOCK_REGION: u64 = 64 << 10;
/// Leave this share of free device memory alone.
const HEADROOM: f64 = 0.9;

/// What the plan needs to know about the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuFacts {
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub free_bytes: u64,
    /// Copy engines that overlap with kernels (asyncEngineCount).
    pub copy_engines: u32,
}

/// What the options ask for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    /// Thread blocks; None: `BLOCKS_PER_SM` per SM.
    pub tiles: Option<u32>,
    /// 64-byte blocks per piece a tile moves (2 or 4).
    pub payload_blocks: u32,
    /// Transfers per block.
    pub iterations: u64,
    /// Host chunk size in bytes.
    pub chunk: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub blocks: u32,
    pub threads: u32,
    /// Bytes of one contiguous piece a tile moves (`-p` × 64).
    pub piece: u64,
    /// Each block's slice of the tile region, a power of two.
    pub block_region: u64,
    pub tile_region: u64,
    pub host_region: u64,
    pub chunk: u64,
    pub iterations: u64,
    /// What each tile test moves in total.
    pub tile_bytes: u64,
    /// Whether a host read and a host write could overlap (two copy
    /// engines); the tests never need it, `-v` reports it.
    pub copy_engines: u32,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("the GPU reports no copy engine that can overlap with kernels (asyncEngineCount 0): host and tile traffic cannot run at once")]
    NoCopyEngine,
    #[error("the test needs {need} bytes of GPU memory ({tile} for the tiles, {host} for host chunks) and {free} are free; lower -n or --chunk-size")]
    OutOfMemory { need: u64, tile: u64, host: u64, free: u64 },
    #[error("-n {blocks} × -i {iterations} × 4096 bytes does not fit in 64 bits")]
    TooMuchWork { blocks: u32, iterations: u64 },
}

impl Plan {
    pub fn new(r: &Request, g: &GpuFacts, needs_overlap: bool) -> Result<Plan, PlanError> {
        if needs_overlap && g.copy_engines == 0 {
            return Err(PlanError::NoCopyEngine);
        }
        let blocks = r.tiles.unwrap_or(g.sm_count.saturating_mul(BLOCKS_PER_SM)).max(1);
        let piece = u64::from(r.payload_blocks) * 64;
        let tile_bytes = u64::from(blocks)
            .checked_mul(r.iterations)
            .and_then(|x| x.checked_mul(TRANSFER))
            .ok_or(PlanError::TooMuchWork {
                blocks,
                iterations: r.iterations,
            })?;
        let want = (g.l2_bytes.saturating_mul(L2_FACTOR)).div_ceil(u64::from(blocks));
        let block_region = want.max(MIN_BLOCK_REGION).max(piece).next_power_of_two();
        let tile_region = block_region * u64::from(blocks);
        let host_region = r.chunk * HOST_SLOTS;
        let need = tile_region + host_region;
        let free = (g.free_bytes as f64 * HEADROOM) as u64;
        if need > free {
            return Err(PlanError::OutOfMemory {
                need,
                tile: tile_region,
                host: host_region,
                free: g.free_bytes,
            });
        }
        Ok(Plan {
            blocks,
            threads: THREADS,
            piece,
            block_region,
            tile_region,
            host_region,
            chunk: r.chunk,
            iterations: r.iterations,
            tile_bytes,
            copy_engines: g.copy_engines,
        })
    }

    /// Pieces in one block's slice.
    pub fn slots(&self) -> u64 {
        self.block_region / self.piece
    }

    /// Pieces a block writes in a whole tile test; the data check looks at
    /// the first `min(slots, this)` of them in visiting order.
    pub fn pieces_per_block(&self) -> u64 {
        self.iterations.saturating_mul(TRANSFER / self.piece)
    }

    /// The tile kernels' walk for a test with `seed`, over the tile region
    /// at offset 0 of the device buffer (its address is the launcher's).
    pub fn walk(&self, seed: u32) -> TileWalk {
        TileWalk {
            region: 0,
            blocks: self.blocks,
            threads: self.threads,
            block_region: self.block_region,
            piece: self.piece,
            iterations: self.iterations,
            seed,
        }
    }

    /// Where the host region starts in the device buffer (after the tiles').
    pub fn host_offset(&self) -> u64 {
        self.tile_region
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> GpuFacts {
        GpuFacts {
            sm_count: 132,
            l2_bytes: 50 << 20,
            free_bytes: 79 << 30,
            copy_engines: 3,
        }
    }

    fn req() -> Request {
        Request {
            tiles: None,
            payload_blocks: 4,
            iterations: 100_000,
            chunk: 16 << 20,
        }
    }

    #[test]
    fn tiles_cover_several_l2s_in_power_of_two_slices() {
        let p = Plan::new(&req(), &h100(), true).unwrap();
        assert_eq!((p.blocks, p.threads, p.piece), (4 * 132, 256, 256));
        assert!(p.block_region.is_power_of_two());
        assert!(p.tile_region >= 4 * (50 << 20), "{}", p.tile_region);
        assert_eq!(p.tile_region, p.block_region * 4 * 132);
        assert_eq!(p.host_region, 64 << 20);
        assert_eq!(p.host_offset(), p.tile_region);
        assert_eq!(p.tile_bytes, 4 * 132 * 100_000 * 4096);
        assert_eq!(p.slots(), p.block_region / 256);
        assert_eq!(p.pieces_per_block(), 100_000 * 16);
        // -n and -p shape it; a tiny L2 still gets 64 KiB slices
        let small = GpuFacts {
            l2_bytes: 1 << 10,
            ..h100()
        };
        let p = Plan::new(
            &Request {
                tiles: Some(8),
                payload_blocks: 2,
                ..req()
            },
            &small,
            true,
        )
        .unwrap();
        assert_eq!((p.blocks, p.piece, p.block_region), (8, 128, 64 << 10));
    }

    #[test]
    fn refusals_say_what_to_change() {
        let tiny = GpuFacts {
            free_bytes: 100 << 20,
            ..h100()
        };
        let e = Plan::new(&req(), &tiny, true).unwrap_err();
        assert!(matches!(e, PlanError::OutOfMemory { .. }), "{e}");
        assert!(e.to_string().contains("lower -n or --chunk-size"));
        let none = GpuFacts {
            copy_engines: 0,
            ..h100()
        };
        assert_eq!(Plan::new(&req(), &none, true).unwrap_err(), PlanError::NoCopyEngine);
        assert!(
            Plan::new(&req(), &none, false).is_ok(),
            "tile-only needs no copy engine"
        );
        let e = Plan::new(
            &Request {
                iterations: u64::MAX / 2,
                ..req()
            },
            &h100(),
            true,
        )
        .unwrap_err();
        assert!(matches!(e, PlanError::TooMuchWork { .. }));
    }
}
