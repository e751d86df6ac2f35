//! The data check's pattern: every 16-byte vector of a region holds a
//! value that depends on the test's seed and the vector's index, so a
//! copy that lands in the wrong place, arrives short, or is stale from
//! another test is caught. The kernels compute the same function
//! (crates/gpu/kernels/traffic.cu, `pattern_vec`); keep the two identical.

/// Bytes per pattern vector (one `uint4` in the kernels).
pub const VEC: u64 = 16;

/// The four 32-bit words of vector `v` under `seed`.
pub fn vector(seed: u32, v: u64) -> [u32; 4] {
    let h = mix(seed, v);
    let (lo, hi) = (h as u32, (h >> 32) as u32);
    [lo, hi, lo ^ 0xA5A5_A5A5, hi ^ 0x5A5A_5A5A]
}

/// Two multiply-xorshift rounds: every bit of the seed and the index
/// reaches every bit of the result.
fn mix(seed: u32, v: u64) -> u64 {
    let mut x = v ^ u64::from(seed).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    x = (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// Fills `buf` with the pattern of vectors `first_vec`, `first_vec + 1`, ...
/// (`buf` a whole number of vectors; any tail is left alone).
pub fn fill(buf: &mut [u8], seed: u32, first_vec: u64) {
    for (i, chunk) in buf.chunks_exact_mut(VEC as usize).enumerate() {
        let w = vector(seed, first_vec + i as u64);
        for (k, word) in w.iter().enumerate() {
            chunk[4 * k..4 * k + 4].copy_from_slice(&word.to_le_bytes());
        }
    }
}

/// A byte that does not hold the pattern: its offset in the buffer
/// checked, and what it should have held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub offset: u64,
    pub expected: u8,
    pub found: u8,
}

/// The first byte of `buf` that differs from the pattern starting at
/// vector `first_vec`.
pub fn first_mismatch(buf: &[u8], seed: u32, first_vec: u64) -> Option<Mismatch> {
    for (i, chunk) in buf.chunks_exact(VEC as usize).enumerate() {
        let w = vector(seed, first_vec + i as u64);
        let mut want = [0u8; VEC as usize];
        for (k, word) in w.iter().enumerate() {
            want[4 * k..4 * k + 4].copy_from_slice(&word.to_le_bytes());
        }
        if chunk != want {
            let j = (0..VEC as usize).find(|&j| chunk[j] != want[j]).unwrap_or(0);
            return Some(Mismatch {
                offset: i as u64 * VEC + j as u64,
                expected: want[j],
                found: chunk[j],
            });
        }
    }
    None
}

/// Which tile slot the `q`-th chunk a block moves lands in: a bijection
/// on `0..slots` (`slots` a power of two, the multiplier odd), so chunks of
/// one transfer are scattered across the block's region and every slot is
/// visited once per `slots` chunks. Mirrored by `slot_of` in the kernels.
pub fn slot_of(q: u64, slots: u64) -> u64 {
    q.wrapping_mul(SLOT_STRIDE) & (slots - 1)
}

/// Odd, so `slot_of` is a bijection modulo any power of two.
pub const SLOT_STRIDE: u64 = 0x9E37_79B1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_buffer_checks_clean_and_any_damage_is_found() {
        let mut b = vec![0u8; 4096];
        fill(&mut b, 7, 100);
        assert_eq!(first_mismatch(&b, 7, 100), None);
        // another seed, or the same data one vector off, is wrong at once
        assert_eq!(first_mismatch(&b, 8, 100).map(|m| m.offset), Some(0));
        assert_eq!(first_mismatch(&b[16..], 7, 100).map(|m| m.offset), Some(0));
        b[1234] ^= 1;
        let m = first_mismatch(&b, 7, 100).unwrap();
        assert_eq!((m.offset, m.found ^ m.expected), (1234, 1));
        // zeroed memory (a copy that never happened) is not the pattern
        assert!(first_mismatch(&[0u8; 64], 0, 0).is_some());
    }

    /// vector(1, 2), computed independently (Python, 64-bit wrapping).
    const KNOWN_1_2: [u32; 4] = [0xe2e8_5e96, 0x13c1_e819, 0x474d_fb33, 0x499b_b243];

    #[test]
    fn known_values_shared_with_the_kernels() {
        // the kernels' pattern_vec must give these (checked on the CPU by
        // tests/kernels_on_cpu.rs, and on a GPU by the GPU test path); a
        // change here needs the same change there
        assert_eq!(vector(0, 0), [0, 0, 0xA5A5_A5A5, 0x5A5A_5A5A]);
        assert_eq!(vector(1, 2), KNOWN_1_2);
    }

    #[test]
    fn slots_are_a_permutation_that_scatters_a_transfer() {
        for slots in [1u64, 2, 64, 4096] {
            let mut seen = vec![false; slots as usize];
            for q in 0..slots {
                let s = slot_of(q, slots) as usize;
                assert!(!seen[s], "slot {s} twice for {slots}");
                seen[s] = true;
            }
        }
        // consecutive chunks of one transfer are not neighbours
        assert!(slot_of(1, 4096).abs_diff(slot_of(0, 4096)) > 1);
    }
}
