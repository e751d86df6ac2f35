//! Authentication of a control connection with a shared key (`--auth-key`
//! on both sides): after the hellos the server sends a fresh random nonce,
//! the client answers with its own nonce and an HMAC-SHA256 over both, and
//! the server answers with its own HMAC over both. So each side proves it
//! holds the key without the key on the wire, and a recorded exchange is
//! worthless on another connection, whose server nonce differs. The two
//! proofs carry different labels, so a server's proof cannot be sent back
//! as a client's. The exchange itself is `Control`'s
//! (`authenticate_as_client`, `authenticate_client`); this holds the
//! arithmetic and never touches a socket.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of a nonce (sent as hex).
pub const NONCE_BYTES: usize = 32;
/// The shortest key accepted.
pub const MIN_KEY_BYTES: usize = 16;

const CLIENT: &[u8] = b"fabdiag-auth/1 client\0";
const SERVER: &[u8] = b"fabdiag-auth/1 server\0";

/// A shared key, as read from its file. Its bytes never show in a debug
/// print or a message.
#[derive(Clone, PartialEq, Eq)]
pub struct Key(std::sync::Arc<[u8]>);

impl Key {
    /// A key of `bytes`; None when shorter than `MIN_KEY_BYTES`.
    pub fn new(bytes: Vec<u8>) -> Option<Key> {
        (bytes.len() >= MIN_KEY_BYTES).then(|| Key(bytes.into()))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({} bytes)", self.0.len())
    }
}

/// Which side a proof is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prover {
    Client,
    Server,
}

/// A fresh nonce from the operating system's random source, as hex.
pub fn nonce() -> Result<String, String> {
    let mut b = [0u8; NONCE_BYTES];
    getrandom::fill(&mut b).map_err(|e| format!("no random numbers for a nonce: {e}"))?;
    Ok(hex(&b))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
        .collect()
}

fn keyed(key: &[u8], prover: Prover, server_nonce: &str, client_nonce: &str) -> Hmac<Sha256> {
    // an HMAC takes a key of any length
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key"));
    m.update(match prover {
        Prover::Client => CLIENT,
        Prover::Server => SERVER,
    });
    m.update(server_nonce.as_bytes());
    m.update(b"\0");
    m.update(client_nonce.as_bytes());
    m
}

/// `prover`'s proof over the two nonces, as hex.
pub fn proof(key: &[u8], prover: Prover, server_nonce: &str, client_nonce: &str) -> String {
    hex(&keyed(key, prover, server_nonce, client_nonce).finalize().into_bytes())
}

/// Whether `mac` (hex) is `prover`'s proof over the two nonces, compared
/// in constant time.
pub fn verify(key: &[u8], prover: Prover, server_nonce: &str, client_nonce: &str, mac: &str) -> bool {
    let Some(given) = unhex(mac) else {
        return false;
    };
    keyed(key, prover, server_nonce, client_nonce)
        .verify_slice(&given)
        .is_ok()
}

/// Whether `n` looks like a nonce of ours (so a peer cannot make the
/// server hash megabytes).
pub fn well_formed(n: &str) -> bool {
    n.len() == 2 * NONCE_BYTES && n.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_for_its_key_nonces_and_side_only() {
        let (k, s, c) = (b"sixteen byte key", nonce().unwrap(), nonce().unwrap());
        assert!(well_formed(&s) && well_formed(&c) && s != c);
        let p = proof(k, Prover::Client, &s, &c);
        assert!(verify(k, Prover::Client, &s, &c, &p));
        // another key, another server nonce (a replay), the other side's label
        assert!(!verify(b"another key, 16+", Prover::Client, &s, &c, &p));
        assert!(!verify(k, Prover::Client, &nonce().unwrap(), &c, &p));
        assert!(!verify(k, Prover::Server, &s, &c, &p));
        // the nonces cannot be shifted across their boundary
        assert!(!verify(k, Prover::Client, &s[..63], &format!("{}{c}", &s[63..]), &p));
        for bad in ["", "zz", "abc", &p[..62]] {
            assert!(!verify(k, Prover::Client, &s, &c, bad), "{bad}");
        }
        assert!(!well_formed("12") && !well_formed(&"g".repeat(64)));
    }

    #[test]
    fn a_key_is_long_enough_and_never_printed() {
        assert_eq!(Key::new(vec![7; 15]), None);
        let k = Key::new(b"a secret of 16 b".to_vec()).unwrap();
        assert_eq!(format!("{k:?}"), "Key(16 bytes)");
    }
}
