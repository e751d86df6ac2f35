//! The files fabdiag keeps as results: `write` puts a whole file in place
//! at once, or appends whole lines, so a crash, a kill or another user
//! never leaves one that lies. It decides neither what is written nor
//! where; it prints nothing.

pub mod write;
