//! Number parsing for option values. Stricter than the originals' strtoul:
//! no sign (so `-n -1` is refused instead of wrapping to 2^64-1) and no
//! trailing garbage (`-s 8x` is refused instead of meaning 8).

/// strtoul base 0: `0x1F` hex, `017` octal, else decimal; whole string.
pub fn parse_strtoul(s: &str) -> Option<u64> {
    let t = s.trim_start();
    if t.is_empty() {
        return None;
    }
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if t.len() > 1 && t.starts_with('0') {
        return u64::from_str_radix(&t[1..], 8).ok();
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

pub const MAX_SIZE: u64 = 4294967295;

/// `MIN[:MAX]`, decimal. A range needs MIN ≤ MAX and both powers of two.
pub fn parse_size_range(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("Invalid size: {s}");
    let dec = |t: &str| -> Option<u64> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            t.parse().ok()
        }
    };
    let (min, max) = match s.split_once(':') {
        None => {
            let v = dec(s).ok_or_else(bad)?;
            (v, v)
        }
        Some((a, b)) => (dec(a).ok_or_else(bad)?, dec(b).ok_or_else(bad)?),
    };
    if min == 0 || min > MAX_SIZE || max < min || max > MAX_SIZE {
        return Err(bad());
    }
    if s.contains(':') && (!min.is_power_of_two() || !max.is_power_of_two()) {
        return Err(format!("Invalid size: {s} (ranges must be powers of 2)"));
    }
    Ok((min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoul_forms() {
        assert_eq!(parse_strtoul("49194"), Some(49194));
        assert_eq!(parse_strtoul("0x10"), Some(16));
        assert_eq!(parse_strtoul("010"), Some(8));
        assert_eq!(parse_strtoul("0"), Some(0));
        assert_eq!(parse_strtoul("-1"), None);
        assert_eq!(parse_strtoul("+1"), None);
        assert_eq!(parse_strtoul("12abc"), None);
        assert_eq!(parse_strtoul(""), None);
        assert_eq!(parse_strtoul("99999999999999999999999"), None);
    }

    #[test]
    fn size_ranges() {
        assert_eq!(parse_size_range("8"), Ok((8, 8)));
        assert_eq!(parse_size_range("100"), Ok((100, 100)));
        assert_eq!(parse_size_range("1:8192"), Ok((1, 8192)));
        assert_eq!(parse_size_range("4294967295"), Ok((MAX_SIZE, MAX_SIZE)));
        assert!(parse_size_range("8x").is_err());
        assert!(parse_size_range("8:").is_err());
        assert!(parse_size_range(":8").is_err());
        assert!(parse_size_range("2:3").unwrap_err().contains("powers of 2"));
    }
}
