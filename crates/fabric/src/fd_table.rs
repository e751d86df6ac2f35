//! The measuring thread's file-descriptor table, made its own before it
//! measures, so that a provider whose every poll is a system call (tcp)
//! pays for each descriptor it names what a single-threaded peer pays.
//!
//! Linux looks a descriptor up without taking a reference on its file
//! only while the table has one user (fs/file.c, `__fget_light`: "if the
//! table is not shared, the file cannot go away under us"). fabdiag's
//! helper threads (the signal thread, the stuck-call guard, the control
//! reader and heartbeat) share the process's table, so every `poll`,
//! `sendto` and `recvfrom` of the timed loop takes and drops a reference
//! on each descriptor it names, which single-threaded fi_pingpong never
//! does. `unshare(CLONE_FILES)` gives the calling thread a copy of the
//! table that it alone uses; the helpers go on sharing the original.
//!
//! It cannot be undone, and the two tables part from then on: a
//! descriptor one side opens later is not in the other's table, and one it
//! closes stays open in the other's until that side closes it or ends.
//! So it is for a process that measures once and ends (a pair tool's
//! client or server, a `serve` worker), whose helpers touch only
//! descriptors opened before (their control connection, standard output
//! and error) and open anything else by path; and only while every other
//! thread is one of the process's own helpers (a provider's or a GPU
//! runtime's thread must go on seeing the descriptors the measuring
//! thread's calls open). The caller decides the first; `take` checks the
//! second.
//!
//! Changes nothing but the calling thread's table; never prints.

use std::io;

/// How the names of fabdiag's own threads start (`fabdiag-signals`,
/// `fabdiag-stuck`, `fabdiag-ctrl-rx`, `fabdiag-ctrl-hb`, ...). A thread
/// started unnamed bears its starter's name: a provider's (psm3 starts
/// two) bears the measuring thread's, the program's name.
pub const HELPERS: &str = "fabdiag-";

/// What `take` did.
#[derive(Debug, PartialEq, Eq)]
pub enum FdTable {
    /// The calling thread now has a table of its own.
    Taken,
    /// It had one already: no other thread shares its table.
    AlreadyOwn,
    /// Left shared: this thread (its name) is not one of ours.
    Declined(String),
    /// Left shared: threads kept starting or ending while they were
    /// listed, so the listing may have missed one.
    Unsettled,
}

/// How many times the threads are listed before `take` gives up on a
/// listing that agrees with the process's count of them.
const LISTINGS: usize = 10;

/// Gives the calling thread a descriptor table of its own, when every
/// other thread that shares its table has a name `ours` accepts and not
/// the calling thread's own (a thread it started unnamed, as a library's
/// are). An error is the kernel's refusal (memory): the table stays
/// shared, which costs only time.
pub fn take(ours: impl Fn(&str) -> bool) -> io::Result<FdTable> {
    let me = tid_of(&std::fs::read_link("/proc/thread-self")?)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "/proc/thread-self names no thread"))?;
    let my_name = std::fs::read_to_string("/proc/thread-self/comm")?;
    let my_name = my_name.trim_end_matches('\n');
    let Some(tasks) = settled_tasks()? else {
        return Ok(FdTable::Unsettled);
    };
    let mut others = 0;
    for task in tasks {
        let Some(tid) = tid_of(&task).filter(|&t| t != me) else {
            continue;
        };
        // a thread that ended since the listing has no name to read
        let Ok(name) = std::fs::read_to_string(task.join("comm")) else {
            continue;
        };
        // (one the kernel cannot compare counts as sharing, and the names
        // decide, unless it has ended since)
        match same_table(me, tid) {
            Some(false) => continue,
            None if !task.exists() => continue,
            _ => {}
        }
        let name = name.trim_end_matches('\n');
        if name == my_name || !ours(name) {
            return Ok(FdTable::Declined(name.to_string()));
        }
        others += 1;
    }
    if others == 0 {
        return Ok(FdTable::AlreadyOwn);
    }
    // SAFETY: unshare(2) with CLONE_FILES only replaces the calling
    // thread's descriptor table with a copy of it (every descriptor the
    // same open file, the same number); it touches no memory of ours, and
    // every descriptor this thread holds stays valid under its number.
    let rc = unsafe { libc::unshare(libc::CLONE_FILES) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FdTable::Taken)
}

/// The process's threads (/proc/self/task/TID), from a listing as long
/// as the kernel's count of them: a thread that ends while the directory
/// is read can shift the rest so that one is skipped (its entries are
/// found by position), and a skipped thread not of ours would leave the
/// measuring thread's calls opening descriptors that thread cannot see.
/// None when no listing agreed.
fn settled_tasks() -> io::Result<Option<Vec<std::path::PathBuf>>> {
    for _ in 0..LISTINGS {
        let tasks = std::fs::read_dir("/proc/self/task")?
            .map(|t| t.map(|t| t.path()))
            .collect::<io::Result<Vec<_>>>()?;
        let status = std::fs::read_to_string("/proc/self/status")?;
        let count = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse::<usize>().ok());
        if count == Some(tasks.len()) {
            return Ok(Some(tasks));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Ok(None)
}

/// The thread id a /proc/…/task/TID path ends in.
fn tid_of(path: &std::path::Path) -> Option<libc::pid_t> {
    path.file_name()?.to_str()?.parse().ok()
}

/// Whether tasks `a` and `b` (thread ids, of this process or of another
/// it may trace) share a descriptor table (kcmp(2), KCMP_FILES); None when
/// the kernel cannot say (built without kcmp, or not allowed).
pub fn same_table(a: libc::pid_t, b: libc::pid_t) -> Option<bool> {
    const KCMP_FILES: libc::c_long = 2;
    // SAFETY: kcmp only compares two tasks' kernel objects (threads name
    // tasks as processes do); the arguments are plain numbers, and the
    // last two are unused for KCMP_FILES.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            libc::c_long::from(a),
            libc::c_long::from(b),
            KCMP_FILES,
            0,
            0,
        )
    };
    (rc >= 0).then_some(rc == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn share(a: i32, b: i32) -> bool {
        same_table(a, b).expect("kcmp answers here")
    }

    fn tid() -> i32 {
        // SAFETY: gettid has no arguments and cannot fail.
        unsafe { libc::gettid() }
    }

    /// A thread that waits until dropped (named `name`, or unnamed: then
    /// it bears its starter's name), and its id.
    struct Parked {
        tid: i32,
        stop: Option<mpsc::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    fn park(name: Option<&str>) -> Parked {
        let (stop, stopped) = mpsc::channel::<()>();
        let (told, id) = mpsc::channel();
        let mut b = std::thread::Builder::new();
        if let Some(n) = name {
            b = b.name(n.into());
        }
        let thread = b
            .spawn(move || {
                let _ = told.send(tid());
                let _ = stopped.recv();
            })
            .expect("parked thread");
        let tid = id.recv().expect("its id");
        Parked {
            tid,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    impl Drop for Parked {
        fn drop(&mut self) {
            drop(self.stop.take());
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    #[test]
    fn the_thread_gets_its_own_table_and_keeps_its_descriptors() {
        // a helper of ours that lives through the test
        let parked = park(Some("ours-helper"));
        let helper = parked.tid;
        let file = scratch_file();
        let took = std::thread::Builder::new()
            .name("ours-measuring".into())
            .spawn(move || {
                let me = tid();
                assert!(share(me, helper), "before: one table");
                // the libtest threads beside us are taken as ours here
                assert_eq!(take(|_| true).expect("unshare"), FdTable::Taken);
                assert!(!share(me, helper), "after: a table of its own");
                // what it held before is still there under the same number
                use std::io::{Read, Seek};
                let mut f = file;
                f.rewind().expect("rewind");
                let mut s = String::new();
                f.read_to_string(&mut s).expect("read");
                assert_eq!(s, "kept");
                // alone in its table now: nothing more to do
                take(|_| true).expect("again")
            })
            .expect("measuring thread")
            .join()
            .expect("measuring thread ran");
        assert_eq!(took, FdTable::AlreadyOwn);
    }

    #[test]
    fn a_thread_not_of_ours_keeps_the_table_shared() {
        let parked = park(Some("someone-else"));
        let other = parked.tid;
        let (took, shared) = std::thread::Builder::new()
            .name("ours-caller".into())
            .spawn(move || {
                let took = take(|n| n != "someone-else").expect("take");
                (took, share(tid(), other))
            })
            .expect("caller")
            .join()
            .expect("thread ran");
        assert_eq!(took, FdTable::Declined("someone-else".into()));
        assert!(shared, "the table stays the process's");
    }

    #[test]
    fn a_thread_started_unnamed_is_not_taken_for_ours() {
        let (took, shared) = std::thread::Builder::new()
            .name("ours-starter".into())
            .spawn(|| {
                // as a provider's thread: started here, no name of its own
                let lib = park(None);
                let took = take(|_| true).expect("take");
                (took, share(tid(), lib.tid))
            })
            .expect("starter")
            .join()
            .expect("starter ran");
        assert_eq!(took, FdTable::Declined("ours-starter".into()));
        assert!(shared);
    }

    /// A file with "kept" in it, opened before the table is copied.
    fn scratch_file() -> std::fs::File {
        use std::io::Write;
        let path = std::env::temp_dir().join(format!("fabdiag-fd-table-{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("scratch file");
        let _ = std::fs::remove_file(&path);
        f.write_all(b"kept").expect("write");
        f
    }
}
