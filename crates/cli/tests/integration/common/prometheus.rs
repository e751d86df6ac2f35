//! Prometheus's own parts for the tests that check what fabdiag exports:
//! `promtool check metrics`, an HTTP GET on loopback, and Debian's
//! Prometheus server scraping targets every second, on this host's
//! loopback or inside a network namespace (queried there with
//! `promtool query`, since this process cannot reach that loopback).

use super::{LIMIT, SHORT};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// promtool's verdict on an exposition: its parser and its naming lint.
pub fn promtool_accepts_text(text: &str, what: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (scripts/install-deps.sh installs Debian's prometheus)");
    child
        .stdin
        .take()
        .expect("its input")
        .write_all(text.as_bytes())
        .expect("promtool reads");
    let o = child.wait_with_output().expect("promtool ends");
    assert!(
        o.status.success(),
        "promtool check metrics refused {what}:\n{}{}\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// promtool's verdict on a file.
pub fn promtool_accepts(path: &Path) {
    let text = std::fs::read_to_string(path).expect("the metrics file");
    promtool_accepts_text(&text, &path.display().to_string());
}

/// The samples of an exposition: (series with its labels, value).
pub fn samples(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {l}"));
            (series.to_string(), value.parse().unwrap_or_else(|_| panic!("{l}")))
        })
        .collect()
}

/// The value of the sample of metric `name` whose series holds every one
/// of `labels` (`key="value"`), if there is one; more than one fails.
pub fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    let found: Vec<f64> = samples(text)
        .into_iter()
        .filter(|(s, _)| s.split('{').next() == Some(name) && labels.iter().all(|l| s.contains(l)))
        .map(|(_, v)| v)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} more than once in:\n{text}");
    found.first().copied()
}

/// A GET of `path` from an HTTP server on loopback `port`: the body.
pub fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(SHORT))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default())
}

/// Debian's Prometheus scraping `targets` (loopback ports) every second,
/// with its data in a folder of its own; killed when dropped.
pub struct Prometheus {
    child: std::process::Child,
    port: u16,
    /// The network namespace it runs in, if not this host's.
    ns: Option<String>,
    _data: tempfile::TempDir,
}

impl Prometheus {
    /// One on this host's loopback.
    pub fn scraping(targets: &[u16]) -> Prometheus {
        Prometheus::start(None, targets)
    }

    /// One on the loopback of namespace `ns`.
    pub fn scraping_in(ns: &str, targets: &[u16]) -> Prometheus {
        Prometheus::start(Some(ns), targets)
    }

    fn start(ns: Option<&str>, targets: &[u16]) -> Prometheus {
        let data = tempfile::tempdir().expect("a folder");
        let list: Vec<String> = targets.iter().map(|p| format!("'127.0.0.1:{p}'")).collect();
        let config = data.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: fabdiag\n    static_configs:\n      - targets: [{}]\n",
                list.join(", ")
            ),
        )
        .expect("its configuration");
        let port = super::free_port();
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "prometheus"]);
                c
            }
            None => Command::new("prometheus"),
        };
        let child = cmd
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.path().join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (scripts/install-deps.sh installs Debian's)");
        let p = Prometheus {
            child,
            port,
            ns: ns.map(str::to_string),
            _data: data,
        };
        let deadline = Instant::now() + LIMIT;
        while p.result("vector(1)").is_none() {
            assert!(Instant::now() < deadline, "Prometheus never became ready on {port}");
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    /// The API's whole answer to an instant query, as JSON (this host's
    /// Prometheus only).
    pub fn answer(&self, promql: &str) -> Option<serde_json::Value> {
        assert!(self.ns.is_none(), "the API's answer is read on this host's loopback");
        // every byte percent-encoded: always a valid query string
        let encoded: String = promql.bytes().map(|b| format!("%{b:02X}")).collect();
        let body = http_get(self.port, &format!("/api/v1/query?query={encoded}")).ok()?;
        serde_json::from_str(&body).ok()
    }

    /// An instant query's result: its series, each `{metric, value}`.
    pub fn result(&self, promql: &str) -> Option<Vec<serde_json::Value>> {
        match &self.ns {
            None => {
                let a = self.answer(promql)?;
                (a["status"] == "success").then(|| a["data"]["result"].as_array().cloned().unwrap_or_default())
            }
            Some(ns) => {
                let server = format!("http://127.0.0.1:{}", self.port);
                let o = Command::new("ip")
                    .args([
                        "netns", "exec", ns, "promtool", "query", "instant", "-o", "json", &server, promql,
                    ])
                    .stderr(Stdio::null())
                    .output()
                    .ok()?;
                if !o.status.success() {
                    return None;
                }
                match serde_json::from_slice::<serde_json::Value>(&o.stdout).ok()? {
                    serde_json::Value::Array(v) => Some(v),
                    // a scalar or string answer
                    other => Some(vec![serde_json::json!({ "value": other })]),
                }
            }
        }
    }

    /// An instant query's first value, if the result has one.
    pub fn query(&self, promql: &str) -> Option<f64> {
        self.result(promql)?.first()?["value"][1].as_str()?.parse().ok()
    }

    /// Waits until `promql`'s value satisfies `ok`: how long that took.
    pub fn until(&self, promql: &str, ok: impl Fn(f64) -> bool) -> Duration {
        let t0 = Instant::now();
        loop {
            let v = self.query(promql);
            if v.is_some_and(&ok) {
                return t0.elapsed();
            }
            assert!(t0.elapsed() < LIMIT, "{promql} never held; last value {v:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
