//! The judgment of a connection's first bytes, before anyone reads them
//! off: is a fabdiag hello there yet, is it still on its way, or has the
//! peer already shown it is not a fabdiag client. A server's lobby peeks
//! and asks this, so that only a connection whose hello has arrived takes
//! its one test slot. It reads no socket and keeps no state; the verdicts
//! are the ones a `Control` gives for the same bytes.

use crate::frame::frame_len;
use crate::{Hello, Message, Phase, ProtoError, MAGIC};

/// What the first bytes of a connection are.
#[derive(Debug)]
pub enum Opening {
    /// Not one whole frame past any heartbeats yet: wait for more.
    Partial,
    /// A fabdiag hello (its tool and version are the worker's to judge).
    Hello(Hello),
    /// Not a fabdiag client: what a `Control` would say of these bytes.
    Refused(ProtoError),
}

/// Judges `bytes`, the start of what a peer sent, as a server's first
/// `expect` would: heartbeats are passed over, the first other message
/// must be a hello with fabdiag's magic.
pub fn opening(bytes: &[u8]) -> Opening {
    let mut rest = bytes;
    loop {
        let Some(hdr) = rest.first_chunk::<4>() else {
            return Opening::Partial;
        };
        let len = match frame_len(*hdr) {
            Ok(len) => len as usize,
            Err(reason) => return Opening::Refused(ProtoError::NotFabdiag { reason }),
        };
        let Some(payload) = rest.get(4..4 + len) else {
            return Opening::Partial;
        };
        rest = &rest[4 + len..];
        return Opening::Refused(match serde_json::from_slice::<Message>(payload) {
            Ok(Message::Heartbeat) => continue,
            Ok(Message::Hello(h)) if h.magic == MAGIC => return Opening::Hello(h),
            Ok(Message::Error { phase, message, kind }) => ProtoError::Peer { phase, message, kind },
            Ok(other) => ProtoError::NotFabdiag {
                reason: format!("first message was '{}', not a fabdiag hello", other.kind()),
            },
            Err(e) => ProtoError::NotFabdiag {
                reason: format!("undecodable control message ({e})"),
            },
        });
    }
}

/// The refusal of a connection that closed before its hello.
pub fn closed_before_hello() -> ProtoError {
    ProtoError::Closed { phase: Phase::Hello }
}

/// The refusal of a connection that broke before its hello.
pub fn broken_before_hello(reason: String) -> ProtoError {
    ProtoError::Io {
        phase: Phase::Hello,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{write_frame, PROTOCOL};

    fn framed(msgs: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for m in msgs {
            write_frame(&mut out, m).unwrap();
        }
        out
    }

    fn hello(magic: &str) -> Vec<u8> {
        serde_json::to_vec(&Message::Hello(Hello {
            magic: magic.into(),
            protocol: PROTOCOL,
            tool: "cxi_write_bw".into(),
            version: "0.1.0".into(),
            auth: false,
            auth_method: Default::default(),
        }))
        .unwrap()
    }

    fn refusal(bytes: &[u8]) -> String {
        match opening(bytes) {
            Opening::Refused(e) => e.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_hello_passes_once_whole_and_after_heartbeats() {
        let hb = br#"{"type":"heartbeat"}"#;
        let all = framed(&[hb, hb, &hello(MAGIC)]);
        for cut in 0..all.len() {
            assert!(matches!(opening(&all[..cut]), Opening::Partial), "cut at {cut}");
        }
        assert!(matches!(opening(&all), Opening::Hello(h) if h.tool == "cxi_write_bw"));
        // what follows the hello is the worker's
        let mut more = all.clone();
        more.extend_from_slice(b"\xff\xff");
        assert!(matches!(opening(&more), Opening::Hello(_)));
    }

    #[test]
    fn strangers_are_named_as_a_control_names_them() {
        assert_eq!(
            refusal(b"GET / HTTP/1.0\r\n"),
            "peer is not a fabdiag control endpoint: received text starting \"GET \", not a fabdiag frame"
        );
        assert_eq!(
            refusal(&[0x80, 0, 0, 0]),
            "peer is not a fabdiag control endpoint: frame of 2147483648 bytes announced (limit 1048576)"
        );
        assert!(refusal(&[0, 0, 0, 3, 0xde, 0xad, 0xbe])
            .starts_with("peer is not a fabdiag control endpoint: undecodable control message ("));
        assert_eq!(
            refusal(&framed(&[br#"{"type":"barrier","phase":"ready","size":null}"#])),
            "peer is not a fabdiag control endpoint: first message was 'barrier', not a fabdiag hello"
        );
        assert_eq!(
            refusal(&framed(&[&hello("http")])),
            "peer is not a fabdiag control endpoint: first message was 'hello', not a fabdiag hello"
        );
        assert_eq!(
            refusal(&framed(&[br#"{"type":"error","phase":"hello","message":"no"}"#])),
            "peer failed during hello: no"
        );
        assert_eq!(
            closed_before_hello().to_string(),
            "peer closed the control connection during hello"
        );
    }
}
