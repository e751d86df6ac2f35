//! The measuring thread's POSIX cancellation, switched off while it
//! measures, so that no provider's system call pays for it.
//!
//! fabdiag's process has helper threads beside the one that polls (the
//! stuck-call guard, the heartbeat, the control reader, the signal
//! thread). In a multi-threaded process glibc's cancellable wrappers
//! (`send`, `recv`, `poll`, `read`, `write`: each poll of the tcp provider
//! makes some) switch the calling thread to asynchronous cancellation
//! around the system call and back after it, with a locked
//! compare-and-swap each way, unless the thread's cancellation is already
//! asynchronous: then both are skipped (glibc 2.36, nptl/cancellation.c,
//! `__pthread_enable_asynccancel` and `__pthread_disable_asynccancel`).
//! A thread whose cancellation is disabled is never cancelled whatever its
//! type, so disabled and asynchronous together change nothing but that
//! cost; fabdiag cancels no thread in any case (Rust's threads have no
//! cancellation).
//!
//! Only sets the calling thread's state and puts it back; never prints.

use std::os::raw::c_int;

// glibc's and musl's values (pthread.h): the enums' first and second
// members.
const PTHREAD_CANCEL_DISABLE: c_int = 1;
const PTHREAD_CANCEL_ASYNCHRONOUS: c_int = 1;

extern "C" {
    // Declared here: the libc crate declares neither for Linux.
    fn pthread_setcancelstate(state: c_int, oldstate: *mut c_int) -> c_int;
    fn pthread_setcanceltype(kind: c_int, oldtype: *mut c_int) -> c_int;
}

/// While it lives, the thread that made it cannot be cancelled and its
/// cancellation type is asynchronous; dropped, both are as they were.
/// Not `Send`: it must be dropped on the thread it changed.
pub struct CancellationOff {
    state: c_int,
    kind: c_int,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl CancellationOff {
    /// Switches the calling thread's cancellation off (disabled first, so
    /// the thread is never asynchronously cancellable for an instant).
    pub fn begin() -> Self {
        let (mut state, mut kind) = (0, 0);
        // SAFETY: both functions only change the calling thread's own
        // cancellation fields and write the old value to the pointer given,
        // which points at a live local; they fail only for a value out of
        // range, and ours are the header's.
        unsafe {
            pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut state);
            pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &mut kind);
        }
        CancellationOff {
            state,
            kind,
            _not_send: std::marker::PhantomData,
        }
    }
}

impl Drop for CancellationOff {
    fn drop(&mut self) {
        let mut old = 0;
        // SAFETY: as in `begin`, on the same thread (the type is not Send);
        // the type goes back before the state, so the thread is never
        // cancellable and asynchronous at once.
        unsafe {
            pthread_setcanceltype(self.kind, &mut old);
            pthread_setcancelstate(self.state, &mut old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> (c_int, c_int) {
        let (mut state, mut kind, mut scratch) = (0, 0, 0);
        // SAFETY: each is set to 0 to read what it was, then put back; the
        // pointers are live locals.
        unsafe {
            pthread_setcancelstate(0, &mut state);
            pthread_setcancelstate(state, &mut scratch);
            pthread_setcanceltype(0, &mut kind);
            pthread_setcanceltype(kind, &mut scratch);
        }
        (state, kind)
    }

    #[test]
    fn the_thread_is_off_while_it_lives_and_as_before_after() {
        std::thread::spawn(|| {
            assert_eq!(now(), (0, 0), "a new thread: enabled, deferred");
            let off = CancellationOff::begin();
            assert_eq!(now(), (PTHREAD_CANCEL_DISABLE, PTHREAD_CANCEL_ASYNCHRONOUS));
            drop(off);
            assert_eq!(now(), (0, 0));
        })
        .join()
        .expect("test thread");
    }
}
