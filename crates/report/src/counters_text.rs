//! The NIC counter block a pair tool prints after its table with
//! `--counters`: per side, the device(s) read and every counter whose
//! change is worth a look (a fault counter that rose, a load sign that
//! rose, anything that went back, sits at its ceiling or could not be
//! read), each with its class and what it usually means; traffic counts
//! and unchanged counters are left to the JSON. Pure.

use fabdiag_model::counters::{severity, Change, Class, Counters, NicFacts, PairCounters, WHOLE_SOURCE};
use fabdiag_model::units::thousands;
use fabdiag_model::Role;

/// A change as a person reads it: "+1,204", "went back from 9 to 0
/// (wrapped or reset)", ...
pub fn change_words(c: &Change) -> String {
    match c {
        Change::Rose { by } => format!("+{}", thousands(*by)),
        Change::Unchanged => "unchanged".into(),
        Change::Appeared { value } => format!("appeared at {}", thousands(*value)),
        Change::WentBack { before, after } => format!(
            "went back from {} to {} (wrapped or reset)",
            thousands(*before),
            thousands(*after)
        ),
        Change::AtCeiling { at_least } => format!(
            "at its ceiling: rose by at least {}, and stopped counting",
            thousands(*at_least)
        ),
        Change::Unreadable { why } => format!("could not be read ({why})"),
        Change::Vanished => "vanished during the test".into(),
    }
}

/// "flap: the link went down or retrained", or "congestion, a sign of load".
pub fn class_words(class: Class, fault: bool) -> String {
    if fault {
        format!("{}: {}", class.as_str(), class.suspect())
    } else {
        format!("{}, a sign of load", class.as_str())
    }
}

/// "libfabric: mlx5_0 (mlx5_core) at 0000:41:00.0, link up, 400 Gb/s,
/// MTU 4096", each part where the provider gave it.
pub fn nic_words(n: &NicFacts) -> String {
    let mut parts = Vec::new();
    let mut name = n.device.clone();
    if !n.driver.is_empty() {
        name = format!("{name} ({})", n.driver).trim_start().to_string();
    }
    if let Some(pci) = &n.pci {
        name = format!("{name} at {pci}").trim_start().to_string();
    }
    if !name.is_empty() {
        parts.push(name);
    }
    if let Some(state) = &n.link_state {
        parts.push(format!("link {state}"));
    }
    if let Some(bps) = n.speed_bps {
        parts.push(format!("{} Gb/s", bps as f64 / 1e9));
    }
    if let Some(mtu) = n.mtu {
        parts.push(format!("MTU {mtu}"));
    }
    format!("libfabric: {}", parts.join(", "))
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Client => "client",
        Role::Server => "server",
    }
}

fn side(who: &str, c: &Counters) -> String {
    let d = match c {
        Counters::NotAvailable { reason } => return format!("Counters ({who}): not available ({reason})\n"),
        Counters::Read(d) => d,
    };
    let lines: Vec<String> = c
        .noted()
        .iter()
        .map(|n| match &n.change {
            Change::Unreadable { why } if n.name == WHOLE_SOURCE => format!("  {}: not read ({why})", n.device),
            change => format!(
                "  {} {} {} [{}]",
                n.device,
                n.name,
                change_words(change),
                class_words(n.class, n.fault)
            ),
        })
        .collect();
    let nic = d
        .nic
        .as_ref()
        .map(|n| format!("; {}", nic_words(n)))
        .unwrap_or_default();
    let head = format!(
        "Counters ({who}, {}: {} read in {:.1} ms{nic})",
        c.what_was_read(),
        d.counters_read,
        d.read_us as f64 / 1000.0
    );
    if lines.is_empty() {
        format!("{head}: no counter rose but traffic\n")
    } else {
        format!("{head}:\n{}\n", lines.join("\n"))
    }
}

/// A clause for a failed run's error line: the port's own fault counters
/// (physical, flap, drop; not the path's, which a failure raises anyway)
/// that rose on either side while it ran, which often say why: "NIC
/// counters that rose meanwhile: this side: eth0 carrier_changes +2". At
/// most three a side, the physical first. None when none rose.
pub fn failure_clause(pc: &PairCounters) -> Option<String> {
    let mut parts = Vec::new();
    for (who, c) in [("this side", Some(&pc.local)), ("the peer", pc.peer.as_ref())] {
        let mut rose: Vec<_> = c
            .map(Counters::noted)
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.alarming() && !n.of_the_path() && n.name != WHOLE_SOURCE)
            .collect();
        rose.sort_by_key(|n| severity(n.family, n.class));
        let said: Vec<String> = rose
            .iter()
            .take(3)
            .map(|n| format!("{} {} {}", n.device, n.name, change_words(&n.change)))
            .collect();
        if !said.is_empty() {
            parts.push(format!("{who}: {}", said.join(", ")));
        }
    }
    (!parts.is_empty()).then(|| format!("NIC counters that rose meanwhile: {}", parts.join("; ")))
}

/// The block: this side's line(s), then the peer's.
pub fn block(role: Role, pc: &PairCounters) -> String {
    let peer = match role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    };
    let mut out = side(role_name(role), &pc.local);
    if let Some(p) = &pc.peer {
        out.push_str(&side(role_name(peer), p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_model::counters::{CounterChange, Deltas, Family, SourceDeltas};

    fn read(device: &str, family: Family, changes: &[(&str, Class, bool, Change)]) -> Counters {
        Counters::Read(Deltas {
            sources: vec![SourceDeltas {
                family,
                device: device.into(),
                counters: changes
                    .iter()
                    .map(|(name, class, fault, change)| CounterChange {
                        name: (*name).into(),
                        class: *class,
                        fault: *fault,
                        change: change.clone(),
                    })
                    .collect(),
                unavailable: None,
            }],
            seconds: 1.0,
            counters_read: changes.len(),
            read_us: 10,
            nic: None,
        })
    }

    /// The port's own faults are said beside a failure, the physical
    /// first; traffic, load signs and the path's counters are not.
    #[test]
    fn a_failure_names_the_port_faults_that_rose_meanwhile() {
        let local = read(
            "eth0",
            Family::Netdev,
            &[
                ("carrier_changes", Class::Flap, true, Change::Rose { by: 2 }),
                ("rx_bytes", Class::Traffic, false, Change::Rose { by: 900 }),
                ("rx_crc_errors", Class::Physical, true, Change::Rose { by: 1207 }),
                ("tx_dropped", Class::Drop, true, Change::Unchanged),
            ],
        );
        let tcp = read(
            "tcp",
            Family::Tcp,
            &[("RetransSegs", Class::Retransmit, true, Change::Rose { by: 30 })],
        );
        let pc = PairCounters {
            local,
            peer: Some(tcp.clone()),
        };
        assert_eq!(
            failure_clause(&pc).as_deref(),
            Some("NIC counters that rose meanwhile: this side: eth0 rx_crc_errors +1,207, eth0 carrier_changes +2")
        );
        // only the path's rose (the failure itself resends): nothing said
        assert_eq!(failure_clause(&PairCounters { local: tcp, peer: None }), None);
    }

    #[test]
    fn fi_nic_s_words_say_only_what_the_provider_gave() {
        let all = NicFacts {
            device: "mlx5_0".into(),
            driver: "mlx5_core".into(),
            pci: Some("0000:41:00.0".into()),
            link_state: Some("up".into()),
            speed_bps: Some(400_000_000_000),
            mtu: Some(4096),
        };
        assert_eq!(
            nic_words(&all),
            "libfabric: mlx5_0 (mlx5_core) at 0000:41:00.0, link up, 400 Gb/s, MTU 4096"
        );
        let some = NicFacts {
            device: "cxi0".into(),
            link_state: Some("down".into()),
            speed_bps: Some(12_500_000_000),
            ..NicFacts::default()
        };
        assert_eq!(nic_words(&some), "libfabric: cxi0, link down, 12.5 Gb/s");
    }
}
