//! The control connection: connect/listen, handshake, sending and
//! receiving per phase, and liveness (exchanges and barriers are `Link`'s). A reader thread owns the receive half (so
//! heartbeats are consumed even while the main thread is busy measuring) and
//! a heartbeat thread shares the send half under a mutex, one whole frame at
//! a time. Both use only the connection's own descriptors, made before
//! they start: the measuring thread may later take a descriptor table of
//! its own (`fabdiag_fabric::fd_table`), after which the two tables part.

use crate::auth::{self, Auth, Prover};
use crate::frame::{read_frame, write_frame};
use crate::listen::{listen_any, listen_on, plain};
use crate::liveness::{PeerLoss, PeerWatch, Shared};
use crate::message::{ErrorClass, Hello, Message, Phase, MAGIC, PROTOCOL};
use crate::{ProtoError, HEARTBEAT, SILENCE_LIMIT};
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

enum Incoming {
    Msg(Message),
    Eof,
    Broken(String),
    Garbage(String),
}

/// One established control connection.
pub struct Control {
    role: Role,
    writer: Arc<Mutex<TcpStream>>,
    rx: Receiver<Incoming>,
    shared: Arc<Shared>,
    pending: VecDeque<Incoming>,
    peer: SocketAddr,
    local: SocketAddr,
    silence_limit: Duration,
}

impl Drop for Control {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Ok(w) = self.writer.lock() {
            let _ = w.shutdown(Shutdown::Both);
        }
    }
}

/// A connection the server turned away, and why (for its log).
#[derive(Debug, Clone)]
pub struct Rejection {
    pub peer: String,
    pub reason: String,
}

fn io_phase(phase: Phase, e: &std::io::Error) -> ProtoError {
    match e.kind() {
        ErrorKind::UnexpectedEof
        | ErrorKind::ConnectionReset
        | ErrorKind::BrokenPipe
        | ErrorKind::ConnectionAborted => ProtoError::Closed { phase },
        ErrorKind::WouldBlock | ErrorKind::TimedOut => ProtoError::Silent {
            phase,
            secs: SILENCE_LIMIT.as_secs(),
        },
        _ => ProtoError::Io {
            phase,
            reason: e.to_string(),
        },
    }
}

impl Control {
    fn start(stream: TcpStream, role: Role) -> Result<Self, ProtoError> {
        let phase = Phase::Connect;
        // (an IPv4 peer on the dual-stack listener reads as ::ffff:a.b.c.d;
        // the local IP picks the fabric domain, so both are made plain)
        let peer = stream.peer_addr().map(plain).map_err(|e| io_phase(phase, &e))?;
        let local = stream.local_addr().map(plain).map_err(|e| io_phase(phase, &e))?;
        let _ = stream.set_nodelay(true);
        // A send that cannot drain for this long means the peer is gone.
        stream
            .set_write_timeout(Some(SILENCE_LIMIT))
            .map_err(|e| io_phase(phase, &e))?;
        let mut reader = stream.try_clone().map_err(|e| io_phase(phase, &e))?;
        let shared = Arc::new(Shared::new(stream.try_clone().map_err(|e| io_phase(phase, &e))?));
        let (tx, rx) = mpsc::channel();
        let sh = Arc::clone(&shared);
        thread::Builder::new()
            .name("fabdiag-ctrl-rx".into())
            .spawn(move || loop {
                let ev = match read_frame(&mut reader) {
                    Ok(Some(p)) => {
                        sh.heard();
                        match serde_json::from_slice::<Message>(&p) {
                            Ok(Message::Heartbeat) => continue,
                            Ok(m) => Incoming::Msg(m),
                            Err(e) => Incoming::Garbage(format!("undecodable control message ({e})")),
                        }
                    }
                    Ok(None) => Incoming::Eof,
                    Err(e) if e.kind() == ErrorKind::InvalidData => Incoming::Garbage(e.to_string()),
                    Err(e) => match e.kind() {
                        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => Incoming::Eof,
                        _ => Incoming::Broken(e.to_string()),
                    },
                };
                // for a thread that watches while the session cannot look
                match &ev {
                    Incoming::Msg(Message::Error { phase, message, kind }) => sh.lose(PeerLoss::Failed {
                        phase: *phase,
                        message: message.clone(),
                        kind: *kind,
                    }),
                    Incoming::Eof => sh.lose(PeerLoss::Closed),
                    Incoming::Broken(reason) => sh.lose(PeerLoss::Broken(reason.clone())),
                    Incoming::Msg(_) | Incoming::Garbage(_) => {}
                }
                let last = !matches!(ev, Incoming::Msg(_));
                if tx.send(ev).is_err() || last || sh.stop.load(Ordering::Relaxed) {
                    return;
                }
            })
            .map_err(|e| ProtoError::Io {
                phase,
                reason: format!("cannot start control reader: {e}"),
            })?;
        let writer = Arc::new(Mutex::new(stream));
        let (w, sh) = (Arc::clone(&writer), Arc::clone(&shared));
        let hb = serde_json::to_vec(&Message::Heartbeat).unwrap_or_default();
        thread::Builder::new()
            .name("fabdiag-ctrl-hb".into())
            .spawn(move || {
                while !sh.stop.load(Ordering::Relaxed) {
                    thread::sleep(HEARTBEAT);
                    if !sh.heartbeat_on.load(Ordering::Relaxed) {
                        continue;
                    }
                    let Ok(mut s) = w.lock() else { return };
                    if write_frame(&mut *s, &hb).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| ProtoError::Io {
                phase,
                reason: format!("cannot start heartbeat: {e}"),
            })?;
        Ok(Control {
            role,
            writer,
            rx,
            shared,
            pending: VecDeque::new(),
            peer,
            local,
            silence_limit: SILENCE_LIMIT,
        })
    }

    /// The server's side of a connection accepted elsewhere (e.g. handed
    /// to a worker process); the hello is still to come.
    pub fn server(stream: TcpStream) -> Result<Self, ProtoError> {
        Self::start(stream, Role::Server)
    }

    /// The client's side of a connection made elsewhere (a sweep rank
    /// that introduced itself on the stream first); the hello is next.
    pub fn client(stream: TcpStream) -> Result<Self, ProtoError> {
        Self::start(stream, Role::Client)
    }

    /// Lets `watch` tell from another thread that this connection's peer
    /// is gone, until this side closes it.
    pub fn watched_by(&self, watch: &PeerWatch) {
        watch.add(&self.shared);
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// The peer's control address (its IP is where the fabric peer lives).
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// Our side of the control connection; its IP names the interface that
    /// reaches the peer, which picks the default fabric domain.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub fn send(&self, phase: Phase, msg: &Message) -> Result<(), ProtoError> {
        let bytes = serde_json::to_vec(msg).map_err(|e| ProtoError::Io {
            phase,
            reason: e.to_string(),
        })?;
        let mut s = self.writer.lock().map_err(|_| ProtoError::Io {
            phase,
            reason: "writer lock poisoned".into(),
        })?;
        write_frame(&mut *s, &bytes).map_err(|e| io_phase(phase, &e))
    }

    /// Best effort: tell the peer why this side is giving up.
    pub fn send_error(&self, phase: Phase, message: &str, kind: ErrorClass) {
        let _ = self.send(
            phase,
            &Message::Error {
                phase,
                message: message.to_string(),
                kind,
            },
        );
    }

    fn to_result(phase: Phase, ev: Incoming) -> Result<Message, ProtoError> {
        match ev {
            Incoming::Msg(Message::Error { phase, message, kind }) => Err(ProtoError::Peer { phase, message, kind }),
            Incoming::Msg(m) => Ok(m),
            Incoming::Eof => Err(ProtoError::Closed { phase }),
            Incoming::Broken(reason) => Err(ProtoError::Io { phase, reason }),
            Incoming::Garbage(reason) => Err(ProtoError::NotFabdiag { reason }),
        }
    }

    /// Tells the peer why it is turned away, then reads what it still
    /// sends until it closes (at most `LINGER`): closing with its bytes
    /// unread would make the kernel reset the connection, and a peer that
    /// is reset may lose our message before it reads it.
    pub fn refuse(&mut self, phase: Phase, message: &str, kind: ErrorClass) {
        const LINGER: Duration = Duration::from_secs(2);
        self.send_error(phase, message, kind);
        if let Ok(w) = self.writer.lock() {
            let _ = w.shutdown(Shutdown::Write);
        }
        let deadline = std::time::Instant::now() + LINGER;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(Incoming::Msg(_)) | Err(RecvTimeoutError::Timeout) => {}
                Ok(_) | Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Waits for the next message, for as long as the peer keeps talking.
    pub fn expect(&mut self, phase: Phase) -> Result<Message, ProtoError> {
        if let Some(ev) = self.pending.pop_front() {
            return Self::to_result(phase, ev);
        }
        loop {
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(ev) => return Self::to_result(phase, ev),
                Err(RecvTimeoutError::Timeout) => {
                    if self.shared.silence() > self.silence_limit {
                        return Err(ProtoError::Silent {
                            phase,
                            secs: self.silence_limit.as_secs(),
                        });
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(ProtoError::Closed { phase }),
            }
        }
    }

    /// Non-blocking: the next message if one has arrived; fails if the peer
    /// is gone or silent. Cheap enough to call from a polling loop.
    pub fn poll(&mut self, phase: Phase) -> Result<Option<Message>, ProtoError> {
        if let Some(ev) = self.pending.pop_front() {
            return Self::to_result(phase, ev).map(Some);
        }
        match self.rx.try_recv() {
            Ok(ev) => Self::to_result(phase, ev).map(Some),
            Err(TryRecvError::Empty) => {
                if self.shared.silence() > self.silence_limit {
                    Err(ProtoError::Silent {
                        phase,
                        secs: self.silence_limit.as_secs(),
                    })
                } else {
                    Ok(None)
                }
            }
            Err(TryRecvError::Disconnected) => Err(ProtoError::Closed { phase }),
        }
    }

    /// Like `poll` but leaves a normal message queued for the next
    /// `expect`; only failures are reported.
    pub fn check_alive(&mut self, phase: Phase) -> Result<(), ProtoError> {
        loop {
            match self.rx.try_recv() {
                Ok(Incoming::Msg(m @ Message::Error { .. })) => {
                    return Self::to_result(phase, Incoming::Msg(m)).map(|_| ())
                }
                Ok(Incoming::Msg(m)) => self.pending.push_back(Incoming::Msg(m)),
                Ok(ev) => return Self::to_result(phase, ev).map(|_| ()),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Err(ProtoError::Closed { phase }),
            }
        }
        if self.shared.silence() > self.silence_limit {
            return Err(ProtoError::Silent {
                phase,
                secs: self.silence_limit.as_secs(),
            });
        }
        Ok(())
    }

    /// The client's hello: sends ours, checks the server's tool and
    /// MAJOR.MINOR version, as the originals do; heartbeats start once it
    /// succeeds.
    pub fn handshake(&mut self, own: &Hello) -> Result<Hello, ProtoError> {
        let phase = Phase::Hello;
        self.send(phase, &Message::Hello(own.clone()))?;
        let theirs = self.first_hello().map_err(|e| match e {
            ProtoError::Silent { .. } => ProtoError::Unanswered {
                secs: self.silence_limit.as_secs(),
            },
            e => e,
        })?;
        Self::check_hello(own, &theirs)?;
        self.start_heartbeats();
        Ok(theirs)
    }

    /// The server's hello: waits for the client's and answers with ours.
    /// `own.tool` is the only tool this server runs, or None for a server
    /// that runs whatever the client asks (its answer then names the
    /// client's tool). A mismatch is also told to the client.
    pub fn answer_hello(&mut self, tool: Option<&str>, version: &str) -> Result<Hello, ProtoError> {
        // (a client that connects and says nothing is no fabdiag client)
        let theirs = self.first_hello().map_err(|e| match e {
            ProtoError::Silent { .. } => ProtoError::NotFabdiag {
                reason: format!("no fabdiag hello within {} s", self.silence_limit.as_secs()),
            },
            e => e,
        })?;
        let own = Hello {
            magic: MAGIC.into(),
            protocol: PROTOCOL,
            tool: tool.unwrap_or(&theirs.tool).to_string(),
            version: version.into(),
            auth: false,
            auth_method: Default::default(),
        };
        self.send(Phase::Hello, &Message::Hello(own.clone()))?;
        if let Err(e) = Self::check_hello(&own, &theirs) {
            self.send_error(Phase::Hello, &e.to_string(), ErrorClass::Runtime);
            return Err(e);
        }
        self.start_heartbeats();
        Ok(theirs)
    }

    /// The client's half of the exchange (`auth`), after the hellos:
    /// answers the server's challenge with its own nonce and proof, then
    /// checks the server's proof.
    pub fn authenticate_as_client(&mut self, with: &Auth) -> Result<(), ProtoError> {
        let phase = Phase::Hello;
        let failed = |reason: String| ProtoError::Auth { reason };
        let server_nonce = match self.expect(phase)? {
            Message::Challenge { nonce } if auth::well_formed(&nonce) => nonce,
            Message::Challenge { .. } => return Err(failed("the server's challenge is malformed".into())),
            other => {
                return Err(ProtoError::Unexpected {
                    phase,
                    got: other.kind().into(),
                })
            }
        };
        let ours = auth::nonce().map_err(failed)?;
        let mac = with
            .prove(Prover::Client, &server_nonce, &ours)
            .map_err(|e| failed(format!("cannot make a MUNGE credential: {e}")))?;
        self.send(
            phase,
            &Message::Proof {
                nonce: Some(ours.clone()),
                mac,
            },
        )?;
        match self.expect(phase)? {
            Message::Proof { mac, .. } => with
                .check(Prover::Server, &server_nonce, &ours, &mac)
                .map_err(|d| failed(d.said("the server's", "the server does not hold this key"))),
            other => Err(ProtoError::Unexpected {
                phase,
                got: other.kind().into(),
            }),
        }
    }

    /// The server's half: challenges the client, checks its proof, and
    /// proves itself in turn. A client that fails is told so.
    pub fn authenticate_client(&mut self, with: &Auth) -> Result<(), ProtoError> {
        let phase = Phase::Hello;
        let failed = |reason: String| ProtoError::Auth { reason };
        let ours = auth::nonce().map_err(failed)?;
        self.send(phase, &Message::Challenge { nonce: ours.clone() })?;
        let verdict = match self.expect(phase)? {
            Message::Proof {
                nonce: Some(theirs),
                mac,
            } if auth::well_formed(&theirs) => with
                .check(Prover::Client, &ours, &theirs, &mac)
                .map(|()| theirs)
                .map_err(|d| failed(d.said("the client's", "the client's proof does not match this server's key"))),
            Message::Proof { .. } => Err(failed("the client's proof is malformed".into())),
            other => Err(ProtoError::Unexpected {
                phase,
                got: other.kind().into(),
            }),
        };
        let mac = verdict.and_then(|theirs| {
            with.prove(Prover::Server, &ours, &theirs)
                .map_err(|e| failed(format!("this server cannot make a MUNGE credential: {e}")))
        });
        match mac {
            Ok(mac) => self.send(phase, &Message::Proof { nonce: None, mac }),
            Err(e) => {
                self.refuse(phase, &e.to_string(), ErrorClass::Runtime);
                Err(e)
            }
        }
    }

    /// The peer's hello; silence is left to the caller to name (a silent
    /// server and a silent client are different faults).
    fn first_hello(&mut self) -> Result<Hello, ProtoError> {
        match self.expect(Phase::Hello) {
            Ok(Message::Hello(h)) if h.magic == MAGIC => Ok(h),
            Ok(other) => Err(ProtoError::NotFabdiag {
                reason: format!("first message was '{}', not a fabdiag hello", other.kind()),
            }),
            Err(e) => Err(e),
        }
    }

    fn check_hello(own: &Hello, theirs: &Hello) -> Result<(), ProtoError> {
        if theirs.tool != own.tool {
            return Err(ProtoError::Mismatch {
                message: "Client and server program names do not match!",
                ours: own.tool.clone(),
                theirs: theirs.tool.clone(),
            });
        }
        if theirs.protocol != PROTOCOL || major_minor(&theirs.version) != major_minor(&own.version) {
            return Err(ProtoError::Mismatch {
                message: "Client and server program versions do not match!",
                ours: format!("{} (protocol {})", own.version, own.protocol),
                theirs: format!("{} (protocol {})", theirs.version, theirs.protocol),
            });
        }
        Ok(())
    }

    fn start_heartbeats(&self) {
        self.shared.heard();
        self.shared.heartbeat_on.store(true, Ordering::Relaxed);
    }
}

fn major_minor(v: &str) -> Option<(u64, u64)> {
    let mut it = v.split('.');
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Connects to a server (each resolved address in turn, 5 s each).
pub fn connect(host: &str, port: u16) -> Result<Control, ProtoError> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| ProtoError::Resolve {
            host: host.into(),
            reason: e.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(ProtoError::Resolve {
            host: host.into(),
            reason: "no addresses".into(),
        });
    }
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, SILENCE_LIMIT) {
            Ok(s) => return Control::start(s, Role::Client),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                last = Some(ProtoError::Refused { addr: a.to_string() })
            }
            Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::WouldBlock => {
                last = Some(ProtoError::Connect {
                    addr: a.to_string(),
                    reason: format!("no answer within {} s", SILENCE_LIMIT.as_secs()),
                })
            }
            Err(e) => {
                last = Some(ProtoError::Connect {
                    addr: a.to_string(),
                    reason: e.to_string(),
                })
            }
        }
    }
    Err(last.unwrap_or(ProtoError::Resolve {
        host: host.into(),
        reason: "no addresses".into(),
    }))
}

/// The server's listening socket.
pub struct Listener {
    inner: TcpListener,
    port: u16,
}

impl Listener {
    /// Listens on every interface, IPv4 (as the originals) and IPv6.
    pub fn bind(port: u16) -> Result<Self, ProtoError> {
        Self::opened(port, listen_any(port))
    }

    /// Listens on loopback only, on a free port (for `--local`).
    pub fn bind_loopback() -> Result<Self, ProtoError> {
        Self::opened(0, listen_on(SocketAddr::from(([127, 0, 0, 1], 0))))
    }

    fn opened(port: u16, bound: std::io::Result<TcpListener>) -> Result<Self, ProtoError> {
        let inner = bound.map_err(|e| match e.kind() {
            ErrorKind::AddrInUse => ProtoError::PortInUse { port },
            _ => ProtoError::Listen {
                port,
                reason: e.to_string(),
            },
        })?;
        let port = inner.local_addr().map(|a| a.port()).unwrap_or(port);
        Ok(Listener { inner, port })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Accepts connections until one completes the handshake (see
    /// `Control::answer_hello` for `tool`). Strangers and mismatched peers
    /// are turned away (reported through `on_reject`) and the server keeps
    /// listening.
    pub fn accept(
        &self,
        tool: Option<&str>,
        version: &str,
        on_reject: &mut dyn FnMut(Rejection),
    ) -> Result<(Control, Hello), ProtoError> {
        loop {
            let (stream, peer) = self.accept_stream()?;
            let attempt = Control::server(stream).and_then(|mut c| c.answer_hello(tool, version).map(|h| (c, h)));
            match attempt {
                Ok(ok) => return Ok(ok),
                Err(e) => on_reject(Rejection {
                    peer: peer.to_string(),
                    reason: e.to_string(),
                }),
            }
        }
    }

    /// The next TCP connection, before any protocol.
    pub fn accept_stream(&self) -> Result<(TcpStream, SocketAddr), ProtoError> {
        let (stream, peer) = self.inner.accept().map_err(|e| ProtoError::Listen {
            port: self.port,
            reason: e.to_string(),
        })?;
        // accepted sockets must block even when the listener does not
        stream.set_nonblocking(false).map_err(|e| ProtoError::Listen {
            port: self.port,
            reason: e.to_string(),
        })?;
        Ok((stream, plain(peer)))
    }

    /// Makes `accept_stream` return at once (WouldBlock as `Listen`) when no
    /// client is waiting, for a server that also watches other things.
    pub fn set_nonblocking(&self, on: bool) -> Result<(), ProtoError> {
        self.inner.set_nonblocking(on).map_err(|e| ProtoError::Listen {
            port: self.port,
            reason: e.to_string(),
        })
    }

    /// Like `accept_stream`, but None when nobody is waiting (after
    /// `set_nonblocking(true)`).
    pub fn try_accept_stream(&self) -> Result<Option<(TcpStream, SocketAddr)>, ProtoError> {
        match self.inner.accept() {
            Ok((stream, peer)) => {
                stream.set_nonblocking(false).map_err(|e| ProtoError::Listen {
                    port: self.port,
                    reason: e.to_string(),
                })?;
                Ok(Some((stream, plain(peer))))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(ProtoError::Listen {
                port: self.port,
                reason: e.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Link;
    use std::io::Write;

    fn hello(tool: &str, version: &str) -> Hello {
        Hello {
            magic: MAGIC.into(),
            protocol: PROTOCOL,
            tool: tool.into(),
            version: version.into(),
            auth: false,
            auth_method: Default::default(),
        }
    }

    #[test]
    fn handshake_barrier_and_garbage() {
        let l = Listener::bind_loopback().unwrap();
        let port = l.port();
        let t = thread::spawn(move || {
            // a stranger first: must be rejected without ending the server
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
            let mut c = connect("127.0.0.1", port).unwrap();
            c.handshake(&hello("cxi_write_bw", "0.1.0")).unwrap();
            c.barrier(Phase::Ready, None).unwrap();
            c.barrier(Phase::PreRun, Some(8)).unwrap();
        });
        let mut rejected = Vec::new();
        let (mut s, h) = l
            .accept(Some("cxi_write_bw"), "0.1.7", &mut |r| rejected.push(r))
            .unwrap();
        assert_eq!(h.version, "0.1.0");
        assert_eq!(rejected.len(), 1, "{rejected:?}");
        s.barrier(Phase::Ready, None).unwrap();
        s.barrier(Phase::PreRun, Some(8)).unwrap();
        t.join().unwrap();
        // the client has gone: the next wait reports it within a second
        let err = s.expect(Phase::PostRun).unwrap_err();
        assert!(matches!(err, ProtoError::Closed { phase: Phase::PostRun }), "{err}");
    }

    #[test]
    fn mismatched_versions_are_refused_on_both_sides() {
        let l = Listener::bind_loopback().unwrap();
        let port = l.port();
        let t = thread::spawn(move || {
            let mut c = connect("127.0.0.1", port).unwrap();
            c.handshake(&hello("cxi_write_bw", "0.2.0")).unwrap_err().to_string()
        });
        let mut rejected = Vec::new();
        // accept would wait for another client; run it in the background
        thread::spawn(move || {
            let _ = l.accept(Some("cxi_write_bw"), "0.1.0", &mut |r| rejected.push(r));
        });
        let msg = t.join().unwrap();
        assert!(msg.contains("versions do not match"), "{msg}");
    }

    #[test]
    fn refused_and_port_in_use() {
        let l = Listener::bind_loopback().unwrap();
        let port = l.port();
        drop(l);
        assert!(matches!(connect("127.0.0.1", port), Err(ProtoError::Refused { .. })));
        let l = Listener::bind(0).unwrap();
        let again = Listener::bind(l.port());
        assert!(matches!(again, Err(ProtoError::PortInUse { .. })));
    }

    /// A client and the server's side of its connection, both past the
    /// hello.
    fn pair() -> (Control, Control) {
        let l = Listener::bind_loopback().unwrap();
        let port = l.port();
        let t = thread::spawn(move || {
            let mut c = connect("127.0.0.1", port).unwrap();
            c.handshake(&hello("cxi_write_bw", "0.1.0")).unwrap();
            c
        });
        let (s, _) = l.accept(Some("cxi_write_bw"), "0.1.0", &mut |_| {}).unwrap();
        (t.join().unwrap(), s)
    }

    /// What `watch` reports once it reports anything (within 2 s).
    fn loss_seen(watch: &PeerWatch) -> Option<PeerLoss> {
        let t0 = std::time::Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if let Some(l) = watch.loss() {
                return Some(l);
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }

    #[test]
    fn another_thread_sees_the_peer_close_or_fail_but_not_our_own_close() {
        let (client, server) = pair();
        let watch = PeerWatch::default();
        server.watched_by(&watch);
        assert_eq!(watch.loss(), None, "both ends are there");
        drop(client);
        assert_eq!(loss_seen(&watch), Some(PeerLoss::Closed));
        assert!(matches!(
            loss_seen(&watch).map(|l| l.during(Phase::Run)),
            Some(ProtoError::Closed { phase: Phase::Run })
        ));

        // the peer's own error is kept over its closing after it
        let (client, server) = pair();
        let watch = PeerWatch::default();
        server.watched_by(&watch);
        client.send_error(Phase::PreRun, "no memory", ErrorClass::Unavailable);
        drop(client);
        let lost = loss_seen(&watch);
        assert_eq!(
            lost,
            Some(PeerLoss::Failed {
                phase: Phase::PreRun,
                message: "no memory".into(),
                kind: ErrorClass::Unavailable,
            })
        );
        // and the message is the one the session would have said
        let said = lost.map(|l| l.during(Phase::Run).to_string());
        assert_eq!(said.as_deref(), Some("peer failed during pre-run: no memory"));

        // a connection this side closed is not a lost peer
        let (client, server) = pair();
        let watch = PeerWatch::default();
        client.watched_by(&watch);
        drop(client);
        thread::sleep(Duration::from_millis(300));
        assert_eq!(watch.loss(), None);
        drop(server);

        // hung up from another thread: the peer hears it at once, though
        // the connection's owner never closed it
        let (client, mut server) = pair();
        let watch = PeerWatch::default();
        client.watched_by(&watch);
        watch.hang_up();
        assert_eq!(watch.loss(), None, "not a lost peer: this side hung up");
        let t0 = std::time::Instant::now();
        let err = server.expect(Phase::Run).unwrap_err();
        assert!(matches!(err, ProtoError::Closed { phase: Phase::Run }), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        drop(client);
    }

    /// A peer that said hello and then nothing (no heartbeats: it never
    /// started them) is lost once `SILENCE_LIMIT` has passed.
    #[test]
    fn another_thread_sees_a_silent_peer_after_the_silence_limit() {
        let l = Listener::bind_loopback().unwrap();
        let port = l.port();
        let quiet = thread::spawn(move || {
            let c = connect("127.0.0.1", port).unwrap();
            c.send(Phase::Hello, &Message::Hello(hello("cxi_write_bw", "0.1.0")))
                .unwrap();
            thread::sleep(SILENCE_LIMIT + Duration::from_secs(2));
        });
        let (s, _) = l.accept(Some("cxi_write_bw"), "0.1.0", &mut |_| {}).unwrap();
        let watch = PeerWatch::default();
        s.watched_by(&watch);
        let t0 = std::time::Instant::now();
        while watch.loss().is_none() && t0.elapsed() < SILENCE_LIMIT + Duration::from_secs(2) {
            thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(watch.loss(), Some(PeerLoss::Silent { secs: 5 }));
        assert!(
            t0.elapsed() >= SILENCE_LIMIT - Duration::from_millis(500),
            "{:?}",
            t0.elapsed()
        );
        quiet.join().unwrap();
    }
}
