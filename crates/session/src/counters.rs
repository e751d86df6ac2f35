//! This side's NIC counters around the measurement, and the trade of
//! both sides' changes once it is over: read just before the first timed
//! operation and just after the last (never inside the timed loop), from
//! the port behind the domain the test used, under the root `Env` names.
//! A domain with no device (shm), a root without sysfs, or counters
//! switched off give "not available" with the reason, and the run goes on
//! as it would without them.

use crate::env::Env;
use fabdiag_counters::{sources, Counters, Deltas, NicFacts, Snapshot, Source};
use fabdiag_fabric::{LinkState, Nic};
use fabdiag_model::PairCounters;
use fabdiag_proto::{Link, Message, Phase, ProtoError};

/// The reading before the measurement, or why there is none.
#[derive(Clone, Debug)]
pub(crate) enum Before {
    Read(Vec<Source>, Snapshot, Option<NicFacts>),
    NotAvailable(String),
}

/// Reads this side's counters for `provider`'s `domain` now; `nic` is
/// what libfabric says of its NIC (its PCI address finds a device named
/// otherwise than the domain; the rest is set beside the change).
pub(crate) fn before(env: &Env, provider: &str, domain: &str, nic: Option<NicFacts>) -> Before {
    let Some(root) = env.counters_root.as_deref() else {
        return Before::NotAvailable("not read on this side".into());
    };
    let pci = nic.as_ref().and_then(|n| n.pci.as_deref());
    match sources(root, fabdiag_model::Provider::named(provider).core(), domain, pci) {
        Ok(found) => {
            let snap = Snapshot::take(&found);
            Before::Read(found, snap, nic)
        }
        Err(e) => Before::NotAvailable(e.to_string()),
    }
}

/// This side's change since `before`, read now.
pub(crate) fn after(before: &Before) -> Counters {
    match before {
        Before::Read(found, snap, nic) => Counters::Read(Deltas {
            nic: nic.clone(),
            ..Snapshot::take(found).since(snap)
        }),
        Before::NotAvailable(reason) => Counters::NotAvailable { reason: reason.clone() },
    }
}

/// fi_nic's attributes as the counters carry them.
pub(crate) fn facts_of(nic: &Nic) -> NicFacts {
    let link = nic.link.as_ref();
    let given = |v: u64| (v > 0).then_some(v);
    NicFacts {
        device: nic.device.clone(),
        driver: nic.driver.clone(),
        pci: nic.pci.clone(),
        link_state: link.map(|l| {
            match l.state {
                LinkState::Up => "up",
                LinkState::Down => "down",
                LinkState::Unknown => "unknown",
            }
            .to_string()
        }),
        speed_bps: link.and_then(|l| given(l.speed_bps)),
        mtu: link.and_then(|l| given(l.mtu)),
    }
}

/// Sends ours, takes the peer's (a link with no peer answers null: None).
pub(crate) fn trade(link: &mut dyn Link, local: Counters) -> Result<PairCounters, ProtoError> {
    let phase = Phase::Results;
    let ours = serde_json::to_value(&local).unwrap_or(serde_json::Value::Null);
    let peer = match link.exchange(phase, &Message::Counters { report: ours })? {
        Message::Counters { report } if report.is_null() => None,
        // a peer's counters that do not decode are said, not fatal: the
        // measurement stands
        Message::Counters { report } => {
            Some(
                serde_json::from_value(report).unwrap_or_else(|e| Counters::NotAvailable {
                    reason: format!("the peer's counters do not decode: {e}"),
                }),
            )
        }
        other => {
            return Err(ProtoError::Unexpected {
                phase,
                got: other.kind().into(),
            })
        }
    };
    Ok(PairCounters { local, peer })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_fabric::NicLink;

    /// A verbs domain named otherwise than its device is read by the PCI
    /// address fi_nic gives, and what fi_nic says is set beside the change.
    #[test]
    fn fi_nic_finds_the_device_and_travels_with_the_change() {
        let dir = tempfile::tempdir().unwrap();
        let n = fabdiag_testkit::counters::nics(dir.path());
        let env = Env {
            counters_root: Some(n.root.clone()),
            ..Env::default()
        };
        let nic = facts_of(&Nic {
            device: "rdmap65s0".into(),
            driver: "mlx5_core".into(),
            pci: Some("0000:41:00.0".into()),
            link: Some(NicLink {
                state: LinkState::Up,
                speed_bps: 400_000_000_000,
                mtu: 4096,
                network_type: "InfiniBand".into(),
                address: String::new(),
            }),
        });
        let b = before(&env, "verbs;ofi_rxm", "rdmap65s0", Some(nic.clone()));
        fabdiag_testkit::counters::set(&n.ib_counters, &[("link_downed", 2)]);
        let Counters::Read(d) = after(&b) else {
            panic!("not read: {b:?}");
        };
        assert_eq!(d.nic.as_ref(), Some(&nic));
        assert_eq!(d.sources[0].device, "mlx5_0 port 1");
        let json = serde_json::to_value(&d.nic).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"device": "rdmap65s0", "driver": "mlx5_core", "pci": "0000:41:00.0",
                "link_state": "up", "speed_bps": 400_000_000_000u64, "mtu": 4096})
        );
        // no fi_nic (tcp, shm in libfabric 1.17): nothing said of it
        let Counters::Read(d) = after(&before(&env, "tcp", "eth0", None)) else {
            panic!("eth0 not read");
        };
        assert_eq!(d.nic, None);
    }
}
