//! A single-node Slurm cluster for a test: scripts/dev/support/slurm-local.sh
//! (munged, slurmctld, slurmd) started and stopped around it, one at a
//! time, with extra slurm.conf lines when a test needs them.

use super::{require_root, Output, Proc, LIMIT};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A single-node Slurm cluster for the length of a test; one at a time.
pub struct Slurm {
    pub dir: PathBuf,
    pub conf: String,
    _one: std::sync::MutexGuard<'static, ()>,
}

impl Slurm {
    pub fn start() -> Slurm {
        Slurm::start_with("")
    }

    /// With `extra` lines in slurm.conf (a HealthCheckProgram, say).
    pub fn start_with(extra: &str) -> Slurm {
        static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        require_root();
        let dir = std::env::temp_dir().join(format!("fabdiag-slurm-{}", std::process::id()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dev/support/slurm-local.sh");
        let o = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(&dir)
            .env("SLURM_LOCAL_EXTRA", extra)
            .output()
            .expect("bash");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "scripts/dev/support/slurm-local.sh start: {}{}",
            out,
            String::from_utf8_lossy(&o.stderr)
        );
        let conf = out
            .lines()
            .find_map(|l| l.strip_prefix("export SLURM_CONF="))
            .expect("SLURM_CONF from slurm-local.sh")
            .to_string();
        Slurm { dir, conf, _one: one }
    }

    pub fn srun(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("srun");
        cmd.env("SLURM_CONF", &self.conf).args(args);
        Proc::spawn(&mut cmd).wait(LIMIT * 3)
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dev/support/slurm-local.sh");
        let _ = Command::new("bash").arg(script).arg("stop").arg(&self.dir).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Slurm {
    /// `scontrol ARGS` against this cluster.
    pub fn scontrol(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("scontrol");
        cmd.env("SLURM_CONF", &self.conf).args(args);
        Proc::spawn(&mut cmd).wait(LIMIT)
    }
}
