//! The fabric's map as the commands that take one read it: each source
//! named on the command line read (untrusted, capped). A file is a map
//! file, Slurm's topology or `ibnetdiscover` output, told apart by its
//! text; a folder holds `lldpctl -f json` outputs, one per device, named
//! DEVICE.json; the word `lldp` (a sweep's only) has every rank read its
//! own LLDP neighbours when it joins (`lldp_here`). Says why in one line;
//! prints nothing.

use fabdiag_topology::{lldp, sources, Fabric, Parts, Plan};
use std::path::Path;
use std::time::Duration;

/// The most bytes one map source may hold: a map of 100,000 hosts is
/// about 10 MB as TOML.
const MAP_CAP: u64 = 256 << 20;

/// The most bytes one device's LLDP output may hold (a switch with a
/// hundred neighbours prints about 300 KB).
const LLDP_CAP: u64 = 4 << 20;

/// The most devices one LLDP folder may hold.
const MOST_DEVICES: usize = 1_000_000;

/// The most bytes one LLDP folder may hold, all its files together.
const LLDP_FOLDER_CAP: u64 = 1 << 30;

/// The most bytes of its LLDP a rank sends with its join (the control
/// channel's messages are at most 1 MiB, and the JSON is escaped in it).
const LLDP_SENT_CAP: usize = 512 << 10;

/// The source word for the ranks' own LLDP.
pub const LLDP: &str = "lldp";

/// What the `sources` make: the files read, and whether the ranks' LLDP
/// is one more (only where `lldp_allowed`).
pub fn plan(option: &str, paths: &[String], lldp_allowed: bool) -> Result<Plan, String> {
    let mut plan = Plan::default();
    for p in paths {
        if p == LLDP {
            if !lldp_allowed {
                return Err(format!(
                    "{option} {LLDP}: only a sweep's ranks read their own LLDP; give a folder of lldpctl -f json outputs (DEVICE.json), or ./lldp for a file of that name"
                ));
            }
            plan.lldp = true;
            continue;
        }
        let one = if Path::new(p).is_dir() {
            lldp_folder(option, p)?
        } else {
            let text = fabdiag_files::read::text(Path::new(p), MAP_CAP).map_err(|e| format!("{option} {p}: {e}"))?;
            sources::read(p, &text).map_err(|e| format!("{option} {e}"))?
        };
        plan.files.push((p.clone(), one));
    }
    if !plan.lldp {
        // checked now, not when the sweep ends
        made(option, &plan, &[])?;
    }
    Ok(plan)
}

/// The map the `sources` make together, and how they are named ("a.toml
/// + topology.conf").
pub fn read(option: &str, paths: &[String]) -> Result<(Fabric, String), String> {
    let plan = plan(option, paths, false)?;
    Ok((made(option, &plan, &[])?.0, plan.source()))
}

/// The map of `plan` with the ranks' LLDP outputs `devices`, and why
/// each output left out was.
pub fn made(option: &str, plan: &Plan, devices: &[(String, String, String)]) -> Result<(Fabric, Vec<String>), String> {
    let (fabric, left_out) = plan.fabric(devices).map_err(|e| format!("{option} {e}"))?;
    if fabric.hosts.is_empty() {
        return Err(format!("{option} {}: no host on the map", plan.source()));
    }
    Ok((fabric, left_out.iter().map(ToString::to_string).collect()))
}

/// A folder of `lldpctl -f json` outputs, DEVICE.json each.
fn lldp_folder(option: &str, dir: &str) -> Result<Parts, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{option} {dir}: {e}"))?;
    let mut files = Vec::new();
    let mut total = 0u64;
    for entry in entries {
        let path = entry.map_err(|e| format!("{option} {dir}: {e}"))?.path();
        let (Some(stem), Some("json")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        if files.len() >= MOST_DEVICES {
            return Err(format!("{option} {dir}: more than {MOST_DEVICES} devices' files"));
        }
        let shown = path.display().to_string();
        let text = fabdiag_files::read::text(&path, LLDP_CAP).map_err(|e| format!("{option} {shown}: {e}"))?;
        total += text.len() as u64;
        if total > LLDP_FOLDER_CAP {
            return Err(format!(
                "{option} {dir}: more than {LLDP_FOLDER_CAP} bytes of LLDP outputs"
            ));
        }
        files.push((stem.to_string(), shown, text));
    }
    if files.is_empty() {
        return Err(format!(
            "{option} {dir}: a folder, but no DEVICE.json in it (each device's lldpctl -f json)"
        ));
    }
    // (the order read_dir gives is the file system's: sorted, the same map every time)
    files.sort();
    lldp::from_files(&files).map_err(|e| format!("{option} {e}"))
}

/// This host's LLDP neighbours: `FABDIAG_LLDPCTL`'s command (words split
/// on spaces; default `lldpctl -f json`), ended after 5 s; its output, or
/// why not in one line.
pub fn lldp_here() -> Result<String, String> {
    let line = std::env::var("FABDIAG_LLDPCTL").unwrap_or_else(|_| "lldpctl -f json".to_string());
    let mut words = line.split_whitespace().map(str::to_string);
    let program = words.next().ok_or("FABDIAG_LLDPCTL is empty")?;
    let args: Vec<String> = words.collect();
    let out = fabdiag_timebox::output(&program, &args, Duration::from_secs(5))?;
    if out.len() > LLDP_SENT_CAP {
        return Err(format!("{program} printed more than {LLDP_SENT_CAP} bytes"));
    }
    if out.trim().is_empty() {
        return Err(format!("{program} printed nothing"));
    }
    Ok(out)
}
