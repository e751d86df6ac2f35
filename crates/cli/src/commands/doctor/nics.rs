//! `fabdiag doctor`'s NIC counters: each domain the providers list, read
//! once (or twice, `--watch` seconds apart), with the counters not at zero
//! and, when watched, each that rose and how fast. Reads sysfs and procfs
//! under the root the test hook names; prints nothing.

use crate::commands::sysfs_root;
use fabdiag_counters::{device_of, devices_read, meaning, sources, Change, Class, Counters, Snapshot, Source};
use fabdiag_model::probe::ProviderCaps;
use fabdiag_report::doctor::{CounterNow, CounterRate, NicCounters};
use std::time::Duration;

/// One domain: its providers, and the sources of the one that reads most
/// (tcp reads the namespace's TCP counters beside the interface's).
struct Domain {
    name: String,
    providers: Vec<String>,
    sources: Result<Vec<Source>, String>,
}

fn domains(providers: &[ProviderCaps]) -> Vec<Domain> {
    let root = sysfs_root();
    let mut out: Vec<Domain> = Vec::new();
    for p in providers {
        for d in &p.domains {
            let name = device_of(d).to_string();
            let core = fabdiag_model::Provider::named(&p.provider);
            let found = sources(&root, core.core(), d, None).map_err(|e| e.to_string());
            match out.iter_mut().find(|x| x.name == name) {
                Some(x) => {
                    x.providers.push(p.provider.clone());
                    let more = |s: &Result<Vec<Source>, String>| s.as_ref().map_or(0, Vec::len);
                    if more(&found) > more(&x.sources) {
                        x.sources = found;
                    }
                }
                None => out.push(Domain {
                    name,
                    providers: vec![p.provider.clone()],
                    sources: found,
                }),
            }
        }
    }
    out
}

fn nonzero(s: &Snapshot) -> Vec<CounterNow> {
    let mut out = Vec::new();
    for v in &s.sources {
        for (name, &value) in &v.values {
            let m = meaning(v.family, name);
            if value > 0 && m.class != Class::Traffic {
                out.push(CounterNow {
                    device: v.device.clone(),
                    name: name.clone(),
                    class: m.class,
                    fault: m.fault,
                    value,
                });
            }
        }
    }
    out
}

fn rates(after: &Snapshot, before: &Snapshot) -> (f64, Vec<CounterRate>) {
    let d = after.since(before);
    let secs = d.seconds.max(f64::MIN_POSITIVE);
    let mut out = Vec::new();
    for s in &d.sources {
        for c in s.counters.iter().filter(|c| c.class != Class::Traffic) {
            if let Change::Rose { by } = c.change {
                out.push(CounterRate {
                    device: s.device.clone(),
                    name: c.name.clone(),
                    class: c.class,
                    fault: c.fault,
                    rise: by,
                    per_second: by as f64 / secs,
                });
            }
        }
    }
    (d.seconds, out)
}

/// Every domain's counters now, and with `watch` their rises over it.
pub fn nics(providers: &[ProviderCaps], watch: Option<Duration>) -> Vec<NicCounters> {
    let found = domains(providers);
    let read = || -> Vec<Option<Snapshot>> {
        found
            .iter()
            .map(|d| d.sources.as_ref().ok().map(|s| Snapshot::take(s)))
            .collect()
    };
    let first = read();
    let second: Vec<Option<Snapshot>> = match watch {
        Some(w) => {
            std::thread::sleep(w);
            read()
        }
        None => found.iter().map(|_| None).collect(),
    };
    found
        .into_iter()
        .zip(first.into_iter().zip(second))
        .map(|(d, (one, two))| {
            let read = match &d.sources {
                Ok(s) => devices_read(s.iter().map(|x| x.device.as_str())),
                Err(why) => Counters::NotAvailable { reason: why.clone() }.what_was_read(),
            };
            let (watched_s, rates) = match (&one, &two) {
                (Some(a), Some(b)) => {
                    let (s, r) = rates(b, a);
                    (Some(s), r)
                }
                _ => (None, Vec::new()),
            };
            NicCounters {
                domain: d.name,
                providers: d.providers,
                read,
                nonzero: one.as_ref().map(nonzero).unwrap_or_default(),
                watched_s,
                rates,
            }
        })
        .collect()
}
