//! Result files written so that neither a crash nor another user can make
//! them lie: a whole file goes to a new temporary name beside it (created
//! exclusively, so never through a link or over someone's file) and is
//! renamed over its name, so a reader, or a kill at any moment, sees the
//! old content or the new, never half; a file appended line by line is
//! opened without following a link at its name, and a line a crash cut
//! short at its end is cut off before the next is appended. It does not decide what
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

/// `path` opened to append lines to, created if absent; a link at its name
/// is refused, not followed. Each line goes in one write, so a crash can
/// only cut the last one short: a last line with no newline (a crash's,
/// no result) is cut off here, before anything is appended, so the next
/// line starts on a line of its own instead of being glued to the torn one
/// and lost with it.
pub fn append_lines(path: &Path) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .create(true)
        .append(true)
        .mode(0o644)
        .custom_flags(no_follow())
        .open(path)?;
    let len = f.metadata()?.len();
    if let Some(keep) = whole_lines_end(&f, len)? {
        f.set_len(keep)?;
    }
    Ok(f)
}

/// Where the last whole line of `f` (of `len` bytes) ends, when what
/// follows it is a torn line; None when the file ends with a newline or
/// is empty. Reads back from the end, a block at a time.
fn whole_lines_end(f: &File, len: u64) -> std::io::Result<Option<u64>> {
    use std::os::unix::fs::FileExt;
    let mut last = [0u8; 1];
    if len == 0 {
        return Ok(None);
    }
    f.read_exact_at(&mut last, len - 1)?;
    if last[0] == b'\n' {
        return Ok(None);
    }
    let mut block = vec![0u8; 64 << 10];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..(end - start) as usize];
        f.read_exact_at(chunk, start)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(start + i as u64 + 1));
        }
        end = start;
    }
    Ok(Some(0))
}
