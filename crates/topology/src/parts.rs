//! What one source says of the fabric, not yet checked as a whole: its
//! switches, hosts, cables (as their two ends) and forwarding tables. A
//! leaf of the crate: every reader makes these, `sources` combines them.

use crate::map::{Fabric, Host, Switch, Tables};

/// What one source says of the fabric.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parts {
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    /// Cables as their two ends (`SWITCH` or `SWITCH:PORT`).
    pub ends: Vec<(String, String)>,
    /// Switches' forwarding tables (`routes`).
    pub routes: Tables,
}

impl Parts {
    /// A map's parts again, to be combined with others.
    pub fn of(f: &Fabric) -> Parts {
        Parts {
            switches: f.switches.clone(),
            hosts: f.hosts.clone(),
            ends: f.cables.iter().flat_map(|c| c.ends.iter().cloned()).collect(),
            routes: f.routes.clone(),
        }
    }
}
