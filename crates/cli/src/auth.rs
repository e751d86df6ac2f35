//! How a tool authenticates, from its options: `--auth-key FILE`, the
//! shared key read from its file, which must be a regular file that only
//! its owner can read or write, owned by the user fabdiag runs as or root
//! (as ssh holds its private keys, and sshd's StrictModes), at least
//! `MIN_KEY_BYTES` long (the key's bytes are the file's, newline and all;
//! they are never printed); or `--auth-munge`, once munged here has made a
//! credential and taken it back, so a node without munged says so before
//! anything listens or connects. Decides nothing about the exchange
//! (fabdiag-proto's `auth`).

use crate::exit;
use fabdiag_files::read::{self as file, ReadError};
use fabdiag_proto::auth::{Auth, Key, MIN_KEY_BYTES};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// The key in `path`, or the one line that says why not.
pub fn read(path: &Path) -> Result<Key, String> {
    let shown = path.display();
    // (the owner and mode checked are the open file's, the one read)
    let (f, meta) = file::open(path).map_err(|e| match e {
        ReadError::NotRegular(_) => format!("--auth-key {shown}: not a regular file"),
        e => format!("--auth-key {shown}: {e}"),
    })?;
    // another user who owns the file can change the key this node trusts
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!(
            "--auth-key {shown}: owned by uid {}, not by this user (uid {me}) or root: its owner could change the key (chown {me} {shown})",
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "--auth-key {shown}: others than its owner may read or write it (chmod 600 {shown})"
        ));
    }
    let bytes = file::capped(f, &meta, file::CONFIG_CAP).map_err(|e| format!("--auth-key {shown}: {e}"))?;
    let len = bytes.len();
    Key::new(bytes).ok_or_else(|| {
        format!(
            "--auth-key {shown}: {len} bytes; a key needs at least {MIN_KEY_BYTES} (head -c 32 /dev/urandom > {shown})"
        )
    })
}

/// What `--auth-key FILE` or `--auth-munge` (admitting `users`) ask for,
/// ready to use; or the exit status and the one line that says why not.
pub fn from_options(key: Option<&Path>, munge: bool, users: Option<Vec<String>>) -> Result<Option<Auth>, (u8, String)> {
    if let Some(path) = key {
        return read(path).map(|k| Some(Auth::Key(k))).map_err(|m| (exit::USAGE, m));
    }
    if !munge {
        return Ok(None);
    }
    let with = Auth::Munge { users };
    with.ready().map_err(|e| {
        (
            exit::UNAVAILABLE,
            format!("--auth-munge: no MUNGE credential can be made here: {e}"),
        )
    })?;
    Ok(Some(with))
}

/// This process's user ID (the owner of /proc/self): a sweep's ranks, one
/// job's processes, admit only credentials of their own user.
pub fn own_uid() -> Result<u32, (u8, String)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid()).map_err(|e| {
        (
            exit::RUNTIME,
            format!("cannot learn this process's user from /proc/self: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_must_be_private_and_long_enough() {
        let dir = tempfile::tempdir().expect("a folder");
        let f = dir.path().join("key");
        std::fs::write(&f, b"0123456789abcdef").expect("written");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert!(read(&f).unwrap_err().contains("(chmod 600 "), "world-readable");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert_eq!(read(&f).expect("a key").bytes(), b"0123456789abcdef");
        std::fs::write(&f, b"short").expect("written");
        assert!(read(&f).unwrap_err().contains("5 bytes; a key needs at least 16"));
        assert!(read(dir.path()).unwrap_err().ends_with("not a regular file"));
        assert!(read(&dir.path().join("none")).unwrap_err().contains("No such file"));
    }
}
