//! The choreography against fakes: an in-memory link pair that can make a
//! side vanish in any phase, and a fake fabric whose driver completes every
//! operation at once and whose atomic target holds what the test says. No
//! sockets, no libfabric: what is tested is the order of phases, who
//! blames whom, what reaches the peer, and what is kept of a failed run.

use crate::driver::{peer, Drive, DriveError, DriverConfig, LatClock, SyncHost};
use crate::env::Env;
use crate::family;
use crate::memory::{MemFacts, MemoryPlan};
use crate::net::{Net, Port};
use crate::outcome::{Failure, FailureKind, Report, SessionError, Side};
use crate::session::{client_run, server_run};
use crate::sink::{Event, Sink};
use fabdiag_engine::amo::Scheme;
use fabdiag_engine::{Activity, BwDriver, LatDriver, Measure, Step, SyncPoint};
use fabdiag_fabric::{AtomicSpec, Capability, FabricError, RegionId};
use fabdiag_model::{Hugepages, Mem, Role, Row, RunDesc, SideMem, Tool};
use fabdiag_model::{TestSpec, AMO_STRIDE};
use fabdiag_proto::Link;
use fabdiag_proto::{ErrorClass, Message, Phase, ProtoError};
use std::net::IpAddr;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

/// One end of an in-memory control connection.
struct FakeLink {
    leads: bool,
    tx: Option<Sender<Message>>,
    rx: Receiver<Message>,
    /// This side "dies" (its connection closes) on its call number `n`
    /// (from 0) in this phase.
    die_at: Option<(Phase, usize)>,
    calls: usize,
}

fn link_pair(client_dies: Option<(Phase, usize)>, server_dies: Option<(Phase, usize)>) -> (FakeLink, FakeLink) {
    let (a_tx, b_rx) = channel();
    let (b_tx, a_rx) = channel();
    (
        FakeLink {
            leads: true,
            tx: Some(a_tx),
            rx: a_rx,
            die_at: client_dies,
            calls: 0,
        },
        FakeLink {
            leads: false,
            tx: Some(b_tx),
            rx: b_rx,
            die_at: server_dies,
            calls: 0,
        },
    )
}

impl FakeLink {
    fn alive(&mut self, phase: Phase) -> Result<(), ProtoError> {
        if let Some((at, n)) = self.die_at {
            if at == phase {
                if self.calls == n {
                    self.tx = None;
                }
                self.calls += 1;
            }
        }
        if self.tx.is_none() {
            return Err(ProtoError::Io {
                phase,
                reason: "this side was made to vanish".into(),
            });
        }
        Ok(())
    }

    fn incoming(m: Message) -> Result<Message, ProtoError> {
        match m {
            Message::Error { phase, message, kind } => Err(ProtoError::Peer { phase, message, kind }),
            m => Ok(m),
        }
    }
}

impl Link for FakeLink {
    fn leads(&self) -> bool {
        self.leads
    }
    fn local_ip(&self) -> Option<IpAddr> {
        None
    }
    fn send(&mut self, phase: Phase, msg: &Message) -> Result<(), ProtoError> {
        self.alive(phase)?;
        // like TCP, a write to a peer that is gone may still succeed; the
        // loss shows on the next read
        if let Some(tx) = &self.tx {
            let _ = tx.send(msg.clone());
        }
        Ok(())
    }
    fn expect(&mut self, phase: Phase) -> Result<Message, ProtoError> {
        self.alive(phase)?;
        match self.rx.recv_timeout(Duration::from_secs(10)) {
            Ok(m) => Self::incoming(m),
            Err(RecvTimeoutError::Disconnected) => Err(ProtoError::Closed { phase }),
            Err(RecvTimeoutError::Timeout) => Err(ProtoError::Silent { phase, secs: 10 }),
        }
    }
    fn poll(&mut self, phase: Phase) -> Result<Option<Message>, ProtoError> {
        self.alive(phase)?;
        match self.rx.try_recv() {
            Ok(m) => Self::incoming(m).map(Some),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(ProtoError::Closed { phase }),
        }
    }
    fn check_alive(&mut self, phase: Phase) -> Result<(), ProtoError> {
        self.alive(phase)
    }
    fn send_error(&mut self, phase: Phase, message: &str, kind: ErrorClass) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Message::Error {
                phase,
                message: message.into(),
                kind,
            });
        }
    }
}

/// A fabric that completes everything at once. `target` is what an atomic
/// target holds after the run; `fail_open` makes opening the endpoint fail.
#[derive(Clone, Default)]
struct FakeNet {
    target: Vec<u8>,
    fail_open: bool,
    /// Where this side says its buffers live (as a GPU side would).
    side: Option<SideMem>,
    /// The provider's defect of two endpoints in one process, if any.
    same_process_defect: Option<(u64, &'static str)>,
}

impl Net for FakeNet {
    fn check(&mut self, _: &Env, _: Capability) -> Result<(), SessionError> {
        Ok(())
    }
    fn open<'n>(
        &'n mut self,
        _: Option<&fabdiag_model::Provider>,
        _: &Env,
        _: Capability,
        _: Option<IpAddr>,
        plan: &MemoryPlan,
    ) -> Result<Box<dyn Port + 'n>, SessionError> {
        if self.fail_open {
            return Err(FabricError::UnknownDomain {
                provider: "fake".into(),
                domain: "nic9".into(),
                available: "nic0".into(),
            }
            .into());
        }
        Ok(Box::new(FakePort {
            facts: MemFacts {
                used: plan.initiator.len,
                hugepages: Hugepages::Disabled,
                side: self.side.clone().unwrap_or_else(SideMem::system),
                gpus_found: self.side.as_ref().map(|_| 2),
            },
            target: self.target.clone(),
            same_process_defect: self.same_process_defect,
        }))
    }
}

struct FakePort {
    facts: MemFacts,
    target: Vec<u8>,
    same_process_defect: Option<(u64, &'static str)>,
}

impl Port for FakePort {
    fn provider(&self) -> &str {
        "fake"
    }
    fn domain(&self) -> &str {
        "nic0"
    }
    fn delivery_complete(&self) -> bool {
        true
    }
    fn memory(&self) -> &MemFacts {
        &self.facts
    }
    fn atomic_valid(&self, _: &AtomicSpec) -> Result<bool, SessionError> {
        Ok(true)
    }
    fn atomic_defect(&self, _: &AtomicSpec) -> Option<&'static str> {
        None
    }
    fn same_process_defect(&self) -> Option<(u64, &'static str)> {
        self.same_process_defect
    }
    fn advertise(&self) -> Result<Message, SessionError> {
        Ok(Message::Endpoint {
            provider: "fake".into(),
            domain: "nic0".into(),
            address: vec![1, 2, 3],
            regions: vec![],
            memory: Some(self.facts.describe()),
        })
    }
    fn connect(&mut self, peer: Message) -> Result<(String, String), SessionError> {
        match peer {
            Message::Endpoint { .. } => Ok(("here".into(), "there".into())),
            other => Err(ProtoError::Unexpected {
                phase: Phase::Endpoint,
                got: other.kind().into(),
            }
            .into()),
        }
    }
    fn driver<'a>(
        &'a mut self,
        link: &'a mut dyn Link,
        cfg: DriverConfig,
    ) -> Result<Box<dyn Drive + 'a>, SessionError> {
        Ok(Box::new(FakeDriver {
            link,
            activity: cfg.activity,
            target: self.target.clone(),
        }))
    }
}

struct FakeDriver<'a> {
    link: &'a mut dyn Link,
    activity: Activity,
    target: Vec<u8>,
}

impl SyncHost for FakeDriver<'_> {
    fn link(&mut self) -> &mut dyn Link {
        &mut *self.link
    }
    fn progress(&mut self) -> Result<usize, DriveError> {
        std::thread::yield_now();
        Ok(0)
    }
    fn start_size(&mut self, _: u64) {}
    fn activity(&self) -> Activity {
        self.activity
    }
    fn take_stashed_post_run(&mut self) -> Option<Message> {
        None
    }
}

impl BwDriver for FakeDriver<'_> {
    type Error = DriveError;
    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        peer::barrier(self, point, size)
    }
    fn iteration(&mut self, _: u64) -> Result<Step, DriveError> {
        Ok(Step::Done)
    }
    fn exchange(&mut self, size: u64, mine: Measure) -> Result<Measure, DriveError> {
        peer::exchange(self, size, mine)
    }
}

impl LatDriver for FakeDriver<'_> {
    type Error = DriveError;
    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        peer::barrier(self, point, size)
    }
    fn measure(&mut self, _: u64) -> Result<u64, DriveError> {
        Ok(1000)
    }
    fn exchange(&mut self, size: u64, ops: u64) -> Result<u64, DriveError> {
        Ok(peer::exchange(self, size, Measure { elapsed_ns: 0, ops })?.ops)
    }
}

impl Drive for FakeDriver<'_> {
    /// The fake has one region, its target, whatever is asked for.
    fn settle_region(
        &mut self,
        _: RegionId,
        done: &mut dyn FnMut(&[u8]) -> bool,
        _: Duration,
    ) -> Result<Duration, DriveError> {
        let _ = done(&self.target);
        Ok(Duration::ZERO)
    }
    fn fill(&mut self, _: RegionId, f: &mut dyn FnMut(&mut [u8])) -> Result<(), DriveError> {
        f(&mut self.target);
        Ok(())
    }
    fn region_len(&self, _: RegionId) -> u64 {
        self.target.len() as u64
    }
    fn received(&self) -> Vec<(u64, u64)> {
        Vec::new()
    }
    fn link(&mut self) -> &mut dyn Link {
        &mut *self.link
    }
    fn finish(self: Box<Self>) {}
}

/// Records what a side was told.
#[derive(Default)]
struct Log {
    phases: Vec<Phase>,
    rows: usize,
    ended: bool,
}

impl Sink for Log {
    fn event(&mut self, e: Event<'_>) {
        match e {
            Event::Phase(p) => self.phases.push(p),
            Event::Row { .. } => self.rows += 1,
            Event::End { .. } => self.ended = true,
            _ => {}
        }
    }
}

struct Pair {
    client: (Result<Report, Failure>, Log),
    server: (Result<Report, Failure>, Log),
}

/// Runs both sides of `spec` on fakes, each in its own thread.
fn pair(spec: TestSpec, links: (FakeLink, FakeLink), nets: (FakeNet, FakeNet), envs: (Env, Env)) -> Pair {
    let (mut cl, mut sl) = links;
    let (mut cn, mut sn) = nets;
    let (ce, se) = envs;
    let tool = spec.tool;
    let server = std::thread::spawn(move || {
        let mut log = Log::default();
        let r = server_run(tool, &se, &mut sn, &mut sl, &mut log);
        (r, log)
    });
    let mut log = Log::default();
    let fam = family::plan(&spec, &ce).unwrap();
    let r = client_run(spec, &*fam, LatClock::CALL, &ce, &mut cn, &mut cl, &mut log);
    // the client's link goes with it, as a process's would
    drop(cl);
    Pair {
        client: (r, log),
        server: server.join().unwrap(),
    }
}

fn healthy(spec: TestSpec) -> Pair {
    pair(spec, link_pair(None, None), Default::default(), Default::default())
}

fn bw_spec() -> TestSpec {
    let mut s = TestSpec::new(Tool::WriteBw);
    s.iterations = 3;
    s.list_size = 4;
    s.min_size = 8;
    s.max_size = 32;
    s
}

#[test]
fn a_healthy_run_passes_every_phase_on_both_sides() {
    let p = healthy(bw_spec());
    let (c, s) = (p.client.0.unwrap(), p.server.0.unwrap());
    assert_eq!((c.rows.len(), s.rows.len()), (3, 3), "sizes 8, 16, 32");
    for (row, size) in c.rows.iter().zip([8, 16, 32]) {
        let Row::Bw(r) = row else { panic!("{row:?}") };
        assert_eq!((r.size, r.iterations, r.own.ops), (size, 3, 12));
    }
    let Row::Bw(sr) = &s.rows[0] else { panic!() };
    assert_eq!(
        (sr.own.ops, sr.peer.ops),
        (0, 12),
        "the passive server reports the client's count"
    );
    let want = [Phase::Config, Phase::Endpoint, Phase::Ready, Phase::Run];
    assert_eq!(p.client.1.phases, want);
    assert_eq!(p.server.1.phases, want);
    assert_eq!((p.client.1.rows, p.server.1.rows), (3, 3));
    assert!(p.client.1.ended && p.server.1.ended);
    assert_eq!(c.run.role(), Role::Client);
}

/// Each side's banner names both sides' buffers: its own, and the peer's
/// from the Endpoint message (here the server's RX buffer is on a GPU).
#[test]
fn both_banners_name_where_each_sides_buffers_live() {
    let server_net = FakeNet {
        side: Some(SideMem {
            tx: Mem::System,
            rx: Mem::Gpu { index: 1 },
            gpu_type: Some("NVIDIA".into()),
        }),
        ..Default::default()
    };
    for tool in [Tool::WriteBw, Tool::WriteLat] {
        let mut spec = bw_spec();
        spec.tool = tool;
        let p = pair(
            spec,
            link_pair(None, None),
            (FakeNet::default(), server_net.clone()),
            Default::default(),
        );
        let (c, s) = (p.client.0.unwrap(), p.server.0.unwrap());
        for (report, own_gpus) in [(&c, None), (&s, Some(2))] {
            let (client, server, found) = match &report.run {
                RunDesc::Bw(r) => (&r.client_mem, &r.server_mem, r.gpus_found),
                RunDesc::Lat(r) => (&r.client_mem, &r.server_mem, r.gpus_found),
                other => panic!("{other:?}"),
            };
            assert_eq!(client, &SideMem::system(), "{tool:?}");
            assert_eq!(server.rx, Mem::Gpu { index: 1 }, "{tool:?}");
            assert_eq!(server.gpu_type.as_deref(), Some("NVIDIA"));
            // `Found N GPU(s)` is what this side's own runtime reported
            assert_eq!(found, own_gpus, "{tool:?}");
        }
    }
}

#[test]
fn every_family_runs_on_the_fakes() {
    for tool in [Tool::SendBw, Tool::ReadLat, Tool::WriteLat] {
        let mut s = bw_spec();
        s.tool = tool;
        let p = healthy(s);
        assert!(p.client.0.is_ok() && p.server.0.is_ok(), "{tool:?}");
    }
}

#[test]
fn send_lat_refuses_counts_that_disagree() {
    // the fake server echoes nothing, so the client's check must fire
    let mut s = bw_spec();
    s.tool = Tool::SendLat;
    let p = healthy(s);
    let f = expect_failure(p.client.0);
    assert_eq!(
        f.error.to_string(),
        "client and server disagree on size 8: the client sent 3 messages, the server echoed 0"
    );
    assert_eq!(f.side, Side::Local);
}

fn expect_failure(r: Result<Report, Failure>) -> Failure {
    match r {
        Ok(rep) => panic!("expected a failure, got {} rows", rep.rows.len()),
        Err(f) => f,
    }
}

#[test]
fn a_peer_lost_in_any_phase_is_named_by_the_survivor() {
    let phases = [
        Phase::Config,
        Phase::Endpoint,
        Phase::Ready,
        Phase::PreRun,
        Phase::PostRun,
        Phase::Results,
    ];
    for phase in phases {
        for server_dies in [true, false] {
            let links = if server_dies {
                link_pair(None, Some((phase, 0)))
            } else {
                link_pair(Some((phase, 0)), None)
            };
            let p = pair(bw_spec(), links, Default::default(), Default::default());
            let survivor = if server_dies { p.client.0 } else { p.server.0 };
            let f = expect_failure(survivor);
            let what = format!("{phase:?}, server dies: {server_dies}");
            assert_eq!(f.side, Side::Peer, "{what}: {}", f.error);
            assert_eq!(f.kind, FailureKind::Runtime, "{what}");
            assert!(
                f.error
                    .to_string()
                    .starts_with("peer closed the control connection during"),
                "{what}: {}",
                f.error
            );
            // a peer lost once the run is described keeps the description
            let described = !matches!(phase, Phase::Config | Phase::Endpoint);
            assert_eq!(f.run.is_some(), described, "{what}");
        }
    }
}

#[test]
fn a_peer_lost_after_the_first_size_keeps_that_size() {
    // the server answers the first size's results (a receive and a send),
    // then vanishes on its next call in that phase
    let p = pair(
        bw_spec(),
        link_pair(None, Some((Phase::Results, 2))),
        Default::default(),
        Default::default(),
    );
    let f = expect_failure(p.client.0);
    assert_eq!(f.side, Side::Peer, "{}", f.error);
    assert_eq!(f.rows.len(), 1, "size 8 finished before the loss");
    assert_eq!(f.rows[0].size(), 8);
}

/// A provider whose two endpoints in one process crash once both send
/// over 4096 B (libfabric 2.5+'s shm): with both ends here (`--local`),
/// send-lat and `-b` above that size are refused before the run, as
/// unavailable and naming the defect; one-way tools, sizes within the
/// limit, and two processes run.
#[test]
fn a_defect_of_two_endpoints_in_one_process_refuses_only_two_way_traffic_above_its_size() {
    let defect = Some((4096, "it crashes"));
    let net = || FakeNet {
        same_process_defect: defect,
        ..Default::default()
    };
    let local = || Env {
        same_process: true,
        ..Env::default()
    };
    let run = |tool: Tool, bidirectional: bool, max_size: u64, env: Env| {
        let mut spec = bw_spec();
        (spec.tool, spec.bidirectional, spec.max_size) = (tool, bidirectional, max_size);
        spec.min_size = 4096.min(max_size);
        pair(spec, link_pair(None, None), (net(), net()), (env.clone(), env))
    };
    for (tool, bidirectional) in [(Tool::SendLat, false), (Tool::WriteBw, true), (Tool::SendBw, true)] {
        let c = expect_failure(run(tool, bidirectional, 8192, local()).client.0);
        assert_eq!(
            (c.side, c.kind, c.phase),
            (Side::Local, FailureKind::Unavailable, Phase::Config)
        );
        assert_eq!(
            c.error.to_string(),
            format!(
                "provider 'fake' cannot run {}{} over 4096 B with both ends in this process (--local) safely: it crashes",
                tool.subcommand(),
                if bidirectional { " -b" } else { "" }
            )
        );
    }
    // what stays allowed: one way, at the limit, or two processes (the
    // fake send-lat server echoes nothing, so only its config is checked)
    let ok = |p: Pair| p.client.0.is_ok() || p.client.1.phases.contains(&Phase::Run);
    assert!(ok(run(Tool::WriteBw, false, 8192, local())));
    assert!(ok(run(Tool::WriteLat, false, 8192, local())));
    assert!(ok(run(Tool::WriteBw, true, 4096, local())));
    assert!(ok(run(Tool::WriteBw, true, 8192, Env::default())));
    assert!(ok(run(Tool::SendLat, false, 8192, Env::default())));
}

#[test]
fn a_failure_on_one_side_reaches_the_other_as_the_peers() {
    let nets = (
        FakeNet::default(),
        FakeNet {
            fail_open: true,
            ..Default::default()
        },
    );
    let p = pair(bw_spec(), link_pair(None, None), nets, Default::default());
    let s = expect_failure(p.server.0);
    assert_eq!(
        (s.side, s.kind, s.phase),
        (Side::Local, FailureKind::Unavailable, Phase::Config)
    );
    // what the server cannot do, the pair cannot do: unavailable here too
    let c = expect_failure(p.client.0);
    assert_eq!((c.side, c.kind), (Side::Peer, FailureKind::Unavailable));
    assert_eq!(
        c.error.to_string(),
        "peer failed during config: provider 'fake' has no domain 'nic9' (its domains: nic0)"
    );
}

#[test]
fn a_server_refuses_another_provider_and_another_tool() {
    let envs = (
        Env::default(),
        Env {
            provider: Some(fabdiag_model::Provider::named("verbs")),
            ..Env::default()
        },
    );
    let mut spec = bw_spec();
    spec.provider = "ignored: the client fills it in".into();
    let p = pair(spec, link_pair(None, None), Default::default(), envs);
    let c = expect_failure(p.client.0);
    assert!(
        c.error
            .to_string()
            .contains("provider mismatch: the client uses 'fake', this server was given -P verbs"),
        "{}",
        c.error
    );
    // a client whose spec names another tool than its hello
    let (mut cl, mut sl) = link_pair(None, None);
    let server = std::thread::spawn(move || {
        server_run(
            Tool::ReadBw,
            &Env::default(),
            &mut FakeNet::default(),
            &mut sl,
            &mut Log::default(),
        )
    });
    let params = bw_spec().to_wire().unwrap();
    cl.send(Phase::Config, &Message::Config { params }).unwrap();
    let f = expect_failure(server.join().unwrap());
    assert_eq!(
        f.error.to_string(),
        "client runs cxi_write_bw, this server runs cxi_read_bw"
    );
    assert!(matches!(cl.expect(Phase::Endpoint), Err(ProtoError::Peer { .. })));
}

#[test]
fn an_invalid_spec_from_the_client_is_refused() {
    let (mut cl, mut sl) = link_pair(None, None);
    let server = std::thread::spawn(move || {
        server_run(
            Tool::WriteBw,
            &Env::default(),
            &mut FakeNet::default(),
            &mut sl,
            &mut Log::default(),
        )
    });
    let mut bad = bw_spec();
    bad.list_size = 0;
    cl.send(
        Phase::Config,
        &Message::Config {
            params: bad.to_wire().unwrap(),
        },
    )
    .unwrap();
    let f = expect_failure(server.join().unwrap());
    assert!(matches!(*f.error, SessionError::Spec(_)), "{}", f.error);
    assert!(f.error.to_string().starts_with("client sent invalid run parameters"));
}

/// An atomic_bw spec whose server target holds the value `n` iterations
/// would leave (and `extra` is the server's test hook).
fn atomic_pair(n_in_memory: u64, extra: u64) -> Pair {
    let mut spec = TestSpec::new(Tool::AtomicBw);
    spec.iterations = 5;
    spec.list_size = 2;
    let scheme = Scheme::new(spec.op, spec.cswap, spec.ty);
    let mut target = vec![0u8; (AMO_STRIDE * spec.list_size) as usize];
    for slot in target.chunks_exact_mut(AMO_STRIDE as usize) {
        scheme.expected(n_in_memory).encode(spec.ty, slot);
    }
    let nets = (
        FakeNet::default(),
        FakeNet {
            target,
            ..Default::default()
        },
    );
    let mut server_env = Env::default();
    server_env.hooks.amo_extra_iterations = extra;
    pair(spec, link_pair(None, None), nets, (Env::default(), server_env))
}

#[test]
fn atomic_verdicts_are_traded_and_a_wrong_value_fails_both_sides() {
    let p = atomic_pair(5, 0);
    let c = p.client.0.unwrap();
    let Row::AmoBw(a) = &c.rows[0] else { panic!() };
    assert_eq!(a.verification.len(), 1, "only the server's target was hit");
    assert!(a.verification[0].ok && a.verification[0].target == "server");

    let p = atomic_pair(5, 1);
    for f in [expect_failure(p.client.0), expect_failure(p.server.0)] {
        assert!(matches!(*f.error, SessionError::Verify(_)), "{}", f.error);
        assert!(
            f.error
                .to_string()
                .starts_with("final value check failed on the server's target: after 6 iterations"),
            "{}",
            f.error
        );
        assert_eq!(f.rows.len(), 1, "the measured row is kept");
    }
}

/// The real fabric driver with no control connection at all: one endpoint
/// writes into its own target through the provider, the `Alone` link
/// standing in for the peer (the shape of a single-process loopback test).
#[test]
fn the_driver_runs_with_no_peer_process() {
    use crate::net::FabricNet;
    use fabdiag_engine::{run_size, Mode};
    use fabdiag_proto::Alone;
    fabdiag_fabric::load().expect("libfabric must be installed (scripts/install-deps.sh)");
    for provider in ["tcp", "shm"] {
        let mut spec = TestSpec::new(Tool::WriteBw);
        spec.list_size = 16;
        spec.min_size = 4096;
        spec.max_size = 4096;
        let env = Env::default();
        let fam = family::plan(&spec, &env).unwrap();
        // one side plays both roles: both buffers in use
        let mut plan = fam.memory(Role::Client);
        plan.target.used = true;
        let near = Some(IpAddr::from([127, 0, 0, 1]));
        let mut net = FabricNet::default();
        let mut port = net
            .open(
                Some(&fabdiag_model::Provider::named(provider)),
                &env,
                Capability::RmaWrite,
                near,
                &plan,
            )
            .unwrap();
        let me = port.advertise().unwrap();
        port.connect(me).unwrap();
        let mut link = Alone::default();
        let mut d = port
            .driver(&mut link, fam.driver(Role::Client, LatClock::CALL))
            .unwrap();
        let r = run_size(&mut *d, Activity::Active, Mode::Iterations(50), 4096, 16).unwrap();
        assert_eq!((r.iterations, r.own.ops, r.peer.ops), (50, 800, 0), "{provider}");
        assert!(r.bw_mb_s > 0.0, "{provider}");
        // the writes landed: the target holds the initiator's pattern
        let mut target = Vec::new();
        d.settle(
            &mut |t| {
                target = t.to_vec();
                true
            },
            Duration::ZERO,
        )
        .unwrap();
        assert!(
            target[..16 * 4096].iter().all(|&b| b == crate::memory::INITIATOR_FILL),
            "{provider}"
        );
        d.finish();
    }
}

/// Every atomic the originals allow reaches libfabric by its own enum
/// values, looked up by name in the headers (no table order to keep).
#[test]
fn every_allowed_atomic_has_libfabric_values() {
    use fabdiag_engine::amo::{validate, CSWAP_OPS, OPS, TYPES};
    let mut seen = std::collections::HashSet::new();
    for ty in TYPES {
        for op in OPS {
            for cs in CSWAP_OPS {
                if validate(op, cs, ty).is_err() {
                    continue;
                }
                for fetching in [false, true] {
                    let spec = crate::family::atomic_spec(op, cs, ty, fetching)
                        .unwrap_or_else(|e| panic!("{op:?} {cs:?} {ty:?}: {e}"));
                    assert_eq!(spec.size, ty.size());
                    seen.insert(format!("{:?}/{:?}", spec.datatype, spec.op));
                }
            }
        }
    }
    // 13 types; MIN..BXOR, write, the 6 compares and mswap: distinct values
    assert!(seen.len() > 100, "{}", seen.len());
    assert!(fabdiag_fabric::atomic_op("FI_NOT_AN_OP").is_err());
}
