//! The fabric's map: its switches, hosts and cables (`map`, read from the
//! map file and checked), maps generated to start from (`generate`: a fat
//! tree, a dragonfly) and the ways a pair's traffic may take through it
//! (`paths`: every equal-cost route, as the elements it crosses), and the
//! elements a sweep's slow pairs share (`attribute`): the switch, uplink or
//! cable to blame.
//!
//! Pure: no file is opened, nothing is printed or measured here.

pub mod attribute;
pub mod generate;
pub mod map;
pub mod paths;

pub use map::{Cable, Element, Fabric, Host, MapError, Switch};
pub use paths::Ways;
