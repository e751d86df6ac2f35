//! What `fabdiag health` does outside itself: asks Slurm for this node's
//! state and drains or resumes it (through `scontrol`, each call bounded
//! in time), and keeps link flap counters between runs in a small JSON
//! file written whole (temporary name, then rename). The decisions are
//! fabdiag_health::slurm's; nothing here judges.

use fabdiag_health::slurm::{self, Action};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// This node's Slurm name: `--node`, $SLURMD_NODENAME, else the short host name.
pub fn node_name(given: Option<&str>) -> String {
    if let Some(n) = given {
        return n.to_string();
    }
    if let Some(n) = std::env::var("SLURMD_NODENAME").ok().filter(|n| !n.is_empty()) {
        return n;
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().split('.').next().unwrap_or_default().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Runs scontrol with `args`, killed after `limit`: its stdout, or why not.
fn scontrol(args: &[String], limit: Duration) -> Result<String, String> {
    fabdiag_timebox::output("scontrol", args, limit)
}

/// Drains or resumes `node` as the verdict says (or, dry, says the
/// command): one line of what was done, or an error line.
pub fn slurm(
    node: &str,
    verdict: fabdiag_health::Verdict,
    summary: &str,
    dry_run: bool,
    limit: Duration,
) -> Result<String, String> {
    let shown = scontrol(&["show".into(), "node".into(), node.into()], limit)?;
    let state = slurm::parse_show_node(&shown).ok_or_else(|| format!("scontrol shows no state for node {node}"))?;
    let action = slurm::decide(verdict, summary, &state);
    let Some(args) = slurm::scontrol_args(node, &action) else {
        let Action::Leave(why) = action else {
            return Err("internal error: an action without a command".into());
        };
        return Ok(format!("{node} {}: {why}", state.state));
    };
    let shown_cmd = format!(
        "scontrol {}",
        args.iter()
            .map(|a| if a.contains(' ') { format!("'{a}'") } else { a.clone() })
            .collect::<Vec<_>>()
            .join(" ")
    );
    if dry_run {
        return Ok(format!("would run: {shown_cmd}"));
    }
    scontrol(&args, limit)?;
    Ok(match action {
        Action::Drain(_) => format!("drained {node}: {shown_cmd}"),
        _ => format!("resumed {node}: {shown_cmd}"),
    })
}

/// Flap counters by "provider:domain": (value, unix seconds) last read.
pub type FlapState = BTreeMap<String, (u64, f64)>;

const STATE_FILE: &str = "health-counters.json";

/// The counters kept in `dir` by the last run: none when there is no
/// file yet; why not, in words, when one is there and cannot be read as
/// the untrusted file it is (a FIFO, a device, a huge or damaged file).
pub fn read_state(dir: &str) -> Result<FlapState, String> {
    use fabdiag_files::read::{text, ReadError, CONFIG_CAP};
    let path = Path::new(dir).join(STATE_FILE);
    match text(&path, CONFIG_CAP) {
        Ok(t) => {
            serde_json::from_str(&t).map_err(|e| format!("{}: not the counters health keeps ({e})", path.display()))
        }
        Err(ReadError::Absent(_)) => Ok(FlapState::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes the state whole: a reader (or a kill) sees the old or the new.
pub fn write_state(dir: &str, s: &FlapState) -> Result<(), String> {
    let d = Path::new(dir);
    std::fs::create_dir_all(d).map_err(|e| format!("cannot create {dir}: {e}"))?;
    let body = serde_json::to_string(s).map_err(|e| e.to_string())?;
    fabdiag_files::write::whole(&d.join(STATE_FILE), body.as_bytes())
        .map_err(|e| format!("cannot write {dir}/{STATE_FILE}: {e}"))
}

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
