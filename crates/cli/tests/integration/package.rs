//! The Debian package: built by scripts/package.sh from this build's
//! binary, its contents checked, then installed with dpkg into a scratch
//! root (its own database, so the machine's packages are untouched), run
//! from there, its manual pages rendered, its completions loaded, and
//! removed again, leaving nothing behind.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sh(cmd: &mut Command) -> String {
    let o = cmd.output().expect("spawn");
    assert!(
        o.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every command name the package must carry.
fn names() -> Vec<String> {
    let mut v = vec!["fabdiag".to_string(), "gc-hosttraffictest".to_string()];
    for t in [
        "write_bw",
        "read_bw",
        "send_bw",
        "atomic_bw",
        "send_lat",
        "write_lat",
        "read_lat",
        "atomic_lat",
        "gpu_loopback_bw",
        "gpu_bw_loopback",
        "loopback_bw",
    ] {
        v.push(format!("cxi_{t}"));
    }
    v
}

#[test]
fn the_package_installs_runs_and_removes_cleanly() {
    let _cpu = cpu();
    let work = std::env::temp_dir().join(format!("fabdiag-package-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let deb = sh(Command::new(repo().join("scripts/package.sh"))
        .args(["--binary", bin(), "--out"])
        .arg(work.join("out")));
    let deb = PathBuf::from(deb.trim());
    assert!(
        deb.file_name().unwrap().to_string_lossy().starts_with("fabdiag_"),
        "{deb:?}"
    );

    contents_are_whole(&deb);

    // install into a scratch root with its own dpkg database
    let root = work.join("root");
    let admin = root.join("var/lib/dpkg");
    for d in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(admin.join(d)).unwrap();
    }
    std::fs::write(admin.join("status"), "").unwrap();
    let dpkg = || {
        let mut c = Command::new("dpkg");
        c.arg(format!("--root={}", root.display()))
            .arg("--log=/dev/null")
            .arg("--force-depends")
            .arg("--force-script-chrootless")
            // some images exclude manual pages from every install
            .arg("--path-include=/usr/share/man/*");
        c
    };
    sh(dpkg().arg("-i").arg(&deb));
    // the service's options are a configuration file dpkg keeps, and the
    // unit is installed disabled (nothing links it into a target)
    let conffiles = std::fs::read_to_string(admin.join("info/fabdiag.conffiles")).unwrap_or_default();
    assert_eq!(conffiles, "/etc/default/fabdiag-serve\n/etc/default/fabdiag-monitor\n");
    for unit in ["fabdiag-serve.service", "fabdiag-monitor.service"] {
        assert!(!root
            .join("etc/systemd/system/multi-user.target.wants")
            .join(unit)
            .exists());
    }
    let installed = root.join("usr/bin");
    // a loopback run through an original name, from the installed tree
    let o =
        Proc::spawn(Command::new(installed.join("cxi_write_bw")).args(["--local", "-n", "5", "-s", "8"])).wait(LIMIT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("    CXI RDMA Write Bandwidth Test\n"), "{}", o.stdout);
    let v = sh(Command::new(installed.join("fabdiag")).arg("--version"));
    assert!(v.starts_with("fabdiag "), "{v}");
    // its manual page renders
    let page = sh(Command::new("man")
        .env("MANWIDTH", "80")
        .arg("-l")
        .arg(root.join("usr/share/man/man1/cxi_write_bw.1.gz")));
    // (man justifies lines: compare words)
    let words = page.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("cxi_write_bw, fabdiag write-bw - one-sided RDMA write bandwidth"),
        "{page}"
    );
    assert!(
        page.contains("--bidirectional") && page.contains("EXIT STATUS"),
        "{page}"
    );
    // its bash completion loads and completes
    let script = root.join("usr/share/bash-completion/completions/cxi_write_bw");
    let out = sh(Command::new("bash").arg("-c").arg(format!(
        "source {}; COMP_WORDS=(cxi_write_bw --bidir); COMP_CWORD=1; COMP_LINE='cxi_write_bw --bidir'; COMP_POINT=${{#COMP_LINE}}; $(complete -p cxi_write_bw | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p') cxi_write_bw --bidir cxi_write_bw; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    )));
    assert!(out.contains("--bidirectional"), "{out}");

    // removed: nothing it installed stays
    sh(dpkg().args(["-r", "fabdiag"]));
    for n in names() {
        assert!(
            !installed.join(&n).exists() && installed.join(&n).symlink_metadata().is_err(),
            "{n} left behind"
        );
        assert!(
            !root.join(format!("usr/share/man/man1/{n}.1.gz")).exists(),
            "man {n} left behind"
        );
    }
    assert!(!root.join("usr/share/bash-completion/completions/fabdiag").exists());
    let _ = std::fs::remove_dir_all(&work);
}

/// What the package carries: the binary and its names, their manual
/// pages and completions, the health checks, the service, the dashboard,
/// the guide; and the fields it declares.
fn contents_are_whole(deb: &Path) {
    let list = sh(Command::new("dpkg-deb").arg("-c").arg(deb));
    let has = |p: &str| list.lines().any(|l| l.contains(&format!(" ./{p}")));
    assert!(has("usr/bin/fabdiag"), "{list}");
    for n in names() {
        if n != "fabdiag" {
            assert!(list.contains(&format!("./usr/bin/{n} -> fabdiag")), "link {n}\n{list}");
        }
        assert!(has(&format!("usr/share/man/man1/{n}.1.gz")), "man {n}");
        assert!(has(&format!("usr/share/bash-completion/completions/{n}")), "bash {n}");
        assert!(has(&format!("usr/share/zsh/vendor-completions/_{n}")), "zsh {n}");
        assert!(
            has(&format!("usr/share/fish/vendor_completions.d/{n}.fish")),
            "fish {n}"
        );
    }
    for sub in ["write-bw", "atomic-lat", "serve", "host-traffic"] {
        assert!(
            has(&format!("usr/share/man/man1/fabdiag-{sub}.1.gz")),
            "man fabdiag-{sub}"
        );
    }
    assert!(has("usr/share/doc/fabdiag/copyright") && has("usr/share/doc/fabdiag/README.md"));
    for f in [
        "usr/share/fabdiag/slurm/fabdiag-healthcheck",
        "usr/share/fabdiag/slurm/prolog.sh",
        "usr/share/fabdiag/nhc/fabdiag.nhc",
        "lib/systemd/system/fabdiag-serve.service",
        "usr/share/fabdiag/grafana/fabdiag.json",
        "usr/share/fabdiag/prometheus/fabdiag-alerts.yml",
        "usr/share/fabdiag/prometheus/fabdiag-alerts.test.yml",
        "etc/default/fabdiag-serve",
        "lib/systemd/system/fabdiag-monitor.service",
        "etc/default/fabdiag-monitor",
        "usr/share/man/man1/fabdiag-monitor.1.gz",
    ] {
        assert!(has(f), "{f}\n{list}");
    }
    guide_is_packaged(&has);
    let fields = sh(Command::new("dpkg-deb")
        .args(["-f"])
        .arg(deb)
        .args(["Depends", "Recommends"]));
    assert!(fields.contains("Depends: libc6"), "{fields}");
    assert!(fields.contains("Recommends: libfabric1"), "{fields}");
}

/// The guide the manual pages point at (the JSON schema, the reference),
/// every page of it, and the changelog are in the package.
fn guide_is_packaged(has: &dyn Fn(&str) -> bool) {
    assert!(has("usr/share/doc/fabdiag/CHANGELOG.md"));
    for page in ["docs/README.md", "docs/json.md", "docs/reference/fabdiag-write-bw.md"] {
        assert!(has(&format!("usr/share/doc/fabdiag/{page}")), "{page}");
    }
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    for page in std::fs::read_dir(&guide).expect("docs/").flatten() {
        let name = page.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") || name.ends_with(".png") {
            assert!(
                has(&format!("usr/share/doc/fabdiag/docs/{name}")),
                "docs/{name} not packaged"
            );
        }
    }
}
