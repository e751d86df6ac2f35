//! `fabdiag health`'s parts that decide nothing by themselves running
//! tests: the PCI topology and NIC links read from sysfs, the
//! expectations file, the checks and their verdicts (Nagios's OK,
//! WARNING, CRITICAL, UNKNOWN), the text, JSON and Prometheus metrics a
//! verdict is given as, and whether Slurm should drain or resume the
//! node. The binary runs the measurements and `scontrol`; nothing here
//! starts a process, opens a fabric or prints.

pub mod bare;
pub mod expect;
pub mod judge;
pub mod link;
pub mod metrics;
pub mod slurm;
pub mod topology;
pub mod verdict;

pub use verdict::{Check, Health, Verdict};
