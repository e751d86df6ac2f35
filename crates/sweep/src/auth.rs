//! Rank 0 and a rank prove they hold the sweep's shared key (the pair
//! tool's `--auth-key`) before the rank joins: the rank's join carries a
//! fresh nonce, rank 0 answers with its own nonce and its proof over both,
//! and the rank answers with its proof; HMAC-SHA256 as in the pair tools'
//! exchange (`fabdiag_proto::auth`), never the key on the wire. A process
//! without the key cannot join as a rank, so it can neither take a rank's
//! place nor send a result. It authenticates the connection's start, not
//! every message after it (nothing is encrypted). Reads and writes one
//! connection; judges nothing else.

use crate::protocol::{self, ToCoordinator, ToRank};
use fabdiag_proto::auth::{self, Key, Prover};
use std::net::TcpStream;
use std::time::Instant;

/// The rank's nonce for its join, when it has a key.
pub fn join_nonce(key: Option<&Key>) -> Result<Option<String>, String> {
    key.map(|_| auth::nonce()).transpose()
}

/// Rank 0's side, after a join carrying `theirs` (the rank's nonce):
/// Ok when both or neither hold a key and, with one, the rank proved it;
/// else the reason the rank is refused.
pub fn admit(s: &TcpStream, key: Option<&Key>, theirs: Option<&str>, deadline: Instant) -> Result<(), String> {
    let (key, theirs) = match (key, theirs) {
        (None, None) => return Ok(()),
        (Some(_), None) => return Err("it has no key: this sweep's rank 0 admits only ranks given --auth-key".into()),
        (None, Some(_)) => return Err("rank 0 has no key to prove: it was not given --auth-key".into()),
        (Some(k), Some(n)) if auth::well_formed(n) => (k, n),
        (Some(_), Some(_)) => return Err("its join carries a malformed nonce".into()),
    };
    let ours = auth::nonce()?;
    let mac = auth::proof(key.bytes(), Prover::Server, &ours, theirs);
    protocol::send(
        s,
        &ToRank::Challenge {
            nonce: ours.clone(),
            mac,
        },
    )
    .map_err(|e| format!("cannot challenge it: {e}"))?;
    match protocol::recv::<ToCoordinator>(s, Some(deadline)) {
        Ok(ToCoordinator::Proof { mac }) if auth::verify(key.bytes(), Prover::Client, &ours, theirs, &mac) => Ok(()),
        Ok(ToCoordinator::Proof { .. }) => Err("authentication failed: it does not hold rank 0's key".into()),
        Ok(other) => Err(format!(
            "authentication failed: it answered the challenge with {other:?}"
        )),
        Err(e) => Err(format!("authentication failed: {e}")),
    }
}

/// The rank's side, after its join carrying `ours`: checks rank 0's proof
/// and proves the key. A refusal instead is left for the caller to read.
pub fn prove(s: &TcpStream, key: &Key, ours: &str, deadline: Instant) -> Result<Option<ToRank>, String> {
    match protocol::recv::<ToRank>(s, Some(deadline)) {
        Ok(ToRank::Challenge { nonce, mac }) => {
            if !auth::well_formed(&nonce) || !auth::verify(key.bytes(), Prover::Server, &nonce, ours, &mac) {
                return Err("authentication failed: rank 0 does not hold this rank's key".into());
            }
            let mac = auth::proof(key.bytes(), Prover::Client, &nonce, ours);
            protocol::send(s, &ToCoordinator::Proof { mac }).map_err(|e| format!("cannot prove the key: {e}"))?;
            Ok(None)
        }
        // refused before any challenge (rank 0 has no key, another version)
        Ok(other) => Ok(Some(other)),
        Err(e) => Err(format!("no answer from rank 0 to this rank's join: {e}")),
    }
}
