//! `--metrics FILE`: the file is checked before a run starts (a typo in
//! its folder must not cost a whole run), and written whole at the end by
//! `write::whole`, so node_exporter's textfile collector, which may read
//! it at any moment, sees the previous run's metrics or this one's, never
//! half (its temporary name does not end in `.prom`, so the collector
//! skips it). What goes in the file is the renderers' (fabdiag-report,
//! fabdiag-sweep-report, fabdiag-health); this only checks and writes.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Whether a metrics file can be written at `path`: its folder exists and
/// takes a new file, and `path` is a regular file or nothing yet. The
/// error is one line.
pub fn check(path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err("--metrics: no file named".into());
    }
    if path.is_dir() {
        return Err(format!("--metrics {}: is a directory", path.display()));
    }
    // the file is replaced by renaming a new one over it: a device, a
    // pipe or a link there (/dev/stdout) would be replaced, not written
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            return Err(format!("--metrics {}: is not a regular file", path.display()));
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!("--metrics {}: no directory {}", path.display(), dir.display()));
    }
    // the way the file will be written, so a read-only folder, a full disk
    // or a link at its name shows now, not after the run
    let probe = dir.join(format!(".fabdiag-metrics-check.{}", std::process::id()));
    fabdiag_files::write::whole(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| format!("--metrics {}: cannot write in {}: {e}", path.display(), dir.display()))
}

/// Writes `text` to `path` whole; the error is one line.
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    fabdiag_files::write::whole(path, text.as_bytes())
        .map_err(|e| format!("cannot write metrics to {}: {e}", path.display()))
}

/// The file's name without its folder: every sample's `file` label.
pub fn name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Now, in seconds since the Unix epoch (the metrics' timestamps).
pub fn now_unix_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_cannot_be_written_is_said_before_the_run() {
        let dir = tempfile::tempdir().expect("a folder");
        assert_eq!(check(Path::new("")), Err("--metrics: no file named".into()));
        let e = check(&dir.path().join("none/x.prom")).expect_err("no folder");
        assert!(e.contains("no directory") && e.contains("none"), "{e}");
        let e = check(dir.path()).expect_err("a folder");
        assert!(e.ends_with("is a directory"), "{e}");
        // a device, and a link (as /dev/stdout is), made here so the test
        // does not hang on the machine's /dev
        let other = tempfile::tempdir().expect("a folder");
        let link = other.path().join("out.prom");
        std::os::unix::fs::symlink("/dev/null", &link).expect("a link");
        for p in [Path::new("/dev/null"), link.as_path()] {
            let e = check(p).expect_err("not a regular file");
            assert!(e.ends_with("is not a regular file"), "{e}");
        }
        let ok = dir.path().join("x.prom");
        assert_eq!(check(&ok), Ok(()));
        write(&ok, "a 1\n").expect("written");
        assert_eq!(std::fs::read_to_string(&ok).expect("read"), "a 1\n");
        // nothing left beside it
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
    }
}
