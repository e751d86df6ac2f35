//! A health verdict as Prometheus metrics (`health --metrics FILE`): the
//! node's verdict and every check's, in Nagios's codes, when it ended and
//! how long it took. A check reported twice for one subject is one series
//! at its worse verdict (a series may appear once in an exposition). The
//! figures behind the checks are in `--json`. Pure: the time is handed in.

use crate::verdict::{Health, Verdict};
use fabdiag_exposition::catalogue as m;
use fabdiag_exposition::{Exposition, ExpositionError};

/// The exposition of `h`, which ended at `ended_unix_s`, for the file
/// named `file`.
pub fn health(h: &Health, ended_unix_s: f64, file: &str) -> Result<String, ExpositionError> {
    let node = [h.node.as_str()];
    let mut e = Exposition::for_file(file);
    e.gauge(m::HEALTH_STATUS, &node, f64::from(h.verdict.exit_code()));
    let mut checks: Vec<(&str, &str, Verdict)> = Vec::new();
    for c in &h.checks {
        match checks.iter_mut().find(|(n, s, _)| *n == c.check && *s == c.subject) {
            Some(seen) => seen.2 = Verdict::worst_of(seen.2, c.verdict),
            None => checks.push((&c.check, &c.subject, c.verdict)),
        }
    }
    for (check, subject, verdict) in checks {
        e.gauge(
            m::HEALTH_CHECK_STATUS,
            &[&h.node, check, subject],
            f64::from(verdict.exit_code()),
        );
    }
    e.gauge(m::HEALTH_LAST_RUN, &node, ended_unix_s);
    e.gauge(m::HEALTH_DURATION, &node, h.elapsed_s);
    e.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Check;

    #[test]
    fn every_check_once_at_its_worst_and_the_node_at_the_worst_of_all() {
        let checks = vec![
            Check::new("link", "mlx5_0", Verdict::Ok, "up"),
            Check::new("link", "mlx5_0", Verdict::Critical, "down"),
            Check::new("gpus", "", Verdict::Warning, "7 of 8"),
        ];
        let h = Health::new("n1", checks, 2.5, 10.0, None);
        let text = health(&h, 1_795_000_000.0, "h.prom").expect("encodes");
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "fabdiag_health_status{file=\"h.prom\",node=\"n1\"} 2",
                "fabdiag_health_check_status{file=\"h.prom\",node=\"n1\",check=\"link\",subject=\"mlx5_0\"} 2",
                "fabdiag_health_check_status{file=\"h.prom\",node=\"n1\",check=\"gpus\",subject=\"\"} 1",
                "fabdiag_health_last_run_timestamp_seconds{file=\"h.prom\",node=\"n1\"} 1795000000",
                "fabdiag_health_duration_seconds{file=\"h.prom\",node=\"n1\"} 2.5",
            ]
        );
    }
}
