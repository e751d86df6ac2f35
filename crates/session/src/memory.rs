//! The memory plan, and the only code that touches registered bytes. A
//! family says which buffers a side needs, how long, and what they hold at
//! the start; this module allocates them, counts huge pages, and later
//! writes atomic operands and reads targets back for verification. Host
//! memory (anonymous mmap, optionally huge pages) is the only backend
//! today; device memory is meant to become one more backend here (and a
//! registration kind in the fabric crate) without changing any family.
//! Never prints, never decides what a value should be.

use crate::driver::Wire;
use crate::spec::AMO_STRIDE;
use fabdiag_engine::amo::{AmoType, Operands, Val};
use fabdiag_fabric::{free_hugepages, page_size, FabricError, HostBuffer, HugePageSize, RegionId};
use fabdiag_report::Hugepages;

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
    /// Huge pages for the buffers this side uses (spec §2.8).
    pub hugepages: Option<HugePageSize>,
}

impl MemoryPlan {
    /// Two buffers of `len` bytes, the initiator with the originals'
    /// pattern and the target zeroed, each used only if this side plays
    /// that part (the bandwidth and latency tools, spec §2.5).
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
        }
    }
}

/// What was allocated, for the banner.
#[derive(Clone, Debug, PartialEq)]
pub struct MemFacts {
    /// Bytes of each used buffer, after page rounding.
    pub used: u64,
    pub hugepages: Hugepages,
}

/// Allocates and initialises the plan's buffers, initiator first. Huge
/// pages are counted and checked free before anything is mapped.
pub fn allocate(plan: &MemoryPlan) -> Result<(Vec<HostBuffer>, MemFacts), FabricError> {
    let page = page_size();
    let bufs = [plan.initiator, plan.target];
    let used_len = bufs.iter().filter(|b| b.used).map(|b| b.len).max();
    let longest = used_len.unwrap_or_else(|| bufs.iter().map(|b| b.len).max().unwrap_or(0));
    let (unit, hugepages) = match (plan.hugepages, used_len) {
        (None, _) => (page, Hugepages::Disabled),
        (Some(_), None) => (page, Hugepages::NotApplicable),
        (Some(h), Some(_)) => {
            let needed: u64 = bufs.iter().filter(|b| b.used).map(|b| b.len.div_ceil(h.bytes())).sum();
            if free_hugepages(h)? < needed {
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
    for b in bufs {
        let (len, hp) = if b.used { (b.len, plan.hugepages) } else { (page, None) };
        let fill = match b.init {
            Init::Fill(x) => x,
            Init::Slots { .. } => 0,
        };
        let mut buf = HostBuffer::new(len, hp, fill)?;
        if let Init::Slots { ty, value } = b.init {
            let mem = buf.as_mut_slice();
            for slot in mem.chunks_exact_mut(AMO_STRIDE as usize) {
                value.encode(ty, slot);
            }
        }
        out.push(buf);
    }
    Ok((out, MemFacts { used, hugepages }))
}

/// Puts one iteration's operands into the first `slots` slots of `region`
/// (never while an operation that reads them is in flight).
pub fn write_operands(
    ep: &mut (impl Wire + ?Sized),
    region: RegionId,
    ty: AmoType,
    o: Operands,
    slots: u64,
) -> Result<(), FabricError> {
    let mem = ep
        .region_mut(region)
        .ok_or_else(|| FabricError::Bounds(format!("no local region {}", region.0)))?;
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

    /// The first byte (lowest offset) at one of `offsets` that does not
    /// hold the pattern, as (offset, expected, found); a range past the
    /// end of `mem` is wrong from its first missing byte.
    pub fn first_mismatch(self, mem: &[u8], offsets: &[u64], size: u64) -> Option<(u64, u8, Option<u8>)> {
        let mut sorted = offsets.to_vec();
        sorted.sort_unstable();
        for off in sorted {
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
/// flight).
pub fn fill(ep: &mut (impl Wire + ?Sized), region: RegionId, f: &mut dyn FnMut(&mut [u8])) -> Result<(), FabricError> {
    let mem = ep
        .region_mut(region)
        .ok_or_else(|| FabricError::Bounds(format!("no local region {}", region.0)))?;
    f(mem);
    Ok(())
}

/// Looks at `region`'s bytes as they are now.
pub fn view<R>(ep: &(impl Wire + ?Sized), region: RegionId, f: impl FnOnce(&[u8]) -> R) -> Result<R, FabricError> {
    let mem = ep
        .region(region)
        .ok_or_else(|| FabricError::Bounds(format!("no local region {}", region.0)))?;
    Ok(f(mem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_registers_one_page_for_a_buffer_it_does_not_use() {
        let (bufs, facts) = allocate(&MemoryPlan::roles(3 * page_size() + 1, true, false, None)).unwrap();
        assert_eq!(bufs[0].len() as u64, 4 * page_size());
        assert_eq!(bufs[1].len() as u64, page_size());
        assert!(bufs[0].as_slice().iter().all(|&b| b == INITIATOR_FILL));
        assert!(bufs[1].as_slice().iter().all(|&b| b == 0));
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
        };
        let (bufs, _) = allocate(&p).unwrap();
        for slot in bufs[1].as_slice().chunks_exact(AMO_STRIDE as usize) {
            assert_eq!(Val::decode(AmoType::Uint16, slot), Val::Int(0xBEEF));
            assert!(slot[2..].iter().all(|&b| b == 0));
        }
    }
}
