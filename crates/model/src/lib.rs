//! fabdiag's shared vocabulary, the words every other crate speaks:
//! `catalog` names every tool once; `counters` the NIC counters set
//! beside a pair test's result; `run` describes a run and its result
//! rows as a side saw them; `spec` is what a client decides for a test,
//! with the limits a peer is held to; `own` is what each side chooses for
//! itself; `provider` a libfabric provider's name, taken apart and
//! compared in one place; `probe` what probing the providers found;
//! `threshold` what a user demands of the results; `host_traffic` the
//! host-traffic tests; `units` the conversions the originals print with;
//! `words` the originals' words a run description carries.
//!
//! Plain data and pure functions: nothing here measures, renders, prints,
//! does I/O, or knows libfabric, a GPU runtime or a socket, so the option
//! parser and the renderers build without any of them.

pub mod catalog;
pub mod counters;
pub mod host_traffic;
pub mod own;
pub mod probe;
pub mod provider;
pub mod run;
pub mod spec;
pub mod threshold;
pub mod units;
pub mod words;

pub use catalog::{BwTool, Family, LatTool, Tool, HOST_TRAFFIC_ORIGINAL};
pub use counters::PairCounters;
pub use own::{GpuKind, OwnSettings, PollMode, ServeLimits, DEFAULT_SVC_ID};
pub use provider::{BadProvider, Provider};
pub use run::{
    AmoBw, AmoLat, AmoRun, BwRun, Hugepages, Knob, LatRun, Mem, Role, Row, RowView, RunDesc, SideMem, TestMode,
};
pub use spec::{
    at_floor, ClockKind, HugePageSize, SpecError, TestSpec, AMO_STRIDE, FLOOR_BYTES_PER_S, FLOOR_PER_ITERATION,
    FLOOR_PER_OP, MAX_LIST, MAX_SIZE,
};
pub use threshold::Threshold;

/// The originals' default control port.
pub const DEFAULT_PORT: u16 = 49194;
