//! Who this rank is, from the launcher's environment: rank, size, local
//! rank, and where the coordinator is. The caller passes a lookup (the
//! binary passes the process environment; tests pass a map), so nothing
//! here reads the environment itself. Pure.

use serde::Serialize;

/// The coordinator's port when Slurm gives no other: one per job step, so
/// two sweeps on one node do not collide.
pub fn slurm_port(job: u64, step: u64) -> u16 {
    (20_000 + (job.wrapping_mul(31).wrapping_add(step)) % 20_000) as u16
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Launch {
    pub rank: usize,
    pub size: usize,
    /// The rank on its node (chooses the NIC when there are several),
    /// when the launcher says it.
    pub local_rank: Option<usize>,
    /// Which launcher's variables said so.
    pub launcher: &'static str,
    /// HOST:PORT of rank 0's coordinator, when the launcher tells it.
    pub coordinator: Option<String>,
}

const SOURCES: &[(&str, &str, &str, &[&str])] = &[
    // (launcher, rank, size, local rank candidates)
    ("FABDIAG", "FABDIAG_RANK", "FABDIAG_SIZE", &["FABDIAG_LOCAL_RANK"]),
    (
        "Open MPI",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        &["OMPI_COMM_WORLD_LOCAL_RANK"],
    ),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", &["SLURM_LOCALID"]),
    (
        "MPICH/Hydra",
        "PMI_RANK",
        "PMI_SIZE",
        &["MPI_LOCALRANKID", "PMI_LOCAL_RANK"],
    ),
    ("PMIx", "PMIX_RANK", "PMIX_SIZE", &["PMIX_LOCAL_RANK"]),
];

/// This rank's identity. `coordinator` is `--coordinator`, if given.
pub fn resolve(get: &dyn Fn(&str) -> Option<String>, coordinator: Option<&str>) -> Result<Launch, String> {
    let num = |name: &str| -> Result<Option<usize>, String> {
        match get(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map(Some)
                .map_err(|_| format!("{name}={v} is not a rank number")),
        }
    };
    let mut found = None;
    for (launcher, rank, size, locals) in SOURCES {
        if let Some(r) = num(rank)? {
            let s = num(size)?
                .ok_or_else(|| format!("{rank} is set but {size} is not: set FABDIAG_SIZE to the number of ranks"))?;
            let mut local = None;
            for l in locals.iter() {
                if let Some(v) = num(l)? {
                    local = Some(v);
                    break;
                }
            }
            found = Some((*launcher, r, s, local));
            break;
        }
    }
    let Some((launcher, rank, size, local_rank)) = found else {
        return Err("no rank: start it under srun or mpirun, or set FABDIAG_RANK and FABDIAG_SIZE".into());
    };
    if size == 0 || rank >= size {
        return Err(format!("rank {rank} is out of range for {size} ranks ({launcher})"));
    }
    let coordinator = match coordinator.map(str::to_string).or_else(|| get("FABDIAG_COORDINATOR")) {
        Some(c) => Some(check_coordinator(&c)?),
        None => slurm_coordinator(get)?,
    };
    Ok(Launch {
        rank,
        size,
        local_rank,
        launcher,
        coordinator,
    })
}

fn check_coordinator(c: &str) -> Result<String, String> {
    let bad = || format!("invalid coordinator '{c}': expected HOST:PORT");
    let (host, port) = c.rsplit_once(':').ok_or_else(bad)?;
    match port.parse::<u16>() {
        Ok(p) if p > 0 && !host.is_empty() => Ok(c.to_string()),
        _ => Err(bad()),
    }
}

/// Under Slurm: the first node of the step, on a port of this step.
fn slurm_coordinator(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>, String> {
    let Some(list) = get("SLURM_STEP_NODELIST").or_else(|| get("SLURM_JOB_NODELIST")) else {
        return Ok(None);
    };
    let host = first_host(&list).ok_or_else(|| format!("cannot read the Slurm node list '{list}'"))?;
    let id = |n: &str| get(n).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let port = slurm_port(id("SLURM_JOB_ID"), id("SLURM_STEP_ID"));
    Ok(Some(format!("{host}:{port}")))
}

/// The first host of a Slurm host list: `node[07-09,12],gpu1` → `node07`.
pub fn first_host(list: &str) -> Option<String> {
    let mut depth = 0;
    let end = list
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            c == ',' && depth == 0
        })
        .map_or(list.len(), |(i, _)| i);
    let mut host = list[..end].trim().to_string();
    // every bracket group (`rack[1-2]-n[1-4]`) takes its first value
    while let Some(open) = host.find('[') {
        let close = host[open..].find(']')? + open;
        let range = host[open + 1..close].split(',').next()?;
        let start = range.split('-').next()?;
        if start.is_empty() || !start.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        host = format!("{}{}{}", &host[..open], start, &host[close + 1..]);
    }
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn launch(pairs: &[(&str, &str)], coord: Option<&str>) -> Result<Launch, String> {
        let e = env(pairs);
        resolve(&|k| e.get(k).cloned(), coord)
    }

    #[test]
    fn each_launcher_is_understood() {
        let l = launch(
            &[
                ("OMPI_COMM_WORLD_RANK", "3"),
                ("OMPI_COMM_WORLD_SIZE", "8"),
                ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ],
            Some("h0:5000"),
        )
        .unwrap();
        assert_eq!((l.rank, l.size, l.local_rank, l.launcher), (3, 8, Some(1), "Open MPI"));
        assert_eq!(l.coordinator.as_deref(), Some("h0:5000"));
        let s = launch(
            &[
                ("SLURM_PROCID", "2"),
                ("SLURM_NTASKS", "4"),
                ("SLURM_LOCALID", "0"),
                ("SLURM_STEP_NODELIST", "cn[003-006]"),
                ("SLURM_JOB_ID", "77"),
                ("SLURM_STEP_ID", "0"),
            ],
            None,
        )
        .unwrap();
        assert_eq!((s.rank, s.size, s.launcher), (2, 4, "Slurm"));
        assert_eq!(s.coordinator, Some(format!("cn003:{}", slurm_port(77, 0))));
        let h = launch(
            &[("PMI_RANK", "0"), ("PMI_SIZE", "2"), ("FABDIAG_COORDINATOR", "x:1")],
            None,
        )
        .unwrap();
        assert_eq!((h.launcher, h.coordinator.as_deref()), ("MPICH/Hydra", Some("x:1")));
        assert_eq!(h.local_rank, None, "not said");
        // fabdiag's own variables win over a launcher's
        let f = launch(
            &[
                ("FABDIAG_RANK", "1"),
                ("FABDIAG_SIZE", "3"),
                ("PMI_RANK", "0"),
                ("PMI_SIZE", "2"),
            ],
            None,
        )
        .unwrap();
        assert_eq!((f.rank, f.size, f.coordinator), (1, 3, None));
    }

    #[test]
    fn bad_identities_are_one_line_errors() {
        assert!(launch(&[], None).unwrap_err().contains("FABDIAG_RANK"));
        assert!(launch(&[("FABDIAG_RANK", "4"), ("FABDIAG_SIZE", "4")], None)
            .unwrap_err()
            .contains("out of range"));
        assert!(launch(&[("FABDIAG_RANK", "x"), ("FABDIAG_SIZE", "4")], None)
            .unwrap_err()
            .contains("not a rank number"));
        assert!(launch(&[("PMIX_RANK", "1")], None).unwrap_err().contains("PMIX_SIZE"));
        assert!(launch(&[("FABDIAG_RANK", "0"), ("FABDIAG_SIZE", "2")], Some("nohost"))
            .unwrap_err()
            .contains("HOST:PORT"));
    }

    #[test]
    fn slurm_host_lists() {
        assert_eq!(first_host("node[07-09,12],gpu1").as_deref(), Some("node07"));
        assert_eq!(first_host("gpu1,node[1-2]").as_deref(), Some("gpu1"));
        assert_eq!(first_host("rack[2-3]-n[1-4]").as_deref(), Some("rack2-n1"));
        assert_eq!(first_host("localhost").as_deref(), Some("localhost"));
        assert_eq!(first_host(""), None);
        assert_eq!(first_host("n[a-b]"), None);
    }
}
