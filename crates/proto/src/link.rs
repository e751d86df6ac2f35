//! The control connection as sessions and drivers use it: ordered
//! messages per phase, symmetric exchanges (client first) and barriers,
//! liveness, and telling the peer why we give up. `Control` is the real
//! one; `Alone` stands in when there is no peer process at all (a
//! single-process loopback test): its barriers pass at once and its "peer"
//! reports no operations of its own. Tests substitute in-memory links.

use crate::{Control, ErrorClass, Message, Phase, ProtoError, Role};
use std::collections::VecDeque;
use std::net::IpAddr;

pub trait Link {
    /// True on the client, which speaks first in every exchange.
    fn leads(&self) -> bool;
    /// This side's address on the control connection: it names the
    /// interface that reaches the peer, which picks the default domain.
    fn local_ip(&self) -> Option<IpAddr>;
    fn send(&mut self, phase: Phase, msg: &Message) -> Result<(), ProtoError>;
    /// Waits for the next message, for as long as the peer keeps talking.
    fn expect(&mut self, phase: Phase) -> Result<Message, ProtoError>;
    /// The next message if one has arrived; fails if the peer is gone.
    fn poll(&mut self, phase: Phase) -> Result<Option<Message>, ProtoError>;
    /// Fails if the peer failed, went away or fell silent; leaves normal
    /// messages queued.
    fn check_alive(&mut self, phase: Phase) -> Result<(), ProtoError>;
    /// Best effort: tell the peer why this side is giving up, and whether
    /// it is a broken run or something this side cannot do.
    fn send_error(&mut self, phase: Phase, message: &str, kind: ErrorClass);

    /// Symmetric exchange: the client sends first, the server receives first.
    fn exchange(&mut self, phase: Phase, msg: &Message) -> Result<Message, ProtoError> {
        if self.leads() {
            self.send(phase, msg)?;
            self.expect(phase)
        } else {
            let m = self.expect(phase)?;
            self.send(phase, msg)?;
            Ok(m)
        }
    }

    /// Both sides reach `phase` (for `size`) before either goes on.
    fn barrier(&mut self, phase: Phase, size: Option<u64>) -> Result<(), ProtoError> {
        match self.exchange(phase, &Message::Barrier { phase, size })? {
            Message::Barrier { phase: p, size: s } if p == phase && s == size => Ok(()),
            Message::Barrier { phase: p, size: s } => Err(ProtoError::Desync {
                phase,
                theirs: format!("{p}{}", s.map(|s| format!(" (size {s})")).unwrap_or_default()),
            }),
            other => Err(ProtoError::Unexpected {
                phase,
                got: other.kind().into(),
            }),
        }
    }
}

impl Link for Control {
    fn leads(&self) -> bool {
        self.role() == Role::Client
    }
    fn local_ip(&self) -> Option<IpAddr> {
        Some(self.local_addr().ip())
    }
    fn send(&mut self, phase: Phase, msg: &Message) -> Result<(), ProtoError> {
        Control::send(self, phase, msg)
    }
    fn expect(&mut self, phase: Phase) -> Result<Message, ProtoError> {
        Control::expect(self, phase)
    }
    fn poll(&mut self, phase: Phase) -> Result<Option<Message>, ProtoError> {
        Control::poll(self, phase)
    }
    fn check_alive(&mut self, phase: Phase) -> Result<(), ProtoError> {
        Control::check_alive(self, phase)
    }
    fn send_error(&mut self, phase: Phase, message: &str, kind: ErrorClass) {
        Control::send_error(self, phase, message, kind)
    }
}

/// No peer: one process drives both ends of the fabric itself.
#[derive(Debug, Default)]
pub struct Alone {
    answers: VecDeque<Message>,
}

impl Link for Alone {
    fn leads(&self) -> bool {
        true
    }
    fn local_ip(&self) -> Option<IpAddr> {
        None
    }
    /// Every message is answered as a peer that initiates nothing would:
    /// the run parameters adopted without a word, the same endpoint (its
    /// own: the process writes to itself) and barrier, no operations,
    /// nothing to verify, no counters.
    fn send(&mut self, _: Phase, msg: &Message) -> Result<(), ProtoError> {
        let answer = match msg {
            Message::Config { .. } => return Ok(()),
            Message::Results { size, .. } => Message::Results {
                size: *size,
                elapsed_ns: 0,
                ops: 0,
            },
            Message::Verify { .. } => Message::Verify {
                report: serde_json::Value::Null,
            },
            Message::Counters { .. } => Message::Counters {
                report: serde_json::Value::Null,
            },
            other => other.clone(),
        };
        self.answers.push_back(answer);
        Ok(())
    }
    fn expect(&mut self, phase: Phase) -> Result<Message, ProtoError> {
        self.answers.pop_front().ok_or(ProtoError::Unexpected {
            phase,
            got: "nothing (single-process run)".into(),
        })
    }
    fn poll(&mut self, _: Phase) -> Result<Option<Message>, ProtoError> {
        Ok(self.answers.pop_front())
    }
    fn check_alive(&mut self, _: Phase) -> Result<(), ProtoError> {
        Ok(())
    }
    fn send_error(&mut self, _: Phase, _: &str, _: ErrorClass) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_passes_barriers_and_reports_no_peer_operations() {
        let mut a = Alone::default();
        a.barrier(Phase::PreRun, Some(8)).unwrap();
        let r = a
            .exchange(
                Phase::Results,
                &Message::Results {
                    size: 8,
                    elapsed_ns: 5,
                    ops: 7,
                },
            )
            .unwrap();
        assert_eq!(
            r,
            Message::Results {
                size: 8,
                elapsed_ns: 0,
                ops: 0
            }
        );
        assert!(a.poll(Phase::Run).unwrap().is_none());
        // a server adopts the client's spec without answering
        a.send(
            Phase::Config,
            &Message::Config {
                params: serde_json::Value::Null,
            },
        )
        .unwrap();
        assert!(a.poll(Phase::Config).unwrap().is_none());
    }
}
