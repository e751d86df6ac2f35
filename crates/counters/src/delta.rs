//! The change of every counter between two readings, as a record that
//! travels (JSON, the control connection, a sweep's records): a rise, no
//! change, a counter that went back (wrapped or reset), one at its
//! ceiling (an IBA error counter that stopped counting), one that could
//! not be read or appeared or vanished between the readings. A change is
//! never guessed: a counter that went back has no rise. Pure.

use crate::locate::Family;
use crate::meaning::{meaning, Class, Limit};
use crate::read::{Snapshot, Values};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "change")]
pub enum Change {
    Rose {
        by: u64,
    },
    Unchanged,
    /// Lower after than before: it wrapped or was reset; how far it
    /// moved is not known.
    WentBack {
        before: u64,
        after: u64,
    },
    /// At its ceiling after the test (it stops counting there): it rose
    /// by at least `at_least`.
    AtCeiling {
        at_least: u64,
    },
    /// The counter could not be read before or after: why.
    Unreadable {
        why: String,
    },
    /// Not there before the test, there after.
    Appeared {
        value: u64,
    },
    /// There before the test, gone after.
    Vanished,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterChange {
    pub name: String,
    pub class: Class,
    /// A rise is a fault (true) or a sign of load (false).
    pub fault: bool,
    #[serde(flatten)]
    pub change: Change,
}

impl Change {
    /// Whether a counter of which a rise is a fault (`fault`) should
    /// alarm: it rose, or can no longer be trusted (went back, at its
    /// ceiling).
    pub fn alarming(&self, fault: bool) -> bool {
        fault
            && matches!(
                self,
                Change::Rose { .. } | Change::WentBack { .. } | Change::AtCeiling { .. }
            )
    }

    /// The rise, where one is known.
    pub fn rise(&self) -> Option<u64> {
        match *self {
            Change::Rose { by } => Some(by),
            Change::AtCeiling { at_least } => Some(at_least),
            _ => None,
        }
    }
}

impl CounterChange {
    /// A fault counter that rose or can no longer be trusted.
    pub fn alarming(&self) -> bool {
        self.change.alarming(self.fault)
    }
}

/// One source's changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceDeltas {
    pub family: Family,
    pub device: String,
    /// Every counter read, by name.
    pub counters: Vec<CounterChange>,
    /// The whole source could not be read: why (then `counters` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// Every source's changes across a test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deltas {
    pub sources: Vec<SourceDeltas>,
    /// Seconds between the two readings.
    pub seconds: f64,
    /// Counters read per reading, and the time both readings took (µs).
    pub counters_read: usize,
    pub read_us: u64,
    /// What libfabric says of the NIC behind the domain (fi_nic), where
    /// the provider fills it in; set beside the counters by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<NicFacts>,
}

/// libfabric's fi_nic attributes of a domain's NIC (fi_nic(3)): verbs,
/// efa and cxi fill them in; libfabric 1.17's tcp, udp and shm do not.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicFacts {
    /// The device's name ("mlx5_0"), and its driver, where given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub device: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub driver: String,
    /// "0000:41:00.0", when the NIC is on PCI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci: Option<String>,
    /// "up", "down" or "unknown", with the active rate (bits per second)
    /// and MTU where given (fi_link_attr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_bps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u64>,
}

impl Deltas {
    /// Every alarming change, with its source.
    pub fn alarming(&self) -> impl Iterator<Item = (&SourceDeltas, &CounterChange)> {
        self.sources
            .iter()
            .flat_map(|s| s.counters.iter().map(move |c| (s, c)))
            .filter(|(_, c)| c.alarming())
    }
}

fn change(limit: Limit, before: u64, after: u64) -> Change {
    match limit {
        Limit::Saturates(_) if after == limit.max() => Change::AtCeiling {
            at_least: after.saturating_sub(before),
        },
        _ if after < before => Change::WentBack { before, after },
        _ if after == before => Change::Unchanged,
        _ => Change::Rose { by: after - before },
    }
}

fn source(before: Option<&Values>, after: &Values) -> SourceDeltas {
    let unavailable = after
        .missing
        .clone()
        .or_else(|| before.is_none().then(|| "not read before the test".to_string()));
    let mut counters = Vec::new();
    if let (Some(b), None) = (before, &unavailable) {
        let mut names: Vec<&String> = b.values.keys().chain(after.values.keys()).collect();
        names.extend(b.unreadable.keys().chain(after.unreadable.keys()));
        names.sort();
        names.dedup();
        for name in names {
            let m = meaning(after.family, name);
            let why = b.unreadable.get(name).or(after.unreadable.get(name));
            let change = match (b.values.get(name), after.values.get(name), why) {
                (_, _, Some(why)) => Change::Unreadable { why: why.clone() },
                (Some(&x), Some(&y), None) => change(m.limit, x, y),
                (None, Some(&y), None) => Change::Appeared { value: y },
                _ => Change::Vanished,
            };
            counters.push(CounterChange {
                name: name.clone(),
                class: m.class,
                fault: m.fault,
                change,
            });
        }
    }
    SourceDeltas {
        family: after.family,
        device: after.device.clone(),
        counters,
        unavailable,
    }
}

impl Snapshot {
    /// The change of every counter from `before` to this reading.
    pub fn since(&self, before: &Snapshot) -> Deltas {
        let sources = self
            .sources
            .iter()
            .map(|a| {
                let b = before
                    .sources
                    .iter()
                    .find(|b| b.family == a.family && b.device == a.device);
                source(b, a)
            })
            .collect();
        Deltas {
            sources,
            seconds: self.at.saturating_duration_since(before.at).as_secs_f64(),
            counters_read: self.count(),
            read_us: (before.took + self.took).as_micros().min(u64::MAX as u128) as u64,
            nic: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_never_guessed() {
        let w = Limit::Wraps(64);
        let s16 = Limit::Saturates(16);
        assert_eq!(change(w, 5, 9), Change::Rose { by: 4 });
        assert_eq!(change(w, 5, 5), Change::Unchanged);
        assert_eq!(change(w, 9, 5), Change::WentBack { before: 9, after: 5 });
        assert_eq!(change(s16, 65000, 65535), Change::AtCeiling { at_least: 535 });
        assert_eq!(change(s16, 65535, 65535), Change::AtCeiling { at_least: 0 });
        assert_eq!(change(s16, 3, 7), Change::Rose { by: 4 });
    }
}

/// One side's counters across a test: the changes, or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Counters {
    Read(Deltas),
    NotAvailable { reason: String },
}
