//! The atomic tools (atomic_bw, atomic_lat; originals §3.4, §3.8). Each side
//! asks its provider whether it supports the op on the type in the needed
//! form before the peer hears of it, and refuses cleanly if not. Target
//! slots start at the operand scheme's initial value; after the run every
//! side whose memory was hit compares each slot with the value the
//! operations must have produced, and the verdicts are traded so the client
//! reports both. A wrong value is an error naming what was expected and
//! what was found.

use super::run::{test_mode, Facts, FamilyRun, Rows};
use crate::driver::{AtomicPlan, Drive, DriverConfig, LatClock, Op};
use crate::env::Env;
use crate::memory::{Buffer, Init, MemoryPlan};
use crate::outcome::SessionError;
use fabdiag_engine::amo::{libfabric_op, verify_value, AmoOp, AmoType, CswapOp, FiCall, Scheme, Verification};
use fabdiag_engine::{run_lat_size, run_size, Activity};
use fabdiag_fabric::{atomic_datatype, atomic_op, AtomicKind, AtomicSpec, Capability, FabricError};
use fabdiag_model::{AmoBw, AmoLat};
use fabdiag_model::{AmoRun, Knob, PollMode, Role, Row, RunDesc, Tool};
use fabdiag_model::{TestSpec, AMO_STRIDE};
use fabdiag_proto::{Message, Phase, ProtoError};
use std::time::Duration;

/// How long a target keeps polling for operations still in flight before
/// it judges its memory.
const SETTLE: Duration = Duration::from_secs(2);

pub(crate) struct Atomic {
    latency: bool,
    spec: TestSpec,
    plan: AtomicPlan,
    /// Test hook: iterations the target pretends it also took.
    extra: u64,
    /// `--poll`: how atomic-lat's gap is waited out.
    poll: PollMode,
}

impl Atomic {
    pub fn new(latency: bool, spec: TestSpec, env: &Env) -> Result<Self, SessionError> {
        let plan = AtomicPlan {
            spec: atomic_spec(spec.op, spec.cswap, spec.ty, spec.fetching)?,
            scheme: Scheme::new(spec.op, spec.cswap, spec.ty),
            result_base: AMO_STRIDE * spec.list_size,
        };
        let extra = env.hooks.amo_extra_iterations;
        Ok(Atomic {
            latency,
            spec,
            plan,
            extra,
            poll: env.poll,
        })
    }

    fn activity(&self, role: Role) -> Activity {
        match (role, self.spec.bidirectional) {
            (Role::Client, _) | (Role::Server, true) => Activity::Active,
            (Role::Server, false) => Activity::Passive,
        }
    }

    /// "fetching CSWAP EQ", "SUM": the op as error messages name it.
    fn op_name(&self) -> String {
        let f = if self.spec.fetching { "fetching " } else { "" };
        match self.spec.op {
            AmoOp::Cswap => format!("{f}CSWAP {}", self.spec.cswap.name()),
            op => format!("{f}{}", op.name()),
        }
    }

    /// Checks our own target (if the peer hit it `hit` times) and trades
    /// verdicts with the peer.
    fn verify(&self, d: &mut dyn Drive, role: Role, hit: Option<u64>) -> Result<Vec<Verification>, SessionError> {
        let me = if role == Role::Client { "client" } else { "server" };
        let (ty, slots) = (self.spec.ty, self.spec.list_size);
        let mine = match hit {
            Some(n) => {
                let iterations = n + self.extra;
                let want = self.plan.scheme.expected(iterations);
                let mut found = None;
                let waited = d.settle(
                    &mut |mem| {
                        let v = verify_value(ty, want, me, mem, slots, AMO_STRIDE, iterations);
                        let ok = v.ok;
                        found = Some(v);
                        ok
                    },
                    SETTLE,
                )?;
                // settle looks at least once
                let mut v = found.ok_or_else(|| SessionError::Internal("the target was never looked at".into()))?;
                v.settle_us = waited.as_micros() as u64;
                Some(v)
            }
            None => None,
        };
        let report = serde_json::to_value(&mine).map_err(|e| SessionError::Internal(format!("verification: {e}")))?;
        let theirs = match d.link().exchange(Phase::Results, &Message::Verify { report })? {
            Message::Verify { report } => serde_json::from_value::<Option<Verification>>(report)
                .map_err(|e| SessionError::Mismatch(format!("peer sent an undecodable verification: {e}")))?,
            other => {
                return Err(ProtoError::Unexpected {
                    phase: Phase::Results,
                    got: other.kind().into(),
                }
                .into())
            }
        };
        let mut all: Vec<Verification> = mine.into_iter().chain(theirs).collect();
        all.sort_by(|a, b| a.target.cmp(&b.target));
        Ok(all)
    }
}

/// The libfabric atomic that runs the originals' `op` (with `cswap`) on
/// `ty`, with libfabric's own values for the datatype and op.
pub(crate) fn atomic_spec(op: AmoOp, cswap: CswapOp, ty: AmoType, fetching: bool) -> Result<AtomicSpec, FabricError> {
    let (fi_op, call) = libfabric_op(op, cswap, fetching);
    Ok(AtomicSpec {
        kind: match call {
            FiCall::Atomic => AtomicKind::Plain,
            FiCall::Fetch => AtomicKind::Fetch,
            FiCall::Compare => AtomicKind::Compare,
        },
        datatype: atomic_datatype(&ty.fi_name())?,
        op: atomic_op(fi_op.name())?,
        size: ty.size(),
    })
}

/// The first wrong target, as an error.
fn verdict(v: &[Verification]) -> Option<SessionError> {
    v.iter().find(|x| !x.ok).map(|x| {
        SessionError::Verify(format!(
            "final value check failed on the {}'s target: after {} iterations every slot should hold {}, {} of {} slots hold another value (first: {})",
            x.target, x.iterations, x.expected, x.wrong_slots, x.slots, x.actual
        ))
    })
}

impl FamilyRun for Atomic {
    fn capability(&self) -> Capability {
        Capability::Atomic
    }

    fn memory(&self, _: Role) -> MemoryPlan {
        let slots = self.spec.list_size;
        MemoryPlan {
            // operands in the first half, fetched values in the second
            initiator: Buffer {
                len: 2 * AMO_STRIDE * slots,
                used: true,
                init: Init::Fill(0),
            },
            target: Buffer {
                len: AMO_STRIDE * slots,
                used: true,
                init: Init::Slots {
                    ty: self.spec.ty,
                    value: self.plan.scheme.initial_target,
                },
            },
            hugepages: None,
            // the atomic tools have no GPU options (originals §2.12)
            gpu_allowed: false,
        }
    }

    fn check(&self, port: &dyn crate::net::Port) -> Result<(), SessionError> {
        let spec = &self.plan.spec;
        let what = format!("{} on {}", self.op_name(), self.spec.ty.name());
        if !port.atomic_valid(spec)? {
            let call = match spec.kind {
                AtomicKind::Plain => "fi_atomicvalid",
                AtomicKind::Fetch => "fi_fetch_atomicvalid",
                AtomicKind::Compare => "fi_compare_atomicvalid",
            };
            return Err(FabricError::ProviderLacks {
                provider: port.provider().into(),
                what: format!("{what} ({call})"),
            }
            .into());
        }
        if let Some(why) = port.atomic_defect(spec) {
            return Err(FabricError::KnownDefect {
                provider: port.provider().into(),
                what,
                why: why.into(),
            }
            .into());
        }
        Ok(())
    }

    fn describe(&self, f: &Facts<'_>) -> RunDesc {
        let (s, lat) = (&self.spec, self.latency);
        let (fi_op, call) = libfabric_op(s.op, s.cswap, s.fetching);
        let na = || String::from(Knob::NotApplicable);
        let cswap = if s.op == AmoOp::Cswap { s.cswap.name() } else { "" };
        let fetching = if s.fetching { "FETCHING" } else { "NON-FETCHING" };
        RunDesc::Amo(Box::new(AmoRun {
            tool: if lat { Tool::AtomicLat } else { Tool::AtomicBw }.json_name().into(),
            role: f.role,
            provider: f.port.provider().into(),
            device: f.port.domain().into(),
            service_id: f.svc_id,
            mode: test_mode(s),
            // the originals' "[NON-]FETCHING <OP> <CSWAP op or nothing>",
            // trailing space included
            atomic_op: format!("{fetching} {} {cswap}", s.op.name()),
            op: s.op.name().into(),
            cswap_op: (s.op == AmoOp::Cswap).then(|| s.cswap.name().into()),
            atomic_type: s.ty.name().into(),
            size_bytes: s.ty.size(),
            fetching: s.fetching,
            libfabric_op: fi_op.name().into(),
            libfabric_call: call.name().into(),
            list_size: (!lat).then_some(s.list_size),
            bidirectional: (!lat).then_some(s.bidirectional),
            warmup_iterations: lat.then_some(s.warmup),
            gap_us: lat.then_some(s.gap_us),
            // HRP, matching list entries, restricted packets and LL launch
            // are CXI features with no libfabric control (originals §2.13);
            // atomics are never injected (libfabric 1.17's rxm does not
            // complete atomics posted with FI_INJECT), so IDC is neither
            hrp: (!lat).then(na),
            idc: na(),
            matching: na(),
            restricted: na(),
            ll: lat.then(na),
            report_all: lat.then_some(s.report_all),
            local_address: f.local.clone(),
            remote_address: f.remote.clone(),
            clock: lat.then(|| s.clock.name().into()),
            cycles_mhz: f.clock.mhz(),
            clock_reads: lat.then(|| f.clock.reads().into()),
            delivery_complete: f.port.delivery_complete(),
            poll: f.poll,
        }))
    }

    fn driver(&self, role: Role, clock: LatClock) -> DriverConfig {
        let s = &self.spec;
        DriverConfig {
            op: Op::Atomic(self.plan),
            activity: self.activity(role),
            bidirectional: s.bidirectional,
            list_size: s.list_size,
            align: AMO_STRIDE,
            max_buf: u64::MAX,
            use_idc: s.use_idc,
            unrestricted: s.unrestricted,
            max_size: s.ty.size(),
            echo: false,
            clock,
        }
    }

    fn measure(&self, role: Role, d: &mut dyn Drive, out: &mut Rows<'_>) -> Result<Option<SessionError>, SessionError> {
        let (s, size) = (&self.spec, self.spec.ty.size());
        let v = if self.latency {
            let r = run_lat_size(d, self.activity(role), &s.lat_config(self.poll), size)?;
            // the server's target took every operation the client ran
            let v = self.verify(d, role, (role == Role::Server).then_some(r.peer_ops))?;
            out.push(Row::AmoLat(AmoLat {
                result: r,
                verification: v.clone(),
            }));
            v
        } else {
            let r = run_size(d, self.activity(role), s.mode(), size, s.list_size)?;
            // each side's target took the peer's iterations
            let hit = (role == Role::Server || s.bidirectional).then_some(r.peer.ops / s.list_size);
            let v = self.verify(d, role, hit)?;
            out.push(Row::AmoBw(AmoBw {
                result: r,
                verification: v.clone(),
            }));
            v
        };
        Ok(verdict(&v))
    }
}
