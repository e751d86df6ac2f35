//! The GPU runtime boundary, loaded at run time so fabdiag builds without
//! a CUDA toolkit and starts on machines without a GPU. `runtime` finds
//! which runtimes load here (`discover`); `discovery` lists CUDA devices
//! and resolves one given as an ordinal, a UUID or a PCI bus id, through
//! a small dlopen wrapper of its own (`dl`): cudarc 0.19 panics when
//! libcuda or one of its symbols is missing, and discovery must answer
//! those cases with an error. Everything past discovery (memory, streams,
//! events, kernels) is `cuda`, on cudarc, which launches the kernels
//! `launch` describes as plain data; `hip` and `ze` hold AMD and Intel
//! device memory; every runtime's memory is a `buffer::Buffer`; `wait`
//! is the one bounded wait; `numa` places host memory. Like the fabric crate it holds `unsafe`
//! (each block with a SAFETY note); it never prints and never exits.

pub mod buffer;
pub mod cuda;
pub mod discovery;
mod dl;
mod error;
pub mod hip;
pub mod launch;
pub mod numa;
pub mod runtime;
pub mod wait;
pub mod ze;

pub use buffer::Buffer;
pub use discovery::{format_uuid, resolve, Cuda, Device, DEFAULT_LIBRARY};
pub use error::GpuError;
pub use hip::HIP_LIBRARY;
pub use runtime::{device_count, discover, library_present, GpuKind};
pub use wait::poll_until;
pub use ze::LEVEL_ZERO_LIBRARY;
