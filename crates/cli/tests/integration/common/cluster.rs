//! Eight (or n) "nodes" for the tests that cross a network with many
//! ranks: network namespaces on a bridge in a switch namespace (or on two
//! bridges joined by one spine cable), each port
//! shaped like a real link, with the faults the tests plant (a slowed link
//! or node, a cable pulled). Needs root and iproute2; removes what it made
//! when dropped.

use super::{bin, free_port, must, require_root, Proc, LIMIT};
use std::process::Command;

/// A healthy link in the namespace cluster: far below what two cores move
/// through veth with four pairs at once, far above the slowed ones.
pub const LINK_RATE: &str = "100mbit";

/// Eight "nodes": namespaces fdn<i> whose veth ends meet on a bridge in a
/// switch namespace, node i at 198.18.10.<i+1>.
///
/// Every switch port toward a node is shaped to LINK_RATE, so a healthy pair
/// is held by its link, as on a real fabric, and not by how four busy-polling
/// pairs share two cores: unshaped, healthy pairs ranged 25 to 104 MB/s on a
/// loaded CI machine, and that spread hid a node slowed to 40 Mbit/s.
pub struct Cluster {
    pub tag: String,
    pub n: usize,
}

impl Cluster {
    pub fn new(n: usize) -> Cluster {
        Cluster::on_leaves(n, false)
    }

    /// Two "leaf switches" (bridges br0 and br1 in the switch namespace),
    /// nodes 0 to n/2-1 on br0 and the rest on br1, joined by one "spine"
    /// cable (a veth pair between the bridges) that `spine` can shape: an
    /// oversubscribed fabric's cut between two halves.
    pub fn two_leaves(n: usize) -> Cluster {
        Cluster::on_leaves(n, true)
    }

    fn on_leaves(n: usize, two: bool) -> Cluster {
        require_root();
        // unique per cluster, in case two ever run at once in this process
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tag = format!("{}{k}", std::process::id() % 10000);
        let c = Cluster { tag, n };
        let sw = c.switch();
        must(&["ip", "netns", "add", &sw]);
        let bridges: &[&str] = if two { &["br0", "br1"] } else { &["br0"] };
        for br in bridges {
            must(&["ip", "-n", &sw, "link", "add", br, "type", "bridge"]);
            must(&["ip", "-n", &sw, "link", "set", br, "up"]);
        }
        if two {
            must(&[
                "ip", "-n", &sw, "link", "add", "sp0", "type", "veth", "peer", "name", "sp1",
            ]);
            for (end, br) in [("sp0", "br0"), ("sp1", "br1")] {
                must(&["ip", "-n", &sw, "link", "set", end, "master", br]);
                must(&["ip", "-n", &sw, "link", "set", end, "up"]);
            }
        }
        for i in 0..n {
            let ns = c.node(i);
            let (inner, outer) = (format!("e{i}x{}", c.tag), c.port(i));
            must(&["ip", "netns", "add", &ns]);
            must(&["ip", "link", "add", &inner, "type", "veth", "peer", "name", &outer]);
            must(&["ip", "link", "set", &inner, "netns", &ns]);
            must(&["ip", "link", "set", &outer, "netns", &sw]);
            must(&["ip", "-n", &ns, "link", "set", &inner, "name", "eth0"]);
            must(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", c.ip(i)),
                "dev",
                "eth0",
            ]);
            must(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
            must(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            let br = if two && i >= n / 2 { "br1" } else { "br0" };
            must(&["ip", "-n", &sw, "link", "set", &outer, "master", br]);
            must(&["ip", "-n", &sw, "link", "set", &outer, "up"]);
            c.shape(&sw, &outer, LINK_RATE);
        }
        c
    }
    /// A tbf at `rate` on one interface, replacing what was there.
    pub fn shape(&self, ns: &str, dev: &str, rate: &str) {
        must(&[
            "ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst",
            "32kb", "latency", "400ms",
        ]);
    }
    pub fn switch(&self) -> String {
        format!("fdsw{}", self.tag)
    }
    pub fn node(&self, i: usize) -> String {
        format!("fdn{i}x{}", self.tag)
    }
    /// Node i's port on the switch (the veth end in the switch namespace).
    pub fn port(&self, i: usize) -> String {
        format!("p{i}x{}", self.tag)
    }
    /// Node i's cable: its switch port set up or down.
    pub fn link(&self, i: usize, up: bool) {
        let state = if up { "up" } else { "down" };
        must(&["ip", "-n", &self.switch(), "link", "set", &self.port(i), state]);
    }
    pub fn ip(&self, i: usize) -> String {
        format!("198.18.10.{}", i + 1)
    }
    /// Node i's traffic to node j (both ways) at `rate`: htb with a u32
    /// filter on the destination, on each node's own interface.
    pub fn slow_link(&self, i: usize, j: usize, rate: &str) {
        for (from, to) in [(i, j), (j, i)] {
            let ns = self.node(from);
            let tc = |a: &[&str]| must(&[&["ip", "netns", "exec", &ns, "tc"][..], a].concat());
            tc(&[
                "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10",
            ]);
            tc(&[
                "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit",
            ]);
            tc(&[
                "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:20", "htb", "rate", rate,
            ]);
            let dst = format!("{}/32", self.ip(to));
            tc(&[
                "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "u32", "match", "ip", "dst", &dst,
                "flowid", "1:20",
            ]);
        }
    }
    /// The spine cable between the two leaves at `rate`, each way.
    pub fn spine(&self, rate: &str) {
        for end in ["sp0", "sp1"] {
            self.shape(&self.switch(), end, rate);
        }
    }

    /// Everything into and out of node i at `rate` (tbf on both veth ends).
    pub fn slow_node(&self, i: usize, rate: &str) {
        self.shape(&self.node(i), "eth0", rate);
        self.shape(&self.switch(), &self.port(i), rate);
    }
    /// Every node's rank of `fabdiag sweep ARGS` (rank 0 with `--json`),
    /// each of them ending well: rank 0's document.
    pub fn every_rank(&self, args: &[&str]) -> serde_json::Value {
        let port = free_port();
        let others: Vec<Proc> = (1..self.n)
            .map(|r| Proc::spawn(&mut self.rank(r, port, args)))
            .collect();
        let zero = Proc::spawn(&mut self.rank(0, port, &[args, &["--json"]].concat())).wait(LIMIT * 2);
        for (i, p) in others.into_iter().enumerate() {
            let o = p.wait(LIMIT);
            assert_eq!(o.code, Some(0), "rank {}: {}", i + 1, o.stderr);
        }
        assert_eq!(zero.code, Some(0), "{}", zero.stderr);
        zero.json()
    }

    pub fn rank(&self, r: usize, port: u16, extra: &[&str]) -> Command {
        self.rank_at(r, &format!("{}:{port}", self.ip(0)), extra)
    }
    /// Rank `r` on node r, joining the coordinator at `coord`.
    pub fn rank_at(&self, r: usize, coord: &str, extra: &[&str]) -> Command {
        let ns = self.node(r);
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &ns, bin(), "sweep", "--coordinator", coord]);
        c.args(extra);
        c.env("FABDIAG_RANK", r.to_string())
            .env("FABDIAG_SIZE", self.n.to_string())
            .env("FABDIAG_NODE_NAME", format!("node{r}"));
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.n {
            let _ = Command::new("ip").args(["netns", "del", &self.node(i)]).status();
        }
        let _ = Command::new("ip").args(["netns", "del", &self.switch()]).status();
    }
}
