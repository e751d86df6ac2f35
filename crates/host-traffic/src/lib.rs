//! The host <-> GPU traffic measurement (gc-hosttraffictest on CUDA):
//! `plan` turns options and the GPU's facts into buffer sizes, chunks and
//! launch shapes; `pattern` is the data every test writes and checks (the
//! same function the kernels compute); `account` turns event times into
//! each test's bytes and duration; `deadline` bounds every wait on the GPU.
//! These are pure and tested without a GPU. `run` drives them on a GPU
//! through fabdiag-gpu. Nothing here prints or exits.

pub mod account;
pub mod deadline;
pub mod pattern;
pub mod plan;
pub mod run;
