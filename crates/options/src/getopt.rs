//! A getopt_long work-alike, so existing command lines keep working:
//! options and operands in any order, `--` ends options, clustered short
//! flags (`-bR`), attached or separate arguments (`-s8`, `-s 8`,
//! `--size=8`, `--size 8`), and unambiguous long-option prefixes. Later
//! occurrences override earlier ones (the caller keeps the last). Errors are
//! one line each; this module never prints.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptDef<Id: Copy> {
    pub id: Id,
    pub short: Option<char>,
    pub long: &'static str,
    pub takes_arg: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Parsed<Id> {
    Opt(Id, Option<String>),
    Operand(String),
}

pub fn parse<Id: Copy>(defs: &[OptDef<Id>], args: &[String]) -> Result<Vec<Parsed<Id>>, String> {
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
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let def = find_long(defs, name)?;
            let value = if def.takes_arg {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => return Err(format!("option '--{}' requires an argument", def.long)),
                }
            } else {
                if inline.is_some() {
                    return Err(format!("option '--{}' doesn't allow an argument", def.long));
                }
                None
            };
            out.push(Parsed::Opt(def.id, value));
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                let def = defs
                    .iter()
                    .find(|d| d.short == Some(c))
                    .ok_or_else(|| format!("invalid option -- '{c}'"))?;
                if def.takes_arg {
                    let rest: String = chars[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(format!("option requires an argument -- '{c}'"));
                    };
                    out.push(Parsed::Opt(def.id, Some(value)));
                    break;
                }
                out.push(Parsed::Opt(def.id, None));
            }
        } else {
            out.push(Parsed::Operand(a.clone()));
        }
    }
    Ok(out)
}

fn find_long<Id: Copy>(defs: &[OptDef<Id>], name: &str) -> Result<OptDef<Id>, String> {
    if let Some(d) = defs.iter().find(|d| d.long == name) {
        return Ok(*d);
    }
    let matches: Vec<&OptDef<Id>> = defs
        .iter()
        .filter(|d| !name.is_empty() && d.long.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(**one),
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

    const DEFS: &[OptDef<u8>] = &[
        OptDef {
            id: 1,
            short: Some('s'),
            long: "size",
            takes_arg: true,
        },
        OptDef {
            id: 2,
            short: Some('b'),
            long: "bidirectional",
            takes_arg: false,
        },
        OptDef {
            id: 3,
            short: Some('R'),
            long: "rdzv",
            takes_arg: false,
        },
        OptDef {
            id: 4,
            short: None,
            long: "buf-sz",
            takes_arg: true,
        },
        OptDef {
            id: 5,
            short: None,
            long: "buf-align",
            takes_arg: true,
        },
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
}
