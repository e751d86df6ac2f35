//! The utility commands (`providers`, `atomic-support`, `doctor`,
//! `completions`, `manpages`) from the binary: `-h` prints the usage and
//! does nothing else (it once listed providers, or wrote the manual pages
//! into a directory named `-h`), and a stray argument is one line naming
//! it with the usage exit code.

use crate::common::*;

const COMMANDS: [&str; 5] = ["providers", "atomic-support", "doctor", "completions", "manpages"];

fn in_dir(dir: &std::path::Path, args: &[&str]) -> Output {
    let mut cmd = fabdiag(args);
    cmd.current_dir(dir);
    Proc::spawn(&mut cmd).wait(LIMIT)
}

#[test]
fn help_prints_the_usage_and_does_nothing_else() {
    let dir = std::env::temp_dir().join(format!("fabdiag-utility-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for c in COMMANDS {
        for h in ["-h", "--help"] {
            let o = in_dir(&dir, &[c, h]);
            assert_eq!(o.code, Some(0), "{c} {h}: {}", o.stderr);
            assert!(
                o.stdout.starts_with(&format!("Usage:\n  fabdiag {c}")),
                "{c} {h}: {}",
                o.stdout
            );
            assert_eq!(o.stderr, "", "{c} {h}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "-h wrote {left:?}");
    // a directory that looks like an option is still reachable after --
    let o = in_dir(&dir, &["manpages", "--", "-h"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(dir.join("-h/fabdiag.1").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stray_argument_is_one_line_naming_it() {
    for (args, names) in [
        (&["providers", "tcp"][..], "unexpected argument 'tcp'"),
        (&["providers", "-x"][..], "invalid option -- 'x'"),
        (&["atomic-support", "shm"][..], "unexpected argument 'shm'"),
        (&["doctor", "--bogus"][..], "unrecognized option '--bogus'"),
        (&["completions", "bash", "fabdiag", "x"][..], "unexpected argument 'x'"),
        (&["manpages", "a", "b"][..], "unexpected argument 'b'"),
        (&["manpages", "-x"][..], "invalid option -- 'x'"),
    ] {
        let line = expect_failure(args, 1, names);
        assert!(line.contains("(usage: fabdiag "), "{args:?}: {line}");
    }
}
