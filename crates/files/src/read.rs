//! Files fabdiag reads that a user or another program named: every one
//! is untrusted input. Before a byte is read, the path must be a regular
//! file (a FIFO would block for ever, a device such as /dev/zero never
//! end) no larger than the caller's cap; it is then opened without
//! blocking and read to at most the cap, so a file that grows while it is
//! read is refused too. A read that must end within a time (a health
//! check's budget) goes through `within`, which gives up on a file system
//! that does not answer (a stale NFS mount) instead of waiting with it.
//! Says why in one line (the caller puts the option and path first);
//! prints nothing.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// Nothing at the path.
    #[error("{0}")]
    Absent(String),
    /// The file system's own error (permission denied, ...).
    #[error("{0}")]
    Io(String),
    /// Not a regular file: what it is instead.
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    /// Larger than the caller takes.
    #[error("{size} bytes, more than the {cap} this file may hold")]
    TooLarge { size: u64, cap: u64 },
    /// Not read within the time given.
    #[error("not read within {} s (is its file system answering?)", .0.as_secs_f64())]
    TooSlow(Duration),
    /// Not UTF-8 text.
    #[error("not text (UTF-8)")]
    NotText,
}

/// A path's kind, said as `ls -l` would mean it.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

fn io(e: std::io::Error) -> ReadError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::Absent(e.to_string()),
        _ => ReadError::Io(e.to_string()),
    }
}

/// Anything but a regular file refused, saying what it is.
fn regular(meta: &std::fs::Metadata) -> Result<(), ReadError> {
    match meta.file_type() {
        t if t.is_file() => Ok(()),
        t => Err(ReadError::NotRegular(kind(t))),
    }
}

/// The regular file at `path` (a link followed) opened to read, with what
/// the open file says of itself (its owner, mode and size). Checked before
/// the open, so a device is never opened, and on the open file, so what is
/// put in its place between the two is never read; opened without
/// blocking (O_NONBLOCK), so a FIFO put there opens at once instead of
/// waiting for a writer. For a file read as a stream (a sweep's document,
/// gigabytes at 10,000 ranks) as for one read whole (`bytes`).
pub fn open(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), ReadError> {
    regular(&std::fs::metadata(path).map_err(io)?)?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    regular(&meta)?;
    Ok((f, meta))
}

/// At most `cap` bytes of `f`, a file `open` gave with its `meta`.
pub fn capped(f: std::fs::File, meta: &std::fs::Metadata, cap: u64) -> Result<Vec<u8>, ReadError> {
    if meta.len() > cap {
        return Err(ReadError::TooLarge { size: meta.len(), cap });
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(cap.saturating_add(1)).read_to_end(&mut out).map_err(io)?;
    if out.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            size: out.len() as u64,
            cap,
        });
    }
    Ok(out)
}

/// The bytes of the regular file at `path`, at most `cap` of them.
pub fn bytes(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (f, meta) = open(path)?;
    capped(f, &meta, cap)
}

/// The regular file at `path` as text, at most `cap` bytes.
pub fn text(path: &Path, cap: u64) -> Result<String, ReadError> {
    String::from_utf8(bytes(path, cap)?).map_err(|_| ReadError::NotText)
}

/// `text`, given up after `limit`: the read goes on in a thread of its
/// own, left behind if the file system never answers (it holds nothing
/// but the path).
pub fn text_within(path: &Path, cap: u64, limit: Duration) -> Result<String, ReadError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let owned: PathBuf = path.to_path_buf();
    let spawned = std::thread::Builder::new().name("fabdiag-read".into()).spawn(move || {
        let _ = tx.send(text(&owned, cap));
    });
    if spawned.is_err() {
        // (no thread to be had: read here, as any other read would)
        return text(path, cap);
    }
    rx.recv_timeout(limit).unwrap_or(Err(ReadError::TooSlow(limit)))
}

/// The most bytes of a file fabdiag reads whole as configuration (an
/// expectations file, a peers list, a key, a topology): 16 MiB, far beyond
/// any real one and far below what would hurt a node.
pub const CONFIG_CAP: u64 = 16 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().expect("a folder");
        let p = dir.path().join("f");
        std::fs::write(&p, "a = 1\n").expect("written");
        assert_eq!(text(&p, 100).as_deref(), Ok("a = 1\n"));
        assert_eq!(text(&p, 3), Err(ReadError::TooLarge { size: 6, cap: 3 }));
    }

    #[test]
    fn what_is_not_a_regular_file_is_refused_without_reading() {
        let dir = tempfile::tempdir().expect("a folder");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).expect("mkfifo");
        assert_eq!(text(&fifo, 100), Err(ReadError::NotRegular("a FIFO")));
        assert_eq!(
            text(Path::new("/dev/zero"), 100),
            Err(ReadError::NotRegular("a character device"))
        );
        assert_eq!(text(dir.path(), 100), Err(ReadError::NotRegular("a folder")));
        assert!(matches!(text(&dir.path().join("none"), 100), Err(ReadError::Absent(_))));
        assert_eq!(
            ReadError::NotRegular("a FIFO").to_string(),
            "not a regular file (a FIFO)"
        );
    }

    #[test]
    fn a_read_within_a_limit_returns_what_it_read() {
        let dir = tempfile::tempdir().expect("a folder");
        let p = dir.path().join("f");
        std::fs::write(&p, [0xff, 0xfe]).expect("written");
        assert_eq!(text_within(&p, 100, Duration::from_secs(5)), Err(ReadError::NotText));
    }
}
