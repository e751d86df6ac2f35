//! The memory plan, and the only code that touches registered bytes. A
//! family says which buffers a side needs, how long, and what they hold at
//! the start; this module allocates them (host memory, optionally huge
//! pages, or device memory where this side's `-t/-r` put a buffer on a
//! GPU, `crate::device`), counts huge pages, and later writes atomic
//! operands, stamps patterns and reads destinations back for checks,
//! through the GPU runtime for device memory. Families never know which
//! backend holds a buffer. Never prints, never decides what a value
//! should be.

use crate::driver::data_path::DataPath;
use crate::env::{GpuUse, HostAsGpu};
use fabdiag_engine::amo::{AmoType, Operands, Val};
use fabdiag_fabric::{free_hugepages, page_size, FabricError, HostBuffer, Memory, RegionId};
use fabdiag_model::HugePageSize;
use fabdiag_model::AMO_STRIDE;
use fabdiag_model::{Hugepages, Mem, SideMem};

/// Where a slot's compare operand sits (its operand is at +0).
pub const AMO_COMPARE_AT: u64 = 16;
/// The originals' pattern in initiator buffers.
pub const INITIATOR_FILL: u8 = 0xA5;

/// What a buffer holds before the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// Every byte.
    Fill(u8),
    /// Every `AMO_STRIDE`-byte slot starts with `value` of type `ty` (an
    /// atomic target), the rest zero.
    Slots { ty: AmoType, value: Val },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Buffer {
    pub len: u64,
    /// False: this side plays no part that uses the buffer, and only one
    /// page is registered (the peer is still told about it).
    pub used: bool,
    pub init: Init,
}

/// One side's buffers: the initiator (TX) and the target (RX).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryPlan {
    pub initiator: Buffer,
    pub target: Buffer,
    /// Huge pages for the buffers this side uses (originals §2.8).
    pub hugepages: Option<HugePageSize>,
    /// May `-t/-r` put these buffers on a GPU? Not for the atomic tools,
    /// which have no GPU options: a `fabdiag serve -r 0` serves them from
    /// host memory.
    pub gpu_allowed: bool,
}

impl MemoryPlan {
    /// The bytes the buffers take that this side uses (an unused buffer
    /// registers one page).
    pub fn bytes(&self) -> u64 {
        [self.initiator, self.target]
            .iter()
            .filter(|b| b.used)
            .fold(0u64, |sum, b| sum.saturating_add(b.len))
    }

    /// This side's GPU buffers for this plan: `gpu`, unless the plan's
    /// buffers never go on a GPU.
    pub fn gpu<'g>(&self, gpu: Option<&'g GpuUse>) -> Option<&'g GpuUse> {
        gpu.filter(|g| self.gpu_allowed && (g.tx.is_some() || g.rx.is_some()))
    }

    /// Two buffers of `len` bytes, the initiator with the originals'
    /// pattern and the target zeroed, each used only if this side plays
    /// that part (the bandwidth and latency tools, originals §2.5).
    pub fn roles(len: u64, initiator: bool, target: bool, hugepages: Option<HugePageSize>) -> MemoryPlan {
        MemoryPlan {
            initiator: Buffer {
                len,
                used: initiator,
                init: Init::Fill(INITIATOR_FILL),
            },
            target: Buffer {
                len,
                used: target,
                init: Init::Fill(0),
            },
            hugepages,
            gpu_allowed: true,
        }
    }
}

/// What was allocated, for the banner.
#[derive(Clone, Debug, PartialEq)]
pub struct MemFacts {
    /// Bytes of each used buffer, after page rounding.
    pub used: u64,
    pub hugepages: Hugepages,
    /// Where this side's TX and RX buffers live.
    pub side: SideMem,
    /// GPUs of that type here, when a buffer is on one.
    pub gpus_found: Option<u32>,
}

impl MemFacts {
    /// As the Endpoint message tells the peer.
    pub fn describe(&self) -> fabdiag_proto::MemoryDesc {
        let gpu = |m: Mem| match m {
            Mem::Gpu { index } => Some(index),
            Mem::System => None,
        };
        fabdiag_proto::MemoryDesc {
            tx_gpu: gpu(self.side.tx),
            rx_gpu: gpu(self.side.rx),
            gpu_type: self.side.gpu_type.clone(),
        }
    }
}

/// A peer's buffers from its Endpoint message (absent: system memory).
pub fn side_of(d: Option<&fabdiag_proto::MemoryDesc>) -> SideMem {
    let mem = |g: Option<u32>| g.map_or(Mem::System, |index| Mem::Gpu { index });
    match d {
        Some(d) => SideMem {
            tx: mem(d.tx_gpu),
            rx: mem(d.rx_gpu),
            gpu_type: d.gpu_type.clone(),
        },
        None => SideMem::system(),
    }
}

/// Allocates and initialises the plan's buffers, initiator first: on the
/// GPU where `gpu` puts them (only buffers this side uses; an unused one
/// stays a host page), in host memory otherwise. Huge pages (host buffers
/// only, as in the originals) are counted and checked free before
/// anything is mapped. `peer_elsewhere`: the peer is another process (see
/// fabdiag_fabric::DeviceMemory::device_only).
pub fn allocate(
    plan: &MemoryPlan,
    gpu: Option<&GpuUse>,
    host_as_gpu: Option<HostAsGpu>,
    peer_elsewhere: bool,
) -> Result<(Vec<Memory>, MemFacts), FabricError> {
    let page = page_size();
    let bufs = [plan.initiator, plan.target];
    let gpu = plan.gpu(gpu);
    let on_gpu = [gpu.and_then(|g| g.tx), gpu.and_then(|g| g.rx)];
    let host_used = |i: usize| bufs[i].used && on_gpu[i].is_none();
    let used_len = (0..2).filter(|&i| host_used(i)).map(|i| bufs[i].len).max();
    let longest = used_len.unwrap_or_else(|| bufs.iter().map(|b| b.len).max().unwrap_or(0));
    let (unit, hugepages) = match (plan.hugepages, used_len) {
        (None, _) => (page, Hugepages::Disabled),
        (Some(_), None) => (page, Hugepages::NotApplicable),
        (Some(h), Some(_)) => {
            let needed: u64 = (0..2)
                .filter(|&i| host_used(i))
                .map(|i| bufs[i].len.div_ceil(h.bytes()))
                .sum();
            if free_hugepages(h.bytes())? < needed {
                return Err(FabricError::InsufficientHugePages {
                    size: h.label().into(),
                    needed,
                });
            }
            (
                h.bytes(),
                Hugepages::Enabled {
                    size: h.label().into(),
                    pages: needed,
                },
            )
        }
    };
    let used = longest.div_ceil(unit) * unit;
    let mut out = Vec::with_capacity(2);
    let mut side = SideMem::system();
    let mut gpus_found = None;
    for (i, b) in bufs.into_iter().enumerate() {
        if let (Some(index), Some(g), true) = (on_gpu[i], gpu, b.used) {
            let (mut mem, found) = if let Some(hook) = host_as_gpu {
                crate::device::host_as_gpu(index, b.len, hook)?
            } else {
                crate::device::allocate(g.kind, index, b.len, peer_elsewhere)?
            };
            // the initial contents, written through the GPU runtime
            let mut host = vec![0u8; b.len as usize];
            init(&mut host, b.init);
            mem.write(0, &host).map_err(FabricError::Device)?;
            gpus_found = Some(found);
            side.gpu_type = Some(g.kind.name().to_string());
            if i == 0 {
                side.tx = Mem::Gpu { index };
            } else {
                side.rx = Mem::Gpu { index };
            }
            out.push(Memory::Device(mem));
            continue;
        }
        let (len, hp) = if b.used { (b.len, plan.hugepages) } else { (page, None) };
        let mut buf = HostBuffer::new(len, hp.map(HugePageSize::bytes), 0)?;
        init(buf.as_mut_slice(), b.init);
        out.push(Memory::Host(buf));
    }
    Ok((
        out,
        MemFacts {
            used,
            hugepages,
            side,
            gpus_found,
        },
    ))
}

/// Writes a buffer's initial contents into `mem`, which is zeroed (a
/// fresh mapping, or a fresh vector for device memory).
fn init(mem: &mut [u8], how: Init) {
    match how {
        Init::Fill(0) => {}
        Init::Fill(x) => mem.fill(x),
        Init::Slots { ty, value } => {
            for slot in mem.chunks_exact_mut(AMO_STRIDE as usize) {
                value.encode(ty, slot);
            }
        }
    }
}

/// Puts one iteration's operands into the first `slots` slots of `region`
/// (never while an operation that reads them is in flight).
pub fn write_operands(
    ep: &mut (impl DataPath + ?Sized),
    region: RegionId,
    ty: AmoType,
    o: Operands,
    slots: u64,
) -> Result<(), FabricError> {
    let mem = ep.region_mut(region).ok_or_else(|| FabricError::no_region(region.0))?;
    for slot in mem.chunks_exact_mut(AMO_STRIDE as usize).take(slots as usize) {
        o.op1.encode(ty, slot);
        o.op2.encode(ty, &mut slot[AMO_COMPARE_AT as usize..]);
    }
    Ok(())
}

/// `--verify`'s pattern for one size of one operation: byte `j` of every
/// operation's payload. It differs per operation kind and per size, so a
/// target still holding an earlier size's bytes (or its initial fill) fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    seed: u64,
}

impl Pattern {
    /// `op` names the operation kind (any small number the family picks).
    pub fn new(op: u8, size: u64) -> Pattern {
        Pattern {
            seed: (u64::from(op) << 56) ^ size.wrapping_mul(0x2545_F491_4F6C_DD1D),
        }
    }

    pub fn byte(self, j: u64) -> u8 {
        // one multiply of a 64-bit mix: cheap, and no byte value repeats
        // with a short period, so a shifted or truncated copy is caught
        ((self.seed ^ j).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
    }

    /// Stamps `size` bytes of the pattern at every offset in `offsets`.
    pub fn stamp(self, mem: &mut [u8], offsets: &[u64], size: u64) {
        for &off in offsets {
            let (a, b) = (off as usize, (off + size) as usize);
            if let Some(op) = mem.get_mut(a..b.min(mem.len())) {
                for (j, x) in op.iter_mut().enumerate() {
                    *x = self.byte(j as u64);
                }
            }
        }
    }

    /// The first byte at one of `offsets` (ascending, as the bandwidth
    /// check's batch offsets and receive slots are, so the first found is
    /// the lowest) that does not hold the pattern, as (offset, expected,
    /// found); a range past the end of `mem` is wrong from its first
    /// missing byte. Called on every look while a destination settles, so
    /// it does not sort a copy each time.
    pub fn first_mismatch(self, mem: &[u8], offsets: &[u64], size: u64) -> Option<(u64, u8, Option<u8>)> {
        for &off in offsets {
            for j in 0..size {
                let want = self.byte(j);
                match mem.get((off + j) as usize) {
                    Some(&got) if got == want => {}
                    got => return Some((off + j, want, got.copied())),
                }
            }
        }
        None
    }
}

/// Writes into `region` through `f` (never while operations on it are in
/// flight); device memory is copied out, changed and copied back.
pub fn fill(
    ep: &mut (impl DataPath + ?Sized),
    region: RegionId,
    f: &mut dyn FnMut(&mut [u8]),
) -> Result<(), FabricError> {
    if let Some(mem) = ep.region_mut(region) {
        f(mem);
        return Ok(());
    }
    let mem = ep.memory_mut(region).ok_or_else(|| FabricError::no_region(region.0))?;
    let mut copy = vec![0u8; mem.len() as usize];
    mem.read(0, &mut copy)?;
    f(&mut copy);
    mem.write(0, &copy)
}

/// Looks at `region`'s bytes as they are now (device memory: a copy).
pub fn view<R>(ep: &(impl DataPath + ?Sized), region: RegionId, f: impl FnOnce(&[u8]) -> R) -> Result<R, FabricError> {
    if let Some(mem) = ep.region(region) {
        return Ok(f(mem));
    }
    let mem = ep.memory(region).ok_or_else(|| FabricError::no_region(region.0))?;
    let mut copy = vec![0u8; mem.len() as usize];
    mem.read(0, &mut copy)?;
    Ok(f(&copy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_registers_one_page_for_a_buffer_it_does_not_use() {
        let (bufs, facts) = allocate(
            &MemoryPlan::roles(3 * page_size() + 1, true, false, None),
            None,
            None,
            true,
        )
        .unwrap();
        assert_eq!(bufs[0].len(), 4 * page_size());
        assert_eq!(bufs[1].len(), page_size());
        assert!(bufs[0].host().unwrap().iter().all(|&b| b == INITIATOR_FILL));
        assert!(bufs[1].host().unwrap().iter().all(|&b| b == 0));
        assert_eq!((facts.side.clone(), facts.gpus_found), (SideMem::system(), None));
        assert_eq!(facts.used, 4 * page_size());
        assert_eq!(facts.hugepages, Hugepages::Disabled);
    }

    #[test]
    fn patterns_differ_per_size_and_operation_and_catch_a_bad_byte() {
        let (a, b, c) = (Pattern::new(1, 4096), Pattern::new(1, 8192), Pattern::new(2, 4096));
        let bytes = |p: Pattern| (0..4096).map(|j| p.byte(j)).collect::<Vec<u8>>();
        assert_ne!(bytes(a), bytes(b));
        assert_ne!(bytes(a), bytes(c));
        // no short period: a copy shifted by one is wrong almost everywhere
        let v = bytes(a);
        assert!(v.windows(2).filter(|w| w[0] == w[1]).count() < 100);
        let mut mem = vec![0u8; 3 * 4096];
        a.stamp(&mut mem, &[0, 8192], 4096);
        assert_eq!(a.first_mismatch(&mem, &[8192, 0], 4096), None);
        assert!(mem[4096..8192].iter().all(|&x| x == 0), "only the offsets given");
        mem[8192 + 17] ^= 0xFF;
        assert_eq!(
            a.first_mismatch(&mem, &[0, 8192], 4096),
            Some((8192 + 17, a.byte(17), Some(a.byte(17) ^ 0xFF)))
        );
        // the same bytes checked as another size's fail at once
        assert!(b.first_mismatch(&mem, &[0], 16).is_some());
        // a range past the end is missing
        assert_eq!(
            a.first_mismatch(&mem[..100], &[0], 4096).map(|m| (m.0, m.2)),
            Some((100, None))
        );
    }

    #[test]
    fn atomic_targets_start_at_the_schemes_value() {
        let p = MemoryPlan {
            initiator: Buffer {
                len: 2 * AMO_STRIDE * 3,
                used: true,
                init: Init::Fill(0),
            },
            target: Buffer {
                len: AMO_STRIDE * 3,
                used: true,
                init: Init::Slots {
                    ty: AmoType::Uint16,
                    value: Val::Int(0xBEEF),
                },
            },
            hugepages: None,
            gpu_allowed: false,
        };
        // a `-r` of the server's is not for atomics: host memory, and no
        // GPU runtime is asked (there is none here)
        let gpu = GpuUse {
            kind: fabdiag_gpu::GpuKind::Nvidia,
            tx: Some(0),
            rx: Some(0),
        };
        let (bufs, facts) = allocate(&p, Some(&gpu), None, true).unwrap();
        assert!(bufs.iter().all(|b| matches!(b, Memory::Host(_))));
        assert_eq!(facts.side, SideMem::system());
        for slot in bufs[1].host().unwrap().chunks_exact(AMO_STRIDE as usize) {
            assert_eq!(Val::decode(AmoType::Uint16, slot), Val::Int(0xBEEF));
            assert!(slot[2..].iter().all(|&b| b == 0));
        }
    }
}
