//! The host-traffic kernels' launches as data: which kernel, its grid and
//! block, and its arguments in the order and widths the kernel declares
//! (crates/gpu/kernels/traffic.cu). Pure: no driver call, no memory.
//! `cuda::Kernels` hands a `Launch` to cuLaunchKernel; the CPU build of the
//! kernels (crates/host-traffic/tests/kernels_on_cpu.rs) runs the same `Launch`,
//! so the argument lists fabdiag passes on a GPU are the ones tested
//! without one. Addresses here are device addresses, already checked by
//! the caller against live allocations.

/// Blocks and threads of the grid-stride kernels (fill, verify).
pub const STRIDE_GRID: u32 = 1024;
pub const STRIDE_BLOCK: u32 = 256;
/// Threads of verify_tiles (one block per tile block).
pub const VERIFY_TILES_BLOCK: u32 = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Gate,
    TileWrite,
    TileRead,
    Fill,
    Verify,
    VerifyTiles,
}

impl Kernel {
    pub const ALL: [Kernel; 6] = [
        Kernel::Gate,
        Kernel::TileWrite,
        Kernel::TileRead,
        Kernel::Fill,
        Kernel::Verify,
        Kernel::VerifyTiles,
    ];

    /// Its name in the PTX (`extern "C"`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Gate => "gate",
            Kernel::TileWrite => "tile_write",
            Kernel::TileRead => "tile_read",
            Kernel::Fill => "fill",
            Kernel::Verify => "verify",
            Kernel::VerifyTiles => "verify_tiles",
        }
    }
}

/// One kernel argument, by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A device address (a 64-bit parameter).
    Ptr(u64),
    U64(u64),
    U32(u32),
}

impl Arg {
    /// The PTX parameter type it fills.
    pub fn ptx_type(self) -> &'static str {
        match self {
            Arg::Ptr(_) | Arg::U64(_) => ".u64",
            Arg::U32(_) => ".u32",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub kernel: Kernel,
    pub grid: u32,
    pub block: u32,
    pub args: Vec<Arg>,
}

/// Holds its stream until the u32 at `flag` is set, or `max_ns` passes
/// (then the u32 at `timed_out` is set).
pub fn gate(flag: u64, max_ns: u64, timed_out: u64) -> Launch {
    Launch {
        kernel: Kernel::Gate,
        grid: 1,
        block: 1,
        args: vec![Arg::Ptr(flag), Arg::U64(max_ns), Arg::Ptr(timed_out)],
    }
}

/// What a tile test's kernel walks: `blocks` slices of `block_region`
/// bytes from `region`, `iterations` transfers of `piece`-byte pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileWalk {
    pub region: u64,
    pub blocks: u32,
    pub threads: u32,
    pub block_region: u64,
    pub piece: u64,
    pub iterations: u64,
    pub seed: u32,
}

/// The tile work: writes, or reads counting mismatched words into the u64
/// at `mismatches`; `progress` (0: none) is one u64 per block.
pub fn tile(w: &TileWalk, write: bool, mismatches: u64, progress: u64) -> Launch {
    let mut args = vec![
        Arg::Ptr(w.region),
        Arg::U64(w.block_region),
        Arg::U64(w.piece),
        Arg::U64(w.iterations),
        Arg::U32(w.seed),
    ];
    if !write {
        args.push(Arg::Ptr(mismatches));
    }
    args.push(Arg::Ptr(progress));
    Launch {
        kernel: if write { Kernel::TileWrite } else { Kernel::TileRead },
        grid: w.blocks,
        block: w.threads,
        args,
    }
}

/// `len` bytes at `buf` get the pattern of vector `first_vec` onwards.
pub fn fill(buf: u64, len: u64, first_vec: u64, seed: u32) -> Launch {
    Launch {
        kernel: Kernel::Fill,
        grid: STRIDE_GRID,
        block: STRIDE_BLOCK,
        args: vec![Arg::Ptr(buf), Arg::U64(first_vec), Arg::U64(len / 16), Arg::U32(seed)],
    }
}

/// Counts the vectors of `len` bytes at `buf` off the pattern (from
/// vector `first_vec`) into the u64 at `count`, the lowest at `first`.
pub fn verify(buf: u64, len: u64, first_vec: u64, seed: u32, count: u64, first: u64) -> Launch {
    Launch {
        kernel: Kernel::Verify,
        grid: STRIDE_GRID,
        block: STRIDE_BLOCK,
        args: vec![
            Arg::Ptr(buf),
            Arg::U64(first_vec),
            Arg::U64(len / 16),
            Arg::U32(seed),
            Arg::Ptr(count),
            Arg::Ptr(first),
        ],
    }
}

/// After tile writes: the first `pieces` pieces of every block's walk.
pub fn verify_tiles(w: &TileWalk, pieces: u64, count: u64, first: u64) -> Launch {
    Launch {
        kernel: Kernel::VerifyTiles,
        grid: w.blocks,
        block: VERIFY_TILES_BLOCK,
        args: vec![
            Arg::Ptr(w.region),
            Arg::U64(w.block_region),
            Arg::U64(w.piece),
            Arg::U64(pieces),
            Arg::U32(w.seed),
            Arg::Ptr(count),
            Arg::Ptr(first),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::TRAFFIC_PTX;

    /// Each `.visible .entry`'s parameter types, from the committed PTX.
    fn ptx_params(name: &str) -> Vec<String> {
        let head = format!(".visible .entry {name}(");
        let at = TRAFFIC_PTX
            .find(&head)
            .unwrap_or_else(|| panic!("no kernel {name} in the PTX"));
        let rest = &TRAFFIC_PTX[at + head.len()..];
        let end = rest.find(')').expect("the parameter list ends");
        rest[..end]
            .lines()
            .filter_map(|l| l.trim().strip_prefix(".param "))
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
            .collect()
    }

    /// cuda.rs keeps the loaded kernels in this order and finds one by
    /// `kernel as usize`.
    #[test]
    fn all_lists_the_kernels_in_declaration_order() {
        for (i, k) in Kernel::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{}", k.name());
        }
    }

    /// Every launch fabdiag makes passes as many arguments as its kernel
    /// declares, each of the declared width (a short or misplaced one is
    /// CUDA_ERROR_INVALID_VALUE at best, a wild pointer at worst).
    #[test]
    fn every_launch_matches_its_kernels_parameters_in_the_ptx() {
        let w = TileWalk {
            region: 1,
            blocks: 2,
            threads: 256,
            block_region: 65536,
            piece: 256,
            iterations: 3,
            seed: 4,
        };
        let launches = [
            gate(1, 2, 3),
            tile(&w, true, 5, 6),
            tile(&w, false, 5, 6),
            fill(1, 32, 2, 3),
            verify(1, 32, 2, 3, 4, 5),
            verify_tiles(&w, 7, 8, 9),
        ];
        let launched: Vec<Kernel> = launches.iter().map(|l| l.kernel).collect();
        assert_eq!(launched, Kernel::ALL, "one launch of each kernel");
        for l in &launches {
            let ours: Vec<&str> = l.args.iter().map(|a| a.ptx_type()).collect();
            assert_eq!(ours, ptx_params(l.kernel.name()), "{}", l.kernel.name());
        }
    }
}
