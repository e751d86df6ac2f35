//! The expectations file (`/etc/fabdiag/health.toml` or `--expect`):
//! what this node must have and how fast its NICs and GPUs must be, read
//! strictly (a misspelt key is an error naming it, never a limit quietly
//! not applied), and written from what a known-good node measures now,
//! with a margin (`--write-expect`). Nothing here reads the machine.

use crate::topology::Connection;
use serde::{Deserialize, Serialize};

/// One NIC (libfabric domain) to measure and hold to limits.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DomainExpect {
    pub provider: String,
    /// The libfabric domain name: mlx5_0, cxi0, efa_0-rdm, eth0, lo, shm.
    pub domain: String,
    /// The link's rate (Gb/s) must be at least this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_speed_gbps: Option<f64>,
    /// Loopback write-bw (MB/s, 10^6 bytes/s) must be at least this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_write_bw_mb_s: Option<f64>,
    /// Loopback send-lat (µs, the median) must be at most this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_send_lat_us: Option<f64>,
    /// Link flaps (carrier changes, link_downed) per hour, since the last
    /// run, must be below this (cxi_healthcheck's limit is 5 an hour).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_flaps_per_hour: Option<f64>,
}

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// libfabric providers that must be present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<String>,
    /// NVIDIA GPUs the CUDA driver must show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// Host -> GPU copy bandwidth (GB/s, 10^9 bytes/s) each GPU must reach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_host_to_gpu_gb_s: Option<f64>,
    /// GPU -> host copy bandwidth (GB/s) each GPU must reach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_gpu_to_host_gb_s: Option<f64>,
    /// Each GPU's nearest NIC at most this far on the PCI tree: PIX, PXB,
    /// PHB, NODE or SYS (default: anything but SYS is fine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_gpu_nic: Option<String>,
    /// The soft locked-memory limit must be at least this many MiB, or
    /// "unlimited" (RDMA providers pin every buffer they register).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_locked_memory_mib: Option<LockedMemory>,
    /// The soft open-files limit must be at least this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_open_files: Option<u64>,
    /// Free 2 MiB huge pages needed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_free_hugepages_2m: Option<u64>,
    #[serde(default, rename = "domain", skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<DomainExpect>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum LockedMemory {
    Mib(u64),
    Word(String),
}

impl LockedMemory {
    /// The limit in bytes; None for "unlimited".
    pub fn bytes(&self) -> Result<Option<u64>, ExpectError> {
        match self {
            LockedMemory::Mib(m) => Ok(Some(m.saturating_mul(1 << 20))),
            LockedMemory::Word(w) if w == "unlimited" => Ok(None),
            LockedMemory::Word(w) => Err(ExpectError::Value(format!(
                "min_locked_memory_mib = \"{w}\": a number of MiB or \"unlimited\""
            ))),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ExpectError {
    #[error("{0}")]
    Syntax(String),
    #[error("{0}")]
    Value(String),
}

/// "PIX" .. "SYS" (as nvidia-smi prints them).
pub fn connection(name: &str) -> Option<Connection> {
    Some(match name {
        "PIX" => Connection::Pix,
        "PXB" => Connection::Pxb,
        "PHB" => Connection::Phb,
        "NODE" => Connection::Node,
        "SYS" => Connection::Sys,
        _ => return None,
    })
}

/// Reads an expectations file's text, every value checked: `source` (the
/// file's path) starts the message of an error.
pub fn parse(text: &str, source: &str) -> Result<Expect, ExpectError> {
    let e: Expect = toml::from_str(text).map_err(|err| {
        // toml's message spans several lines (a caret drawing): the first
        // line and the position are what an operator needs
        let what = err.message().lines().next().unwrap_or("not TOML").to_string();
        let at = err
            .span()
            .map(|s| {
                // (bytes: a span is never cut inside a character this way)
                let line = text.as_bytes()[..s.start.min(text.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                format!(" at line {line}")
            })
            .unwrap_or_default();
        ExpectError::Syntax(format!("{source}{at}: {what}"))
    })?;
    // a value refused names its line, as toml names a syntax error's
    let bad = |domain: Option<usize>, key: Option<&str>, m: String| {
        let at = line_of(text, domain, key).map_or(String::new(), |n| format!(" at line {n}"));
        Err(ExpectError::Value(format!("{source}{at}: {m}")))
    };
    if let Some(m) = &e.max_gpu_nic {
        if connection(m).is_none() {
            return bad(
                None,
                Some("max_gpu_nic"),
                format!("max_gpu_nic = \"{m}\": one of PIX, PXB, PHB, NODE, SYS"),
            );
        }
    }
    if let Some(l) = &e.min_locked_memory_mib {
        if let Err(x) = l.bytes() {
            return bad(None, Some("min_locked_memory_mib"), x.to_string());
        }
    }
    for (i, d) in e.domains.iter().enumerate() {
        if d.provider.is_empty() || d.domain.is_empty() {
            return bad(Some(i), None, "every [[domain]] needs a provider and a domain".into());
        }
        let limits = [
            ("link_speed_gbps", d.link_speed_gbps),
            ("min_write_bw_mb_s", d.min_write_bw_mb_s),
            ("max_send_lat_us", d.max_send_lat_us),
            ("max_flaps_per_hour", d.max_flaps_per_hour),
        ];
        for (k, v) in limits {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v <= 0.0) {
                return bad(
                    Some(i),
                    Some(k),
                    format!("{}:{}: {k} = {v}: must be a positive number", d.provider, d.domain),
                );
            }
        }
    }
    for (k, v) in [
        ("min_host_to_gpu_gb_s", e.min_host_to_gpu_gb_s),
        ("min_gpu_to_host_gb_s", e.min_gpu_to_host_gb_s),
    ] {
        if let Some(v) = v.filter(|v| !v.is_finite() || *v <= 0.0) {
            return bad(None, Some(k), format!("{k} = {v}: must be a positive number"));
        }
    }
    Ok(e)
}

/// The line (from 1) of `key` in the file's `text`: a top-level key, or
/// one of the `domain`th `[[domain]]` table's (that table's own line
/// without a key). None when the text does not say (it parsed once
/// already, so only a key that is not there).
fn line_of(text: &str, domain: Option<usize>, key: Option<&str>) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let find = |t: &DeTable<'_>, k: &str| t.iter().find(|(name, _)| name.get_ref() == k).map(|(_, v)| v.span());
    let span = match domain {
        None => find(doc.get_ref(), key?)?,
        Some(i) => {
            let domains = doc.get_ref().iter().find(|(name, _)| name.get_ref() == "domain")?.1;
            let DeValue::Array(all) = domains.get_ref() else {
                return None;
            };
            let table = all.get(i)?;
            match (table.get_ref(), key) {
                (DeValue::Table(t), Some(k)) => find(t, k)?,
                _ => table.span(),
            }
        }
    };
    // (bytes: a span is never cut inside a character this way)
    let before = text.as_bytes().get(..span.start.min(text.len()))?;
    Some(before.iter().filter(|&&b| b == b'\n').count() + 1)
}

/// What a node measured, for `--write-expect`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    pub providers: Vec<String>,
    pub gpus: Option<u32>,
    /// The slowest GPU's host -> GPU and GPU -> host copies, GB/s.
    pub host_to_gpu_gb_s: Option<f64>,
    pub gpu_to_host_gb_s: Option<f64>,
    /// The farthest of the GPUs' nearest NICs.
    pub gpu_nic: Option<Connection>,
    pub domains: Vec<MeasuredDomain>,
}

/// One NIC's figures, for `--write-expect`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasuredDomain {
    pub provider: String,
    pub domain: String,
    pub link_gbps: Option<f64>,
    pub write_bw_mb_s: Option<f64>,
    pub send_lat_us: Option<f64>,
    /// Whether the link has a flap counter (a flap limit is written then).
    pub flap_counter: bool,
}

/// The file `--write-expect` writes: today's figures with `margin` (0.2:
/// bandwidth at least 80 % of today's, latency at most 120 %), link speed
/// as it is, and a comment saying where and how it was made.
pub fn write(m: &Measured, margin: f64, node: &str) -> String {
    let round = |v: f64| (v * 100.0).round() / 100.0;
    let e = Expect {
        providers: m.providers.clone(),
        gpus: m.gpus,
        min_host_to_gpu_gb_s: m.host_to_gpu_gb_s.map(|v| round(v * (1.0 - margin))),
        min_gpu_to_host_gb_s: m.gpu_to_host_gb_s.map(|v| round(v * (1.0 - margin))),
        min_open_files: None,
        max_gpu_nic: m.gpu_nic.map(|c| c.label().to_string()),
        min_locked_memory_mib: None,
        min_free_hugepages_2m: None,
        domains: m
            .domains
            .iter()
            .map(|d| DomainExpect {
                provider: d.provider.clone(),
                domain: d.domain.clone(),
                link_speed_gbps: d.link_gbps,
                min_write_bw_mb_s: d.write_bw_mb_s.map(|v| round(v * (1.0 - margin))),
                max_send_lat_us: d.send_lat_us.map(|v| round(v * (1.0 + margin))),
                // cxi_healthcheck's limit
                max_flaps_per_hour: d.flap_counter.then_some(5.0),
            })
            .collect(),
    };
    let body = toml::to_string(&e).unwrap_or_default();
    format!(
        "# fabdiag health expectations, written by `fabdiag health --write-expect` on {node}\n\
         # from what it measured, with a margin of {:.0} %: check them before copying to other nodes.\n\n{body}",
        margin * 100.0
    )
}
