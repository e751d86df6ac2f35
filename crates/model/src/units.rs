//! Unit conversions every renderer and judge shares, each in the one order
//! of operations that reproduces the originals' printed figures. Pure
//! arithmetic.

/// MB/s as gpu_loopback_bw prints it (`print_gbits`: × 8 / 1000).
pub fn gbit_s(mb_s: f64) -> f64 {
    mb_s * 8.0 / 1000.0
}

/// Gbps = bytes × 8 / 10^9 / seconds, in that order: the one order of
/// operations that reproduces every figure of gc-hosttraffictest's
/// reference document to the last of 17 digits.
pub fn gbps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / 1e9 / seconds
    } else {
        0.0
    }
}

/// A count as a person reads it: 1234567 -> "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
