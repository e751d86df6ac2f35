//! What differs between the tool families, behind one trait: the
//! capability a provider needs, the memory each side registers, the run's
//! description for the banner and JSON, the driver's settings, and the
//! measured part itself. The choreography around them (connect, hello,
//! config, endpoints, barriers, results, telling the peer) is written once
//! in `crate::session`. Families never touch the network or bytes directly.
//! `run` is what every family implements and is given; this file picks
//! the family for a spec.

mod atomic;
mod bw;
mod lat;
mod run;

pub(crate) use atomic::atomic_spec;
pub use run::capability;
pub(crate) use run::{Facts, FamilyRun, Rows};

use crate::env::Env;
use crate::outcome::SessionError;
use fabdiag_model::{Family, TestSpec};

/// The family that runs `spec` (already validated).
pub(crate) fn plan(spec: &TestSpec, env: &Env) -> Result<Box<dyn FamilyRun>, SessionError> {
    Ok(match spec.tool.family() {
        Family::Bandwidth(tool) => Box::new(bw::Bandwidth::new(tool, spec.clone(), env.hooks.corrupt_offset)),
        Family::Latency(tool) => Box::new(lat::Latency::new(tool, spec.clone(), env.poll)),
        Family::Atomic { latency } => Box::new(atomic::Atomic::new(latency, spec.clone(), env)?),
    })
}
