//! `--auth-key FILE`: the shared key read from its file, which must be a
//! regular file that only its owner can read or write (as ssh holds its
//! private keys), at least `MIN_KEY_BYTES` long. The key's bytes are the
//! file's, newline and all; they are never printed. Reads; decides
//! nothing about the exchange (fabdiag-proto's `auth`).

use fabdiag_proto::auth::{Key, MIN_KEY_BYTES};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The key in `path`, or the one line that says why not.
pub fn read(path: &Path) -> Result<Key, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("--auth-key {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("--auth-key {shown}: not a regular file"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "--auth-key {shown}: others than its owner may read or write it (chmod 600 {shown})"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("--auth-key {shown}: {e}"))?;
    let len = bytes.len();
    Key::new(bytes).ok_or_else(|| {
        format!(
            "--auth-key {shown}: {len} bytes; a key needs at least {MIN_KEY_BYTES} (head -c 32 /dev/urandom > {shown})"
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
