//! Where `fabdiag serve` keeps each accepted connection until its first
//! frame (a client's hello) has fully arrived, so that only a connection
//! that speaks claims the one test slot or is told the server is busy. A
//! stranger holding connections open, sending half a header, or dribbling
//! bytes never stands in front of an honest client: each waits here at
//! most the hello limit, the lobby holds a bounded number (the oldest
//! makes room), and looking costs a peek per connection and tick. It reads
//! nothing off a connection (the worker reads the hello) and starts no
//! process.

use fabdiag_proto::MAX_FRAME;
use std::collections::VecDeque;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long a connection may wait for its hello, as a worker waits.
pub const HELLO_LIMIT: Duration = fabdiag_proto::SILENCE_LIMIT;
/// Connections waiting at once; past it the oldest is let go.
pub const ROOM: usize = 1024;
/// A first frame announced larger than this is handed on as it is (the
/// worker reads or refuses it) rather than peeked at whole.
const PEEK_LIMIT: usize = 64 << 10;

struct Waiting {
    stream: TcpStream,
    peer: SocketAddr,
    since: Instant,
}

/// What became of a connection in the lobby.
pub enum Left {
    /// Its first frame is here, or its peer closed or broke the
    /// connection: the worker (or a busy answer) deals with it.
    Ready(TcpStream, SocketAddr),
    /// It said nothing whole within the limit, or was let go to make room.
    Dropped(SocketAddr, String),
}

#[derive(Default)]
pub struct Lobby {
    waiting: VecDeque<Waiting>,
    peek: Vec<u8>,
}

/// Whether a whole first frame can be read, without reading it.
fn arrived(s: &TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut hdr = [0u8; 4];
    match s.peek(&mut hdr) {
        // closed: the worker says so in its line
        Ok(0) => true,
        Ok(n) if n < 4 => false,
        Ok(_) => {
            let len = u32::from_be_bytes(hdr);
            if len > MAX_FRAME || len as usize > PEEK_LIMIT {
                return true;
            }
            buf.resize(4 + len as usize, 0);
            matches!(s.peek(buf), Ok(n) if n == buf.len())
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
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

    /// Connections whose time is up, and (up to `take`) those whose first
    /// frame is here, oldest first, back in blocking mode.
    pub fn sort(&mut self, take: usize) -> Vec<Left> {
        let mut out = Vec::new();
        let mut ready = 0;
        let mut i = 0;
        while i < self.waiting.len() {
            let w = &self.waiting[i];
            let expired = w.since.elapsed() > HELLO_LIMIT;
            let here = ready < take && arrived(&w.stream, &mut self.peek);
            if !expired && !here {
                i += 1;
                continue;
            }
            let Some(w) = self.waiting.remove(i) else {
                break;
            };
            if here && w.stream.set_nonblocking(false).is_ok() {
                ready += 1;
                out.push(Left::Ready(w.stream, w.peer));
            } else {
                out.push(Left::Dropped(
                    w.peer,
                    format!(
                        "peer is not a fabdiag control endpoint: no fabdiag hello within {} s",
                        HELLO_LIMIT.as_secs()
                    ),
                ));
            }
        }
        out
    }
}
