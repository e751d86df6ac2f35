//! What this machine's libfabric can do, asked without any peer: the
//! providers and domains with the bandwidth tools' operations, and which
//! of the originals' atomics each provider supports in which form (through
//! an endpoint on the loopback domain, so nothing leaves the machine).

use crate::family::atomic_spec;
use fabdiag_engine::amo::{libfabric_op, validate, AmoOp, CSWAP_OPS, OPS, TYPES};
use fabdiag_fabric::{discover, Capability, Endpoint, FabricError, HostBuffer, Memory, Query};
use fabdiag_model::probe::{AmoSupport, ProviderCaps, ProviderRow};
use std::collections::{BTreeMap, BTreeSet};

/// Every provider/domain with RMA write, RMA read or messaging.
pub fn providers() -> Result<Vec<ProviderRow>, FabricError> {
    let mut rows: BTreeMap<(String, String, String), [bool; 3]> = BTreeMap::new();
    for (i, cap) in [Capability::RmaWrite, Capability::RmaRead, Capability::Msg]
        .into_iter()
        .enumerate()
    {
        match discover(&Query {
            capability: Some(cap),
            ..Default::default()
        }) {
            Ok(list) => {
                for e in list.entries() {
                    rows.entry((e.provider.clone(), e.domain.clone(), e.fabric.clone()))
                        .or_default()[i] = true;
                }
            }
            Err(e @ FabricError::LibraryMissing { .. }) => return Err(e),
            // a capability no provider has is simply absent from the table
            Err(_) => {}
        }
    }
    Ok(rows
        .into_iter()
        .map(|((provider, domain, fabric), c)| ProviderRow {
            provider,
            domain,
            fabric,
            rma_write: c[0],
            rma_read: c[1],
            msg: c[2],
        })
        .collect())
}

/// Every provider with its domains and what it can do here (for `doctor`).
pub fn provider_caps() -> Result<Vec<ProviderCaps>, FabricError> {
    let caps = [
        Capability::RmaWrite,
        Capability::RmaRead,
        Capability::Msg,
        Capability::Atomic,
        Capability::RmaWriteHmem,
    ];
    let mut by: BTreeMap<String, (BTreeSet<String>, [bool; 5])> = BTreeMap::new();
    for (i, cap) in caps.into_iter().enumerate() {
        match discover(&Query {
            capability: Some(cap),
            ..Default::default()
        }) {
            Ok(list) => {
                for e in list.entries() {
                    let entry = by.entry(e.provider.clone()).or_default();
                    entry.0.insert(e.domain.clone());
                    entry.1[i] = true;
                }
            }
            Err(e @ FabricError::LibraryMissing { .. }) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(by
        .into_iter()
        .map(|(provider, (domains, c))| ProviderCaps {
            provider,
            domains: domains.into_iter().collect(),
            rma_write: c[0],
            rma_read: c[1],
            msg: c[2],
            atomic: c[3],
            hmem: c[4],
        })
        .collect())
}

/// The atomic support matrix, and the providers that could not be asked
/// (with why).
pub struct AtomicSupport {
    pub cells: Vec<AmoSupport>,
    pub unreachable: Vec<(String, FabricError)>,
}

/// Asks each provider with atomics (or only `provider`) about every op,
/// CSWAP condition, type and form of the originals.
pub fn atomic_support(provider: Option<&fabdiag_model::Provider>) -> Result<AtomicSupport, FabricError> {
    let list = discover(&Query {
        provider: provider.map(|p| p.name().to_string()),
        domain: None,
        capability: Some(Capability::Atomic),
    })?;
    let mut providers: Vec<String> = Vec::new();
    for e in list.entries() {
        if !providers.contains(&e.provider) {
            providers.push(e.provider.clone());
        }
    }
    let mut out = AtomicSupport {
        cells: Vec::new(),
        unreachable: Vec::new(),
    };
    for prov in providers {
        let candidates: Vec<usize> = list
            .entries()
            .enumerate()
            .filter(|(_, e)| e.provider == prov)
            .map(|(i, _)| i)
            .collect();
        // prefer the loopback domain: nothing leaves the machine
        let idx = candidates
            .iter()
            .copied()
            .find(|&i| {
                list.get(i)
                    .is_some_and(|e| e.domain == "lo" || e.fabric.starts_with("127."))
            })
            .or(candidates.first().copied())
            .unwrap_or(0);
        let ep = match HostBuffer::new(4096, None, 0)
            .and_then(|a| Ok(vec![Memory::Host(a), Memory::Host(HostBuffer::new(4096, None, 0)?)]))
            .and_then(|bufs| Endpoint::open(&list, idx, bufs))
        {
            Ok(ep) => ep,
            Err(e) => {
                out.unreachable.push((prov, e));
                continue;
            }
        };
        for ty in TYPES {
            for op in OPS {
                let conds = if op == AmoOp::Cswap {
                    &CSWAP_OPS[..]
                } else {
                    &CSWAP_OPS[..1]
                };
                for &cs in conds {
                    for fetching in [false, true] {
                        let (fi, call) = libfabric_op(op, cs, fetching);
                        let spec = atomic_spec(op, cs, ty, fetching)?;
                        out.cells.push(AmoSupport {
                            provider: prov.clone(),
                            op: op.name(),
                            cswap_op: (op == AmoOp::Cswap).then(|| cs.name()),
                            atomic_type: ty.name(),
                            fetching,
                            libfabric_op: fi.name(),
                            libfabric_call: call.name(),
                            allowed: validate(op, cs, ty).is_ok(),
                            supported: ep.atomic_valid(&spec).unwrap_or(false),
                            defect: ep.known_atomic_defect(&spec),
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}
