//! The coordinator protocol: rank 0's coordinator and every rank speak it
//! over one TCP connection each, in the pair tools' framing (4-byte length,
//! JSON). A rank joins, is welcomed with the test every pair runs, then
//! gets one order per step (a pair test, a pattern's flows, or idle) and
//! answers each with its outcomes; `Finish` ends it. Every read has a deadline, and every control
//! connection is watched by the kernel (`watch_link`). No I/O policy
//! beyond that and reading and writing one message.

use fabdiag_engine::lat::LatFigure;
use fabdiag_model::counters::Noted;
use fabdiag_sweep_plan::{LatFigures, RowFigure};
use serde::{Deserialize, Serialize};
use std::io;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Told in every join; a rank of another protocol is refused.
pub const SWEEP_PROTOCOL: u32 = 2;

/// How long a control connection's other host may acknowledge nothing
/// before the connection is given up (`watch_link`).
pub const LINK_LIMIT: Duration = Duration::from_secs(20);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToCoordinator {
    Join {
        protocol: u32,
        version: String,
        rank: usize,
        size: usize,
        host: String,
        /// The domain (NIC) this rank's pair tests use, when one was chosen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
        /// The GPU its pair tests' buffers are on ("GPU 1", "TX GPU 0 RX
        /// GPU 1"), when `-t/-r` put them on one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gpu: Option<String>,
        /// Where this rank's pair tests listen (its address as the
        /// coordinator sees it, this port).
        pair_port: u16,
        /// Set when this rank cannot take part (no GPU driver, no
        /// libfabric, ...): why, for the report; it leaves after saying so.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unable: Option<String>,
        /// A fresh nonce when this rank authenticates (`auth`): rank 0
        /// challenges it to prove the key or its MUNGE credential.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nonce: Option<String>,
        /// How it proves who it is, with a nonce; left out for a shared key.
        #[serde(default, skip_serializing_if = "fabdiag_proto::auth::Method::is_key")]
        auth_method: fabdiag_proto::auth::Method,
        /// With `--topology lldp`: its `lldpctl -f json`, or why not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lldp: Option<Result<String, String>>,
    },
    /// The rank's proof (an HMAC or a MUNGE credential), in answer to
    /// `Challenge`.
    Proof {
        mac: String,
    },
    Done {
        step: u64,
        outcome: SideOutcome,
    },
    /// A pattern step's answer: one outcome per flow, in its order's order.
    FlowsDone {
        step: u64,
        outcomes: Vec<SideOutcome>,
    },
    /// The rank gives up its part, and why (a provider call holds it for
    /// good); `reason` is also its answer to `step`, the pair test it was
    /// in, if any. Its connection closes next.
    Leave {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<u64>,
        reason: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairRole {
    Client,
    Server,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToRank {
    /// Joined: every pair test runs with these parameters.
    Welcome {
        test: serde_json::Value,
        /// What a latency pair is judged by.
        #[serde(default)]
        figure: LatFigure,
        /// The test a pattern's victim pair runs, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        victim_test: Option<serde_json::Value>,
    },
    /// Not joined, and why (the rank says so and exits non-zero).
    Refused {
        reason: String,
    },
    /// Rank 0's nonce and its proof (an HMAC or a MUNGE credential) over
    /// both nonces, in answer to a join with one (`auth`).
    Challenge {
        nonce: String,
        mac: String,
    },
    Pair {
        step: u64,
        role: PairRole,
        peer: usize,
        /// The peer's pair listener, "ip:port".
        peer_addr: String,
    },
    /// A pattern's step: this rank's flows, all at once; each client
    /// begins its timed run `start_in_ms` after the order came, so that
    /// every flow of the step is measured over the same window.
    Flows {
        step: u64,
        flows: Vec<FlowOrder>,
        start_in_ms: u64,
    },
    Idle {
        step: u64,
    },
    Finish,
}

/// One of a rank's flows in a pattern's step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowOrder {
    pub role: PairRole,
    pub peer: usize,
    /// The peer's pair listener, "ip:port".
    pub peer_addr: String,
    /// The victim's flow: it runs the victim's test.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub victim: bool,
}

/// One side's account of a pair test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideOutcome {
    /// The figure the sweep compares (MB/s or µs), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Each size's figure, for the full result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowFigure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The whole pair test on this side, and its measuring part (from the
    /// run phase to the last row), in seconds.
    pub elapsed_s: f64,
    pub measure_s: f64,
    /// Endpoints this rank has opened so far, and the time that took.
    #[serde(default)]
    pub opens: u64,
    #[serde(default)]
    pub open_s: f64,
    /// The NIC counters this side read ("vaX + tcp", or "not available
    /// (why)"), and their changes worth a look (only those travel: a
    /// pair's full list stays with the rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_read: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noted: Vec<Noted>,
    /// A latency test's figures for its largest size (a victim's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<LatFigures>,
}

/// How a read ended when it brought no message.
#[derive(Debug)]
pub enum ReadFail {
    Timeout,
    Closed,
    /// The other host acknowledged nothing for `LINK_LIMIT`: the network
    /// path to it, or the host, is down.
    Unreachable,
    Garbage(String),
    Io(io::Error),
}

impl std::fmt::Display for ReadFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFail::Timeout => write!(f, "no answer in time"),
            ReadFail::Closed => write!(f, "connection closed (the process exited or crashed)"),
            ReadFail::Unreachable => write!(
                f,
                "its host acknowledged nothing for {} s (the network path to it, or the host, is down)",
                LINK_LIMIT.as_secs()
            ),
            ReadFail::Garbage(m) => write!(f, "sent garbage ({m})"),
            ReadFail::Io(e) => write!(f, "connection broken ({e})"),
        }
    }
}

pub fn send<T: Serialize>(s: &TcpStream, msg: &T) -> io::Result<()> {
    let payload = serde_json::to_vec(msg).map_err(io::Error::other)?;
    let mut w = s;
    fabdiag_proto::write_frame(&mut w, &payload)
}

/// Reads one message, waiting until `deadline` (None: no limit).
pub fn recv<T: for<'de> Deserialize<'de>>(s: &TcpStream, deadline: Option<Instant>) -> Result<T, ReadFail> {
    let wait = match deadline {
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            // a zero timeout means "block forever" to the OS
            Some(left.max(Duration::from_millis(1)))
        }
        None => None,
    };
    s.set_read_timeout(wait).map_err(ReadFail::Io)?;
    let mut r = s;
    match fabdiag_proto::read_frame(&mut r) {
        Ok(Some(p)) => serde_json::from_slice(&p).map_err(|e| ReadFail::Garbage(e.to_string())),
        Ok(None) => Err(ReadFail::Closed),
        Err(e) => Err(match e.kind() {
            // a read timeout is EAGAIN on Linux; the others are
            // `watch_link` giving the connection up (with the last ICMP
            // error seen, if any)
            io::ErrorKind::WouldBlock => ReadFail::Timeout,
            io::ErrorKind::TimedOut | io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable => {
                ReadFail::Unreachable
            }
            io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
                ReadFail::Closed
            }
            io::ErrorKind::InvalidData => ReadFail::Garbage(e.to_string()),
            _ => ReadFail::Io(e),
        }),
    }
}

/// Has the kernel give `s` up once its other host has acknowledged nothing
/// for `LINK_LIMIT`: keepalive probes while the connection is quiet, and a
/// limit on unacknowledged data while it is not. A host whose link or
/// power is gone then costs its peers seconds, not the round's limit
/// (the next read fails: `ReadFail::Unreachable`). A live host's kernel
/// answers for it, so a rank or a coordinator that is merely slow or
/// stopped is still judged by the reads' own deadlines.
pub fn watch_link(s: &TcpStream) -> io::Result<()> {
    use nix::sys::socket::{setsockopt, sockopt};
    const PROBES: u32 = 5;
    const PROBE_EVERY: u32 = 3;
    let limit = LINK_LIMIT.as_secs() as u32;
    setsockopt(s, sockopt::KeepAlive, &true)?;
    setsockopt(s, sockopt::TcpKeepIdle, &(limit - PROBES * PROBE_EVERY))?;
    setsockopt(s, sockopt::TcpKeepInterval, &PROBE_EVERY)?;
    setsockopt(s, sockopt::TcpKeepCount, &PROBES)?;
    setsockopt(s, sockopt::TcpUserTimeout, &(limit * 1000))?;
    Ok(())
}

/// The next connection on a non-blocking `listener` before `deadline`,
/// made blocking; None once the deadline passes. A pair test's server
/// waits for its client this way (rank 0's joins go through the
/// coordinator's `Arrivals`, which reads each once it speaks).
pub fn accept_by(listener: &TcpListener, deadline: Instant) -> io::Result<Option<TcpStream>> {
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                return Ok(Some(s));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn messages_round_trip_and_reads_are_bounded() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let m = ToRank::Pair {
            step: 3,
            role: PairRole::Server,
            peer: 7,
            peer_addr: "198.18.0.8:4000".into(),
        };
        send(&a, &m).unwrap();
        assert_eq!(recv::<ToRank>(&b, None).unwrap(), m);
        let flows = ToRank::Flows {
            step: 4,
            flows: vec![FlowOrder {
                role: PairRole::Client,
                peer: 2,
                peer_addr: "198.18.0.3:4000".into(),
                victim: true,
            }],
            start_in_ms: 3000,
        };
        send(&a, &flows).unwrap();
        assert_eq!(recv::<ToRank>(&b, None).unwrap(), flows);
        // a leave answers the step it names, if any
        for step in [Some(4), None] {
            let leave = ToCoordinator::Leave {
                step,
                reason: "provider 'psm3' has not returned from fi_writemsg for 10 s".into(),
            };
            send(&b, &leave).unwrap();
            assert_eq!(recv::<ToCoordinator>(&a, None).unwrap(), leave);
        }
        let t = Instant::now();
        let r = recv::<ToRank>(&b, Some(Instant::now() + Duration::from_millis(50)));
        assert!(matches!(r, Err(ReadFail::Timeout)), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(5));
        drop(a);
        assert!(matches!(recv::<ToRank>(&b, None), Err(ReadFail::Closed)));
    }

    /// The welcome carries the latency figure; one from before it did
    /// (no `figure`) means the mean, as those sweeps judged by.
    #[test]
    fn the_welcome_carries_the_figure_and_means_the_mean_without_one() {
        let m = ToRank::Welcome {
            test: serde_json::json!({"tool": "write-lat"}),
            figure: LatFigure::P99,
            victim_test: None,
        };
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.contains(r#""figure":"p99""#), "{text}");
        assert_eq!(serde_json::from_str::<ToRank>(&text).unwrap(), m);
        let old = text.replace(r#","figure":"p99""#, "");
        assert_eq!(
            serde_json::from_str::<ToRank>(&old).unwrap(),
            ToRank::Welcome {
                test: serde_json::json!({"tool": "write-lat"}),
                figure: LatFigure::Mean,
                victim_test: None,
            }
        );
    }

    /// The kernel gives a control connection up after `LINK_LIMIT` of
    /// nothing acknowledged, quiet (keepalive probes) or not (user timeout).
    #[test]
    fn the_link_watch_gives_up_after_the_link_limit() {
        use nix::sys::socket::{getsockopt, sockopt};
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        watch_link(&s).unwrap();
        assert!(getsockopt(&s, sockopt::KeepAlive).unwrap());
        let idle = getsockopt(&s, sockopt::TcpKeepIdle).unwrap();
        let every = getsockopt(&s, sockopt::TcpKeepInterval).unwrap();
        let probes = getsockopt(&s, sockopt::TcpKeepCount).unwrap();
        assert_eq!(u64::from(idle + every * probes), LINK_LIMIT.as_secs());
        assert_eq!(
            u64::from(getsockopt(&s, sockopt::TcpUserTimeout).unwrap()),
            LINK_LIMIT.as_millis() as u64
        );
    }
}
