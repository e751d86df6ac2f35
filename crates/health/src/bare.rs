//! What a bare `fabdiag health` (no expectations file, no `-d`) looks
//! at: the NICs this node has, as `doctor` finds them. Every domain of an
//! RDMA provider; on a node with none, the tcp domain of the interface
//! that holds the default route, and shm. As many as the budget holds,
//! the rest named. Decides from what it is handed; reads nothing.

use fabdiag_model::Provider;

/// Seconds a NIC's link and loopback checks take, at most, as measured
/// (about two and a half; `docs/health.md`).
pub const SECONDS_PER_NIC: f64 = 3.0;

/// The interface of the default route in `/proc/net/route`'s text (the
/// first line whose destination is 0.0.0.0), if there is one.
pub fn default_route_iface(route: &str) -> Option<String> {
    route.lines().skip(1).find_map(|l| {
        let mut f = l.split_whitespace();
        let (iface, dest) = (f.next()?, f.next()?);
        (dest == "00000000").then(|| iface.to_string())
    })
}

/// The NICs to check, as (provider as `-P` names it, domain), in the
/// order libfabric lists them: every RDMA provider's domains; without
/// any, tcp's `default_iface` domain and shm's. Empty: libfabric offers
/// nothing here that can run a test.
pub fn domains(present: &[(String, Vec<String>)], rdma: &[&str], default_iface: Option<&str>) -> Vec<(String, String)> {
    fn add(out: &mut Vec<(String, String)>, p: &str, d: &str) {
        let pair = (p.to_string(), d.to_string());
        if !out.contains(&pair) {
            out.push(pair);
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, ds) in present.iter().filter(|(n, _)| Provider::named(n).has_any(rdma)) {
        for d in ds {
            add(&mut out, Provider::named(name).core(), d);
        }
    }
    if !out.is_empty() {
        return out;
    }
    for (name, ds) in present {
        let p = Provider::named(name);
        if p.is("tcp") {
            if let Some(d) = ds.iter().find(|d| Some(d.as_str()) == default_iface) {
                add(&mut out, "tcp", d);
            }
        } else if p.is("shm") {
            if let Some(d) = ds.first() {
                add(&mut out, "shm", d);
            }
        }
    }
    out
}

/// How many NICs `budget_s` seconds hold (one at least, so a bare check
/// always measures something).
pub fn fitting(budget_s: f64) -> usize {
    ((budget_s / SECONDS_PER_NIC).floor() as usize).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(v: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        v.iter()
            .map(|(p, ds)| (p.to_string(), ds.iter().map(|d| d.to_string()).collect()))
            .collect()
    }

    const RDMA: &[&str] = &["verbs", "efa", "cxi"];

    #[test]
    fn the_default_route_names_its_interface() {
        let route =
            "Iface\tDestination\tGateway\tFlags\neth1\t000200C0\t00000000\t0001\neth0\t00000000\t010200C0\t0003\n";
        assert_eq!(default_route_iface(route).as_deref(), Some("eth0"));
        assert_eq!(default_route_iface("Iface\tDestination\n"), None);
    }

    #[test]
    fn an_rdma_node_checks_each_rdma_domain_once() {
        let p = listed(&[
            ("verbs;ofi_rxm", &["mlx5_0", "mlx5_1"]),
            ("verbs", &["mlx5_0", "mlx5_1"]),
            ("tcp;ofi_rxm", &["eth0", "lo"]),
            ("shm", &["shm"]),
        ]);
        assert_eq!(
            domains(&p, RDMA, Some("eth0")),
            vec![
                ("verbs".to_string(), "mlx5_0".to_string()),
                ("verbs".into(), "mlx5_1".into())
            ]
        );
    }

    #[test]
    fn a_node_without_rdma_checks_its_default_routes_tcp_and_shm() {
        let p = listed(&[
            ("tcp;ofi_rxm", &["eth0", "lo"]),
            ("shm", &["shm"]),
            ("udp;ofi_rxd", &["eth0"]),
        ]);
        assert_eq!(
            domains(&p, RDMA, Some("eth0")),
            vec![("tcp".to_string(), "eth0".to_string()), ("shm".into(), "shm".into())]
        );
        // no default route: shm alone; nothing that runs a test: none
        assert_eq!(domains(&p, RDMA, None), vec![("shm".to_string(), "shm".to_string())]);
        assert!(domains(&listed(&[("udp;ofi_rxd", &["eth0"])]), RDMA, Some("eth0")).is_empty());
    }

    #[test]
    fn the_budget_holds_three_nics_in_ten_seconds() {
        assert_eq!((fitting(10.0), fitting(2.0), fitting(30.0)), (3, 1, 10));
    }
}
