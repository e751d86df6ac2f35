//! The chaos sweeps' faults: drawn from a seed, turned into timed steps,
//! and done to the cluster (signals, cables, nftables on the bridge, tc, a
//! small tmpfs, a stranger on the port); `heal` undoes all of them. Judges
//! nothing.

use super::{NODES, WINDOW_MS};
use crate::common::cluster::Cluster;
use crate::common::*;
use rand::{RngExt, SeedableRng};
use std::process::Command;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Kill {
        rank: usize,
        at_ms: u64,
    },
    Stop {
        rank: usize,
        at_ms: u64,
        for_ms: u64,
    },
    CableOut {
        node: usize,
        at_ms: u64,
        for_ms: u64,
    },
    /// Loss both ways on a node's link; `slow_kbit`, when not 0, also
    /// shapes it to that rate (the queue is the delay).
    Lossy {
        node: usize,
        at_ms: u64,
        loss_pct: u32,
        slow_kbit: u32,
    },
    Partition {
        at_ms: u64,
        for_ms: u64,
    },
    FullDisk {
        kib: u32,
    },
    Stranger {
        at_ms: u64,
        garbage: bool,
    },
}

/// The run's faults, from its seed alone.
pub fn schedule(seed: u64) -> Vec<Fault> {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let n = r.random_range(1..=2usize);
    (0..n)
        .map(|_| {
            let at_ms = r.random_range(200..WINDOW_MS);
            let for_ms = r.random_range(500..8000u64);
            // rank 0 in a quarter of the signals: it is the one that matters most
            let rank = if r.random_bool(0.25) {
                0
            } else {
                r.random_range(1..NODES)
            };
            match r.random_range(0..7u32) {
                0 => Fault::Kill { rank, at_ms },
                1 => Fault::Stop { rank, at_ms, for_ms },
                2 => Fault::CableOut {
                    node: r.random_range(0..NODES),
                    at_ms,
                    for_ms,
                },
                3 => Fault::Lossy {
                    node: r.random_range(0..NODES),
                    at_ms,
                    loss_pct: r.random_range(1..=10),
                    slow_kbit: if r.random_bool(0.5) {
                        r.random_range(500..20000)
                    } else {
                        0
                    },
                },
                4 => Fault::Partition { at_ms, for_ms },
                5 => Fault::FullDisk {
                    kib: 4 * r.random_range(1..12u32),
                },
                _ => Fault::Stranger {
                    at_ms,
                    garbage: r.random_bool(0.5),
                },
            }
        })
        .collect()
}

/// One step of a fault: its start or its end.
#[derive(Clone, Copy, Debug)]
pub(super) enum Act {
    Signal(usize, Signal),
    Cable(usize, bool),
    Lossy(usize, u32, u32),
    Partition(bool),
    Stranger(bool),
}

fn nft(c: &Cluster, args: &[&str]) {
    must(&[&["ip", "netns", "exec", &c.switch(), "nft"][..], args].concat());
}

/// A bridge table `name` with a forwarding chain `cross` in the switch.
fn nft_table(c: &Cluster, name: &str) {
    nft(c, &["add", "table", "bridge", name]);
    nft(
        c,
        &[
            "add",
            "chain",
            "bridge",
            name,
            "cross",
            "{ type filter hook forward priority 0; }",
        ],
    );
}

/// Node `a`'s half and the other's: no frame crosses between them.
fn partition(c: &Cluster, on: bool) {
    if !on {
        // (two partitions at once: the first to end ends both)
        let _ = Command::new("ip")
            .args([
                "netns",
                "exec",
                &c.switch(),
                "nft",
                "delete",
                "table",
                "bridge",
                "chaos_partition",
            ])
            .stderr(std::process::Stdio::null())
            .status();
        return;
    }
    let half = |lo: usize, hi: usize| {
        let ports: Vec<String> = (lo..hi).map(|i| format!("\"{}\"", c.port(i))).collect();
        format!("{{ {} }}", ports.join(", "))
    };
    let (a, b) = (half(0, NODES / 2), half(NODES / 2, NODES));
    nft_table(c, "chaos_partition");
    for (from, to) in [(&a, &b), (&b, &a)] {
        nft(
            c,
            &[
                "add",
                "rule",
                "bridge",
                "chaos_partition",
                "cross",
                "iifname",
                from,
                "oifname",
                to,
                "drop",
            ],
        );
    }
}

/// `loss` % of the frames into and out of node `node` dropped, and its
/// port shaped to `kbit` when not 0.
fn lossy(c: &Cluster, node: usize, loss: u32, kbit: u32) {
    let table = format!("chaos_loss{node}");
    let port = format!("\"{}\"", c.port(node));
    let pct = loss.to_string();
    nft_table(c, &table);
    for dir in ["iifname", "oifname"] {
        nft(
            c,
            &[
                "add", "rule", "bridge", &table, "cross", dir, &port, "numgen", "random", "mod", "100", "<", &pct,
                "drop",
            ],
        );
    }
    if kbit > 0 {
        c.shape(&c.switch(), &c.port(node), &format!("{kbit}kbit"));
    }
}

/// The steps that make up `faults`, in time order.
pub(super) fn steps(faults: &[Fault]) -> Vec<(Duration, Act)> {
    let ms = Duration::from_millis;
    let mut out = Vec::new();
    for f in faults {
        match *f {
            Fault::Kill { rank, at_ms } => out.push((ms(at_ms), Act::Signal(rank, Signal::SIGKILL))),
            Fault::Stop { rank, at_ms, for_ms } => {
                out.push((ms(at_ms), Act::Signal(rank, Signal::SIGSTOP)));
                out.push((ms(at_ms + for_ms), Act::Signal(rank, Signal::SIGCONT)));
            }
            Fault::CableOut { node, at_ms, for_ms } => {
                out.push((ms(at_ms), Act::Cable(node, false)));
                out.push((ms(at_ms + for_ms), Act::Cable(node, true)));
            }
            Fault::Lossy {
                node,
                at_ms,
                loss_pct,
                slow_kbit,
            } => out.push((ms(at_ms), Act::Lossy(node, loss_pct, slow_kbit))),
            Fault::Partition { at_ms, for_ms } => {
                out.push((ms(at_ms), Act::Partition(true)));
                out.push((ms(at_ms + for_ms), Act::Partition(false)));
            }
            Fault::Stranger { at_ms, garbage } => out.push((ms(at_ms), Act::Stranger(garbage))),
            Fault::FullDisk { .. } => {}
        }
    }
    out.sort_by_key(|s| s.0);
    out
}

/// Does one step; a signal to a rank that has ended does nothing. Returns
/// the rank a SIGKILL reached.
pub(super) fn act(c: &Cluster, ranks: &mut [Proc], port: u16, a: Act) -> Option<usize> {
    match a {
        Act::Signal(r, sig) => {
            if !ranks[r].alive() {
                return None;
            }
            ranks[r].signal(sig);
            return (sig == Signal::SIGKILL).then_some(r);
        }
        Act::Cable(node, up) => c.link(node, up),
        Act::Lossy(node, loss, kbit) => lossy(c, node, loss, kbit),
        Act::Partition(on) => partition(c, on),
        Act::Stranger(garbage) => stranger(c, port, garbage),
    }
    None
}

/// A connection to the coordinator from node 1's namespace that sends
/// random bytes, or nothing, and holds on for a few seconds.
fn stranger(c: &Cluster, port: u16, garbage: bool) {
    let send = if garbage { "head -c 600 /dev/urandom >&3; " } else { "" };
    let script = format!("exec 3<>/dev/tcp/{}/{port} && {{ {send}sleep 4; }}", c.ip(0));
    let _ = Command::new("ip")
        .args(["netns", "exec", &c.node(1), "timeout", "6", "bash", "-c", &script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// A tmpfs of `kib` KiB at `dir` (rank 0's --output on a nearly full
/// disk), unmounted when dropped.
pub(super) struct SmallDisk(String);

impl SmallDisk {
    pub(super) fn new(dir: &str, kib: u32) -> SmallDisk {
        must(&["mount", "-t", "tmpfs", "-o", &format!("size={kib}k"), "fdchaos", dir]);
        SmallDisk(dir.to_string())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").args(["-l", &self.0]).status();
    }
}

/// Every cable in, every link back to its healthy shape, no partition
/// and no loss (the switch's ruleset flushed).
pub(super) fn heal(c: &Cluster) {
    for i in 0..NODES {
        c.link(i, true);
        c.shape(&c.switch(), &c.port(i), crate::common::cluster::LINK_RATE);
    }
    nft(c, &["flush", "ruleset"]);
}
