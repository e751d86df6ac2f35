//! What the tests of every crate share, and nothing the tools use: a
//! dev-dependency only. Today that is `skipped`, the one way a test says
//! it (or part of it) could not run here; `cpu_cuda`, which builds the
//! CPU stand-in for the CUDA driver; `nic_provider`, which builds a
//! libfabric provider that fills in fi_nic; and `sysfs`, fixtures laid out
//! as the kernel's drivers lay out sysfs. Decides nothing about a test's
//! outcome.

pub mod counters;
pub mod sysfs;

use std::io::Write;

/// Says that the running test (or the part named in `why`) could not run
/// here, and why. libtest keeps a passing test's `eprintln!` to itself, so
/// a skip said that way never reached a log and the test read "ok"; this
/// writes to the process's stderr directly, with the test's name (libtest
/// names each test's thread after it).
pub fn skipped(why: impl std::fmt::Display) {
    let t = std::thread::current();
    let _ = writeln!(std::io::stderr(), "SKIPPED {}: {why}", t.name().unwrap_or("a test"));
}

/// Builds the CPU stand-in for the CUDA driver (crates/testkit/cuda/cpu_cuda.cpp)
/// into `dir` with scripts/dev/support/build-cpu-cuda.sh, and gives back `dir`: put it
/// on LD_LIBRARY_PATH and fabdiag's GPU paths run without a GPU (what the
/// stand-in is and is not: its file's header). Needs a C++ compiler
/// (build-essential, which scripts/install-deps.sh installs); without one
/// it fails, saying so.
pub fn cpu_cuda(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dev/support/build-cpu-cuda.sh");
    let o = std::process::Command::new("bash")
        .arg(&script)
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !o.status.success() {
        return Err(format!(
            "the CPU stand-in for the CUDA driver does not build (a C++ compiler is needed: install build-essential):\n{}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(dir.to_path_buf())
}

/// Builds fdgnic (crates/testkit/libfabric/nic_provider.c), a libfabric
/// provider for tests that lists the domains named in `FDGNIC_DOMAINS` with
/// fi_nic's link attributes filled in (what it lists: its file's header),
/// into `dir` as libfdgnic-fi.so, and gives back `dir`: set
/// `FI_PROVIDER_PATH` to it and the real libfabric loads the provider.
/// Needs a C compiler and libfabric's headers (scripts/install-deps.sh);
/// without them it fails, saying so.
pub fn nic_provider(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("libfabric/nic_provider.c");
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let o = std::process::Command::new(&cc)
        .args(["-O1", "-g", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(dir.join("libfdgnic-fi.so"))
        .arg(&src)
        .arg("-lfabric")
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "the test provider fdgnic does not build (a C compiler and libfabric-dev are needed: scripts/install-deps.sh):\n{}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(dir.to_path_buf())
}
