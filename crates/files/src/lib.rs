//! The files fabdiag keeps and the files it is told to read: `write` puts
//! a whole result file in place at once, or appends whole lines, so a
//! crash, a kill or another user never leaves one that lies; `read` reads
//! a file a user named as the untrusted input it is (a regular file, of a
//! sane size, read within its bounds and, where a budget applies, its
//! time). It decides neither what is read or written nor where; it prints
//! nothing.

pub mod read;
pub mod write;
