//! What this machine's providers can do, as `fabdiag providers` and
//! `fabdiag atomic-support` show it: the text tables of the rows the
//! session library probes (`fabdiag_model::probe`). Pure functions;
//! nothing here probes.

use fabdiag_engine::amo::{AmoOp, OPS, TYPES};
use fabdiag_model::catalog::Tool;
use fabdiag_model::probe::{AmoSupport, ProviderRow};

pub fn providers_text(rows: &[ProviderRow]) -> String {
    let yn = |b: bool| if b { "yes" } else { "-" };
    let mut text = String::from("provider        domain          fabric                 write read msg\n");
    for r in rows {
        text.push_str(&format!(
            "{:<15} {:<15} {:<22} {:<5} {:<4} {}\n",
            r.provider,
            r.domain,
            r.fabric,
            yn(r.rma_write),
            yn(r.rma_read),
            yn(r.msg)
        ));
    }
    text
}

/// One table per provider: N non-fetching, F fetching, NF both, - none,
/// . not allowed by the originals; CSWAP counts its six conditions.
pub fn atomic_matrix_text(cells: &[AmoSupport]) -> String {
    let mut text = String::new();
    let mut provs: Vec<&String> = Vec::new();
    for c in cells {
        if !provs.contains(&&c.provider) {
            provs.push(&c.provider);
        }
    }
    for p in provs {
        text.push_str(&format!("{p}\n{:<15}", "TYPE"));
        for op in OPS {
            text.push_str(&format!("{:>7}", op.name()));
        }
        text.push('\n');
        for ty in TYPES {
            text.push_str(&format!("{:<15}", ty.name()));
            for op in OPS {
                let mine: Vec<&AmoSupport> = cells
                    .iter()
                    .filter(|c| &c.provider == p && c.op == op.name() && c.atomic_type == ty.name())
                    .collect();
                let cell = if !mine.iter().any(|c| c.allowed) {
                    ".".to_string()
                } else if op == AmoOp::Cswap {
                    let n = mine.iter().filter(|c| c.allowed && c.usable() && !c.fetching).count();
                    let allowed = mine.iter().filter(|c| c.allowed && !c.fetching).count();
                    format!("{n}/{allowed}")
                } else {
                    let n = mine.iter().any(|c| !c.fetching && c.usable());
                    let f = mine.iter().any(|c| c.fetching && c.usable());
                    match (n, f) {
                        (true, true) => "NF".into(),
                        (true, false) => "N".into(),
                        (false, true) => "F".into(),
                        (false, false) => "-".into(),
                    }
                };
                text.push_str(&format!("{cell:>7}"));
            }
            text.push('\n');
        }
        if let Some(d) = cells
            .iter()
            .filter(|c| &c.provider == p && c.supported)
            .find_map(|c| c.defect)
        {
            text.push_str(&format!("(refused although the provider accepts them: {d})\n"));
        }
        text.push('\n');
    }
    text.push_str("N: fi_atomic  F: fi_fetch_atomic  NF: both  CSWAP k/n: conditions supported (fi_compare_atomic)\n-: not supported by the provider  .: not allowed by the originals' op/type rules\n");
    text
}

/// `fabdiag -h`: every command, the tools from the catalogue.
pub fn overview(version: &str) -> String {
    let mut s = format!(
        "fabdiag {version}: fabric diagnostics on libfabric\n\nUsage:\n  fabdiag COMMAND [OPTIONS]   (COMMAND -h for its options)\n\nCommands:\n"
    );
    for t in Tool::all() {
        // a name too long for the column goes on a line of its own
        let name = if t.subcommand().len() < 12 {
            format!("{:<12}", t.subcommand())
        } else {
            format!("{}\n{:14}", t.subcommand(), "")
        };
        s.push_str(&format!("  {name}{}, as {}\n", t.summary(), t.original_name()));
    }
    s.push_str("  serve [-p PORT]\n              Answer every pair tool above, client after client (like iperf3 -s)\n");
    s.push_str("  sweep       Test every pair of ranks (srun, mpirun) and name the slow link, node or switch\n");
    s.push_str("  topology SOURCE... [--expect FILE] [--draw] | --generate SHAPE\n              The fabric's map: read, drawn, held against the expected wiring\n");
    s.push_str("  host-traffic\n              Host <-> GPU memory <-> compute traffic, as gc-hosttraffictest (CUDA)\n");
    s.push_str("  providers   List libfabric providers and domains on this machine\n");
    s.push_str(
        "  doctor [--json] [--watch SECONDS]\n              What this node has, and which tools can run on it\n",
    );
    s.push_str("  health [--expect FILE] [-d PROV:DOMAIN] [--slurm]\n              A verdict on this node (OK, WARNING, CRITICAL, UNKNOWN) for Slurm and NHC\n");
    s.push_str("  monitor --peers FILE | --partition NAME\n              Probe every peer's serve on a schedule and serve /metrics for Prometheus\n");
    s.push_str("  completions bash|zsh|fish\n              Print a shell completion script\n");
    s.push_str("  manpages DIR\n              Write the manual pages into DIR\n");
    s.push_str("  atomic-support [-P PROV] [--json]\n              Which atomic op/type/form each provider supports (fi_*atomicvalid)\n");
    s.push_str("\nInstalled under an original name (e.g. a cxi_write_bw symlink), fabdiag\nbehaves as that tool.\n");
    s
}
