//! This side's NIC counters around the measurement, and the trade of
//! both sides' changes once it is over: read just before the first timed
//! operation and just after the last (never inside the timed loop), from
//! the port behind the domain the test used, under the root `Env` names.
//! A domain with no device (shm), a root without sysfs, or counters
//! switched off give "not available" with the reason, and the run goes on
//! as it would without them.

use crate::env::Env;
use fabdiag_counters::{sources, Counters, Snapshot, Source};
use fabdiag_model::PairCounters;
use fabdiag_proto::{Link, Message, Phase, ProtoError};

/// The reading before the measurement, or why there is none.
#[derive(Clone, Debug)]
pub(crate) enum Before {
    Read(Vec<Source>, Snapshot),
    NotAvailable(String),
}

/// Reads this side's counters for `provider`'s `domain` now.
pub(crate) fn before(env: &Env, provider: &str, domain: &str) -> Before {
    let Some(root) = env.counters_root.as_deref() else {
        return Before::NotAvailable("not read on this side".into());
    };
    match sources(root, provider, domain) {
        Ok(found) => {
            let snap = Snapshot::take(&found);
            Before::Read(found, snap)
        }
        Err(e) => Before::NotAvailable(e.to_string()),
    }
}

/// This side's change since `before`, read now.
pub(crate) fn after(before: &Before) -> Counters {
    match before {
        Before::Read(found, snap) => Counters::Read(Snapshot::take(found).since(snap)),
        Before::NotAvailable(reason) => Counters::NotAvailable { reason: reason.clone() },
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
