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

/// `manpages DIR` into a shared folder: a link planted at a page's name is
/// replaced by the page, and what it points to is left as it was.
#[test]
fn manpages_never_write_through_a_link() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "someone else's file\n").unwrap();
    let pages = d.path().join("man1");
    std::fs::create_dir_all(&pages).unwrap();
    std::os::unix::fs::symlink(&victim, pages.join("fabdiag.1")).unwrap();
    let o = run(&["manpages", pages.to_str().unwrap()], LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "someone else's file\n");
    let page = std::fs::symlink_metadata(pages.join("fabdiag.1")).unwrap();
    assert!(page.file_type().is_file(), "fabdiag.1 is still a link");
}
