//! A count said with its noun in the right number, for the lines fabdiag
//! prints ("1 connection", "2 connections"). Nothing else.

/// `n` and `one` (the singular), or `many` when `n` is not 1.
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "peer", "peers"), "1 peer");
        assert_eq!(counted(0, "peer", "peers"), "0 peers");
        assert_eq!(counted(2, "connection", "connections"), "2 connections");
    }
}
