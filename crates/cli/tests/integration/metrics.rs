//! `--metrics FILE`: what the pair tools write for Prometheus, checked by
//! Prometheus's own parts (Debian's `promtool check metrics`, and a real
//! node_exporter reading the file through its textfile collector), held
//! against the same run's JSON, and written on every way a run can end:
//! passed, failed, stopped by a signal; a file that cannot be written is
//! refused before the run.

use crate::common::prometheus::{http_get, promtool_accepts, sample, samples, Prometheus};
use crate::common::*;
use nix::sys::signal::Signal;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The value of the one sample of metric `name` whose series holds every
/// one of `labels` (`key="value"`).
fn value(text: &str, name: &str, labels: &[&str]) -> f64 {
    sample(text, name, labels).unwrap_or_else(|| panic!("{name} {labels:?} in:\n{text}"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn bandwidth_metrics_are_valid_and_agree_with_the_json() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("bw.prom");
    let f = file.to_str().expect("a path");
    let o = run(
        &[
            "write-bw",
            "--local",
            "-P",
            "tcp",
            "-n",
            "50",
            "-s",
            "1024:4096",
            "--json",
            "--metrics",
            f,
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    promtool_accepts(&file);
    let text = read(&file);
    let doc = o.json();
    let run = [r#"tool="write_bw""#, r#"role="client""#, r#"peer="localhost""#];
    assert_eq!(value(&text, "fabdiag_run_success", &run), 1.0);
    assert_eq!(value(&text, "fabdiag_run_outcome", &[run[0], r#"outcome="ok""#]), 1.0);
    let provider = doc["config"]["provider"].as_str().expect("a provider");
    let device = doc["config"]["device"].as_str().expect("a device");
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 3, "{doc}");
    for r in results {
        let size = format!("size_bytes=\"{}\"", r["size_bytes"]);
        let labels = [
            run[0],
            &format!("provider=\"{provider}\""),
            &format!("domain=\"{device}\""),
            &size,
        ];
        let bw = value(&text, "fabdiag_write_bandwidth_bytes_per_second", &labels);
        let mb = r["bw_mb_per_s"].as_f64().expect("MB/s");
        assert!((bw - mb * 1e6).abs() <= 1e-6 * bw, "{bw} vs {mb} MB/s");
        let rate = value(&text, "fabdiag_write_operations_per_second", &labels);
        let mpkt = r["pkt_rate_mpkt_per_s"].as_f64().expect("Mpkt/s");
        assert!((rate - mpkt * 1e6).abs() <= 1e-6 * rate.max(1.0), "{rate} vs {mpkt}");
    }
    // when it ended: now, not some other clock
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64();
    let ended = value(&text, "fabdiag_last_run_timestamp_seconds", &run);
    assert!(ended <= now && now - ended < 60.0, "{ended} vs {now}");
    // the NIC counters whose rise is a fault, both sides, from the same JSON
    let crc = value(
        &text,
        "fabdiag_nic_fault_increase",
        &[r#"side="peer""#, r#"device="lo""#, r#"counter="rx_crc_errors""#],
    );
    assert_eq!(crc, 0.0);
}

#[test]
fn latency_metrics_are_a_summary_of_the_json_figures() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("lat.prom");
    let f = file.to_str().expect("a path");
    let o = run(
        &[
            "send-lat",
            "--local",
            "-P",
            "tcp",
            "-n",
            "300",
            "-s",
            "8",
            "--json",
            "--metrics",
            f,
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    promtool_accepts(&file);
    let text = read(&file);
    let r = &o.json()["results"][0];
    let ns = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}")) as f64 / 1e9;
    let m = "fabdiag_send_latency_seconds";
    for (q, key) in [("0", "min_ns"), ("0.5", "p50_ns"), ("0.99", "p99_ns"), ("1", "max_ns")] {
        let quantile = format!("quantile=\"{q}\"");
        assert_eq!(value(&text, m, &[r#"size_bytes="8""#, &quantile]), ns(key), "{q}");
    }
    assert_eq!(value(&text, &format!("{m}_count"), &[]), 300.0);
    let sum = value(&text, &format!("{m}_sum"), &[]);
    assert!((sum - ns("mean_ns") * 300.0).abs() < 1e-12, "{sum}");
    assert_eq!(
        value(&text, "fabdiag_send_latency_stddev_seconds", &[]),
        ns("stddev_ns")
    );
}

#[test]
fn each_side_writes_its_own_metrics_naming_its_peer() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let (sf, cf) = (dir.path().join("server.prom"), dir.path().join("client.prom"));
    let (c, s) = pair(
        "read-bw",
        &["-P", "tcp", "--metrics", sf.to_str().expect("a path")],
        &["-P", "tcp", "-n", "20", "--metrics", cf.to_str().expect("a path")],
    );
    both_exit(&c, &s, 0, "a read-bw pair");
    let (server, client) = (read(&sf), read(&cf));
    let srv = [r#"tool="read_bw""#, r#"role="server""#, r#"peer="127.0.0.1""#];
    let cli = [r#"tool="read_bw""#, r#"role="client""#, r#"peer="127.0.0.1""#];
    assert_eq!(value(&server, "fabdiag_run_success", &srv), 1.0);
    assert_eq!(value(&client, "fabdiag_run_success", &cli), 1.0);
    let size = r#"size_bytes="65536""#;
    assert!(value(&client, "fabdiag_read_bandwidth_bytes_per_second", &[cli[1], size]) > 0.0);
    promtool_accepts(&sf);
    promtool_accepts(&cf);
}

#[test]
fn a_failed_run_writes_its_outcome() {
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("x.prom");
    let port = free_port().to_string();
    // nobody listens there: the client cannot connect
    let o = run(
        &[
            "send-bw",
            "127.0.0.1",
            "-p",
            &port,
            "-P",
            "tcp",
            "-d",
            "lo",
            "--metrics",
            file.to_str().expect("a path"),
        ],
        LIMIT,
    );
    assert_ne!(o.code, Some(0), "{}", o.stderr);
    let text = read(&file);
    let run = [
        r#"tool="send_bw""#,
        r#"peer="127.0.0.1""#,
        r#"provider="tcp""#,
        r#"domain="lo""#,
    ];
    assert_eq!(value(&text, "fabdiag_run_success", &run), 0.0);
    assert_eq!(value(&text, "fabdiag_run_outcome", &[r#"outcome="runtime""#]), 1.0);
    assert_eq!(value(&text, "fabdiag_run_outcome", &[r#"outcome="ok""#]), 0.0);
    assert!(!text.contains("bandwidth"), "{text}");
    promtool_accepts(&file);
    // no libfabric at all: said before any run, and in the metrics too
    let mut c = fabdiag(&[
        "write-lat",
        "127.0.0.1",
        "-p",
        &port,
        "--metrics",
        file.to_str().expect("a path"),
    ]);
    c.env("FABDIAG_LIBFABRIC", "/nonexistent/libfabric.so.1");
    let o = Proc::spawn(&mut c).wait(LIMIT);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    let text = read(&file);
    let run = [r#"tool="write_lat""#, r#"role="client""#, r#"peer="127.0.0.1""#];
    assert_eq!(value(&text, "fabdiag_run_success", &run), 0.0);
    assert_eq!(value(&text, "fabdiag_run_outcome", &[r#"outcome="unavailable""#]), 1.0);
}

#[test]
fn a_run_stopped_by_a_signal_keeps_the_sizes_it_measured() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("stopped.prom");
    let port = free_port();
    let p = port.to_string();
    let srv = server(&["write-bw", "-p", &p, "-P", "tcp"], port);
    let f = file.to_str().expect("a path");
    let args = [
        "write-bw",
        "127.0.0.1",
        "-p",
        &p,
        "-P",
        "tcp",
        "-D",
        "1",
        "-s",
        "8:65536",
        "--metrics",
        f,
    ];
    let mut cli = Proc::spawn(&mut fabdiag(&args));
    // the second size's row: one size measured and the run under way
    cli.wait_for("two rows", Duration::from_secs(20), |out, _| {
        out.lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count()
            >= 2
    });
    cli.signal(Signal::SIGINT);
    let o = cli.wait(SHORT);
    drop(srv);
    assert!(o.stderr.contains("stopped by SIGINT"), "{}", o.stderr);
    let text = read(&file);
    assert_eq!(value(&text, "fabdiag_run_outcome", &[r#"outcome="interrupted""#]), 1.0);
    assert_eq!(value(&text, "fabdiag_run_success", &[]), 0.0);
    assert!(
        value(
            &text,
            "fabdiag_write_bandwidth_bytes_per_second",
            &[r#"size_bytes="8""#]
        ) > 0.0
    );
    promtool_accepts(&file);
}

#[test]
fn a_file_that_cannot_be_written_is_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("a folder");
    let missing = dir.path().join("no-such-dir/x.prom");
    // a link to a device, as /dev/stdout is, made here
    let link = dir.path().join("out.prom");
    std::os::unix::fs::symlink("/dev/null", &link).expect("a link");
    for (path, says) in [
        (missing.to_str().expect("a path"), "no directory"),
        (dir.path().to_str().expect("a path"), "is a directory"),
        // renamed over, they would be replaced, not written
        ("/dev/null", "is not a regular file"),
        (link.to_str().expect("a path"), "is not a regular file"),
    ] {
        let t0 = Instant::now();
        // a server would listen for a client for ever: refused at once
        let o = run(&["write-bw", "-P", "tcp", "--metrics", path], SHORT);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        let line = one_line(&o.stderr);
        assert!(line.contains("--metrics") && line.contains(says), "{line}");
        assert!(o.stdout.is_empty(), "{}", o.stdout);
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn node_exporter_serves_the_files_of_every_command_side_by_side() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    // one file per test, as a site's timers would write them: the same
    // metrics with other labels in several files must be one family
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    for args in [
        vec![
            "write-lat",
            "--local",
            "-P",
            "tcp",
            "-n",
            "100",
            "--metrics",
            &file("write-lat.prom"),
        ],
        vec![
            "write-lat",
            "--local",
            "-P",
            "tcp",
            "-n",
            "100",
            "-s",
            "64",
            "--metrics",
            &file("write-lat-64.prom"),
        ],
        vec![
            "send-bw",
            "--local",
            "-P",
            "tcp",
            "-n",
            "20",
            "--metrics",
            &file("send-bw.prom"),
        ],
        vec![
            "sweep",
            "--simulate",
            "4",
            "--sim-pair-ms",
            "0",
            "--metrics",
            &file("sweep.prom"),
        ],
        vec!["health", "-d", "shm:shm", "--metrics", &file("health.prom")],
    ] {
        let o = run(&args, LIMIT);
        assert!(
            std::path::Path::new(args[args.len() - 1]).exists(),
            "{args:?}: {}",
            o.stderr
        );
    }
    let port = free_port();
    let mut exporter = Command::new("prometheus-node-exporter")
        .args([
            &format!("--web.listen-address=127.0.0.1:{port}"),
            "--collector.disable-defaults",
            "--collector.textfile",
            &format!("--collector.textfile.directory={}", dir.path().display()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prometheus-node-exporter (scripts/install-deps.sh installs it)");
    let deadline = Instant::now() + SHORT;
    let body = loop {
        match http_get(port, "/metrics") {
            Ok(b) if !b.is_empty() => break b,
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            r => {
                let _ = exporter.kill();
                panic!("node_exporter did not answer on {port}: {r:?}");
            }
        }
    };
    let _ = exporter.kill();
    let _ = exporter.wait();
    assert_eq!(value(&body, "node_textfile_scrape_error", &[]), 0.0, "{body}");
    // the two write-lat runs against one peer: two series, told apart by their file
    for (file, size) in [
        ("write-lat.prom", r#"size_bytes="8""#),
        ("write-lat-64.prom", r#"size_bytes="64""#),
    ] {
        let file = format!("file=\"{file}\"");
        assert_eq!(
            value(&body, "fabdiag_run_success", &[&file, r#"tool="write_lat""#]),
            1.0
        );
        assert!(
            value(
                &body,
                "fabdiag_write_latency_seconds",
                &[&file, size, r#"quantile="0.5""#]
            ) > 0.0
        );
        assert_eq!(
            value(&body, "fabdiag_write_latency_seconds_count", &[&file, size]),
            100.0
        );
    }
    assert_eq!(value(&body, "fabdiag_run_success", &[r#"tool="send_bw""#]), 1.0);
    assert_eq!(value(&body, "fabdiag_sweep_nodes", &[r#"state="all""#]), 4.0);
    assert!(value(&body, "fabdiag_health_status", &[]) <= 3.0);
}

#[test]
fn a_sweep_writes_its_verdict_nodes_and_slow_links_and_its_remade_report_the_same() {
    let dir = tempfile::tempdir().expect("a folder");
    // the remade report's file under the same name (its `file` label)
    std::fs::create_dir(dir.path().join("again")).expect("a folder");
    let (file, again, out) = (
        dir.path().join("sweep.prom"),
        dir.path().join("again/sweep.prom"),
        dir.path().join("out"),
    );
    let f = file.to_str().expect("a path");
    let args = ["sweep", "--simulate", "8", "--sim-pair-ms", "0", "--sim-slow", "3,1-4"];
    let o = run(
        &[&args[..], &["--metrics", f, "--output", out.to_str().expect("a path")]].concat(),
        LIMIT,
    );
    // outliers found: exit status 5, and the metrics say it did not pass
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    promtool_accepts(&file);
    let text = read(&file);
    let labels = [r#"file="sweep.prom""#, r#"test="write-bw 65536 B""#];
    assert_eq!(value(&text, "fabdiag_sweep_success", &labels), 0.0);
    assert_eq!(value(&text, "fabdiag_sweep_nodes", &[r#"state="slow""#]), 1.0);
    assert_eq!(value(&text, "fabdiag_sweep_pairs", &[r#"state="measured""#]), 28.0);
    assert_eq!(value(&text, "fabdiag_sweep_node_slow", &[r#"rank="3""#]), 1.0);
    assert_eq!(value(&text, "fabdiag_sweep_node_slow", &[r#"rank="2""#]), 0.0);
    let links: Vec<_> = samples(&text)
        .into_iter()
        .filter(|(s, _)| s.starts_with("fabdiag_sweep_slow_link_bandwidth_bytes_per_second{"))
        .collect();
    assert_eq!(links.len(), 1, "{text}");
    assert!(
        links[0].0.contains("a=\"rank 1 ") && links[0].0.contains("b=\"rank 4 "),
        "{links:?}"
    );
    // the report made again from the folder: the same metrics, the same end time
    let o = run(
        &[
            "sweep",
            "--report",
            out.to_str().expect("a path"),
            "--metrics",
            again.to_str().expect("a path"),
        ],
        LIMIT,
    );
    assert_eq!(o.code, Some(5), "{}", o.stderr);
    assert_eq!(samples(&read(&again)), samples(&text));
    // and a clean sweep passes
    let o = run(
        &["sweep", "--simulate", "4", "--sim-pair-ms", "0", "--metrics", f],
        LIMIT,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(value(&read(&file), "fabdiag_sweep_success", &[]), 1.0);
}

#[test]
fn a_sweep_refuses_a_metrics_file_it_cannot_write_before_it_starts() {
    let o = run(
        &["sweep", "--simulate", "4", "--metrics", "/nonexistent-dir/x.prom"],
        SHORT,
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let line = one_line(&o.stderr);
    assert!(
        line.contains("--metrics") && line.contains("no directory /nonexistent-dir"),
        "{line}"
    );
    assert!(o.stdout.is_empty(), "{}", o.stdout);
}

fn health(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = fabdiag(&[&["health"][..], args].concat());
    c.envs(env.iter().copied());
    Proc::spawn(&mut c).wait(LIMIT)
}

/// Nagios's code of a verdict word.
fn code_of(verdict: &str) -> f64 {
    match verdict {
        "OK" => 0.0,
        "WARNING" => 1.0,
        "CRITICAL" => 2.0,
        "UNKNOWN" => 3.0,
        other => panic!("verdict {other}"),
    }
}

#[test]
fn health_writes_the_verdict_of_the_node_and_of_every_check() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("health.prom");
    let o = health(
        &[
            "-d",
            "shm:shm",
            "--node",
            "n7",
            "--json",
            "--metrics",
            file.to_str().expect("a path"),
        ],
        &[],
    );
    let doc = o.json();
    promtool_accepts(&file);
    let text = read(&file);
    let verdict = doc["verdict"].as_str().expect("a verdict");
    assert_eq!(o.code.map(f64::from), Some(code_of(verdict)), "{}", o.stderr);
    assert_eq!(
        value(&text, "fabdiag_health_status", &[r#"node="n7""#]),
        code_of(verdict)
    );
    let checks = doc["checks"].as_array().expect("checks");
    assert!(checks.iter().any(|c| c["check"] == "loopback write-bw"), "{doc}");
    for c in checks {
        let (check, subject) = (
            c["check"].as_str().expect("a name"),
            c["subject"].as_str().expect("a subject"),
        );
        // (the worst of a check's verdicts where one is reported twice)
        let worst = checks
            .iter()
            .filter(|d| d["check"] == check && d["subject"] == subject)
            .map(|d| code_of(d["verdict"].as_str().expect("a verdict")))
            .fold(0.0, f64::max);
        let labels = [format!("check=\"{check}\""), format!("subject=\"{subject}\"")];
        let got = value(&text, "fabdiag_health_check_status", &[&labels[0], &labels[1]]);
        assert_eq!(got, worst, "{check} {subject}");
    }
    let took = value(&text, "fabdiag_health_duration_seconds", &[]);
    assert!((took - doc["elapsed_s"].as_f64().expect("elapsed")).abs() < 1e-9);
}

#[test]
fn health_cut_off_by_its_budget_or_a_bad_file_still_writes_unknown() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("health.prom");
    let f = file.to_str().expect("a path");
    let o = health(
        &["-d", "shm:shm", "--budget", "3", "--metrics", f],
        &[("FABDIAG_TEST_STALL_DATA_CALL", "50")],
    );
    assert_eq!(o.code, Some(3), "{}{}", o.stdout, o.stderr);
    let text = read(&file);
    assert_eq!(value(&text, "fabdiag_health_status", &[]), 3.0);
    assert_eq!(value(&text, "fabdiag_health_check_status", &[r#"check="budget""#]), 3.0);
    assert_eq!(
        value(&text, "fabdiag_health_check_status", &[r#"check="libfabric""#]),
        0.0
    );
    let o = health(&["--expect", "/nonexistent/health.toml", "--metrics", f], &[]);
    assert_eq!(o.code, Some(3), "{}{}", o.stdout, o.stderr);
    let text = read(&file);
    assert_eq!(value(&text, "fabdiag_health_status", &[]), 3.0);
    let expect = [r#"check="expect""#, r#"subject="/nonexistent/health.toml""#];
    assert_eq!(value(&text, "fabdiag_health_check_status", &expect), 3.0);
    // a file it cannot write: UNKNOWN before anything is measured
    let o = health(&["-d", "shm:shm", "--metrics", "/nonexistent-dir/h.prom"], &[]);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    assert!(
        one_line(&o.stderr).contains("no directory /nonexistent-dir"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty(), "{}", o.stdout);
}

/// node_exporter on loopback reading `dir`'s textfiles only.
fn node_exporter(dir: &Path) -> (std::process::Child, u16) {
    let port = free_port();
    let child = Command::new("prometheus-node-exporter")
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--collector.disable-defaults")
        .arg("--collector.textfile")
        .arg(format!("--collector.textfile.directory={}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus-node-exporter (scripts/install-deps.sh installs it)");
    let deadline = Instant::now() + SHORT;
    while http_get(port, "/metrics").is_err() {
        assert!(Instant::now() < deadline, "node_exporter never answered on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, port)
}

#[test]
fn prometheus_sees_a_slowed_link_and_its_recovery_through_node_exporter() {
    require_root();
    let _cpu = cpu();
    let ns = crate::common::netns::Netns::new(11);
    let (va, _) = ns.ends();
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("write-bw.prom");
    let (mut exporter, exporter_port) = node_exporter(dir.path());
    let prom = Prometheus::scraping(&[exporter_port]);
    let b_addr = format!("{}.2", ns.a_addr().rsplit_once('.').expect("an IPv4 address").0);
    // one write-bw run from A to B's server (10 MB): its file replaced
    let measure = || {
        let port = free_port().to_string();
        let srv = Proc::spawn(&mut ns.cmd(&ns.b, &["write-bw", "-p", &port, "-P", "tcp"]));
        crate::common::netns::wait_listen_in_ns(srv.pid(), port.parse().expect("a port"));
        let f = file.to_str().expect("a path");
        let args = [
            "write-bw",
            &b_addr,
            "-p",
            &port,
            "-P",
            "tcp",
            "-s",
            "65536",
            "-l",
            "16",
            "-n",
            "10",
            "--metrics",
            f,
        ];
        let o = Proc::spawn(&mut ns.cmd(&ns.a, &args)).wait(LIMIT);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        let _ = srv.wait(SHORT);
    };
    let bw = format!("fabdiag_write_bandwidth_bytes_per_second{{peer=\"{b_addr}\",size_bytes=\"65536\"}}");
    // (bounds the shaping sets, not this machine's speed: a veth carries
    // hundreds of MB/s; the shaped link at most 5 MB/s and its burst)
    let (fast, slow) = (20e6, 6e6);
    measure();
    let clean = prom.until(&bw, |v| v > fast);
    // A's end of the link shaped to 40 Mbit/s
    must(&[
        "ip", "netns", "exec", &ns.a, "tc", "qdisc", "add", "dev", &va, "root", "tbf", "rate", "40mbit", "burst",
        "32kb", "latency", "400ms",
    ]);
    measure();
    let slowed = prom.until(&bw, |v| v < slow);
    must(&["ip", "netns", "exec", &ns.a, "tc", "qdisc", "del", "dev", &va, "root"]);
    measure();
    let back = prom.until(&bw, |v| v > fast);
    eprintln!("seen by Prometheus {clean:?}, {slowed:?} and {back:?} after each run's file was written");
    // the run's own verdict, through the same path
    assert_eq!(
        prom.query(&format!("fabdiag_run_success{{peer=\"{b_addr}\"}}")),
        Some(1.0)
    );
    // every query of the shipped dashboard is one this Prometheus takes
    for q in dashboard_queries(&dashboard()) {
        let v = prom.answer(&q).unwrap_or_else(|| panic!("no JSON answer to {q}"));
        assert_eq!(v["status"], "success", "{q}: {v}");
    }
    let _ = exporter.kill();
    let _ = exporter.wait();
}

/// The shipped Grafana dashboard.
fn dashboard() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../contrib/grafana/fabdiag.json"
    ))
    .expect("contrib/grafana/fabdiag.json");
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

/// Every query of the dashboard.
fn dashboard_queries(d: &serde_json::Value) -> Vec<String> {
    let panels = d["panels"].as_array().expect("panels");
    panels
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().expect("every target has an expr").to_string())
        .collect()
}

/// The metric names a query names: plain names, and the names a
/// `fabdiag_(a|b)_rest` alternation stands for.
fn names_in(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("fabdiag_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_()|".contains(c)))
            .unwrap_or(tail.len());
        let word = &tail[..end];
        match (word.find('('), word.find(')')) {
            (Some(open), Some(close)) if open < close => {
                for alt in word[open + 1..close].split('|') {
                    out.push(format!("{}{alt}{}", &word[..open], &word[close + 1..]));
                }
            }
            _ => out.push(word.to_string()),
        }
        rest = &tail[end..];
    }
    out
}

#[test]
fn the_grafana_dashboard_is_whole_and_names_only_exported_metrics() {
    let d = dashboard();
    assert!(d["title"].as_str().is_some_and(|t| !t.is_empty()) && d["uid"] == "fabdiag-fabric");
    assert!(
        d["schemaVersion"].as_u64().is_some_and(|v| v >= 36),
        "{}",
        d["schemaVersion"]
    );
    let vars = d["templating"]["list"].as_array().expect("variables");
    assert!(vars
        .iter()
        .any(|v| v["type"] == "datasource" && v["name"] == "datasource"));
    let panels = d["panels"].as_array().expect("panels");
    let mut ids: Vec<u64> = panels.iter().map(|p| p["id"].as_u64().expect("an id")).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), panels.len(), "panel ids repeat");
    let mut cells = std::collections::HashSet::new();
    for p in panels {
        let kind = p["type"].as_str().expect("a type");
        assert!(
            ["stat", "timeseries", "table", "status-history"].contains(&kind),
            "{kind}"
        );
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        let g = &p["gridPos"];
        let (x, y, w, h) = (g["x"].as_u64(), g["y"].as_u64(), g["w"].as_u64(), g["h"].as_u64());
        let (x, y, w, h) = (x.unwrap(), y.unwrap(), w.unwrap(), h.unwrap());
        assert!(w >= 1 && x + w <= 24 && h >= 1, "{}: {g}", p["title"]);
        // no two panels on one cell of the grid
        for cx in x..x + w {
            for cy in y..y + h {
                assert!(cells.insert((cx, cy)), "{} overlaps another panel", p["title"]);
            }
        }
        assert!(!p["targets"].as_array().expect("targets").is_empty(), "{}", p["title"]);
    }
    let exported: Vec<&str> = fabdiag_exposition::catalogue::all().iter().map(|d| d.name).collect();
    let queries = dashboard_queries(&d);
    for q in &queries {
        let names = names_in(q);
        assert!(!names.is_empty(), "{q} names no fabdiag metric");
        for n in names {
            let base = n.trim_end_matches("_sum").trim_end_matches("_count");
            assert!(exported.contains(&base), "{q}: {n} is not exported");
        }
    }
}
