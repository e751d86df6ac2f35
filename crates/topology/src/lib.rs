//! The fabric's map: its switches, hosts and cables (`map`, read from the
//! map file and checked; `sources`: Slurm's tree too, and several sources
//! made one), maps generated to start from (`generate`: a fat tree, a
//! dragonfly), the ways a pair's traffic may take through it (`paths`:
//! every equal-cost route, as the elements it crosses), the elements a
//! sweep's slow pairs share (`attribute`): the switch, uplink or cable to
//! blame, a simulated sweep's slow ways (`sim`), and the map drawn as
//! text (`draw`) or held against the expected wiring (`diff`).
//!
//! Pure: no file is opened, nothing is printed or measured here.

pub mod attribute;
pub mod diff;
pub mod draw;
mod file;
pub mod generate;
mod hostlist;
pub mod ib;
mod links;
pub mod lldp;
pub mod map;
pub mod parts;
pub mod paths;
pub mod routes;
pub mod sim;
pub mod sources;

pub use map::{Cable, Element, Fabric, Host, MapError, Switch};
pub use paths::Ways;
pub use sources::{combine, Parts, Plan};
