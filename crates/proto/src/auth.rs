//! Authentication of a control connection, by a shared key (`--auth-key`
//! on both sides) or by MUNGE credentials (`--auth-munge`, the cluster's
//! munge key, as Slurm authenticates). After the hellos the server sends a
//! fresh random nonce, the client answers with its own nonce and a proof
//! over both, and the server answers with its own proof over both. With a
//! key the proof is an HMAC-SHA256, so each side proves it holds the key
//! without the key on the wire; with MUNGE it is a credential from the
//! side's munged carrying both nonces, which only a munged holding the
//! cluster's key decodes, and only once. Either way a recorded exchange is
//! worthless on another connection, whose server nonce differs, and the
//! two proofs carry different labels, so a server's proof cannot be sent
//! back as a client's. The exchange itself is `Control`'s
//! (`authenticate_as_client`, `authenticate_client`) and the sweep's; this
//! holds the proofs and never touches a socket.

use crate::munge::{self, MungeError};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
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

impl Prover {
    fn label(self) -> &'static str {
        match self {
            Prover::Client => "client",
            Prover::Server => "server",
        }
    }
}

/// How the two sides prove who they are; told in the hello, so a side
/// asked for the other way says so in one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    #[default]
    Key,
    Munge,
}

impl Method {
    pub fn is_key(&self) -> bool {
        *self == Method::Key
    }

    /// The option that asks for it.
    pub fn option(self) -> &'static str {
        match self {
            Method::Key => "--auth-key",
            Method::Munge => "--auth-munge",
        }
    }

    /// What is proved, for messages.
    pub fn what(self) -> &'static str {
        match self {
            Method::Key => "a shared key",
            Method::Munge => "MUNGE credentials",
        }
    }
}

/// What this side proves and checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// The shared key both sides hold.
    Key(Key),
    /// MUNGE credentials from this node's munged; a peer's is admitted
    /// when its user is one of `users` (names or UIDs), or any user the
    /// cluster's munge key vouches for when None.
    Munge { users: Option<Vec<String>> },
}

/// Why a peer's proof is not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denied {
    /// Not an HMAC with this side's key (or not one at all).
    WrongKey,
    /// munged did not accept the credential.
    Munge(MungeError),
    /// A good credential, made for another connection's nonces or side.
    OtherConnection,
    /// A good credential from a user not admitted.
    User { who: String, allowed: String },
}

impl Denied {
    /// The reason in one phrase: `whose` names the peer's proof ("the
    /// client's"), `wrong_key` says a key mismatch the caller's way.
    pub fn said(&self, whose: &str, wrong_key: &str) -> String {
        match self {
            Denied::WrongKey => wrong_key.into(),
            Denied::Munge(e) => format!("{whose} MUNGE credential is refused: {e}"),
            Denied::OtherConnection => format!("{whose} MUNGE credential was made for another connection"),
            Denied::User { who, allowed } => {
                format!("{whose} MUNGE credential is from user {who}, not one of the users admitted ({allowed})")
            }
        }
    }
}

impl Auth {
    pub fn method(&self) -> Method {
        match self {
            Auth::Key(_) => Method::Key,
            Auth::Munge { .. } => Method::Munge,
        }
    }

    /// Whether this side can make and check its proofs at all: with MUNGE,
    /// whether munged here makes a credential and takes it back. Asked
    /// before a tool listens or connects, so a node without munged says
    /// so at once.
    pub fn ready(&self) -> Result<(), MungeError> {
        match self {
            Auth::Key(_) => Ok(()),
            Auth::Munge { .. } => munge::decode(&munge::encode("fabdiag-auth/1 ready")?).map(|_| ()),
        }
    }

    /// `prover`'s proof over the two nonces; Err when munged cannot make one.
    pub fn prove(&self, prover: Prover, server_nonce: &str, client_nonce: &str) -> Result<String, MungeError> {
        match self {
            Auth::Key(k) => Ok(proof(k.bytes(), prover, server_nonce, client_nonce)),
            Auth::Munge { .. } => munge::encode(&payload(prover, server_nonce, client_nonce)),
        }
    }

    /// Whether `given` is `prover`'s proof over the two nonces (and, with
    /// MUNGE, from a user admitted).
    pub fn check(&self, prover: Prover, server_nonce: &str, client_nonce: &str, given: &str) -> Result<(), Denied> {
        match self {
            Auth::Key(k) if verify(k.bytes(), prover, server_nonce, client_nonce, given) => Ok(()),
            Auth::Key(_) => Err(Denied::WrongKey),
            Auth::Munge { users } => {
                let d = munge::decode(given).map_err(Denied::Munge)?;
                if d.payload != payload(prover, server_nonce, client_nonce) {
                    return Err(Denied::OtherConnection);
                }
                match users {
                    Some(list) if !list.iter().any(|u| *u == d.user || u.parse() == Ok(d.uid)) => Err(Denied::User {
                        who: d.who(),
                        allowed: list.join(","),
                    }),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// A MUNGE credential's payload: the side and both nonces.
fn payload(prover: Prover, server_nonce: &str, client_nonce: &str) -> String {
    format!("fabdiag-auth/1 {} {server_nonce} {client_nonce}", prover.label())
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
    fn a_hello_says_munge_and_one_without_the_field_means_a_key() {
        use crate::message::{Hello, Message};
        let mut h = Hello {
            magic: crate::MAGIC.into(),
            protocol: crate::PROTOCOL,
            tool: "cxi_send_lat".into(),
            version: "0.1.0".into(),
            auth: true,
            auth_method: Method::Key,
        };
        let keyed = serde_json::to_string(&Message::Hello(h.clone())).unwrap();
        assert!(!keyed.contains("auth_method"), "{keyed}");
        h.auth_method = Method::Munge;
        let munge = serde_json::to_string(&Message::Hello(h.clone())).unwrap();
        assert!(munge.contains(r#""auth_method":"munge""#), "{munge}");
        assert_eq!(serde_json::from_str::<Message>(&munge).unwrap(), Message::Hello(h));
    }

    #[test]
    fn a_refusal_names_whose_proof_and_why() {
        let key = Auth::Key(Key::new(b"sixteen byte key".to_vec()).unwrap());
        let (s, c) = (nonce().unwrap(), nonce().unwrap());
        let p = key.prove(Prover::Client, &s, &c).unwrap();
        assert_eq!(key.check(Prover::Client, &s, &c, &p), Ok(()));
        let d = key.check(Prover::Server, &s, &c, &p).unwrap_err();
        assert_eq!(d.said("the client's", "no key"), "no key");
        let m = Denied::Munge(MungeError::Replayed);
        assert_eq!(
            m.said("the client's", "no key"),
            "the client's MUNGE credential is refused: it was replayed: munged decoded it before"
        );
        assert_eq!(
            Denied::OtherConnection.said("rank 0's", ""),
            "rank 0's MUNGE credential was made for another connection"
        );
        let u = Denied::User {
            who: "nobody (65534)".into(),
            allowed: "0".into(),
        };
        assert_eq!(
            u.said("its", ""),
            "its MUNGE credential is from user nobody (65534), not one of the users admitted (0)"
        );
        // a credential that is not one never reaches unmunge
        let munge = Auth::Munge { users: None };
        assert_eq!(
            munge.check(Prover::Client, &s, &c, "MUNGE:a b:"),
            Err(Denied::Munge(MungeError::Malformed))
        );
        assert_eq!((key.method(), munge.method()), (Method::Key, Method::Munge));
    }

    #[test]
    fn a_key_is_long_enough_and_never_printed() {
        assert_eq!(Key::new(vec![7; 15]), None);
        let k = Key::new(b"a secret of 16 b".to_vec()).unwrap();
        assert_eq!(format!("{k:?}"), "Key(16 bytes)");
    }
}
