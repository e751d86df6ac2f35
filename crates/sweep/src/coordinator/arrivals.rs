//! Connections to rank 0's port, each handed out once it has something to
//! say. Knows nothing of ranks or the protocol; never prints.

use crate::error::SweepError;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

/// Connections to rank 0's port, handed out once each has something to
/// say, so one that connects and says nothing (a port scanner) holds up no
/// other: the listener and every connection not yet read share one epoll
/// set (the listener's token past any connection's).
pub(super) struct Arrivals {
    watch: Epoll,
    waiting: HashMap<u64, TcpStream>,
    next: u64,
    events: Vec<EpollEvent>,
}

impl Arrivals {
    const LISTENER: u64 = u64::MAX;

    pub(super) fn new(listener: &TcpListener) -> Result<Arrivals, SweepError> {
        let io = |e: &dyn std::fmt::Display| SweepError::Io(format!("coordinator listener: {e}"));
        listener.set_nonblocking(true).map_err(|e| io(&e))?;
        let watch = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(|e| io(&e))?;
        watch
            .add(listener, EpollEvent::new(EpollFlags::EPOLLIN, Self::LISTENER))
            .map_err(|e| io(&e))?;
        Ok(Arrivals {
            watch,
            waiting: HashMap::new(),
            next: 0,
            events: vec![EpollEvent::empty(); 64],
        })
    }

    /// Accepts everything in the backlog, then waits up to 100 ms (not
    /// past `deadline`, so a caller hears a stop in time) and returns the
    /// connections that have spoken, in blocking mode.
    pub(super) fn next(&mut self, listener: &TcpListener, deadline: Instant) -> Result<Vec<TcpStream>, SweepError> {
        let io = |what: &str, e: &dyn std::fmt::Display| SweepError::Io(format!("coordinator {what}: {e}"));
        loop {
            match listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).map_err(|e| io("connection", &e))?;
                    self.watch
                        .add(&s, EpollEvent::new(EpollFlags::EPOLLIN, self.next))
                        .map_err(|e| io("epoll", &e))?;
                    self.waiting.insert(self.next, s);
                    self.next += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io("cannot accept", &e)),
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Vec::new());
        }
        let ms = left.as_millis().clamp(1, 100) as u16;
        let got = match self.watch.wait(&mut self.events, EpollTimeout::from(ms)) {
            Ok(k) => k,
            Err(nix::errno::Errno::EINTR) => 0,
            Err(e) => return Err(io("epoll", &e)),
        };
        let mut ready = Vec::new();
        for ev in &self.events[..got] {
            // the listener: accepted at the next call
            if let Some(s) = self.waiting.remove(&ev.data()) {
                let _ = self.watch.delete(&s);
                ready.push(s);
            }
        }
        Ok(ready)
    }
}
