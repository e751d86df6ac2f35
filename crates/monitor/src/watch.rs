//! What the monitor keeps between scrapes, per peer and bounded: whether it
//! is up (or why not), how often that changed, its probes counted by kind
//! and outcome, when each kind last ended, the latest figures and a short
//! window of recent ones, and the link time probing took. Its memory does
//! not grow with time: only with the number of peers and the window.
//! Pure: the time is handed in, and it prints nothing; a change of state
//! is returned for the binary to log.

use crate::peers::Peer;
use crate::probe::{Bandwidth, Figures, Latency, Outcome, ProbeKind, Reason};
use std::collections::VecDeque;
use std::fmt;

/// Whether a peer answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Not yet probed (or only turned away so far).
    Unknown,
    Up,
    Down(Reason, String),
}

impl Status {
    /// Same state for the metrics: up, or down for the same reason.
    fn same(&self, other: &Status) -> bool {
        match (self, other) {
            (Status::Down(a, _), Status::Down(b, _)) => a == b,
            _ => self == other,
        }
    }
}

/// A peer's state changed: one log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub peer: String,
    pub from: Status,
    pub to: Status,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.to {
            Status::Up => write!(f, "{} up", self.peer)?,
            Status::Down(r, m) => write!(f, "{} down ({}): {m}", self.peer, r.as_str())?,
            Status::Unknown => write!(f, "{} unknown", self.peer)?,
        }
        match &self.from {
            Status::Unknown => Ok(()),
            Status::Up => write!(f, " (was up)"),
            Status::Down(r, _) => write!(f, " (was down: {})", r.as_str()),
        }
    }
}

/// One peer's record.
#[derive(Clone, Debug)]
pub struct PeerState {
    pub status: Status,
    /// Changes between known states (the first probe's finding is not one).
    pub changes: u64,
    /// Probes by kind (`ProbeKind::index`) and outcome (`Outcome::LABELS`).
    pub probes: [[u64; 4]; 2],
    /// When each kind's last probe ended (seconds since the Unix epoch).
    pub last: [Option<f64>; 2],
    /// The last latency probe's figures; None while it failed.
    pub latency: Option<Latency>,
    pub bandwidth: Option<Bandwidth>,
    /// Recent headline figures per kind, newest last.
    pub windows: [VecDeque<f64>; 2],
    pub link_s: f64,
}

impl PeerState {
    fn new() -> PeerState {
        PeerState {
            status: Status::Unknown,
            changes: 0,
            probes: [[0; 4]; 2],
            last: [None; 2],
            latency: None,
            bandwidth: None,
            windows: [VecDeque::new(), VecDeque::new()],
            link_s: 0.0,
        }
    }

    /// (least, median, most) of a kind's window; None when empty.
    pub fn window_stats(&self, kind: ProbeKind) -> Option<(f64, f64, f64)> {
        let mut v: Vec<f64> = self.windows[kind.index()].iter().copied().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some((v[0], median, v[n - 1]))
    }
}

/// Every peer's record.
#[derive(Clone, Debug)]
pub struct Watch {
    peers: Vec<Peer>,
    states: Vec<PeerState>,
    window: usize,
    pub budget: f64,
}

impl Watch {
    /// Records for `peers`, keeping `window` recent figures of each kind.
    pub fn new(peers: Vec<Peer>, window: usize, budget: f64) -> Watch {
        let states = peers.iter().map(|_| PeerState::new()).collect();
        Watch {
            peers,
            states,
            window: window.max(1),
            budget,
        }
    }

    pub fn peers(&self) -> &[Peer] {
        &self.peers
    }

    pub fn states(&self) -> impl Iterator<Item = (&Peer, &PeerState)> {
        self.peers.iter().zip(&self.states)
    }

    /// Peers up, down and not yet known.
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for s in &self.states {
            match s.status {
                Status::Up => t.0 += 1,
                Status::Down(..) => t.1 += 1,
                Status::Unknown => t.2 += 1,
            }
        }
        t
    }

    /// Records what peer `i`'s probe of `kind`, ended at `now_unix_s`,
    /// found; returns the change of state it made, if any.
    pub fn record(&mut self, i: usize, kind: ProbeKind, now_unix_s: f64, o: &Outcome) -> Option<Change> {
        let window = self.window;
        let (peer, st) = (self.peers.get(i)?, self.states.get_mut(i)?);
        let k = kind.index();
        st.probes[k][o.index()] += 1;
        st.last[k] = Some(now_unix_s);
        let to = match o {
            Outcome::Busy(_) | Outcome::RateLimited(..) => return None,
            Outcome::Up(f) => {
                st.link_s += f.link_s();
                let w = &mut st.windows[k];
                w.push_back(f.headline());
                while w.len() > window {
                    w.pop_front();
                }
                match f {
                    Figures::Latency(l) => st.latency = Some(l.clone()),
                    Figures::Bandwidth(b) => st.bandwidth = Some(b.clone()),
                }
                Status::Up
            }
            Outcome::Down(r, m) => {
                match kind {
                    ProbeKind::Latency => st.latency = None,
                    ProbeKind::Bandwidth => st.bandwidth = None,
                }
                Status::Down(*r, m.clone())
            }
        };
        let from = std::mem::replace(&mut st.status, to.clone());
        if from.same(&to) {
            return None;
        }
        if from != Status::Unknown {
            st.changes += 1;
        }
        Some(Change {
            peer: peer.name.clone(),
            from,
            to,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Bandwidth;

    fn watch(window: usize) -> Watch {
        let p = |n: &str| Peer {
            name: n.into(),
            host: n.into(),
            port: 1,
        };
        Watch::new(vec![p("a"), p("b")], window, 0.01)
    }

    fn bw(v: f64) -> Outcome {
        Outcome::Up(Figures::Bandwidth(Bandwidth {
            size_bytes: 65536,
            bytes_per_s: v,
            link_s: 0.1,
        }))
    }

    fn down(r: Reason) -> Outcome {
        Outcome::Down(r, "why".into())
    }

    #[test]
    fn every_change_once_and_its_line() {
        let mut w = watch(4);
        let bwk = ProbeKind::Bandwidth;
        let c = w.record(0, bwk, 1.0, &bw(1e9)).expect("first finding");
        assert_eq!(c.to_string(), "a up");
        assert_eq!(w.record(0, bwk, 2.0, &bw(1e9)), None);
        assert_eq!(w.record(0, bwk, 3.0, &Outcome::Busy("busy".into())), None);
        let c = w
            .record(0, ProbeKind::Latency, 4.0, &down(Reason::Refused))
            .expect("down");
        assert_eq!(c.to_string(), "a down (refused): why (was up)");
        // a new message for the same reason is no change
        assert_eq!(
            w.record(0, bwk, 5.0, &Outcome::Down(Reason::Refused, "other".into())),
            None
        );
        let c = w.record(0, bwk, 6.0, &down(Reason::Timeout)).expect("new reason");
        assert_eq!(c.to_string(), "a down (timeout): why (was down: refused)");
        w.record(0, bwk, 7.0, &bw(2e9)).expect("back");
        let (_, a) = w.states().next().expect("a");
        assert_eq!(a.changes, 3);
        assert_eq!(a.probes[bwk.index()], [3, 2, 1, 0]);
        assert_eq!(a.probes[ProbeKind::Latency.index()], [0, 1, 0, 0]);
        assert_eq!(a.last, [Some(4.0), Some(7.0)]);
        assert!((a.link_s - 0.3).abs() < 1e-12);
        assert_eq!(w.tally(), (1, 0, 1));
        assert_eq!(w.record(9, bwk, 1.0, &bw(1.0)), None, "no such peer");
    }

    #[test]
    fn a_failure_clears_its_kinds_figures_only() {
        let mut w = watch(4);
        w.record(1, ProbeKind::Bandwidth, 1.0, &bw(5.0));
        w.record(1, ProbeKind::Latency, 2.0, &down(Reason::Silent));
        let (_, b) = w.states().nth(1).expect("b");
        assert!(b.bandwidth.is_some() && b.latency.is_none());
        w.record(1, ProbeKind::Bandwidth, 3.0, &down(Reason::Silent));
        let (_, b) = w.states().nth(1).expect("b");
        assert!(b.bandwidth.is_none());
        // the window keeps what was measured
        assert_eq!(b.window_stats(ProbeKind::Bandwidth), Some((5.0, 5.0, 5.0)));
    }

    #[test]
    fn the_window_is_bounded_and_its_statistics() {
        let mut w = watch(3);
        for v in [9.0, 1.0, 5.0, 3.0, 7.0] {
            w.record(0, ProbeKind::Bandwidth, v, &bw(v));
        }
        let (_, a) = w.states().next().expect("a");
        assert_eq!(a.windows[1].len(), 3);
        assert_eq!(a.window_stats(ProbeKind::Bandwidth), Some((3.0, 5.0, 7.0)));
        w.record(0, ProbeKind::Bandwidth, 8.0, &bw(4.0));
        let (_, a) = w.states().next().expect("a");
        assert_eq!(a.window_stats(ProbeKind::Bandwidth), Some((3.0, 4.0, 7.0)));
        assert_eq!(a.window_stats(ProbeKind::Latency), None);
    }
}
