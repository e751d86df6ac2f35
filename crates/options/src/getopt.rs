//! A getopt_long work-alike, so existing command lines keep working:
//! options and operands in any order, `--` ends options, clustered short
//! flags (`-bR`), attached or separate arguments (`-s8`, `-s 8`,
//! `--size=8`, `--size 8`), and unambiguous long-option prefixes. Later
//! occurrences override earlier ones (the caller keeps the last). Errors are
//! one line each; this module never prints.

use crate::row::Row;

#[derive(Debug, PartialEq, Eq)]
pub enum Parsed<Id> {
    Opt(Id, Option<String>),
    Operand(String),
}

pub fn parse<Id: Copy>(rows: &[Row<Id>], args: &[String]) -> Result<Vec<Parsed<Id>>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.extend(args[i..].iter().cloned().map(Parsed::Operand));
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = split_long(body);
            let row = find_long(rows, name)?;
            out.push(long_value(row, inline, args, &mut i)?);
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                let row = rows
                    .iter()
                    .find(|d| d.short == Some(c))
                    .ok_or_else(|| format!("invalid option -- '{c}'"))?;
                if row.takes_arg() {
                    let rest: String = chars[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(format!("option requires an argument -- '{c}'"));
                    };
                    out.push(Parsed::Opt(row.id, Some(value)));
                    break;
                }
                out.push(Parsed::Opt(row.id, None));
            }
        } else {
            out.push(Parsed::Operand(a.clone()));
        }
    }
    Ok(out)
}

/// A command that passes what is not its own to another parser (a
/// sweep's pair-tool options): only `--name` and `--name=value` spelled
/// out in full are taken, every other word is an operand, in order. The
/// words read before the first one that is wrong come back with its
/// error, so the caller meets them in order, as they were typed.
pub fn parse_own<Id: Copy>(rows: &[Row<Id>], args: &[String]) -> (Vec<Parsed<Id>>, Option<String>) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let own = a.strip_prefix("--").and_then(|body| {
            let (name, inline) = split_long(body);
            rows.iter().find(|r| r.long == name).map(|r| (r, inline))
        });
        match own {
            Some((row, inline)) => match long_value(row, inline, args, &mut i) {
                Ok(p) => out.push(p),
                Err(e) => return (out, Some(e)),
            },
            None => out.push(Parsed::Operand(a.clone())),
        }
    }
    (out, None)
}

fn split_long(body: &str) -> (&str, Option<String>) {
    match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    }
}

/// A long option's value: inline, or the next word (`*i` moves past it).
fn long_value<Id: Copy>(
    row: &Row<Id>,
    inline: Option<String>,
    args: &[String],
    i: &mut usize,
) -> Result<Parsed<Id>, String> {
    let value = if row.takes_arg() {
        match inline {
            Some(v) => Some(v),
            None if *i < args.len() => {
                *i += 1;
                Some(args[*i - 1].clone())
            }
            None => return Err(format!("option '--{}' requires an argument", row.long)),
        }
    } else {
        if inline.is_some() {
            return Err(format!("option '--{}' doesn't allow an argument", row.long));
        }
        None
    };
    Ok(Parsed::Opt(row.id, value))
}

fn find_long<'r, Id: Copy>(rows: &'r [Row<Id>], name: &str) -> Result<&'r Row<Id>, String> {
    if let Some(d) = rows.iter().find(|d| d.long == name) {
        return Ok(d);
    }
    let matches: Vec<&Row<Id>> = rows
        .iter()
        .filter(|d| !name.is_empty() && d.long.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("unrecognized option '--{name}'")),
        many => Err(format!(
            "option '--{name}' is ambiguous; possibilities: {}",
            many.iter()
                .map(|d| format!("'--{}'", d.long))
                .collect::<Vec<_>>()
                .join(" ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFS: &[Row<u8>] = &[
        Row::valued(1, Some('s'), "size", "SIZE", &[]),
        Row::flag(2, Some('b'), "bidirectional", &[]),
        Row::flag(3, Some('R'), "rdzv", &[]),
        Row::valued(4, None, "buf-sz", "SIZE", &[]),
        Row::valued(5, None, "buf-align", "ALIGN", &[]),
    ];

    fn p(args: &[&str]) -> Result<Vec<Parsed<u8>>, String> {
        parse(DEFS, &args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn permutes_clusters_and_prefixes() {
        use Parsed::*;
        assert_eq!(
            p(&["host", "-bs8", "--buf-sz=10", "--size", "4", "--bi", "-R", "--", "-x"]).unwrap(),
            vec![
                Operand("host".into()),
                Opt(2, None),
                Opt(1, Some("8".into())),
                Opt(4, Some("10".into())),
                Opt(1, Some("4".into())),
                Opt(2, None),
                Opt(3, None),
                Operand("-x".into())
            ]
        );
        assert_eq!(p(&["-s", "1:8"]).unwrap(), vec![Opt(1, Some("1:8".into()))]);
    }

    #[test]
    fn errors_name_the_option() {
        assert_eq!(p(&["-x"]).unwrap_err(), "invalid option -- 'x'");
        assert_eq!(p(&["--nope"]).unwrap_err(), "unrecognized option '--nope'");
        assert_eq!(p(&["-s"]).unwrap_err(), "option requires an argument -- 's'");
        assert_eq!(p(&["--size"]).unwrap_err(), "option '--size' requires an argument");
        assert_eq!(
            p(&["--bidirectional=1"]).unwrap_err(),
            "option '--bidirectional' doesn't allow an argument"
        );
        assert!(p(&["--buf"]).unwrap_err().contains("ambiguous"));
    }

    #[test]
    fn own_options_pass_the_rest_through() {
        use Parsed::*;
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_own(
                DEFS,
                &args(&["-s", "8", "--size=4", "--bi", "--buf-sz", "-1", "--", "x"])
            ),
            (
                vec![
                    Operand("-s".into()),
                    Operand("8".into()),
                    Opt(1, Some("4".into())),
                    Operand("--bi".into()),
                    Opt(4, Some("-1".into())),
                    Operand("--".into()),
                    Operand("x".into())
                ],
                None
            )
        );
        assert_eq!(
            parse_own(DEFS, &args(&["--rdzv=1"])),
            (vec![], Some("option '--rdzv' doesn't allow an argument".to_string()))
        );
        // what came before the wrong word comes back with its error
        assert_eq!(
            parse_own(DEFS, &args(&["-h", "--size"])),
            (
                vec![Operand("-h".into())],
                Some("option '--size' requires an argument".to_string())
            )
        );
    }
}
