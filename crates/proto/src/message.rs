//! The messages and phases of a run. Payloads are JSON so a version skew
//! shows up as a clear "unexpected message" rather than misread bytes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// First field of every Hello; anything else on the port is not fabdiag.
pub const MAGIC: &str = "fabdiag-control";
/// Bumped whenever a message changes shape.
pub const PROTOCOL: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Connect,
    Hello,
    Config,
    Endpoint,
    Ready,
    PreRun,
    Run,
    PostRun,
    Results,
    Teardown,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Connect => "connect",
            Phase::Hello => "hello",
            Phase::Config => "config",
            Phase::Endpoint => "endpoint exchange",
            Phase::Ready => "ready",
            Phase::PreRun => "pre-run",
            Phase::Run => "run",
            Phase::PostRun => "post-run",
            Phase::Results => "results",
            Phase::Teardown => "teardown",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub magic: String,
    pub protocol: u32,
    /// The original tool name, e.g. "cxi_write_bw".
    pub tool: String,
    /// fabdiag's version; MAJOR.MINOR must match, as in the originals.
    pub version: String,
    /// The client holds a shared key (`--auth-key`) and will prove it,
    /// and wants the server to prove it too. Left out when false, so a
    /// hello without a key is what it always was.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auth: bool,
    /// How it will prove who it is, when `auth`: left out for a shared
    /// key, so a keyed hello is what it always was.
    #[serde(default, skip_serializing_if = "crate::auth::Method::is_key")]
    pub auth_method: crate::auth::Method,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionDesc {
    pub addr: u64,
    pub key: u64,
    pub len: u64,
}

/// A side's TX and RX buffers as its banner names them ("System",
/// "GPU 0") and the GPU type when one is on a GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryDesc {
    pub tx_gpu: Option<u32>,
    pub rx_gpu: Option<u32>,
    pub gpu_type: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Message {
    Hello(Hello),
    /// The client's run parameters (the server adopts them).
    Config {
        params: serde_json::Value,
    },
    /// A side's fabric endpoint: address and the buffers the peer may access.
    Endpoint {
        provider: String,
        domain: String,
        address: Vec<u8>,
        regions: Vec<RegionDesc>,
        /// Where this side's buffers live, for the banners (absent from
        /// older peers: system memory).
        #[serde(default)]
        memory: Option<MemoryDesc>,
    },
    /// A synchronisation point; both sides must name the same phase and size.
    Barrier {
        phase: Phase,
        size: Option<u64>,
    },
    /// One side's measurement of one size.
    Results {
        size: u64,
        elapsed_ns: u64,
        ops: u64,
    },
    /// A side's check of its own memory after a run (atomics: the
    /// target's final value); `report` is null when it had nothing to check.
    Verify {
        report: serde_json::Value,
    },
    /// A side's NIC counters across the measurement (fabdiag-counters'
    /// `Counters`); null from a link with no peer.
    Counters {
        report: serde_json::Value,
    },
    Heartbeat,
    /// A server's challenge to a client that authenticates: a fresh
    /// random nonce (hex).
    Challenge {
        nonce: String,
    },
    /// A proof over both nonces: with a shared key its HMAC-SHA256 (hex),
    /// with MUNGE a credential; the client's carries its own nonce.
    Proof {
        #[serde(default)]
        nonce: Option<String>,
        mac: String,
    },
    /// The sender failed; `message` says why. The run is over.
    Error {
        phase: Phase,
        message: String,
        /// Absent from older peers: a runtime failure.
        #[serde(default)]
        kind: ErrorClass,
    },
}

/// What kind of failure an Error message reports, so that the side that
/// hears of it can exit as the side that failed did: a server that cannot
/// do what the client asked (no FI_HMEM, no GPU) is "unavailable" at the
/// client too, not a broken run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorClass {
    /// The run went wrong: peer, fabric, protocol, data.
    #[default]
    Runtime,
    /// The sender's machine or provider cannot do it: libfabric, provider,
    /// domain, capability, huge pages, the cycle counter, a GPU.
    Unavailable,
}

impl Message {
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Hello(_) => "hello",
            Message::Config { .. } => "config",
            Message::Endpoint { .. } => "endpoint",
            Message::Barrier { .. } => "barrier",
            Message::Results { .. } => "results",
            Message::Verify { .. } => "verify",
            Message::Counters { .. } => "counters",
            Message::Heartbeat => "heartbeat",
            Message::Challenge { .. } => "challenge",
            Message::Proof { .. } => "proof",
            Message::Error { .. } => "error",
        }
    }
}
