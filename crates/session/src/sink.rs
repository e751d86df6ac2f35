//! Where a session's progress goes: one method taking one event, so a
//! console, a JSON collector, a worker's report pipe or nothing at all can
//! listen. Events carry data, never text; the caller renders.

use fabdiag_model::{PairCounters, Role, Row, RunDesc, Tool};
use fabdiag_proto::Phase;
use std::net::SocketAddr;

#[derive(Debug)]
pub enum Event<'a> {
    /// A server is waiting for its client on this port.
    Listening(u16),
    /// Something the user should know that does not stop the run.
    Warning(&'a str),
    /// A connection was turned away (not fabdiag, wrong tool or version).
    Rejected { peer: &'a str, reason: &'a str },
    /// A client passed the hello.
    Accepted { peer: SocketAddr, tool: Tool },
    /// The session entered this phase.
    Phase(Phase),
    /// The run is agreed and about to start.
    Banner(&'a RunDesc),
    /// Row number `index` of this run is finished.
    Row {
        run: &'a RunDesc,
        row: &'a Row,
        index: usize,
    },
    /// The run is over; `rows` are all of them.
    End { run: &'a RunDesc, rows: &'a [Row] },
    /// Both sides' NIC counters across the measurement, once traded;
    /// `role` is this side's.
    Counters { role: Role, counters: &'a PairCounters },
}

pub trait Sink {
    fn event(&mut self, event: Event<'_>);
}

/// Hears nothing (e.g. the server half of `--local`).
pub struct Silent;

impl Sink for Silent {
    fn event(&mut self, _: Event<'_>) {}
}
