//! The fabric layer against the real libfabric on this machine, one test
//! binary: discovery and endpoints (`discovery`), contexts lent per
//! operation (`contexts`) and the device-memory registration path
//! (`hmem`). (`stale_shm` is a binary of its own: it needs the library
//! loaded first by its own test.)

mod contexts;
mod discovery;
mod hmem;
