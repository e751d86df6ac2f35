//! Which libfabric provider and domain a run uses. Without `-P`, the best
//! provider present that has the needed capability wins (fast fabrics
//! first, then the sockets-based ones); without `-d`, the domain whose
//! network holds this side's control-connection address wins, so the run
//! uses the interface that actually reaches the peer. Never prints.

use fabdiag_fabric::{discover, Capability, FabricError, InfoList, ProviderInfo, Query};
use fabdiag_model::Provider;
use std::net::IpAddr;

/// Preference order for the default provider (core provider names).
pub const PREFERENCE: &[&str] = &[
    "cxi", "verbs", "efa", "opx", "psm3", "psm2", "ucx", "tcp", "sockets", "udp", "shm",
];

fn rank(provider: &str) -> usize {
    let provider = Provider::named(provider);
    PREFERENCE
        .iter()
        .position(|p| provider.is(p))
        .unwrap_or(PREFERENCE.len())
}

/// Lists what matches the user's -P/-d for this capability.
pub fn candidates(provider: Option<&Provider>, domain: Option<&str>, cap: Capability) -> Result<InfoList, FabricError> {
    discover(&Query {
        provider: provider.map(|p| p.name().to_string()),
        domain: domain.map(str::to_string),
        capability: Some(cap),
    })
}

/// Does CIDR text like "198.18.0.0/24" contain `ip`?
fn cidr_contains(cidr: &str, ip: IpAddr) -> bool {
    let Some((net, bits)) = cidr.split_once('/') else {
        return false;
    };
    let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u32>()) else {
        return false;
    };
    match (net, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) if bits <= 32 => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            u32::from(n) & mask == u32::from(i) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(i)) if bits <= 128 => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
            u128::from(n) & mask == u128::from(i) & mask
        }
        _ => false,
    }
}

/// The entries of the best provider listed, each with its index.
fn best_provider(list: &InfoList) -> Vec<(usize, &ProviderInfo)> {
    let entries: Vec<(usize, &ProviderInfo)> = list.entries().enumerate().collect();
    let best_rank = entries.iter().map(|(_, e)| rank(&e.provider)).min().unwrap_or(0);
    let best: Vec<(usize, &ProviderInfo)> = entries
        .into_iter()
        .filter(|(_, e)| rank(&e.provider) == best_rank)
        .collect();
    let Some(first_provider) = best.first().map(|(_, e)| e.provider.clone()) else {
        return Vec::new();
    };
    best.into_iter().filter(|(_, e)| e.provider == first_provider).collect()
}

/// Picks the entry to open: best provider, then the domain reaching `local`.
pub fn choose(list: &InfoList, local: Option<IpAddr>) -> usize {
    let same = best_provider(list);
    if let Some(ip) = local {
        if let Some((i, _)) = same.iter().find(|(_, e)| cidr_contains(&e.fabric, ip)) {
            return *i;
        }
        if ip.is_loopback() {
            if let Some((i, _)) = same.iter().find(|(_, e)| e.domain == "lo") {
                return *i;
            }
        }
    }
    same.first().map_or(0, |(i, _)| *i)
}

/// True when the best provider names its domains by IP networks (the
/// sockets providers: tcp, udp) and none holds `ip`, a non-loopback
/// address of this host. libfabric lists only interfaces that are up and
/// running (ofi_get_list_of_addr skips those without IFF_RUNNING), so a
/// link down at this moment hides its domain, and `choose` would open the
/// first one listed (often `lo`) in its place while the kernel still
/// routes the traffic over the hidden one.
pub fn hides_network_of(list: &InfoList, ip: IpAddr) -> bool {
    if ip.is_loopback() {
        return false;
    }
    let same = best_provider(list);
    let by_network = same.iter().any(|(_, e)| is_cidr(&e.fabric));
    by_network && !same.iter().any(|(_, e)| cidr_contains(&e.fabric, ip))
}

/// Is `text` an IP network like "198.18.0.0/24"?
fn is_cidr(text: &str) -> bool {
    text.split_once('/')
        .is_some_and(|(net, bits)| net.parse::<IpAddr>().is_ok() && bits.parse::<u32>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_cidrs() {
        assert!(rank("cxi") < rank("verbs;ofi_rxm"));
        assert!(rank("tcp;ofi_rxm") < rank("shm"));
        assert!(rank("shm") < rank("mystery"));
        let ip: IpAddr = "198.18.0.2".parse().unwrap();
        assert!(cidr_contains("198.18.0.0/24", ip));
        assert!(!cidr_contains("198.18.1.0/24", ip));
        assert!(cidr_contains("127.0.0.1/32", "127.0.0.1".parse().unwrap()));
        assert!(!cidr_contains("fe80::/64", ip));
        assert!(!cidr_contains("shm", ip));
        assert!(is_cidr("198.18.0.0/24") && is_cidr("fe80::/64"));
        assert!(!is_cidr("IB-0xfe80000000000000") && !is_cidr("shm") && !is_cidr("a/24"));
    }
}
