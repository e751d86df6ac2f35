//! Two hosts for the tests that cross a network: network namespaces
//! joined by a veth pair, addressed in 198.18.0.0/15 (the benchmarking
//! range). Needs root and iproute2; removes what it made when dropped.

use super::{bin, must};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Netns {
    pub a: String,
    pub b: String,
    k: u8,
}

pub fn ip(args: &[&str]) {
    must(&[&["ip"][..], args].concat());
}

impl Netns {
    /// Namespaces fdA/fdB with veth ends at 198.18.<k>.1 and .2.
    pub fn new(k: u8) -> Netns {
        let tag = format!("{}{k}", std::process::id() % 100000);
        let n = Netns {
            a: format!("fdA{tag}"),
            b: format!("fdB{tag}"),
            k,
        };
        let (va, vb) = (format!("va{tag}"), format!("vb{tag}"));
        ip(&["netns", "add", &n.a]);
        ip(&["netns", "add", &n.b]);
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
        ip(&["link", "set", &va, "netns", &n.a]);
        ip(&["link", "set", &vb, "netns", &n.b]);
        let addr_a = format!("198.18.{k}.1/24");
        let addr_b = format!("198.18.{k}.2/24");
        ip(&["-n", &n.a, "addr", "add", &addr_a, "dev", &va]);
        ip(&["-n", &n.b, "addr", "add", &addr_b, "dev", &vb]);
        for (ns, dev) in [(&n.a, &va), (&n.b, &vb)] {
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        n
    }

    /// A's address (B's is .2).
    pub fn a_addr(&self) -> String {
        format!("198.18.{}.1", self.k)
    }

    /// The veth ends' names: A's, then B's.
    pub fn ends(&self) -> (String, String) {
        let tag = self.a.trim_start_matches("fdA");
        (format!("va{tag}"), format!("vb{tag}"))
    }

    pub fn cmd(&self, ns: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, bin()]).args(args);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // deleting a namespace removes its veth end, and with it the pair
        let _ = Command::new("ip").args(["netns", "del", &self.a]).status();
        let _ = Command::new("ip").args(["netns", "del", &self.b]).status();
    }
}

/// Waits until `pid`'s network namespace has a listener on `port` (the
/// servers listen dual-stack, which the kernel lists under tcp6; an
/// IPv4-only one is under tcp).
pub fn wait_listen_in_ns(pid: u32, port: u16) {
    let port_hex = format!(":{port:04X}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        for table in ["tcp", "tcp6"] {
            let t = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
            // a local address ending in the port, in state 0A (LISTEN)
            if t.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[1].ends_with(&port_hex) && f[3] == "0A"
            }) {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("server in namespace never listened on {port}");
}
