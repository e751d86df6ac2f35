//! What a sweep is, before anyone runs or reads it: `schedule` says who
//! tests whom when (every pair once, in rounds of disjoint pairs, on
//! rails), `pattern` which flows run at once in a traffic pattern
//! (bisection), `records` what each test and step left, `folder` the
//! `--output` folder's files and its typed `meta.json`. Shared by the run
//! (fabdiag-sweep), the judging (fabdiag-sweep-judge) and the report
//! (fabdiag-sweep-report), which depend on this and not on each other's
//! insides. Pure data: no I/O, no clock, no
//! network.

pub mod folder;
pub mod pattern;
pub mod records;
pub mod schedule;

pub use pattern::{Pattern, Shape, Split, SplitBy};
pub use records::{
    first_records, Coordinated, LatFigures, Node, NodeStatus, PairNoted, PairRecord, PatternRun, PatternStep,
    RowFigure, StepKind, StepRecord, VictimRecord,
};
pub use schedule::{Pair, Schedule, MAX_RANKS};
