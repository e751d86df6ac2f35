//! `fabdiag topology`: the fabric's map read from its sources and said
//! (its size and levels), drawn (`--draw`), held against the expected
//! wiring (`--expect`), or a map generated to start from (`--generate`).
//! The map's reading, drawing and comparing are fabdiag-topology's; this
//! decides what to print and the exit code.

use crate::exit;
use crate::streams::print_stdout;
use fabdiag_options::topology::{parse, usage, TopologyOptions};
use fabdiag_options::{Action, OptionError};
use fabdiag_topology::draw::count;
use fabdiag_topology::{diff, draw, generate, Fabric};
use std::fmt::Write;

pub fn run(prog: &str, args: &[String]) -> u8 {
    let o = match parse(args) {
        Ok(Action::Run(o)) => o,
        Ok(_) => {
            print_stdout(&usage());
            return exit::OK;
        }
        Err(OptionError::Invalid(m)) | Err(OptionError::Unavailable(m)) => {
            tell!("{prog}: {m}");
            return exit::USAGE;
        }
    };
    match answer(&o) {
        Ok((text, code)) => {
            print_stdout(&text);
            code
        }
        Err(m) => {
            tell!("{prog}: {m}");
            exit::USAGE
        }
    }
}

/// What to print, and the exit code.
fn answer(o: &TopologyOptions) -> Result<(String, u8), String> {
    if let Some(shape) = &o.generate {
        let f = generate::named(shape).map_err(|e| format!("--generate {e}"))?;
        return Ok((generate::to_toml(&f), exit::OK));
    }
    let (fabric, source) = crate::fabric_map::read("topology", &o.sources)?;
    let differences = match &o.expect {
        Some(path) => {
            let (want, _) = crate::fabric_map::read("--expect", std::slice::from_ref(path))?;
            Some(diff::differences(&want, &fabric))
        }
        None => None,
    };
    let code = match &differences {
        Some(d) if !d.is_empty() => exit::THRESHOLD,
        _ => exit::OK,
    };
    if o.json {
        let doc = serde_json::json!({
            "source": source,
            "map": fabdiag_sweep_judge::fabric::shape(&fabric),
            "differences": differences,
        });
        return Ok((format!("{doc:#}\n"), code));
    }
    let mut text = summary(&fabric, &source);
    if o.draw {
        text.push_str(&draw::draw(&fabric));
    }
    if let (Some(d), Some(path)) = (&differences, &o.expect) {
        if d.is_empty() {
            let _ = writeln!(text, "as expected in {path}: no difference");
        } else {
            let _ = writeln!(text, "differs from {path} in {} places:", d.len());
            for line in d {
                let _ = writeln!(text, "  {line}");
            }
        }
    }
    Ok((text, code))
}

/// "map a.toml: 6 switches on 2 levels, 16 hosts, 8 switch-to-switch
/// links (8 cables)", and each level's switches.
fn summary(f: &Fabric, source: &str) -> String {
    let mut levels = std::collections::BTreeMap::<u32, usize>::new();
    for s in &f.switches {
        *levels.entry(s.level).or_default() += 1;
    }
    let cables: u32 = f.cables.iter().map(|c| c.count).sum();
    let mut o = format!(
        "map {source}: {} on {}, {}, {} ({})\n",
        count(f.switches.len(), "switch", "switches"),
        count(levels.len(), "level", "levels"),
        count(f.hosts.len(), "host", "hosts"),
        count(f.cables.len(), "switch-to-switch link", "switch-to-switch links"),
        count(cables as usize, "cable", "cables"),
    );
    if !f.routes.is_empty() {
        let _ = writeln!(
            o,
            "  forwarding tables of {}: each pair's way is the one they give",
            count(f.routes.len(), "switch", "switches")
        );
    }
    for (level, n) in levels.iter().rev() {
        let _ = writeln!(o, "  level {level}: {}", count(*n, "switch", "switches"));
    }
    o
}
