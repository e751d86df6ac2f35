//! Figures and facts held to their limits: each function turns what the
//! binary measured or read into checks. Without an expectations file only
//! what is absent or broken fails; each limit says where it came from.
//! Pure: nothing here measures.

use crate::expect::{connection, DomainExpect, Expect};
use crate::link::{LinkFacts, ProviderLink};
use crate::topology::{Connection, Placement};
use crate::verdict::{Check, Verdict};
use fabdiag_model::Provider;

/// Where limits come from, as the lines say it.
pub struct Source<'a>(pub &'a str);

pub fn libfabric(r: Result<String, String>) -> Check {
    match r {
        Ok(version) => Check::new("libfabric", "", Verdict::Ok, format!("loads ({version})")),
        Err(e) => Check::new("libfabric", "", Verdict::Critical, e),
    }
}

/// The domains of a provider as `-P` names it: libfabric lists layered
/// providers as "tcp;ofi_rxm", which `-P tcp` also selects. None: absent.
pub fn domains_of(present: &[(String, Vec<String>)], provider: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut found = false;
    for (name, ds) in present {
        if Provider::named(name).matches(provider) {
            found = true;
            for d in ds {
                if !out.contains(d) {
                    out.push(d.clone());
                }
            }
        }
    }
    found.then_some(out)
}

/// Each provider the file asks for, present or not.
pub fn providers(present: &[(String, Vec<String>)], e: &Expect, src: &Source) -> Vec<Check> {
    e.providers
        .iter()
        .map(|p| match domains_of(present, p) {
            Some(d) => Check::new("provider", p, Verdict::Ok, format!("present ({})", d.join(", "))),
            None => Check::new("provider", p, Verdict::Critical, format!("missing ({})", src.0)),
        })
        .collect()
}

/// A domain to check that libfabric does not list (None: it does).
pub fn domain(present: &[(String, Vec<String>)], d: &DomainExpect) -> Option<Check> {
    let subject = format!("{}:{}", d.provider, d.domain);
    match domains_of(present, &d.provider) {
        None => Some(Check::new(
            "domain",
            &subject,
            Verdict::Critical,
            format!("provider {} missing", d.provider),
        )),
        Some(ds) if !ds.contains(&d.domain) => Some(Check::new(
            "domain",
            &subject,
            Verdict::Critical,
            format!("missing (the provider has: {})", ds.join(", ")),
        )),
        Some(_) => None,
    }
}

/// The soft locked-memory limit (None: unlimited): held to the file's
/// minimum, else a warning under 64 MiB when an RDMA provider is here.
pub fn locked_memory(soft: Option<u64>, e: &Expect, rdma: bool, src: &Source) -> Option<Check> {
    let mib = |b: u64| format!("{} MiB", b >> 20);
    let shown = soft.map_or("unlimited".to_string(), mib);
    let want = match e.min_locked_memory_mib.as_ref().map(|l| l.bytes()) {
        Some(Ok(w)) => Some((w, src.0)),
        _ if rdma => Some((Some(64 << 20), "RDMA providers pin every buffer")),
        _ => None,
    };
    let (want, from) = want?;
    let short = match (soft, want) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(s), Some(w)) => s < w,
    };
    let limit = want.map_or("unlimited".to_string(), mib);
    Some(if short {
        let v = if from == src.0 {
            Verdict::Critical
        } else {
            Verdict::Warning
        };
        Check::new("locked memory", "", v, format!("{shown} < {limit} ({from})")).with_limit(limit)
    } else {
        Check::new("locked memory", "", Verdict::Ok, shown)
    })
}

pub fn hugepages(free_2m: Option<u64>, e: &Expect, src: &Source) -> Option<Check> {
    let want = e.min_free_hugepages_2m?;
    let have = free_2m.unwrap_or(0);
    let v = if have >= want { Verdict::Ok } else { Verdict::Critical };
    Some(
        Check::new(
            "huge pages 2M",
            "",
            v,
            format!("{have} free, {want} needed ({})", src.0),
        )
        .with_figure(have as f64, "pages"),
    )
}

/// One source's view of a link, for setting the two side by side.
struct Reading<'a> {
    source: &'static str,
    device: &'a str,
    up: Option<bool>,
    state: String,
    rate: Option<f64>,
}

/// Which sources were read, and why the others were not: "sysfs",
/// "sysfs, libfabric", "sysfs; libfabric: not reported".
fn sources(sysfs: &Result<LinkFacts, String>, fi: &Result<ProviderLink, String>) -> String {
    match (sysfs, fi) {
        (Ok(_), Ok(_)) => "sysfs, libfabric".into(),
        (Ok(_), Err(why)) => format!("sysfs; libfabric: {why}"),
        (Err(why), Ok(_)) => format!("libfabric; sysfs: {why}"),
        (Err(a), Err(b)) if a == b => a.clone(),
        (Err(a), Err(b)) => format!("{a}; libfabric: {b}"),
    }
}

fn readings<'a>(sysfs: &'a Result<LinkFacts, String>, fi: &'a Result<ProviderLink, String>) -> Vec<Reading<'a>> {
    let mut out = Vec::new();
    if let Ok(l) = sysfs {
        // "up", "4: ACTIVE"; else what the kernel says of a link that
        // carries traffic anyway (lo: "unknown" with carrier)
        let state = match l.state.as_str() {
            s if !l.up || s == "up" || s.ends_with("ACTIVE") => s.to_string(),
            s => format!("up ({s}, carrier on)"),
        };
        out.push(Reading {
            source: "sysfs",
            device: &l.device,
            up: Some(l.up),
            state,
            rate: l.rate_gbps,
        });
    }
    if let Ok(p) = fi {
        out.push(Reading {
            source: "libfabric",
            device: &p.device,
            up: p.up,
            state: p.state().to_string(),
            rate: p.rate_gbps,
        });
    }
    out
}

/// The link's state and rate, from sysfs and from the provider's fi_nic
/// where it fills it in: down by either is CRITICAL, the lower rate is the
/// one held to the limit, and two rates that differ by over 1 % are a
/// WARNING (a port renegotiated since the provider looked, or a driver
/// that reports the wrong figure). The line ends with the sources read.
pub fn link(
    subject: &str,
    sysfs: &Result<LinkFacts, String>,
    fi: &Result<ProviderLink, String>,
    d: &DomainExpect,
    src: &Source,
) -> Check {
    let from = sources(sysfs, fi);
    let rs = readings(sysfs, fi);
    let line = |v: Verdict, what: String| Check::new("link", subject, v, format!("{what} [{from}]"));
    if rs.is_empty() {
        let v = if d.link_speed_gbps.is_some() {
            Verdict::Unknown
        } else {
            Verdict::Ok
        };
        return Check::new("link", subject, v, format!("not read: {from}"));
    }
    if let Some(down) = rs.iter().find(|r| r.up == Some(false)) {
        let against = rs
            .iter()
            .find(|r| r.up == Some(true))
            .map_or(String::new(), |r| format!("; {} says {}", r.source, r.state));
        return line(
            Verdict::Critical,
            format!("{} is {} (not up{against})", down.device, down.state),
        );
    }
    let first = &rs[0];
    let Some(up) = rs.iter().find(|r| r.up == Some(true)) else {
        let v = if d.link_speed_gbps.is_some() {
            Verdict::Unknown
        } else {
            Verdict::Ok
        };
        return line(v, format!("{} link state {}", first.device, first.state));
    };
    let rated: Vec<&Reading> = rs.iter().filter(|r| r.rate.is_some()).collect();
    let lowest = rated
        .iter()
        .min_by(|a, b| a.rate.partial_cmp(&b.rate).unwrap_or(std::cmp::Ordering::Equal));
    let (rate, device) = match lowest {
        Some(r) => (r.rate, r.device),
        None => (None, up.device),
    };
    match (d.link_speed_gbps, rate) {
        (Some(want), Some(r)) if r + 1e-9 < want => {
            return line(
                Verdict::Critical,
                format!("{device} at {r} Gb/s < {want} Gb/s ({})", src.0),
            )
            .with_figure(r, "Gb/s")
            .with_limit(format!(">= {want} Gb/s"))
        }
        (Some(want), None) => {
            return line(
                Verdict::Unknown,
                format!("{device} is up, its rate not reported (expected {want} Gb/s)"),
            )
        }
        _ => {}
    }
    let highest = rated
        .iter()
        .max_by(|a, b| a.rate.partial_cmp(&b.rate).unwrap_or(std::cmp::Ordering::Equal));
    if let (Some(lo), Some(hi)) = (lowest, highest) {
        let (l, h) = (lo.rate.unwrap_or(0.0), hi.rate.unwrap_or(0.0));
        if h > 0.0 && (h - l) / h > 0.01 {
            return line(
                Verdict::Warning,
                format!(
                    "{} {}, but {} says {h} Gb/s and {} {l} Gb/s",
                    up.device, up.state, hi.source, lo.source
                ),
            )
            .with_figure(l, "Gb/s");
        }
    }
    // with two sources read and one rate, the rate says whose it is
    let whose = match lowest {
        Some(r) if rs.len() > 1 && rated.len() == 1 => format!(" ({})", r.source),
        _ => String::new(),
    };
    let shown = rate.map_or("rate not reported".to_string(), |r| format!("{r} Gb/s{whose}"));
    let c = line(Verdict::Ok, format!("{} {}, {shown}", up.device, up.state));
    match rate {
        Some(r) => c.with_figure(r, "Gb/s"),
        None => c,
    }
}

/// Flaps per hour since the previous run, from a counter read then and now.
pub fn flaps(
    subject: &str,
    before: Option<(u64, f64)>,
    now: (u64, f64),
    d: &DomainExpect,
    src: &Source,
) -> Option<Check> {
    let limit = d.max_flaps_per_hour?;
    let Some((was, then)) = before else {
        return Some(Check::new(
            "link flaps",
            subject,
            Verdict::Ok,
            "first reading; the rate comes from the next run",
        ));
    };
    if now.0 < was {
        return Some(Check::new(
            "link flaps",
            subject,
            Verdict::Ok,
            format!(
                "counter went back from {was} to {} (reset or driver reload): no rate this run",
                now.0
            ),
        ));
    }
    let hours = ((now.1 - then) / 3600.0).max(1.0 / 3600.0);
    let per_hour = (now.0 - was) as f64 / hours;
    let v = if per_hour >= limit {
        Verdict::Critical
    } else {
        Verdict::Ok
    };
    Some(
        Check::new(
            "link flaps",
            subject,
            v,
            format!(
                "{} in {:.0} s = {per_hour:.1} per hour{}",
                now.0 - was,
                now.1 - then,
                if v == Verdict::Ok {
                    String::new()
                } else {
                    format!(" >= {limit} ({})", src.0)
                }
            ),
        )
        .with_figure(per_hour, "per hour")
        .with_limit(format!("< {limit} per hour")),
    )
}

/// A figure held to a minimum or maximum.
fn figure(
    what: &str,
    subject: &str,
    r: &Result<f64, String>,
    unit: &str,
    min: Option<f64>,
    max: Option<f64>,
    src: &Source,
) -> Check {
    let v = match r {
        Err(e) => return Check::new(what, subject, Verdict::Critical, format!("failed: {e}")),
        Ok(v) => *v,
    };
    let shown = |x: f64| {
        if x >= 100.0 {
            format!("{x:.0} {unit}")
        } else {
            format!("{x:.2} {unit}")
        }
    };
    let (bad, limit) = match (min, max) {
        (Some(m), _) if v < m => (true, format!("< {}", shown(m))),
        (_, Some(m)) if v > m => (true, format!("> {}", shown(m))),
        (Some(m), _) => (false, format!(">= {}", shown(m))),
        (_, Some(m)) => (false, format!("<= {}", shown(m))),
        _ => (false, String::new()),
    };
    let detail = match (bad, limit.is_empty()) {
        (_, true) => shown(v),
        (true, false) => format!("{} {limit} ({})", shown(v), src.0),
        (false, false) => format!("{} ({limit})", shown(v)),
    };
    let verdict = if bad { Verdict::Critical } else { Verdict::Ok };
    let c = Check::new(what, subject, verdict, detail).with_figure(v, unit);
    if limit.is_empty() {
        c
    } else {
        c.with_limit(limit)
    }
}

pub fn write_bw(subject: &str, r: &Result<f64, String>, d: &DomainExpect, src: &Source) -> Check {
    figure("loopback write-bw", subject, r, "MB/s", d.min_write_bw_mb_s, None, src)
}

pub fn send_lat(subject: &str, r: &Result<f64, String>, d: &DomainExpect, src: &Source) -> Check {
    figure("loopback send-lat", subject, r, "us", None, d.max_send_lat_us, src)
}

pub fn gpu_copy(subject: &str, r: &Result<f64, String>, e: &Expect, src: &Source) -> Check {
    figure("host->GPU copy", subject, r, "GB/s", e.min_host_to_gpu_gb_s, None, src)
}

pub fn gpu_copy_back(subject: &str, r: &Result<f64, String>, e: &Expect, src: &Source) -> Check {
    figure("GPU->host copy", subject, r, "GB/s", e.min_gpu_to_host_gb_s, None, src)
}

/// The soft open-files limit, held to the file's minimum (a sweep's rank
/// 0 holds one per rank; providers hold several per endpoint).
pub fn open_files(soft: Option<u64>, e: &Expect, src: &Source) -> Option<Check> {
    let want = e.min_open_files?;
    let shown = soft.map_or("unlimited".to_string(), |s| s.to_string());
    Some(match soft {
        Some(s) if s < want => Check::new("open files", "", Verdict::Critical, format!("{s} < {want} ({})", src.0))
            .with_figure(s as f64, "files")
            .with_limit(format!(">= {want}")),
        _ => Check::new("open files", "", Verdict::Ok, shown),
    })
}

/// The GPUs the CUDA driver shows, against the number expected. None:
/// no GPU expected and none there (not a GPU node).
pub fn gpus(found: &Result<u32, String>, e: &Expect, src: &Source) -> Option<Check> {
    match (found, e.gpus) {
        (Err(_), None) | (Ok(0), None) => None,
        (Err(why), Some(n)) => Some(Check::new(
            "gpus",
            "",
            Verdict::Critical,
            format!("{n} expected: {why}"),
        )),
        (Ok(have), Some(n)) if *have < n => Some(
            Check::new(
                "gpus",
                "",
                Verdict::Critical,
                format!("{have} found, {n} expected ({})", src.0),
            )
            .with_figure(f64::from(*have), "GPUs"),
        ),
        (Ok(have), _) => {
            Some(Check::new("gpus", "", Verdict::Ok, format!("{have} found")).with_figure(f64::from(*have), "GPUs"))
        }
    }
}

/// Each GPU's nearest NIC, downtrained links and ACS redirection.
pub fn topology(p: &Placement, e: &Expect, src: &Source) -> Vec<Check> {
    let mut out = Vec::new();
    let max = e.max_gpu_nic.as_deref().and_then(connection);
    for (i, g) in p.gpus.iter().enumerate() {
        let subject = format!("GPU{i} ({})", g.gpu);
        let Some((nic, class)) = &g.nearest else {
            continue;
        };
        let (verdict, why) = match max {
            Some(m) if *class > m => (Verdict::Critical, format!(" > {} ({})", m.label(), src.0)),
            None if *class == Connection::Sys => (Verdict::Warning, " (across sockets)".to_string()),
            _ => (Verdict::Ok, String::new()),
        };
        out.push(Check::new(
            "nearest NIC",
            &subject,
            verdict,
            format!("{nic} {}{why}", class.label()),
        ));
        if !g.acs_redirect.is_empty() {
            out.push(Check::new(
                "ACS",
                &subject,
                Verdict::Warning,
                format!(
                    "P2P redirection on {} between it and {nic}: GPUDirect traffic goes through the root complex",
                    g.acs_redirect.join(", ")
                ),
            ));
        }
    }
    for t in &p.downtrained {
        let is_gpu = p.gpus.iter().any(|g| g.gpu == t.address);
        let (v, note) = match (t.narrow, is_gpu) {
            (true, _) => (Verdict::Warning, ""),
            // GPUs lower their link speed when idle; the copy test judges them
            (false, true) => (Verdict::Ok, " (an idle GPU lowers its link speed)"),
            (false, false) => (Verdict::Warning, ""),
        };
        out.push(Check::new(
            "PCIe link",
            &t.address,
            v,
            format!("{}{note}", t.describe()),
        ));
    }
    out
}
