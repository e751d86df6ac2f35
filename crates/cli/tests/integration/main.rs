//! fabdiag's integration tests, one binary: real fabdiag processes over
//! loopback, in network namespaces, under mpirun and Slurm, with faults
//! made on purpose. Each module is one area (a tool family, a command, a
//! kind of fault); `common` is the harness every one of them uses. One
//! binary builds the harness once and lets the harness's CPU lock keep
//! busy-polling tests of every area apart. Run one area with a filter:
//! `cargo test --release -p fabdiag --test integration sweep::`.

mod common;

mod alerts;
mod amo;
mod auth;
mod auth_munge;
mod bw_faults;
mod bw_hugepages;
mod bw_loopback;
mod chaos;
mod clos;
mod counters;
mod cpu_cuda;
mod docs;
mod doctor;
mod gpu;
mod gpu_loopback;
mod gpu_plumbing;
mod health;
mod host_traffic;
mod lat;
mod metrics;
mod monitor;
mod netns;
mod op_contexts;
mod package;
mod pattern;
mod pattern_alltoall;
mod pattern_incast;
mod pattern_victim;
mod serve;
mod streams;
mod sweep;
mod sweep_history;
mod sweep_launchers;
mod sweep_report;
mod topology;
mod untrusted_files;
mod utility;
mod verify;
