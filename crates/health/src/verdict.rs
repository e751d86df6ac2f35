//! Checks, their verdicts and the node's: Nagios's four states and exit
//! codes (NHC and Slurm's HealthCheckProgram wrappers read them), the one
//! summary line first, a line per check, and the JSON document
//! (`fabdiag-health/1`). Pure: nothing here measures or prints.

use serde::Serialize;

/// A check's or the node's state, as Nagios plugins report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Ok,
    Warning,
    Critical,
    /// The check could not be made (its budget ran out, a provider call
    /// held): nothing is known, so nothing is drained or resumed on it.
    Unknown,
}

impl Verdict {
    /// Nagios's plugin exit codes.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Ok => 0,
            Verdict::Warning => 1,
            Verdict::Critical => 2,
            Verdict::Unknown => 3,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Warning => "WARNING",
            Verdict::Critical => "CRITICAL",
            Verdict::Unknown => "UNKNOWN",
        }
    }

    /// CRITICAL outranks UNKNOWN (a failure seen is a failure), which
    /// outranks WARNING.
    fn rank(self) -> u8 {
        match self {
            Verdict::Ok => 0,
            Verdict::Warning => 1,
            Verdict::Unknown => 2,
            Verdict::Critical => 3,
        }
    }

    /// The worse of two verdicts, ranked as `worst` ranks them.
    pub fn worst_of(a: Verdict, b: Verdict) -> Verdict {
        if b.rank() > a.rank() {
            b
        } else {
            a
        }
    }

    pub fn worst(checks: &[Check]) -> Verdict {
        checks
            .iter()
            .map(|c| c.verdict)
            .max_by_key(|v| v.rank())
            .unwrap_or(Verdict::Ok)
    }
}

/// One check: what was looked at, the figure and the limit it was held
/// to (with where the limit came from), and the verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// "libfabric", "provider", "loopback write-bw", "link", "gpu copy", ...
    pub check: String,
    /// What it is about: "tcp:lo", "mlx5_0", "GPU0 (0000:18:00.0)", "node".
    pub subject: String,
    pub verdict: Verdict,
    /// The figure measured or read, in `unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The limit held to, as said ("< 20000 MB/s"), and its source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// The rest of the line: the figure against its limit, or what is wrong.
    pub detail: String,
}

impl Check {
    pub fn new(check: &str, subject: &str, verdict: Verdict, detail: impl Into<String>) -> Check {
        Check {
            check: check.into(),
            subject: subject.into(),
            verdict,
            figure: None,
            unit: None,
            limit: None,
            detail: detail.into(),
        }
    }

    pub fn with_figure(mut self, figure: f64, unit: &str) -> Check {
        self.figure = Some(figure);
        self.unit = Some(unit.into());
        self
    }

    pub fn with_limit(mut self, limit: impl Into<String>) -> Check {
        self.limit = Some(limit.into());
        self
    }

    /// "mlx5_0 loopback write-bw: 9800 MB/s < 20000 MB/s (health.toml)"
    pub fn text(&self) -> String {
        match self.subject.as_str() {
            "" => format!("{}: {}", self.check, self.detail),
            s => format!("{s} {}: {}", self.check, self.detail),
        }
    }
}

/// A finished (or cut short) health run.
#[derive(Clone, Debug, Serialize)]
pub struct Health {
    pub schema: &'static str,
    pub node: String,
    pub verdict: Verdict,
    pub summary: String,
    pub elapsed_s: f64,
    pub budget_s: f64,
    /// The expectations file read, if any.
    pub expect: Option<String>,
    pub checks: Vec<Check>,
    /// What `--slurm` did or would do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slurm: Option<String>,
}

pub const SCHEMA: &str = "fabdiag-health/1";

impl Health {
    pub fn new(node: &str, checks: Vec<Check>, elapsed_s: f64, budget_s: f64, expect: Option<String>) -> Health {
        let verdict = Verdict::worst(&checks);
        let summary = summary_line(verdict, &checks, elapsed_s);
        Health {
            schema: SCHEMA,
            node: node.into(),
            verdict,
            summary,
            elapsed_s,
            budget_s,
            expect,
            checks,
            slurm: None,
        }
    }

    /// The summary line, then one line per check, then what Slurm was told.
    pub fn text(&self) -> String {
        let mut o = format!("{}\n", self.summary);
        for c in &self.checks {
            o.push_str(&format!("{:<8} {}\n", c.verdict.label(), c.text()));
        }
        if let Some(s) = &self.slurm {
            o.push_str(&format!("slurm: {s}\n"));
        }
        o
    }
}

/// "fabdiag health: CRITICAL: mlx5_0 loopback write-bw: ... (and 2 more)";
/// on OK, how many checks passed and how long it took.
pub fn summary_line(verdict: Verdict, checks: &[Check], elapsed_s: f64) -> String {
    let bad: Vec<&Check> = checks.iter().filter(|c| c.verdict == verdict).collect();
    match (verdict, bad.first()) {
        (Verdict::Ok, _) | (_, None) => {
            let n = match checks.len() {
                1 => "1 check".to_string(),
                n => format!("{n} checks"),
            };
            format!("fabdiag health: OK: {n} passed in {elapsed_s:.1} s")
        }
        (v, Some(first)) => {
            let others = checks.iter().filter(|c| c.verdict != Verdict::Ok).count() - 1;
            let more = match others {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            format!("fabdiag health: {}: {}{more}", v.label(), first.text())
        }
    }
}
