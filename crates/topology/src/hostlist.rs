//! Slurm's host lists: `node[0-3,7],login1` is node0 to node3, node7 and
//! login1; a range keeps its lower bound's zero padding (`n[01-10]` is
//! n01 to n10) and several brackets multiply (`r[1-2]n[1-2]`). Pure.

/// Why a host list cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadList(pub String);

/// The most brackets one name may have (`r[1-2]n[1-2]` has two).
const MOST_BRACKETS: usize = 8;

/// The most digits a number in a range may have.
const MOST_DIGITS: usize = 20;

/// Every name of `list`, in order, at most `limit` of them.
pub fn expand(list: &str, limit: usize) -> Result<Vec<String>, BadList> {
    let mut out = Vec::new();
    for item in split_top(list)? {
        if item.is_empty() {
            continue;
        }
        for name in expand_one(item, limit)? {
            if out.len() >= limit {
                return Err(BadList(format!("'{list}' names more than {limit} hosts")));
            }
            out.push(name);
        }
    }
    Ok(out)
}

/// The list split at the commas outside brackets.
fn split_top(list: &str) -> Result<Vec<&str>, BadList> {
    let (mut depth, mut start, mut items) = (0i32, 0, Vec::new());
    for (i, c) in list.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(BadList(format!("'{list}': a bracket inside a bracket"))),
            ']' if depth == 1 => depth = 0,
            ']' => return Err(BadList(format!("'{list}': a ']' without its '['"))),
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(BadList(format!("'{list}': a '[' without its ']'")));
    }
    items.push(&list[start..]);
    Ok(items)
}

/// One item: its first bracket's numbers, each followed by the rest.
fn expand_one(item: &str, limit: usize) -> Result<Vec<String>, BadList> {
    if item.matches('[').count() > MOST_BRACKETS {
        return Err(BadList(format!("'{item}': more than {MOST_BRACKETS} brackets")));
    }
    expand_brackets(item, limit)
}

fn expand_brackets(item: &str, limit: usize) -> Result<Vec<String>, BadList> {
    let Some(open) = item.find('[') else {
        return Ok(vec![item.to_string()]);
    };
    let close = item[open..].find(']').map(|c| open + c).unwrap_or(item.len());
    let (head, inner, tail) = (
        &item[..open],
        &item[open + 1..close],
        &item[(close + 1).min(item.len())..],
    );
    let tails = expand_brackets(tail, limit)?;
    let mut out = Vec::new();
    for range in inner.split(',') {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let bad = || BadList(format!("'{item}': '{range}' is not a number or a range of numbers"));
        if lo.trim().len() > MOST_DIGITS || hi.trim().len() > MOST_DIGITS {
            return Err(BadList(format!("'{item}': a number of more than {MOST_DIGITS} digits")));
        }
        let (a, b): (u64, u64) = (
            lo.trim().parse().map_err(|_| bad())?,
            hi.trim().parse().map_err(|_| bad())?,
        );
        if b < a {
            return Err(BadList(format!("'{item}': the range {range} runs backwards")));
        }
        let width = lo.trim().len();
        for n in a..=b {
            for t in &tails {
                if out.len() >= limit {
                    return Err(BadList(format!("'{item}' names more than {limit} hosts")));
                }
                out.push(format!("{head}{n:0width$}{t}"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_expand_as_slurm_writes_them() {
        let all = |s: &str| expand(s, 100).unwrap().join(" ");
        assert_eq!(all("node[0-3,7],login1"), "node0 node1 node2 node3 node7 login1");
        assert_eq!(all("n[08-10]"), "n08 n09 n10");
        assert_eq!(all("r[1-2]n[1-2]"), "r1n1 r1n2 r2n1 r2n2");
        assert_eq!(all("solo"), "solo");
        assert!(expand("node[3-1]", 10).unwrap_err().0.contains("backwards"));
        assert!(expand("node[1-x]", 10).unwrap_err().0.contains("'1-x'"));
        assert!(expand("node[1-3", 10).unwrap_err().0.contains("without its ']'"));
        assert!(expand("node[0-99999999]", 1000)
            .unwrap_err()
            .0
            .contains("more than 1000"));
    }
}
