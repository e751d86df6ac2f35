//! One reading of a set of counter sources: every counter's value, and
//! for each counter or source that could not be read, why. Reads files;
//! keeps no handle open between readings (a reading costs one open and
//! read per counter, measured in `took`).

use crate::locate::{Family, Source};
use crate::meaning::known;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The values of one source at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Values {
    pub family: Family,
    pub device: String,
    pub values: BTreeMap<String, u64>,
    /// Counters whose file is there but gave no number: why.
    pub unreadable: BTreeMap<String, String>,
    /// The whole source could not be read: why.
    pub missing: Option<String>,
}

/// Every source's values, read one after the other.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub sources: Vec<Values>,
    pub at: Instant,
    /// How long the reading took.
    pub took: Duration,
}

/// "1234", or a CXI telemetry value "1234@1681234567.123456789".
fn number(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let v = t.split('@').next().unwrap_or(t);
    v.parse::<u64>().map_err(|_| format!("not a count: {:?}", truncate(t)))
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

fn file(v: &mut Values, name: &str, path: &Path) {
    match std::fs::read_to_string(path) {
        Ok(text) => match number(&text) {
            Ok(n) => {
                v.values.insert(name.into(), n);
            }
            Err(why) => {
                v.unreadable.insert(name.into(), why);
            }
        },
        Err(e) => {
            v.unreadable.insert(name.into(), e.to_string());
        }
    }
}

/// Every file of a folder, as counters; false if the folder is not there.
fn folder(v: &mut Values, dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut names: Vec<_> = rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    names.sort();
    for p in names {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // not counters: the driver's cache time (hw_counters/lifespan)
        // and the CXI telemetry's whole set in binary
        if name == "lifespan" || name == "ALL-in-binary" {
            continue;
        }
        file(v, &name, &p);
    }
    true
}

/// The TCP counters of /proc/net/snmp ("Tcp:") and /proc/net/netstat
/// ("TcpExt:"): a line of names, then a line of values. Only the names
/// the table holds: the others include gauges (CurrEstab, RtoMin).
fn tcp(v: &mut Values, paths: &[std::path::PathBuf]) -> Result<(), String> {
    let wanted: Vec<&str> = known(Family::Tcp).collect();
    for (path, tag) in paths.iter().zip(["Tcp:", "TcpExt:"]) {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut lines = text.lines().filter(|l| l.split_whitespace().next() == Some(tag));
        let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
            return Err(format!("{}: no {tag} lines", path.display()));
        };
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()).skip(1) {
            if wanted.contains(&name) {
                match number(value) {
                    Ok(n) => {
                        v.values.insert(name.into(), n);
                    }
                    Err(why) => {
                        v.unreadable.insert(name.into(), why);
                    }
                }
            }
        }
    }
    Ok(())
}

fn one(s: &Source) -> Values {
    let mut v = Values {
        family: s.family,
        device: s.device.clone(),
        values: BTreeMap::new(),
        unreadable: BTreeMap::new(),
        missing: None,
    };
    match s.family {
        Family::Tcp => v.missing = tcp(&mut v, &s.paths).err(),
        Family::Netdev => {
            let Some(dir) = s.paths.first() else {
                return v;
            };
            if !folder(&mut v, &dir.join("statistics")) {
                v.missing = Some(format!("{}: no statistics folder", dir.display()));
            }
            for name in ["carrier_changes", "carrier_up_count", "carrier_down_count"] {
                let p = dir.join(name);
                if p.exists() {
                    file(&mut v, name, &p);
                }
            }
        }
        Family::Infiniband | Family::Efa | Family::Cxi => {
            let found = s.paths.iter().filter(|p| folder(&mut v, p)).count();
            if found == 0 {
                let where_ = s.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
                v.missing = Some(format!("none of {} is there", where_.join(", ")));
            }
        }
    }
    v
}

impl Snapshot {
    /// Reads every source now.
    pub fn take(sources: &[Source]) -> Snapshot {
        let at = Instant::now();
        let sources = sources.iter().map(one).collect();
        Snapshot {
            sources,
            at,
            took: at.elapsed(),
        }
    }

    /// How many counters were read (for the cost: a file each).
    pub fn count(&self) -> usize {
        self.sources.iter().map(|s| s.values.len() + s.unreadable.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn counts_and_cxi_telemetry_values_are_read() {
        assert_eq!(number("42\n"), Ok(42));
        assert_eq!(number("90049@1674414354.329651605\n"), Ok(90049));
        assert!(number("N/A").is_err());
        assert!(number("-1").is_err());
    }
}
