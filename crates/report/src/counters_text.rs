//! The NIC counter block a pair tool prints after its table with
//! `--counters`: per side, the device(s) read and every counter whose
//! change is worth a look (a fault counter that rose, a load sign that
//! rose, anything that went back, sits at its ceiling or could not be
//! read), each with its class and what it usually means; traffic counts
//! and unchanged counters are left to the JSON. Pure.

use fabdiag_model::counters::{Change, Class, CounterChange, Counters, PairCounters};
use fabdiag_model::Role;

/// 1234567 -> "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A change as a person reads it: "+1,204", "went back from 9 to 0
/// (wrapped or reset)", ...; None when it is not worth a line.
pub fn change_words(c: &CounterChange) -> Option<String> {
    match &c.change {
        Change::Rose { by } if c.fault || c.class != Class::Traffic => Some(format!("+{}", thousands(*by))),
        Change::Rose { .. } | Change::Unchanged | Change::Appeared { .. } => None,
        Change::WentBack { before, after } if c.class != Class::Traffic || c.fault => Some(format!(
            "went back from {} to {} (wrapped or reset)",
            thousands(*before),
            thousands(*after)
        )),
        Change::WentBack { .. } => None,
        Change::AtCeiling { at_least } => Some(format!(
            "at its ceiling: rose by at least {}, and stopped counting",
            thousands(*at_least)
        )),
        Change::Unreadable { why } => Some(format!("could not be read ({why})")),
        Change::Vanished => Some("vanished during the test".into()),
    }
}

fn class_words(c: &CounterChange) -> String {
    if c.fault {
        format!("{}: {}", c.class.as_str(), c.class.suspect())
    } else {
        format!("{}, a sign of load", c.class.as_str())
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Client => "client",
        Role::Server => "server",
    }
}

fn side(who: &str, c: &Counters) -> String {
    let d = match c {
        Counters::NotAvailable { reason } => return format!("Counters ({who}): not available ({reason})\n"),
        Counters::Read(d) => d,
    };
    let devices: Vec<&str> = d.sources.iter().map(|s| s.device.as_str()).collect();
    let mut lines = Vec::new();
    for s in &d.sources {
        if let Some(why) = &s.unavailable {
            lines.push(format!("  {}: not read ({why})", s.device));
        }
        for c in &s.counters {
            if let Some(words) = change_words(c) {
                lines.push(format!("  {} {} {words} [{}]", s.device, c.name, class_words(c)));
            }
        }
    }
    let head = format!(
        "Counters ({who}, {}: {} read in {:.1} ms)",
        devices.join(" + "),
        d.counters_read,
        d.read_us as f64 / 1000.0
    );
    if lines.is_empty() {
        format!("{head}: no counter rose but traffic\n")
    } else {
        format!("{head}:\n{}\n", lines.join("\n"))
    }
}

/// The block: this side's line(s), then the peer's.
pub fn block(role: Role, pc: &PairCounters) -> String {
    let (me, them) = match role {
        Role::Client => (Role::Client, Role::Server),
        Role::Server => (Role::Server, Role::Client),
    };
    let mut out = side(role_name(me), &pc.local);
    if let Some(p) = &pc.peer {
        out.push_str(&side(role_name(them), p));
    }
    out
}
