//! Result files written so that neither a crash nor another user can make
//! them lie: a whole file goes to a new temporary name beside it (created
//! exclusively, so never through a link or over someone's file) and is
//! renamed over its name, so a reader, or a kill at any moment, sees the
//! old content or the new, never half; a file appended line by line is
//! opened without following a link at its name. It does not decide what
//! is written or where.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// O_NOFOLLOW: opening a symbolic link fails (ELOOP) instead of opening
/// what it points to.
fn no_follow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// A new file beside `path`, made for this write alone.
fn temporary(path: &Path) -> std::io::Result<(File, PathBuf)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?
        .to_string_lossy()
        .into_owned();
    let mut last = None;
    for attempt in 0..64 {
        let tmp = dir.join(format!(".{name}.{}.{attempt}.part", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(no_follow())
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name was free")))
}

/// Writes `path` whole through `fill`, then renames it into place.
pub fn whole_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let (f, tmp) = temporary(path)?;
    let mut w = BufWriter::new(f);
    let done = fill(&mut w)
        .and_then(|()| w.flush())
        .and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Writes `body` as the whole of `path`.
pub fn whole(path: &Path, body: &[u8]) -> std::io::Result<()> {
    whole_with(path, |w| w.write_all(body))
}

/// `path` opened to append, created if absent; a link at its name is
/// refused, not followed.
pub fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o644)
        .custom_flags(no_follow())
        .open(path)
}
