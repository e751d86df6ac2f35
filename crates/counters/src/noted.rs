//! The changes worth a person's look, out of a side's full list: a fault
//! counter or a load sign that rose, and anything that went back, sits
//! at its ceiling, could not be read or vanished; traffic counts and
//! unchanged counters are left out. What a sweep keeps of each pair test
//! and what the `--counters` block shows. Pure.

use crate::delta::{Change, CounterChange, Counters};
use crate::locate::Family;
use crate::meaning::Class;
use serde::{Deserialize, Serialize};

/// The name a `Noted` carries for a source that could not be read at all.
pub const WHOLE_SOURCE: &str = "(all)";

/// One change worth a look, with the device it was read on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Noted {
    pub family: Family,
    pub device: String,
    pub name: String,
    pub class: Class,
    pub fault: bool,
    #[serde(flatten)]
    pub change: Change,
}

impl CounterChange {
    /// Whether this change is worth a person's look.
    pub fn worth_a_look(&self) -> bool {
        let not_traffic = self.fault || self.class != Class::Traffic;
        match self.change {
            Change::Rose { .. } | Change::WentBack { .. } => not_traffic,
            Change::AtCeiling { .. } | Change::Unreadable { .. } | Change::Vanished => true,
            Change::Unchanged | Change::Appeared { .. } => false,
        }
    }
}

/// The devices a reading covers, as the reports name them: "vaX + tcp".
pub fn devices_read<'a>(devices: impl Iterator<Item = &'a str>) -> String {
    devices.collect::<Vec<_>>().join(" + ")
}

impl Counters {
    /// What was read ("vaX + tcp"), or why nothing was ("not available
    /// (shm has no NIC behind it)").
    pub fn what_was_read(&self) -> String {
        match self {
            Counters::Read(d) => devices_read(d.sources.iter().map(|s| s.device.as_str())),
            Counters::NotAvailable { reason } => format!("not available ({reason})"),
        }
    }

    /// Every change worth a look, source by source.
    pub fn noted(&self) -> Vec<Noted> {
        let Counters::Read(d) = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for s in &d.sources {
            if let Some(why) = &s.unavailable {
                out.push(Noted {
                    family: s.family,
                    device: s.device.clone(),
                    name: WHOLE_SOURCE.into(),
                    class: Class::Other,
                    fault: false,
                    change: Change::Unreadable { why: why.clone() },
                });
            }
            out.extend(s.counters.iter().filter(|c| c.worth_a_look()).map(|c| Noted {
                family: s.family,
                device: s.device.clone(),
                name: c.name.clone(),
                class: c.class,
                fault: c.fault,
                change: c.change.clone(),
            }));
        }
        out
    }
}

impl Noted {
    /// A fault counter that rose or can no longer be trusted.
    pub fn alarming(&self) -> bool {
        self.change.alarming(self.fault)
    }

    /// A counter of the path rather than of the port: retransmissions and
    /// congestion anywhere, and every TCP counter (the namespace's, not a
    /// NIC's). A rank sees them rise when its partner's link is the bad one.
    pub fn of_the_path(&self) -> bool {
        of_the_path(self.family, self.class)
    }
}

/// The order rises are listed and judged in: the port's own counters
/// (physical, flap, drop) before the path's (retransmissions, congestion,
/// and every TCP counter); lower first.
pub fn severity(family: Family, class: Class) -> u8 {
    match (family, class) {
        (Family::Tcp, _) => 6,
        (_, Class::Physical) => 0,
        (_, Class::Flap) => 1,
        (_, Class::Drop) => 2,
        (_, Class::Retransmit) => 3,
        (_, Class::Congestion) => 4,
        (_, Class::Other | Class::Traffic) => 5,
    }
}

/// Whether a counter of `family` and `class` is the path's rather than
/// the port's (see `Noted::of_the_path`).
pub fn of_the_path(family: Family, class: Class) -> bool {
    family == Family::Tcp || matches!(class, Class::Retransmit | Class::Congestion)
}
