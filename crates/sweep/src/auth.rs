//! Rank 0 and a rank prove who they are (the pair tool's `--auth-key` or
//! `--auth-munge`) before the rank joins: the rank's join carries a fresh
//! nonce, rank 0 answers with its own nonce and its proof over both, and
//! the rank answers with its proof; the pair tools' proofs
//! (`fabdiag_proto::auth`): an HMAC with the shared key, never the key on
//! the wire, or a MUNGE credential from a user admitted. A process that
//! cannot prove it can neither take a rank's place nor send a result. It
//! authenticates the connection's start, not every message after it
//! (nothing is encrypted). Reads and writes one connection; judges nothing
//! else.

use crate::protocol::{self, ToCoordinator, ToRank};
use fabdiag_proto::auth::{self, Auth, Method, Prover};
use std::net::TcpStream;
use std::time::Instant;

/// The rank's nonce for its join, when it authenticates.
pub fn join_nonce(with: Option<&Auth>) -> Result<Option<String>, String> {
    with.map(|_| auth::nonce()).transpose()
}

/// Rank 0's side, after a join carrying `theirs` (the rank's nonce and
/// method): Ok when neither authenticates or, when both do the same way,
/// the rank proved it; else the reason the rank is refused.
pub fn admit(
    s: &TcpStream,
    with: Option<&Auth>,
    theirs: Option<(&str, Method)>,
    deadline: Instant,
) -> Result<(), String> {
    let (with, theirs) = match (with, theirs) {
        (None, None) => return Ok(()),
        (Some(a), None) => {
            let lacks = match a.method() {
                Method::Key => "key",
                Method::Munge => "MUNGE credential",
            };
            return Err(format!(
                "it has no {lacks}: this sweep's rank 0 admits only ranks given {}",
                a.method().option()
            ));
        }
        (None, Some((_, m))) => {
            return Err(format!(
                "rank 0 cannot prove {}: it was not given {}",
                m.what(),
                m.option()
            ))
        }
        (Some(a), Some((_, m))) if a.method() != m => {
            return Err(format!(
                "it offers {}, rank 0 takes {} ({})",
                m.what(),
                a.method().what(),
                a.method().option()
            ))
        }
        (Some(a), Some((n, _))) if auth::well_formed(n) => (a, n),
        (Some(_), Some(_)) => return Err("its join carries a malformed nonce".into()),
    };
    let ours = auth::nonce()?;
    let mac = with
        .prove(Prover::Server, &ours, theirs)
        .map_err(|e| format!("rank 0 cannot make a MUNGE credential: {e}"))?;
    protocol::send(
        s,
        &ToRank::Challenge {
            nonce: ours.clone(),
            mac,
        },
    )
    .map_err(|e| format!("cannot challenge it: {e}"))?;
    match protocol::recv::<ToCoordinator>(s, Some(deadline)) {
        Ok(ToCoordinator::Proof { mac }) => with.check(Prover::Client, &ours, theirs, &mac).map_err(|d| {
            format!(
                "authentication failed: {}",
                d.said("its", "it does not hold rank 0's key")
            )
        }),
        Ok(other) => Err(format!(
            "authentication failed: it answered the challenge with {other:?}"
        )),
        Err(e) => Err(format!("authentication failed: {e}")),
    }
}

/// The rank's side, after its join carrying `ours`: checks rank 0's proof
/// and proves itself. A refusal instead is left for the caller to read.
pub fn prove(s: &TcpStream, with: &Auth, ours: &str, deadline: Instant) -> Result<Option<ToRank>, String> {
    match protocol::recv::<ToRank>(s, Some(deadline)) {
        Ok(ToRank::Challenge { nonce, mac }) => {
            if !auth::well_formed(&nonce) {
                return Err("authentication failed: rank 0's challenge is malformed".into());
            }
            with.check(Prover::Server, &nonce, ours, &mac).map_err(|d| {
                format!(
                    "authentication failed: {}",
                    d.said("rank 0's", "rank 0 does not hold this rank's key")
                )
            })?;
            let mac = with
                .prove(Prover::Client, &nonce, ours)
                .map_err(|e| format!("this rank cannot make a MUNGE credential: {e}"))?;
            protocol::send(s, &ToCoordinator::Proof { mac }).map_err(|e| format!("cannot prove itself: {e}"))?;
            Ok(None)
        }
        // refused before any challenge (rank 0 has no key, another version)
        Ok(other) => Ok(Some(other)),
        Err(e) => Err(format!("no answer from rank 0 to this rank's join: {e}")),
    }
}
