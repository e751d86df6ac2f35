//! The client/server choreography, written once for every tool:
//!
//! ```text
//! client: spec valid? → family → clock → provider check (no traffic yet)
//!         → connect → hello → open endpoint + memory → Config(spec) ─┐
//! server: listen → accept → hello (one tool, or any) → Config ←──────┘
//!         → spec valid? → family → same provider → open endpoint
//! both:   Endpoint exchange (client first) → banner → Ready barrier
//!         → family.measure: per size pre-run barrier, timed loop,
//!           post-run barrier, results traded (driver + peer sync)
//!         → finish → End; a failure on this side is told to the peer
//! ```
//!
//! Everything that differs between tools is in `crate::family`. Nothing
//! here prints: progress goes to the `Sink`, the outcome is returned.

use crate::counters;
use crate::driver::LatClock;
use crate::env::Env;
use crate::family::{self, Facts, FamilyRun, Rows};
use crate::memory::MemoryPlan;
use crate::net::{FabricNet, Net, Port};
use crate::outcome::{Failure, Report, SessionError};
use crate::sink::{Event, Silent, Sink};
use fabdiag_clock::{RawClock, RATE_SPAN};
use fabdiag_fabric::FabricError;
use fabdiag_model::{ClockKind, Provider, ServeLimits, TestSpec};
use fabdiag_model::{PairCounters, Role, Row, RunDesc, Tool};
use fabdiag_proto::auth::{Auth, Method};
use fabdiag_proto::Link;
use fabdiag_proto::{Control, Hello, Listener, Message, Phase, ProtoError, MAGIC, PROTOCOL};
use std::net::TcpStream;

/// fabdiag's version, told in every hello (MAJOR.MINOR must match).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A client's hello for `tool`; `auth`: how it will prove who it is.
pub fn hello(tool: Tool, auth: Option<Method>) -> Hello {
    Hello {
        magic: MAGIC.into(),
        protocol: PROTOCOL,
        tool: tool.original_name().into(),
        version: VERSION.into(),
        auth: auth.is_some(),
        auth_method: auth.unwrap_or_default(),
    }
}

/// Runs `spec` as the client of the server at `host:port`.
pub fn client(spec: TestSpec, env: &Env, host: &str, port: u16, sink: &mut dyn Sink) -> Result<Report, Failure> {
    client_on(
        &mut FabricNet::default(),
        spec,
        env,
        || fabdiag_proto::connect(host, port),
        sink,
    )
}

/// A client over `net`, on the control connection `connect` makes.
pub(crate) fn client_on(
    net: &mut dyn Net,
    spec: TestSpec,
    env: &Env,
    connect: impl FnOnce() -> Result<Control, ProtoError>,
    sink: &mut dyn Sink,
) -> Result<Report, Failure> {
    let (fam, clock) = prepare(&spec, env, net, sink)?;
    sink.event(Event::Phase(Phase::Connect));
    let mut ctl = connect().map_err(|e| Failure::early(Phase::Connect, e))?;
    watch_peer(&ctl, env);
    sink.event(Event::Phase(Phase::Hello));
    ctl.handshake(&hello(spec.tool, env.auth.as_ref().map(Auth::method)))
        .map_err(|e| Failure::early(Phase::Hello, e))?;
    if let Some(with) = &env.auth {
        ctl.authenticate_as_client(with)
            .map_err(|e| Failure::early(Phase::Hello, e))?;
    }
    client_run(spec, &*fam, clock, env, net, &mut ctl, sink)
}

/// Has `env`'s peer watch (if any) look after `ctl`.
fn watch_peer(ctl: &Control, env: &Env) {
    if let Some(w) = &env.peer {
        ctl.watched_by(w);
    }
}

/// Can this machine run `spec` as `env` asks: the spec valid, the
/// provider and domain present with the test's capability (device memory
/// included when `-t/-r` ask for it), the clock usable? What a client
/// settles before connecting; a sweep's rank 0 asks it before any pair
/// test, so a setting no rank can run ends the sweep at once.
pub fn check(spec: &TestSpec, env: &Env) -> Result<(), Failure> {
    prepare(spec, env, &mut FabricNet::default(), &mut Silent).map(|_| ())
}

/// Has this machine the provider and domain a server was told to use
/// (`-P`, `-d`)? Asked before it listens, as the originals open their
/// device before any TCP activity: a mistyped device fails at once, not
/// when the first client arrives. Which capability a test needs is the
/// client's to say, so any RDM endpoint of them will do here.
pub fn check_server(env: &Env) -> Result<(), Failure> {
    if env.provider.is_none() && env.device.is_none() {
        return Ok(());
    }
    fabdiag_fabric::discover(&fabdiag_fabric::Query {
        provider: env.provider.as_ref().map(|p| p.name().to_string()),
        domain: env.device.clone(),
        capability: None,
    })
    .map(|_| ())
    .map_err(|e| Failure::early(Phase::Connect, e))
}

/// What a client settles before any network traffic: the spec, the
/// family, the clock (cycle-counter calibration takes 0.2 s and can fail on
/// its own), and whether this side's provider can run the test at all.
fn prepare(
    spec: &TestSpec,
    env: &Env,
    net: &mut dyn Net,
    sink: &mut dyn Sink,
) -> Result<(Box<dyn FamilyRun>, LatClock), Failure> {
    let early = |e: SessionError| Failure::early(Phase::Connect, e);
    spec.validate().map_err(|e| early(e.into()))?;
    let fam = family::plan(spec, env).map_err(early)?;
    let clock = match spec.clock {
        // (the counter's rate takes RATE_SPAN to measure: only where
        // something is timed)
        ClockKind::ClockGettime if spec.tool.is_latency() => LatClock::Raw(RawClock::measured(RATE_SPAN)),
        ClockKind::ClockGettime => LatClock::CALL,
        ClockKind::Cycles => {
            let c = fabdiag_clock::calibrate(env.ignore_cpu_freq_mismatch).map_err(|e| early(e.into()))?;
            if let Some(w) = &c.warning {
                sink.event(Event::Warning(w));
            }
            LatClock::Cycles(c)
        }
    };
    net.check(env, capability(&*fam, &fam.memory(Role::Client), env))
        .map_err(early)?;
    Ok((fam, clock))
}

/// What this side's provider must offer: the family's capability, with
/// device memory (FI_HMEM) when `-t/-r` put one of `plan`'s buffers on a
/// GPU.
fn capability(fam: &dyn FamilyRun, plan: &MemoryPlan, env: &Env) -> fabdiag_fabric::Capability {
    let c = fam.capability();
    if plan.gpu(env.gpu.as_ref()).is_some() {
        c.with_device_memory()
    } else {
        c
    }
}

/// This side's endpoint for `fam` as `role`: its buffers, on the provider
/// that can run the test with them, in the domain that reaches the peer.
fn open<'n>(
    net: &'n mut dyn Net,
    provider: Option<&Provider>,
    fam: &dyn FamilyRun,
    role: Role,
    env: &Env,
    link: &dyn Link,
) -> Result<Box<dyn Port + 'n>, SessionError> {
    let plan = fam.memory(role);
    net.open(provider, env, capability(fam, &plan, env), link.local_ip(), &plan)
}

/// Waits on `listener` for one client (only of `only`, if given; others
/// are turned away and reported) and runs its test.
pub fn serve_one(listener: &Listener, only: Option<Tool>, env: &Env, sink: &mut dyn Sink) -> Result<Report, Failure> {
    sink.event(Event::Listening(listener.port()));
    let (ctl, hello) = listener
        .accept(only.map(Tool::original_name), VERSION, &mut |r| {
            sink.event(Event::Rejected {
                peer: &r.peer,
                reason: &r.reason,
            })
        })
        .map_err(|e| Failure::early(Phase::Connect, e))?;
    serve_control(&mut FabricNet::default(), ctl, &hello, env, sink)
}

/// Serves one connection accepted elsewhere (a `fabdiag serve` worker):
/// any tool of this version.
pub fn serve_stream(stream: TcpStream, env: &Env, sink: &mut dyn Sink) -> Result<Report, Failure> {
    serve_stream_on(&mut FabricNet::default(), stream, None, env, sink)
}

/// Serves one connection over `net`: a client of `only`, or of any tool.
pub(crate) fn serve_stream_on(
    net: &mut dyn Net,
    stream: TcpStream,
    only: Option<Tool>,
    env: &Env,
    sink: &mut dyn Sink,
) -> Result<Report, Failure> {
    let mut ctl = Control::server(stream).map_err(|e| Failure::early(Phase::Connect, e))?;
    let hello = ctl
        .answer_hello(only.map(Tool::original_name), VERSION)
        .map_err(|e| Failure::early(Phase::Hello, e))?;
    serve_control(net, ctl, &hello, env, sink)
}

fn serve_control(
    net: &mut dyn Net,
    mut ctl: Control,
    hello: &Hello,
    env: &Env,
    sink: &mut dyn Sink,
) -> Result<Report, Failure> {
    let Some(tool) = Tool::from_original(&hello.tool).filter(|t| t.has_server()) else {
        let e = SessionError::Mismatch(format!("this server runs no tool named '{}'", hello.tool));
        ctl.send_error(Phase::Hello, &e.to_string(), e.kind());
        return Err(Failure::early(Phase::Hello, e));
    };
    watch_peer(&ctl, env);
    // a client that cannot prove who it is is a stranger: not accepted
    let theirs = hello.auth.then_some(hello.auth_method);
    match (&env.auth, theirs) {
        (Some(with), Some(m)) if with.method() == m => ctl
            .authenticate_client(with)
            .map_err(|e| Failure::early(Phase::Hello, e))?,
        (ours, _) => {
            if let Some(why) = auth_mismatch(ours.as_ref().map(Auth::method), theirs) {
                // (a client without proof goes on to send its run parameters
                // and endpoint: the refusal reads them while the client reads it)
                let e = SessionError::Refused(why);
                ctl.refuse(Phase::Hello, &e.to_string(), fabdiag_proto::ErrorClass::Runtime);
                return Err(Failure::early(Phase::Hello, e));
            }
        }
    }
    sink.event(Event::Accepted {
        peer: ctl.peer_addr(),
        tool,
    });
    server_run(tool, env, net, &mut ctl, sink)
}

/// Why a server that authenticates by `server` (None: not at all) and a
/// client that offers `client` cannot go on; None when they agree.
fn auth_mismatch(server: Option<Method>, client: Option<Method>) -> Option<String> {
    match (server, client) {
        (Some(Method::Key), None) => Some(
            "this server admits only clients that prove its shared key: give the client --auth-key with the server's key file".into(),
        ),
        (Some(Method::Munge), None) => Some(
            "this server admits only clients with a MUNGE credential: give the client --auth-munge".into(),
        ),
        (None, Some(Method::Key)) => Some(
            "this server has no shared key and cannot prove one; the client asked for it (--auth-key): give the server the same --auth-key".into(),
        ),
        (None, Some(Method::Munge)) => Some(
            "this server does not check MUNGE credentials and cannot prove one; the client asked for it (--auth-munge): give the server --auth-munge".into(),
        ),
        (Some(s), Some(c)) if s != c => Some(format!(
            "this server authenticates with {} ({}), not {}: give the client {}",
            s.what(),
            s.option(),
            c.what(),
            s.option()
        )),
        _ => None,
    }
}

/// gpu_loopback_bw: one endpoint writes into its own target. There is no
/// peer process and no control connection; `Alone` answers as a peer that
/// initiates nothing, so the client's choreography runs unchanged.
pub fn loopback(spec: TestSpec, env: &Env, sink: &mut dyn Sink) -> Result<Report, Failure> {
    let env = &Env {
        peer_in_process: true,
        ..env.clone()
    };
    let mut net = FabricNet::default();
    let (fam, clock) = prepare(&spec, env, &mut net, sink)?;
    client_run(
        spec,
        &*fam,
        clock,
        env,
        &mut net,
        &mut fabdiag_proto::Alone::default(),
        sink,
    )
}

/// `--local`: a server thread on a free loopback port and a client here.
pub fn local(spec: TestSpec, env: &Env, sink: &mut dyn Sink) -> Result<Report, Failure> {
    let env = &Env {
        same_process: true,
        peer_in_process: true,
        own_fd_table: false,
        ..env.clone()
    };
    // the provider is checked before starting a server that would wait
    // forever (the client reuses what this check discovered)
    let mut net = FabricNet::default();
    prepare(&spec, env, &mut net, &mut Silent)?;
    let listener = Listener::bind_loopback().map_err(|e| Failure::early(Phase::Connect, e))?;
    let port = listener.port();
    let (tool, senv) = (spec.tool, env.clone());
    let server = std::thread::Builder::new()
        .name("fabdiag-local-server".into())
        .spawn(move || {
            serve_one(&listener, Some(tool), &senv, &mut Silent)
                .map(|_| ())
                .map_err(|f| f.to_string())
        })
        .map_err(|e| {
            Failure::early(
                Phase::Connect,
                SessionError::Internal(format!("cannot start the local server: {e}")),
            )
        })?;
    let report = client_on(&mut net, spec, env, || fabdiag_proto::connect("127.0.0.1", port), sink)?;
    let problem = match server.join() {
        Ok(Ok(())) => return Ok(report),
        Ok(Err(msg)) => msg,
        Err(_) => "its thread panicked".to_string(),
    };
    Err(Failure::new(
        Phase::Teardown,
        SessionError::LocalServer(problem),
        Some(report.run),
        report.rows,
    ))
}

/// Where a session is: the phase, and what it has to show so far.
struct Progress {
    phase: Phase,
    run: Option<RunDesc>,
    rows: Vec<Row>,
    /// The counters read before the measurement, and both sides' changes
    /// once read after it (the peer's once traded).
    before: Option<counters::Before>,
    counters: Option<PairCounters>,
}

impl Progress {
    fn enter(&mut self, phase: Phase, sink: &mut dyn Sink) {
        self.phase = phase;
        sink.event(Event::Phase(phase));
    }

    /// The session's outcome; a failure of ours is told to the peer.
    fn conclude(self, r: Result<(), SessionError>, link: &mut dyn Link) -> Result<Report, Failure> {
        // a run that failed after its first reading keeps this side's change
        let counters = self.counters.or_else(|| {
            self.before.as_ref().map(|b| PairCounters {
                local: counters::after(b),
                peer: None,
            })
        });
        match (r, self.run) {
            (Ok(()), Some(run)) => Ok(Report {
                run,
                rows: self.rows,
                counters,
            }),
            (Ok(()), None) => Err(Failure::new(
                self.phase,
                SessionError::Internal("run ended without a description".into()),
                None,
                self.rows,
            )),
            (Err(e), run) => {
                if !e.from_peer() {
                    link.send_error(self.phase, &e.to_string(), e.kind());
                }
                let mut f = Failure::new(self.phase, e, run, self.rows);
                f.counters = counters.map(Box::new);
                Err(f)
            }
        }
    }
}

fn start() -> Progress {
    Progress {
        phase: Phase::Config,
        run: None,
        rows: Vec::new(),
        before: None,
        counters: None,
    }
}

/// The client after the hello: opens its endpoint, sends the spec, runs.
pub(crate) fn client_run(
    spec: TestSpec,
    fam: &dyn FamilyRun,
    clock: LatClock,
    env: &Env,
    net: &mut dyn Net,
    link: &mut dyn Link,
    sink: &mut dyn Sink,
) -> Result<Report, Failure> {
    let mut p = start();
    p.enter(Phase::Config, sink);
    let r = (|| {
        let mut port = open(net, env.provider.as_ref(), fam, Role::Client, env, link)?;
        if let Some(w) = port.note() {
            sink.event(Event::Warning(w));
        }
        fam.check(&*port)?;
        if env.same_process {
            same_process_check(&spec, &*port)?;
        }
        link.send(
            Phase::Config,
            &Message::Config {
                params: spec.to_wire_opened(port.provider())?,
            },
        )?;
        Side::new(Role::Client, fam, &clock, env, link, sink).run(&mut *port, &mut p)
    })();
    p.conclude(r, link)
}

/// Refuses a run whose two ends, in this one process, would both send
/// more than the provider's known defect allows (send-lat's ping-pong,
/// `-b`): the process would die inside the provider with nothing said.
fn same_process_check(spec: &TestSpec, port: &dyn Port) -> Result<(), SessionError> {
    let two_way = spec.bidirectional || spec.tool == Tool::SendLat;
    match port.same_process_defect() {
        Some((limit, why)) if two_way && spec.max_size > limit => Err(FabricError::KnownDefect {
            provider: port.provider().into(),
            what: format!(
                "{}{} over {limit} B with both ends in this process (--local)",
                spec.tool.subcommand(),
                if spec.bidirectional { " -b" } else { "" }
            ),
            why: why.into(),
        }
        .into()),
        _ => Ok(()),
    }
}

/// The server after the hello: takes the client's spec for `tool`, opens
/// the same provider, runs.
pub(crate) fn server_run(
    tool: Tool,
    env: &Env,
    net: &mut dyn Net,
    link: &mut dyn Link,
    sink: &mut dyn Sink,
) -> Result<Report, Failure> {
    let mut p = start();
    p.enter(Phase::Config, sink);
    let r = (|| {
        let spec = match link.expect(Phase::Config)? {
            Message::Config { params } => TestSpec::from_wire(params)?,
            other => {
                return Err(ProtoError::Unexpected {
                    phase: Phase::Config,
                    got: other.kind().into(),
                }
                .into())
            }
        };
        if spec.tool != tool {
            return Err(SessionError::Mismatch(format!(
                "client runs {}, this server runs {}",
                spec.tool.original_name(),
                tool.original_name()
            )));
        }
        spec.validate()?;
        let theirs = Provider::named(&spec.provider);
        if let Some(mine) = env.provider.as_ref() {
            if !theirs.matches(mine.name()) {
                return Err(SessionError::Mismatch(format!(
                    "provider mismatch: the client uses '{theirs}', this server was given -P {mine}"
                )));
            }
        }
        let fam = family::plan(&spec, env)?;
        within_limits(&spec, fam.memory(Role::Server).bytes(), &env.limits)?;
        let mut port = open(net, Some(&theirs), &*fam, Role::Server, env, link)?;
        if let Some(w) = port.note() {
            sink.event(Event::Warning(w));
        }
        fam.check(&*port)?;
        Side::new(Role::Server, &*fam, &LatClock::CALL, env, link, sink).run(&mut *port, &mut p)
    })();
    p.conclude(r, link)
}

/// Whether a server's `limits` allow a test of `spec` that needs `bytes`
/// of buffers here: the refusal names the figure, the limit and its
/// option. A duration run's length is known and judged here; an
/// iteration run's is not, and `fabdiag serve` ends one that runs past
/// the limit.
fn within_limits(spec: &TestSpec, bytes: u64, limits: &ServeLimits) -> Result<(), SessionError> {
    if let Some(max) = limits.max_memory_bytes.filter(|&m| bytes > m) {
        return Err(SessionError::Refused(format!(
            "this server allows a test at most {} of buffers (fabdiag serve --max-memory); this one needs {}",
            bytes_text(max),
            bytes_text(bytes)
        )));
    }
    if let (Some(max), Some(s)) = (limits.max_test_s, spec.duration_run_s()) {
        if s <= max {
            return Ok(());
        }
        return Err(SessionError::Refused(format!(
            "this server runs a test at most {max} s (fabdiag serve --max-test-seconds); this one asks for {s} s"
        )));
    }
    Ok(())
}

/// Bytes as a person reads them: "64 MiB", "1.5 GiB", "4096 B".
fn bytes_text(b: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if b >= size {
            let v = b as f64 / size as f64;
            return if v.fract() == 0.0 {
                format!("{v:.0} {unit}")
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{b} B")
}

/// One side of a session once its endpoint is open.
struct Side<'a> {
    role: Role,
    fam: &'a dyn FamilyRun,
    clock: &'a LatClock,
    env: &'a Env,
    link: &'a mut dyn Link,
    sink: &'a mut dyn Sink,
}

impl<'a> Side<'a> {
    fn new(
        role: Role,
        fam: &'a dyn FamilyRun,
        clock: &'a LatClock,
        env: &'a Env,
        link: &'a mut dyn Link,
        sink: &'a mut dyn Sink,
    ) -> Self {
        Side {
            role,
            fam,
            clock,
            env,
            link,
            sink,
        }
    }

    /// From the endpoint exchange to the end of the run.
    fn run(&mut self, port: &mut dyn Port, p: &mut Progress) -> Result<(), SessionError> {
        p.enter(Phase::Endpoint, self.sink);
        let ours = port.advertise()?;
        let theirs = if self.role == Role::Client {
            self.link.send(Phase::Endpoint, &ours)?;
            self.link.expect(Phase::Endpoint)?
        } else {
            let theirs = self.link.expect(Phase::Endpoint)?;
            self.link.send(Phase::Endpoint, &ours)?;
            theirs
        };
        let peer_mem = match &theirs {
            Message::Endpoint { memory, .. } => crate::memory::side_of(memory.as_ref()),
            _ => fabdiag_model::SideMem::system(),
        };
        let (local, remote) = port.connect(theirs)?;
        let run = self.fam.describe(&Facts {
            role: self.role,
            port: &*port,
            svc_id: self.env.svc_id,
            clock: self.clock,
            local,
            remote,
            peer_mem,
            poll: self.env.poll,
        });
        p.run = Some(run.clone());
        self.sink.event(Event::Banner(&run));
        p.enter(Phase::Ready, self.sink);
        self.link.barrier(Phase::Ready, None)?;
        if let (Role::Client, Some(at)) = (self.role, self.env.start_not_before) {
            // (the server waits at its first barrier; heartbeats go on)
            std::thread::sleep(at.saturating_duration_since(std::time::Instant::now()));
        }
        p.enter(Phase::Run, self.sink);
        let (provider, domain) = match &self.env.hooks.counters_as {
            Some((p, d)) => (p.as_str(), d.as_str()),
            None => (port.provider(), port.domain()),
        };
        p.before = Some(counters::before(self.env, provider, domain, port.nic()));
        let mut d = port.driver(&mut *self.link, self.fam.driver(self.role, self.clock.clone()))?;
        // the timed loop's system calls (tcp's polls) name descriptors
        // in a table no other thread shares, and skip glibc's cancellation
        // switch: the two costs a multi-threaded process pays on each. A
        // table left shared (a thread not ours, or the kernel's refusal)
        // costs time only.
        if self.env.own_fd_table {
            let _ = fabdiag_fabric::fd_table::take(|name| name.starts_with(fabdiag_fabric::fd_table::HELPERS));
        }
        let off = fabdiag_fabric::CancellationOff::begin();
        let verdict = self.fam.measure(
            self.role,
            &mut *d,
            &mut Rows {
                run: &run,
                rows: &mut p.rows,
                sink: &mut *self.sink,
            },
        )?;
        drop(off);
        d.finish();
        self.sink.event(Event::End {
            run: &run,
            rows: &p.rows,
        });
        if let Some(b) = &p.before {
            let local = counters::after(b);
            p.counters = Some(PairCounters {
                local: local.clone(),
                peer: None,
            });
            let both = counters::trade(&mut *self.link, local)?;
            self.sink.event(Event::Counters {
                role: self.role,
                counters: &both,
            });
            p.counters = Some(both);
        }
        verdict.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod auth_tests {
    use super::*;

    #[test]
    fn a_server_and_client_that_authenticate_differently_are_told_what_to_give() {
        use Method::{Key, Munge};
        assert_eq!(auth_mismatch(None, None), None);
        assert_eq!(auth_mismatch(Some(Key), Some(Key)), None);
        assert_eq!(auth_mismatch(Some(Munge), Some(Munge)), None);
        let said = |s, c| auth_mismatch(s, c).unwrap_or_default();
        assert!(said(Some(Key), None).ends_with("give the client --auth-key with the server's key file"));
        assert!(said(None, Some(Key)).ends_with("give the server the same --auth-key"));
        assert_eq!(
            said(Some(Munge), None),
            "this server admits only clients with a MUNGE credential: give the client --auth-munge"
        );
        assert!(said(None, Some(Munge)).ends_with("give the server --auth-munge"));
        assert_eq!(
            said(Some(Key), Some(Munge)),
            "this server authenticates with a shared key (--auth-key), not MUNGE credentials: give the client --auth-key"
        );
    }
}
