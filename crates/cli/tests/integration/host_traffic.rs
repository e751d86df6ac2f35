//! host-traffic / gc-hosttraffictest without a GPU: options, the no-driver
//! path (one line, exit 4, valid JSON in the original's shape), and the
//! original name. What needs a GPU is checked on a GPU machine.

use crate::common::*;
use std::time::Duration;

#[test]
fn no_driver_is_one_line_exit_4_and_valid_json() {
    if std::path::Path::new("/proc/driver/nvidia").exists() {
        skipped("an NVIDIA driver is present; the no-driver path is shown only without one");
        return;
    }
    let o = run(&["host-traffic", "-d", "0"], Duration::from_secs(10));
    assert_eq!(o.code, Some(4));
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(
        o.stderr
            .starts_with("fabdiag host-traffic: no NVIDIA driver: cannot load libcuda.so.1"),
        "{}",
        o.stderr
    );
    let j = run(&["host-traffic", "-j", "--host", "-p", "2"], Duration::from_secs(10));
    assert_eq!(j.code, Some(4));
    let v = j.json();
    let cfg = v["configuration"].as_object().unwrap();
    // the original's keys first, in its order; every value a string
    let keys: Vec<&str> = cfg.keys().map(String::as_str).collect();
    assert_eq!(
        &keys[..5],
        [
            "number_of_ipus",
            "tile_transfers_enabled",
            "transfer_size_64byte_blocks",
            "iterations",
            "host_transfers_enabled"
        ]
    );
    assert!(cfg.values().all(|x| x.is_string()));
    assert_eq!(cfg["tile_transfers_enabled"], "false");
    assert_eq!(cfg["transfer_size_64byte_blocks"], "2");
    assert!(v["error"].as_str().unwrap().contains("no NVIDIA driver"));
    // a library that is not a CUDA driver is also a clear "no driver"
    let o = Proc::spawn(fabdiag(&["host-traffic"]).env("FABDIAG_LIBCUDA", "libc.so.6")).wait(Duration::from_secs(10));
    assert_eq!(o.code, Some(4));
    assert!(o.stderr.contains("has no symbol cuInit"), "{}", o.stderr);
}

#[test]
fn bad_options_and_help_under_the_original_name() {
    let dir = std::env::temp_dir().join(format!("fabdiag-gc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("gc-hosttraffictest");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let o = Proc::spawn(std::process::Command::new(&link).args(["-p", "8"])).wait(Duration::from_secs(10));
    assert_eq!(o.code, Some(1));
    assert_eq!(
        o.stderr.trim_end(),
        "gc-hosttraffictest: Invalid payload blocks (2 or 4): 8 (see -h)"
    );
    let h = Proc::spawn(std::process::Command::new(&link).arg("--help")).wait(Duration::from_secs(10));
    assert_eq!(h.code, Some(0));
    assert!(h.stdout.starts_with("Usage: gc-hosttraffictest -d DEVICE [options]"));
    assert!(h.stdout.contains("--min-tile-bandwidth arg"));
    let v = Proc::spawn(std::process::Command::new(&link).arg("--version")).wait(Duration::from_secs(10));
    assert!(v.stdout.starts_with("gc-hosttraffictest version: "));
    let j = Proc::spawn(std::process::Command::new(&link).args(["-j", "-R", "0"])).wait(Duration::from_secs(10));
    assert_eq!(j.code, Some(1));
    assert_eq!(j.json()["error"], "Invalid repeat count: 0 (see -h)");
    let _ = std::fs::remove_dir_all(&dir);
}
