//! The driver against a fake provider that completes every operation at
//! once and plays the peer's part (an echo per message, or a response per
//! batch): the driver's bookkeeping, checked, and its cost per operation,
//! measurable without a fabric. `scripts/dev/bench/hotloop.sh` runs the ignored
//! `hot_loop_*` tests under callgrind and reports instructions per
//! operation, which do not depend on the machine's load.

use super::{DataPath, DriverConfig, FabricDriver, LatClock, Op, Post, What, COMPLETIONS_PER_POLL};
use fabdiag_engine::{run_lat_size, run_size, Activity, LatConfig, Mode};
use fabdiag_fabric::{Completion, FabricError, OpFlags, PeerId, Posted, RegionId, RemoteRegion};
use fabdiag_proto::Alone;
use std::collections::VecDeque;
use std::time::Duration;

/// What the fake peer does with our sends.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Peer {
    /// Nothing (one-sided operations).
    Quiet,
    /// Sends every message back (send_lat's server).
    Echo,
    /// An empty response after every `n` messages (send_bw's receiver).
    Response(u64),
}

pub(crate) struct FakeWire {
    peer: Peer,
    /// The provider it stands for (the inject limit depends on it).
    pub provider: &'static str,
    queue: VecDeque<Completion>,
    memory: Vec<u8>,
    sends: u64,
    pub posted: u64,
    pub tx_completions: u64,
    pub recvs_posted: u64,
    /// The most completions asked for by a poll that found any.
    pub largest_poll: usize,
    /// What the driver said each batch may have in flight, in turn.
    pub work: Vec<u64>,
}

impl FakeWire {
    pub fn new(peer: Peer) -> FakeWire {
        FakeWire {
            peer,
            provider: "fake",
            queue: VecDeque::with_capacity(1024),
            memory: vec![0; 1 << 20],
            sends: 0,
            posted: 0,
            tx_completions: 0,
            recvs_posted: 0,
            largest_poll: 0,
            work: Vec::new(),
        }
    }

    fn arrives(&mut self, len: u64) {
        self.queue.push_back(Completion {
            context: 0,
            len,
            is_recv: true,
        });
    }
}

impl DataPath for FakeWire {
    fn inject_size(&self) -> u64 {
        4096
    }
    fn provider(&self) -> &str {
        self.provider
    }
    fn rx_depth(&self) -> u64 {
        1024
    }
    fn region_len(&self, _: RegionId) -> u64 {
        self.memory.len() as u64
    }
    fn region(&self, _: RegionId) -> Option<&[u8]> {
        Some(&self.memory)
    }
    fn region_mut(&mut self, _: RegionId) -> Option<&mut [u8]> {
        Some(&mut self.memory)
    }
    fn completes(&self, f: OpFlags) -> bool {
        !(f.silent && f.inject)
    }
    fn post(&mut self, p: &Post<'_>) -> Result<Posted, FabricError> {
        self.posted += 1;
        if self.completes(p.flags) {
            self.tx_completions += 1;
            self.queue.push_back(Completion::default());
        }
        if let What::Send = p.what {
            self.sends += 1;
            match self.peer {
                Peer::Echo => self.arrives(p.len),
                Peer::Response(n) if self.sends.is_multiple_of(n) => self.arrives(0),
                _ => {}
            }
        }
        Ok(Posted::Queued)
    }
    /// The length and flags: enough to play the same part as `post`.
    type Prepared = (u64, OpFlags);
    fn prepare(&self, _: RegionId, _: u64, len: u64, f: OpFlags) -> Result<(u64, OpFlags), FabricError> {
        Ok((len, f))
    }
    fn send_prepared(&mut self, &(len, flags): &(u64, OpFlags), peer: PeerId) -> Result<Posted, FabricError> {
        self.post(&Post {
            what: What::Send,
            off: 0,
            len,
            peer,
            flags,
        })
    }
    fn recv_prepared(&mut self, _: &(u64, OpFlags), _: u64) -> Result<Posted, FabricError> {
        self.recvs_posted += 1;
        Ok(Posted::Queued)
    }
    fn recv(&mut self, _: RegionId, _: u64, _: u64, _: u64) -> Result<Posted, FabricError> {
        self.recvs_posted += 1;
        Ok(Posted::Queued)
    }
    fn poll(&mut self, out: &mut [Completion]) -> Result<usize, FabricError> {
        let n = out.len().min(self.queue.len());
        if n > 0 {
            self.largest_poll = self.largest_poll.max(out.len());
        }
        for (o, c) in out.iter_mut().zip(self.queue.drain(..n)) {
            *o = c;
        }
        Ok(n)
    }
    fn leak_on_drop(&mut self) {}
    fn expect_work(&mut self, bytes: u64) {
        self.work.push(bytes);
    }
}

fn config(op: Op, list: u64, max_size: u64) -> DriverConfig {
    DriverConfig {
        op,
        activity: Activity::Active,
        bidirectional: false,
        list_size: list,
        align: 64,
        max_buf: u64::MAX,
        use_idc: true,
        unrestricted: false,
        max_size,
        echo: false,
        clock: LatClock::CALL,
    }
}

fn target() -> (PeerId, RemoteRegion) {
    (
        PeerId::from_index(0),
        RemoteRegion {
            addr: 0,
            key: 0,
            len: 1 << 20,
        },
    )
}

/// Write batches: every write posted and completed, counted once.
fn writes(iterations: u64, list: u64, size: u64) -> (u64, FakeWire) {
    let mut w = FakeWire::new(Peer::Quiet);
    let mut link = Alone::default();
    let r = {
        let mut d = FabricDriver::new(&mut w, &mut link, target(), config(Op::Write, list, size)).unwrap();
        run_size(&mut d, Activity::Active, Mode::Iterations(iterations), size, list).unwrap()
    };
    (r.own.ops, w)
}

/// send_bw's client: batches closed by the peer's response.
fn send_batches(iterations: u64, list: u64, size: u64) -> (u64, FakeWire) {
    send_batches_on("fake", iterations, list, size)
}

fn send_batches_on(provider: &'static str, iterations: u64, list: u64, size: u64) -> (u64, FakeWire) {
    let mut w = FakeWire::new(Peer::Response(list));
    w.provider = provider;
    let mut link = Alone::default();
    let r = {
        let mut d = FabricDriver::new(&mut w, &mut link, target(), config(Op::Send, list, size)).unwrap();
        run_size(&mut d, Activity::Active, Mode::Iterations(iterations), size, list).unwrap()
    };
    (r.own.ops, w)
}

/// send_lat's client: one message, its echo, timed.
fn pings(iterations: u64, size: u64) -> (u64, FakeWire) {
    let mut w = FakeWire::new(Peer::Echo);
    let mut link = Alone::default();
    let lc = LatConfig {
        mode: Mode::Iterations(iterations),
        warmup: 0,
        gap: Duration::ZERO,
        keep_all: false,
        yield_in_gap: false,
    };
    let r = {
        let mut d = FabricDriver::new(&mut w, &mut link, target(), config(Op::Send, 1, size)).unwrap();
        run_lat_size(&mut d, Activity::Active, &lc, size).unwrap()
    };
    (r.iterations, w)
}

#[test]
fn every_write_is_posted_and_completed_once() {
    let (ops, w) = writes(10, 16, 64);
    assert_eq!((ops, w.posted, w.tx_completions), (160, 160, 160));
}

/// Before a size's operations, the endpoint hears what its batch may have
/// in flight (the size times the window), so what watches its calls can
/// give a call held by a provider moving that much its time.
#[test]
fn each_size_tells_the_endpoint_its_batch() {
    let (_, w) = writes(2, 16, 4096);
    assert_eq!(w.work, [16 * 4096]);
    let (_, w) = send_batches(2, 64, 1 << 30);
    assert_eq!(w.work, [64 << 30]);
    let (_, w) = pings(3, 8);
    assert_eq!(w.work, [8]);
}

#[test]
fn injected_sends_leave_no_completion_and_batches_wait_for_the_response() {
    // 8 B: injected, so no completion entries; each batch of 16 ends with
    // the peer's response
    let (ops, w) = send_batches(10, 16, 8);
    assert_eq!((ops, w.posted, w.tx_completions), (160, 160, 0));
    // 8 KiB: past the provider's inject size, so each send completes
    let (ops, w) = send_batches(10, 16, 8192);
    assert_eq!((ops, w.posted, w.tx_completions), (160, 160, 160));
}

#[test]
fn sends_inject_up_to_the_providers_limit_but_on_cxi_up_to_the_idc_limit() {
    // 1 KiB: inline on a provider whose inject size is 4 KiB ...
    let (_, w) = send_batches_on("shm", 10, 16, 1024);
    assert_eq!(w.tx_completions, 0);
    // ... but on cxi the originals' 192 B IDC limit holds
    let (_, w) = send_batches_on("cxi", 10, 16, 1024);
    assert_eq!(w.tx_completions, 160);
    let (_, w) = send_batches_on("cxi", 10, 16, 192);
    assert_eq!(w.tx_completions, 0);
}

#[test]
fn every_ping_waits_for_its_echo_and_reposts_the_receive() {
    let (n, w) = pings(100, 8);
    assert_eq!((n, w.posted, w.tx_completions), (100, 100, 0));
    // the initial receives, and one re-post per echo
    assert!(w.recvs_posted >= 100, "{}", w.recvs_posted);
}

/// A provider may poll its wire until it has as many completions as asked
/// for (psm3 does: a socket poll per round trip more when asked for more
/// than one), so send_lat's sides ask for one completion a poll, even
/// where the send leaves one beside the echo.
#[test]
fn send_lat_polls_for_one_completion_at_a_time() {
    let (_, w) = pings(100, 8);
    assert_eq!(w.largest_poll, 1, "injected: the echo alone");
    let (_, w) = pings(100, 8192);
    assert_eq!(w.largest_poll, 1, "the echo and the send's completion, one a poll");
    let (_, w) = send_batches(10, 16, 8);
    assert_eq!(w.largest_poll, COMPLETIONS_PER_POLL, "batches read what there is");
    let mut w = FakeWire::new(Peer::Quiet);
    w.arrives(8);
    let mut link = Alone::default();
    let mut cfg = config(Op::Send, 1, 8);
    (cfg.activity, cfg.echo) = (Activity::Passive, true);
    let mut d = FabricDriver::new(&mut w, &mut link, target(), cfg).unwrap();
    assert_eq!(d.progress().unwrap(), 1);
    drop(d);
    assert_eq!((w.largest_poll, w.posted), (1, 1), "the server: one message, echoed");
}

fn hot_loop_ops() -> u64 {
    std::env::var("FABDIAG_HOTLOOP_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

/// The driver's own work per operation (scripts/dev/bench/hotloop.sh).
#[test]
#[ignore = "a measurement for scripts/dev/bench/hotloop.sh, not a check"]
fn hot_loop_write() {
    let n = hot_loop_ops();
    assert_eq!(writes(n / 64, 64, 8).0, n / 64 * 64);
}

#[test]
#[ignore = "a measurement for scripts/dev/bench/hotloop.sh, not a check"]
fn hot_loop_send_bw() {
    let n = hot_loop_ops();
    assert_eq!(send_batches(n / 64, 64, 8).0, n / 64 * 64);
}

#[test]
#[ignore = "a measurement for scripts/dev/bench/hotloop.sh, not a check"]
fn hot_loop_send_lat() {
    let n = hot_loop_ops();
    assert_eq!(pings(n, 8).0, n);
}

/// send_bw's receiver on shm pauses after an empty poll only in the middle
/// of a batch: once its first message is in and while two or more are to
/// come. The first (or the post-run barrier, which ends the client's
/// timing) and the last (whose arrival sends the response the sender
/// waits for) are polled for at full speed. No other passive side pauses,
/// nor send_bw's receiver on another provider.
#[test]
fn only_send_bw_receiver_on_shm_pauses_and_never_for_a_batch_end() {
    use super::{SyncHost, SEND_BW_IDLE_PAUSE};
    let passive = |op, list, echo| DriverConfig {
        activity: Activity::Passive,
        echo,
        ..config(op, list, 64)
    };
    let shm = || FakeWire {
        provider: "shm",
        ..FakeWire::new(Peer::Quiet)
    };
    let mut w = shm();
    let mut link = Alone::default();
    let mut d = FabricDriver::new(&mut w, &mut link, target(), passive(Op::Send, 3, false)).unwrap();
    let mut seen = vec![d.idle_pause()];
    for _ in 0..4 {
        d.ep.arrives(64);
        assert_eq!(d.progress().unwrap(), 1);
        seen.push(d.idle_pause());
    }
    let p = SEND_BW_IDLE_PAUSE;
    let z = Duration::ZERO;
    // 3 to come (none in yet), 2, 1 (the batch's end), a new batch of 3, 2
    assert_eq!(seen, [z, p, z, z, p]);
    drop(d);
    for cfg in [
        passive(Op::Send, 1, false),
        passive(Op::Send, 2, false),
        passive(Op::Send, 64, true),
        passive(Op::Write, 64, false),
        passive(Op::Read, 64, false),
        config(Op::Send, 64, 64),
    ] {
        let mut w = shm();
        let mut link = Alone::default();
        let d = FabricDriver::new(&mut w, &mut link, target(), cfg).unwrap();
        assert_eq!(d.idle_pause(), z);
    }
    // psm3's receives move their data in this side's polls: no pause
    for provider in ["psm3", "tcp;ofi_rxm", "fake"] {
        let mut w = FakeWire {
            provider,
            ..FakeWire::new(Peer::Quiet)
        };
        let mut link = Alone::default();
        let mut d = FabricDriver::new(&mut w, &mut link, target(), passive(Op::Send, 3, false)).unwrap();
        d.ep.arrives(64);
        assert_eq!(d.progress().unwrap(), 1);
        assert_eq!(d.idle_pause(), z, "{provider}");
    }
}
