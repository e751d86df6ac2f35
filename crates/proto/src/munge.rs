//! MUNGE credentials, as Slurm authenticates: a credential made by this
//! node's munged with the cluster's munge key, which only a munged holding
//! the same key can decode, and then only once (munged keeps every decoded
//! credential until its time to live runs out and refuses it again as
//! "replayed"). fabdiag puts the connection's two nonces in the payload,
//! so a credential is worth nothing on another connection either.
//!
//! It runs munge(1) and unmunge(1), each killed past `LIMIT`, rather than
//! linking libmunge: the binary then needs libmunge on no node that does
//! not use MUNGE, and a connection makes two calls, each a few
//! milliseconds. The exit statuses are libmunge's error numbers (munge.h,
//! `munge_err_t`); unmunge prints what it decoded (`-k` names the fields)
//! then a blank line and the payload. Talks to the default socket
//! (/run/munge/munge.socket.2). Judges nothing beyond the credential:
//! which users are admitted is `auth`'s.

use std::time::Duration;

/// How long munge or unmunge may take (munged answers in milliseconds).
pub const LIMIT: Duration = Duration::from_secs(5);
/// The longest credential taken from a peer (fabdiag's are about 300 bytes).
pub const MAX_CREDENTIAL: usize = 4096;

/// libmunge's error numbers that fabdiag tells apart (munge.h).
const EMUNGE_SOCKET: i32 = 6;
const EMUNGE_CRED_INVALID: i32 = 14;
const EMUNGE_CRED_EXPIRED: i32 = 15;
const EMUNGE_CRED_REWOUND: i32 = 16;
const EMUNGE_CRED_REPLAYED: i32 = 17;

/// Why a credential could not be made or was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MungeError {
    /// munge or unmunge is not installed, or did not end in time.
    #[error("{0} (install the munge package and start munged)")]
    NoTool(String),
    /// munged is not running here (or its socket is out of reach).
    #[error("munged is not running on this node: {0}")]
    NoDaemon(String),
    /// Made with another munge key, or altered.
    #[error("it does not decode with this node's munge key (another cluster's key, or altered)")]
    Invalid,
    /// Older than its time to live.
    #[error("it has expired (are the nodes' clocks apart?)")]
    Expired,
    /// Made in the future as this node's clock has it.
    #[error("it was made in this node's future (are the nodes' clocks apart?)")]
    Rewound,
    /// Decoded on this node before.
    #[error("it was replayed: munged decoded it before")]
    Replayed,
    /// Not shaped as a credential.
    #[error("it is not a MUNGE credential")]
    Malformed,
    /// Any other failure, in munge's words.
    #[error("{0}")]
    Other(String),
}

/// A credential's contents that fabdiag reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The user who made it, as munged names it, e.g. `root`.
    pub user: String,
    pub uid: u32,
    pub payload: String,
}

impl Decoded {
    /// `user (uid)`, as unmunge shows it.
    pub fn who(&self) -> String {
        format!("{} ({})", self.user, self.uid)
    }
}

/// A new credential carrying `payload`, from this node's munged.
pub fn encode(payload: &str) -> Result<String, MungeError> {
    let done = run("munge", &["-s", payload], None)?;
    match done.0 {
        0 => Ok(done.1.trim().to_string()),
        code => Err(refusal(code, &done.2)),
    }
}

/// What `credential` says, if this node's munged accepts it.
pub fn decode(credential: &str) -> Result<Decoded, MungeError> {
    if !well_formed(credential) {
        return Err(MungeError::Malformed);
    }
    let input = format!("{credential}\n").into_bytes();
    let (code, out, err) = run("unmunge", &["-k", "status,uid"], Some(input))?;
    if code != 0 {
        return Err(refusal(code, &err));
    }
    parse(&out).ok_or_else(|| MungeError::Other(format!("unmunge printed what fabdiag cannot read: {out:?}")))
}

/// Whether `c` is shaped as a credential (so a peer cannot hand unmunge
/// megabytes or a line break).
pub fn well_formed(c: &str) -> bool {
    c.len() <= MAX_CREDENTIAL
        && c.len() > "MUNGE::".len()
        && c.starts_with("MUNGE:")
        && c.ends_with(':')
        && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=:".contains(&b))
}

/// Runs a munge tool: its exit status, output and error output.
fn run(program: &str, args: &[&str], input: Option<Vec<u8>>) -> Result<(i32, String, String), MungeError> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let done = fabdiag_timebox::finish(program, &args, input, LIMIT).map_err(MungeError::NoTool)?;
    // killed by a signal: no libmunge number
    let code = done.status.and_then(|s| s.code()).unwrap_or(-1);
    Ok((code, done.stdout, done.stderr))
}

/// The error for a munge tool's exit status `code`, its message `err`
/// (`munge: Error: Failed to access "...": No such file ...`).
fn refusal(code: i32, err: &str) -> MungeError {
    let said = err
        .lines()
        .find_map(|l| l.split_once("Error: ").map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| format!("exit status {code}"));
    match code {
        EMUNGE_SOCKET => MungeError::NoDaemon(said),
        EMUNGE_CRED_INVALID => MungeError::Invalid,
        EMUNGE_CRED_EXPIRED => MungeError::Expired,
        EMUNGE_CRED_REWOUND => MungeError::Rewound,
        EMUNGE_CRED_REPLAYED => MungeError::Replayed,
        _ => MungeError::Other(format!("munge failed: {said}")),
    }
}

/// unmunge's output with `-k status,uid`:
/// `STATUS: Success (0)`, `UID: root (0)`, a blank line, the payload.
fn parse(out: &str) -> Option<Decoded> {
    let (meta, payload) = out.split_once("\n\n")?;
    let field = |name: &str| {
        meta.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(':')))
            .map(str::trim)
    };
    if !field("STATUS")?.ends_with("(0)") {
        return None;
    }
    let (user, uid) = field("UID")?.strip_suffix(')')?.rsplit_once(" (")?;
    Some(Decoded {
        user: user.to_string(),
        uid: uid.parse().ok()?,
        payload: payload.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmunge_output_is_read_and_anything_else_is_not() {
        let out = "STATUS:          Success (0)\nUID:             alice (1001)\n\nfabdiag-auth/1 client a b";
        assert_eq!(
            parse(out),
            Some(Decoded {
                user: "alice".into(),
                uid: 1001,
                payload: "fabdiag-auth/1 client a b".into()
            })
        );
        assert_eq!(parse(out).map(|d| d.who()).as_deref(), Some("alice (1001)"));
        for bad in [
            "",
            "STATUS: Success (0)\nUID: root (0)",
            "STATUS: Replayed credential (17)\nUID: root (0)\n\nx",
            "STATUS: Success (0)\nUID: root\n\nx",
            "STATUS: Success (0)\nUID: root (x)\n\nx",
            "STATUS: Success (0)\n\nx",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn exit_statuses_are_told_apart_in_munge_words() {
        let e = refusal(
            6,
            "munge: Error: Failed to access \"/run/munge/munge.socket.2\": No such file or directory (Did you start munged?)\n",
        );
        assert_eq!(
            e.to_string(),
            "munged is not running on this node: Failed to access \"/run/munge/munge.socket.2\": No such file or directory (Did you start munged?)"
        );
        assert_eq!(refusal(14, "unmunge: Error: Invalid credential"), MungeError::Invalid);
        assert_eq!(refusal(15, ""), MungeError::Expired);
        assert_eq!(refusal(16, ""), MungeError::Rewound);
        assert_eq!(refusal(17, ""), MungeError::Replayed);
        assert_eq!(refusal(1, ""), MungeError::Other("munge failed: exit status 1".into()));
    }

    #[test]
    fn only_a_credential_shape_is_handed_to_unmunge() {
        assert!(well_formed("MUNGE:AwQFAAAqz0JIMXBlxvCVMBPJD0Z14JX7Z2rF+/=:"));
        for bad in ["", "MUNGE::", "MUNGE:abc", "abc:", "MUNGE:a\nb:", "MUNGE:a b:"] {
            assert!(!well_formed(bad), "{bad:?}");
        }
        assert!(!well_formed(&format!("MUNGE:{}:", "a".repeat(MAX_CREDENTIAL))));
        assert_eq!(decode("MUNGE:a b:"), Err(MungeError::Malformed));
    }
}
