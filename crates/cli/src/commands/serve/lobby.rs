//! Where `fabdiag serve` keeps each accepted connection until a whole
//! fabdiag hello has arrived on it, so that only a client claims the one
//! test slot or is told the server is busy. A stranger holding
//! connections open, sending half a header, dribbling bytes, or sending
//! a frame that is no hello never stands in front of an honest client:
//! bytes that show a stranger end its wait at once with the line a
//! worker would write, the rest wait at most the hello limit, the lobby
//! holds a bounded number (the oldest makes room), and looking costs a
//! peek per connection and tick. It reads nothing off a connection (the
//! worker reads the hello) and starts no process.

use fabdiag_proto::{broken_before_hello, closed_before_hello, opening, Opening};
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long a connection may wait for its hello, as a worker waits.
pub const HELLO_LIMIT: Duration = fabdiag_proto::SILENCE_LIMIT;
/// Connections waiting at once; past it the oldest is let go.
pub const ROOM: usize = 1024;
/// How far into a connection the lobby looks for the hello (a real one,
/// after any heartbeats, is a few hundred bytes).
const PEEK_LIMIT: usize = 64 << 10;

struct Waiting {
    stream: TcpStream,
    peer: SocketAddr,
    since: Instant,
}

/// What became of a connection in the lobby.
pub enum Left {
    /// Its hello is here, unread: the worker (or a busy answer) deals
    /// with it.
    Ready(TcpStream, SocketAddr),
    /// It said nothing whole within the limit, showed it is no fabdiag
    /// client, closed or broke, or was let go to make room: why.
    Dropped(SocketAddr, String),
}

#[derive(Default)]
pub struct Lobby {
    waiting: VecDeque<Waiting>,
    peek: Vec<u8>,
}

/// What the first bytes on `s` are, read without reading them off.
fn judge(s: &TcpStream, buf: &mut Vec<u8>) -> Opening {
    buf.resize(PEEK_LIMIT, 0);
    match s.peek(buf) {
        Ok(0) => Opening::Refused(closed_before_hello()),
        Ok(n) => match opening(&buf[..n]) {
            Opening::Partial if n == PEEK_LIMIT => Opening::Refused(fabdiag_proto::ProtoError::NotFabdiag {
                reason: format!("no fabdiag hello in its first {} KiB", PEEK_LIMIT >> 10),
            }),
            judged => judged,
        },
        Err(e) if e.kind() == ErrorKind::WouldBlock => Opening::Partial,
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Opening::Refused(closed_before_hello()),
        Err(e) => Opening::Refused(broken_before_hello(e.to_string())),
    }
}

impl Lobby {
    /// Takes in a new connection; the one let go (to make room, or this
    /// one if it cannot be watched), with why.
    pub fn admit(&mut self, stream: TcpStream, peer: SocketAddr) -> Option<(SocketAddr, String)> {
        if let Err(e) = stream.set_nonblocking(true) {
            return Some((peer, format!("cannot watch the connection: {e}")));
        }
        self.waiting.push_back(Waiting {
            stream,
            peer,
            since: Instant::now(),
        });
        (self.waiting.len() > ROOM)
            .then(|| self.waiting.pop_front())
            .flatten()
            .map(|w| {
                (
                    w.peer,
                    format!("let go unheard: {ROOM} connections were waiting for their hello"),
                )
            })
    }

    /// Connections let go (time up, refused, closed), and (up to `take`)
    /// those whose hello is here, oldest first, back in blocking mode.
    pub fn sort(&mut self, take: usize) -> Vec<Left> {
        let mut out = Vec::new();
        let mut ready = 0;
        let mut i = 0;
        while i < self.waiting.len() {
            let w = &self.waiting[i];
            let left = match judge(&w.stream, &mut self.peek) {
                Opening::Hello(_) if ready < take => None,
                Opening::Refused(e) => Some(e.to_string()),
                // a hello waits only for the slot, taken at a next tick
                Opening::Partial if w.since.elapsed() > HELLO_LIMIT => Some(format!(
                    "peer is not a fabdiag control endpoint: no fabdiag hello within {} s",
                    HELLO_LIMIT.as_secs()
                )),
                _ => {
                    i += 1;
                    continue;
                }
            };
            let Some(w) = self.waiting.remove(i) else {
                break;
            };
            match left {
                Some(why) => out.push(Left::Dropped(w.peer, why)),
                None => match w.stream.set_nonblocking(false) {
                    Ok(()) => {
                        ready += 1;
                        out.push(Left::Ready(w.stream, w.peer));
                    }
                    Err(e) => out.push(Left::Dropped(w.peer, format!("cannot hand the connection on: {e}"))),
                },
            }
        }
        out
    }
}
