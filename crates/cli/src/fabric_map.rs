//! The fabric's map as the commands that take one read it: each source
//! named on the command line read (untrusted, capped) and the sources
//! made one map. A file is a map file, Slurm's topology or
//! `ibnetdiscover` output, told apart by its text; a folder holds
//! `lldpctl -f json` outputs, one per device, named DEVICE.json. Says why
//! in one line; prints nothing.

use fabdiag_topology::{lldp, sources, Fabric, Parts};
use std::path::Path;

/// The most bytes one map source may hold: a map of 100,000 hosts is
/// about 10 MB as TOML.
const MAP_CAP: u64 = 256 << 20;

/// The most bytes one device's LLDP output may hold (a switch with a
/// hundred neighbours prints about 300 KB).
const LLDP_CAP: u64 = 4 << 20;

/// The most devices one LLDP folder may hold.
const MOST_DEVICES: usize = 1_000_000;

/// The map the `sources` make together, and how they are named ("a.toml
/// + topology.conf").
pub fn read(option: &str, paths: &[String]) -> Result<(Fabric, String), String> {
    let mut parts = Vec::with_capacity(paths.len());
    for p in paths {
        let one = if Path::new(p).is_dir() {
            lldp_folder(option, p)?
        } else {
            let text = fabdiag_files::read::text(Path::new(p), MAP_CAP).map_err(|e| format!("{option} {p}: {e}"))?;
            sources::read(p, &text).map_err(|e| format!("{option} {e}"))?
        };
        parts.push((p.clone(), one));
    }
    let fabric = fabdiag_topology::combine(&parts).map_err(|e| format!("{option} {e}"))?;
    if fabric.hosts.is_empty() {
        return Err(format!("{option} {}: no host on the map", paths.join(" + ")));
    }
    Ok((fabric, paths.join(" + ")))
}

/// A folder of `lldpctl -f json` outputs, DEVICE.json each.
fn lldp_folder(option: &str, dir: &str) -> Result<Parts, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{option} {dir}: {e}"))?;
    let mut files = Vec::new();
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
