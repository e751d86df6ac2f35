//! `fabdiag monitor` against real `fabdiag serve` processes: bad options
//! and peers refused in one line; peers up, refused, hung and not fabdiag
//! told apart on `/metrics` (which promtool accepts, and which answers
//! while a probe hangs); a peer going down and back counted and logged,
//! with the monitor's memory and descriptors flat; a stop that leaves no
//! probe behind; and Debian's Prometheus scraping a monitor in a network
//! namespace while `tc` shapes the link to its peers and lets it go.

use crate::common::prometheus::{http_get, promtool_accepts_text, sample, Prometheus};
use crate::common::*;
use nix::sys::signal::Signal;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn peers_file(dir: &tempfile::TempDir, lines: &[String]) -> String {
    let path = dir.path().join("peers.txt");
    std::fs::write(&path, lines.join("\n") + "\n").expect("the peers file");
    path.to_string_lossy().into_owned()
}

/// `monitor --peers FILE --listen 127.0.0.1:PORT` and `extra`, with
/// `peers` written to FILE in `dir`: the arguments and the port.
fn monitor_args(dir: &tempfile::TempDir, peers: &[String], extra: &[&str]) -> (Vec<String>, u16) {
    let file = peers_file(dir, peers);
    let port = free_port();
    let mut args: Vec<String> = vec!["monitor".into(), "--peers".into(), file, "--listen".into()];
    args.push(format!("127.0.0.1:{port}"));
    args.extend(extra.iter().map(|a| a.to_string()));
    (args, port)
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Waits until the monitor's page on `port` satisfies `ok`: the page.
fn page_until(m: &mut Proc, port: u16, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        let page = http_get(port, "/metrics").unwrap_or_default();
        if ok(&page) {
            return page;
        }
        assert!(m.alive(), "the monitor ended:\n{}", m.stderr_now());
        assert!(
            t0.elapsed() < LIMIT,
            "no {what} within {LIMIT:?}:\n{page}\n{}",
            m.stderr_now()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Processes whose parent is `pid`.
fn children(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // the fields after the command's closing parenthesis: state, ppid
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string))
                == Some(pid.to_string())
        })
        .count()
}

#[test]
fn bad_options_and_peers_are_refused_in_one_line() {
    let dir = tempfile::tempdir().expect("a folder");
    let bad = peers_file(&dir, &["n1".into(), "n2:99999".into()]);
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "# nobody\n\n").expect("a file");
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let taken_addr = taken.local_addr().expect("its address").to_string();
    let good = dir.path().join("good.txt");
    std::fs::write(&good, "127.0.0.1:1\n").expect("a file");
    let (empty, good) = (empty.to_string_lossy(), good.to_string_lossy());
    for (args, code, says) in [
        (
            vec!["monitor"],
            1,
            "Which peers? Give --peers FILE or --partition NAME (see -h)".to_string(),
        ),
        (
            vec!["monitor", "--peers", "/nonexistent/peers"],
            1,
            "cannot read the peers file /nonexistent/peers: No such file or directory (os error 2)".into(),
        ),
        (
            vec!["monitor", "--peers", &bad],
            1,
            format!("{bad}: line 2: 'n2:99999': '99999' is not a port (1 to 65535)"),
        ),
        (
            vec!["monitor", "--peers", &empty],
            1,
            format!("{empty}: no peers in {empty}"),
        ),
        (
            vec!["monitor", "--peers", &good, "--budget", "200"],
            1,
            "Invalid budget: 200 (percent of link time, above 0, at most 100)".into(),
        ),
        (
            vec!["monitor", "--peers", &good, "--listen", &taken_addr],
            2,
            format!("cannot listen on {taken_addr}: Address already in use (os error 98)"),
        ),
    ] {
        let t0 = Instant::now();
        let o = run(&args, SHORT);
        assert_eq!(o.code, Some(code), "{args:?}: {}", o.stderr);
        assert_eq!(one_line(&o.stderr), format!("fabdiag monitor: {says}"), "{args:?}");
        assert!(o.stdout.is_empty() && t0.elapsed() < Duration::from_secs(5), "{args:?}");
    }
    let o = run(&["monitor", "-h"], SHORT);
    assert_eq!(o.code, Some(0));
    assert!(
        o.stdout.contains("--bw-interval=SEC") && o.stderr.is_empty(),
        "{}",
        o.stdout
    );
}

/// A TCP listener that accepts and then says nothing (a hung node), or
/// writes what `says` holds and closes (something other than fabdiag).
fn stranger(says: Option<&'static [u8]>) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = l.local_addr().expect("its address").port();
    let h = std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming().take(50) {
            let Ok(mut c) = c else { continue };
            match says {
                Some(text) => {
                    let _ = c.write_all(text);
                    let mut sink = [0u8; 256];
                    let _ = c.set_read_timeout(Some(Duration::from_millis(200)));
                    let _ = c.read(&mut sink);
                }
                None => held.push(c),
            }
        }
    });
    (port, h)
}

#[test]
fn peers_up_refused_hung_and_strange_are_told_apart_and_a_flapping_peer_is_counted() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let (p1, p2, closed) = (free_port(), free_port(), free_port());
    let s1 = server(&["serve", "-p", &p1.to_string()], p1);
    let mut s2 = Some(server(&["serve", "-p", &p2.to_string()], p2));
    let (hung, _h) = stranger(None);
    let (http, _s) = stranger(Some(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"));
    let peers: Vec<String> = [p1, p2, closed, hung, http]
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    let extra = [
        "--interval",
        "2",
        "--bw-interval",
        "4",
        "--budget",
        "50",
        "--timeout",
        "3",
    ];
    let (args, mport) = monitor_args(&dir, &peers, &extra);
    let mut m = Proc::spawn(&mut fabdiag(&strs(&args)));
    let up = |p: u16, reason: &str| format!("fabdiag_monitor_peer_up{{peer=\"127.0.0.1:{p}\",reason=\"{reason}\"}}");
    let has = |page: &str, series: &str| page.lines().any(|l| l.starts_with(series));
    let page = page_until(&mut m, mport, "every peer's state", |p| {
        has(p, &up(p1, "ok"))
            && has(p, &up(p2, "ok"))
            && has(p, &up(closed, "refused"))
            && has(p, &up(hung, "timeout"))
            && has(p, &up(http, "not_fabdiag"))
            && has(p, "fabdiag_monitor_bandwidth_bytes_per_second{peer=\"127.0.0.1:")
    });
    promtool_accepts_text(&page, "the monitor's /metrics");
    assert_eq!(sample(&page, "fabdiag_monitor_peers", &[]), Some(5.0));
    let lat = sample(
        &page,
        "fabdiag_monitor_latency_seconds",
        &[&format!("127.0.0.1:{p1}"), "quantile=\"0.5\""],
    );
    assert!(lat.is_some_and(|v| v > 0.0 && v < 0.1), "{lat:?}");
    // a scrape is answered at once while the hung peer's probe waits
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        assert!(http_get(mport, "/metrics").is_ok_and(|p| p.contains("fabdiag_monitor_peers 5")));
        slowest = slowest.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(slowest < Duration::from_secs(1), "a scrape took {slowest:?}");
    // the peer goes away and comes back, twice
    let before = footprint(m.pid());
    let p2_up = up(p2, "ok");
    let p2_refused = up(p2, "refused");
    for _ in 0..2 {
        drop(s2.take());
        page_until(&mut m, mport, "p2 down", |p| has(p, &p2_refused));
        s2 = Some(server(&["serve", "-p", &p2.to_string()], p2));
        page_until(&mut m, mport, "p2 back", |p| has(p, &p2_up));
    }
    let page = http_get(mport, "/metrics").expect("a page");
    let changes = sample(
        &page,
        "fabdiag_monitor_peer_state_changes_total",
        &[&format!("127.0.0.1:{p2}")],
    );
    assert_eq!(changes, Some(4.0), "{page}");
    assert_eq!(
        sample(
            &page,
            "fabdiag_monitor_peer_state_changes_total",
            &[&format!("127.0.0.1:{p1}")]
        ),
        Some(0.0)
    );
    let log = m.stderr_now();
    let downs = log.matches(&format!("127.0.0.1:{p2} down (refused)")).count();
    assert_eq!(downs, 2, "{log}");
    assert!(
        log.contains(&format!("127.0.0.1:{hung} down (timeout): no end within 3 s")),
        "{log}"
    );
    // memory and descriptors flat over the changes (probes come and go)
    let pid = m.pid();
    let what = "monitor before the changes, and after";
    assert_flat(pid, before, 4096, SHORT, what, || children(pid) > 0);
    // other paths and methods
    assert!(http_get(mport, "/").is_ok_and(|b| b.contains("/metrics")));
    assert!(http_get(mport, "/nothing").is_ok_and(|b| b.starts_with("not found")));
    // a stop while a probe hangs: exits 0 at once and leaves no probe behind
    let pid = m.pid();
    page_until(&mut m, mport, "a probe running", |_| children(pid) > 0);
    let t = Instant::now();
    m.signal(Signal::SIGTERM);
    let o = m.wait(SHORT);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(t.elapsed() < Duration::from_secs(3), "took {:?} to stop", t.elapsed());
    assert!(
        o.stderr.contains("stopped by SIGTERM: 2 peers up, 3 down"),
        "{}",
        o.stderr
    );
    assert_eq!(children(pid), 0);
    drop(s1);
}

#[test]
fn prometheus_sees_a_shaped_link_to_the_monitors_peers_and_its_recovery() {
    require_root();
    let _cpu = cpu();
    let ns = crate::common::netns::Netns::new(12);
    let (va, _) = ns.ends();
    let b_addr = format!("{}.2", ns.a_addr().rsplit_once('.').expect("an IPv4 address").0);
    let (p1, p2, closed) = (free_port(), free_port(), free_port());
    let mut servers = Vec::new();
    for p in [p1, p2] {
        let s = Proc::spawn(&mut ns.cmd(&ns.b, &["serve", "-p", &p.to_string(), "-P", "tcp"]));
        crate::common::netns::wait_listen_in_ns(s.pid(), p);
        servers.push(s);
    }
    let dir = tempfile::tempdir().expect("a folder");
    let peers: Vec<String> = [p1, p2, closed].iter().map(|p| format!("{b_addr}:{p}")).collect();
    // small bandwidth probes (16 x 256 writes of 4 KiB: 16 MiB), so one
    // takes seconds, not a minute, on the shaped link
    let extra = [
        "--interval",
        "1",
        "--bw-interval",
        "1",
        "--bw-size",
        "4096",
        "--budget",
        "100",
        "-P",
        "tcp",
    ];
    let (args, mport) = monitor_args(&dir, &peers, &extra);
    let _m = Proc::spawn(&mut ns.cmd(&ns.a, &strs(&args)));
    let prom = Prometheus::scraping_in(&ns.a, &[mport]);
    let bw = |p: u16| format!("fabdiag_monitor_bandwidth_bytes_per_second{{peer=\"{b_addr}:{p}\"}}");
    // (bounds the shaping sets, not this machine's speed: a veth carries
    // hundreds of MB/s; the shaped link at most 5 MB/s and its burst)
    let (fast, slow) = (20e6, 6e6);
    let clean = prom.until(&bw(p1), |v| v > fast);
    prom.until(
        &format!("fabdiag_monitor_peer_up{{peer=\"{b_addr}:{closed}\",reason=\"refused\"}}"),
        |v| v == 0.0,
    );
    let p50 = format!("fabdiag_monitor_latency_seconds{{peer=\"{b_addr}:{p1}\",quantile=\"0.5\"}}");
    prom.until(&p50, |v| v > 0.0 && v < 0.1);
    // A's end of the link shaped to 40 Mbit/s
    must(&[
        "ip", "netns", "exec", &ns.a, "tc", "qdisc", "add", "dev", &va, "root", "tbf", "rate", "40mbit", "burst",
        "32kb", "latency", "400ms",
    ]);
    let slowed = prom.until(&bw(p1), |v| v < slow);
    // Prometheus had it within two scrapes (1 s each) of the probe's end
    let scraped = prom.query(&format!("timestamp({})", bw(p1))).expect("its scrape time");
    let ended = prom
        .query(&format!(
            "fabdiag_monitor_last_probe_timestamp_seconds{{peer=\"{b_addr}:{p1}\",probe=\"bandwidth\"}}"
        ))
        .expect("the probe's end");
    assert!(
        scraped - ended <= 2.5,
        "scraped {:.2} s after the probe ended",
        scraped - ended
    );
    prom.until(&bw(p2), |v| v < slow);
    must(&["ip", "netns", "exec", &ns.a, "tc", "qdisc", "del", "dev", &va, "root"]);
    let back = prom.until(&bw(p1), |v| v > fast);
    eprintln!("Prometheus saw the link clean after {clean:?}, slowed after {slowed:?}, back after {back:?}");
    // the window still holds the slow probes; probing stayed within its budget
    let low = prom.query(&format!(
        "fabdiag_monitor_window_bandwidth_bytes_per_second{{peer=\"{b_addr}:{p2}\",stat=\"min\"}}"
    ));
    assert!(low.is_some_and(|v| v < slow), "{low:?}");
    let share = prom.query("sum(rate(fabdiag_monitor_probe_link_seconds_total[30s]))");
    assert!(share.is_some_and(|v| v <= 1.0), "{share:?}");
}

#[test]
fn the_service_unit_verifies_and_its_default_options_watch() {
    let dir = tempfile::tempdir().expect("a folder");
    let unit = shipped_unit("fabdiag-monitor.service");
    assert!(unit.contains(" monitor $FABDIAG_MONITOR_ARGS"), "{unit}");
    let path = dir.path().join("fabdiag-monitor.service");
    std::fs::write(&path, &unit).expect("the unit");
    systemd_verify(&path).unwrap_or_else(|said| panic!("{said}"));
    assert_hardened(&unit);
    // the options file's options, with this test's peers and port: they watch
    let args = shipped_args("fabdiag-monitor.default", "FABDIAG_MONITOR_ARGS");
    let (port, mport) = (free_port(), free_port());
    let file = peers_file(&dir, &[format!("127.0.0.1:{port}")]);
    let listen = format!("127.0.0.1:{mport}");
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    for (flag, ours) in [("--peers", file.as_str()), ("--listen", listen.as_str())] {
        let i = args
            .iter()
            .position(|a| *a == flag)
            .unwrap_or_else(|| panic!("{flag} in {args:?}"));
        args[i + 1] = ours;
    }
    args.insert(0, "monitor");
    let mut m = Proc::spawn(&mut fabdiag(&args));
    let page = page_until(&mut m, mport, "the closed peer", |p| {
        p.contains("reason=\"refused\"} 0")
    });
    assert!(page.contains("fabdiag_monitor_budget_ratio 0.01"), "{page}");
    m.signal(Signal::SIGTERM);
    assert_eq!(m.wait(SHORT).code, Some(0));
}

#[test]
fn a_slurm_partitions_nodes_are_the_peers_less_this_one() {
    let slurm = crate::common::slurm::Slurm::start();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("the host name");
    let host = host.trim().split('.').next().unwrap_or_default().to_string();
    let in_slurm = |args: &[&str], node: Option<&str>| {
        let mut cmd = fabdiag(args);
        cmd.env("SLURM_CONF", &slurm.conf).env_remove("SLURMD_NODENAME");
        if let Some(n) = node {
            cmd.env("SLURMD_NODENAME", n);
        }
        cmd
    };
    // the one node is this one: nothing to watch, said in one line
    let o = Proc::spawn(&mut in_slurm(&["monitor", "--partition", "fabdiag"], None)).wait(SHORT);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(
        one_line(&o.stderr),
        format!("fabdiag monitor: sinfo: no peers in partition fabdiag (other than {host})")
    );
    // seen from another node, it is the peer, named as Slurm names it
    let _cpu = cpu();
    let port = free_port();
    let _s = server(&["serve", "-p", &port.to_string()], port);
    let mport = free_port();
    let listen = format!("127.0.0.1:{mport}");
    let args = [
        "monitor",
        "--partition",
        "fabdiag",
        "-p",
        &port.to_string(),
        "--listen",
        &listen,
        "--bw-interval",
        "0",
    ];
    let mut m = Proc::spawn(&mut in_slurm(&args, Some("elsewhere")));
    let up = format!("fabdiag_monitor_peer_up{{peer=\"{host}\",reason=\"ok\"}} 1");
    page_until(&mut m, mport, "the partition's node up", |p| p.contains(&up));
    assert!(
        m.stderr_now().contains("watching 1 peer of partition fabdiag"),
        "{}",
        m.stderr_now()
    );
    m.signal(Signal::SIGTERM);
    assert_eq!(m.wait(SHORT).code, Some(0));
}

#[test]
fn a_server_that_authenticates_is_up_to_a_monitor_proving_the_same_and_down_for_auth_otherwise() {
    use std::os::unix::fs::PermissionsExt;
    let _cpu = cpu();
    // (munged, as on a Slurm cluster)
    let _slurm = crate::common::slurm::Slurm::start();
    let dir = tempfile::tempdir().expect("a folder");
    let key = dir.path().join("key");
    std::fs::write(&key, b"the monitor's shared key, 32 b..").expect("the key file");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
    let key = key.to_str().expect("a path");
    for proof in [&["--auth-key", key][..], &["--auth-munge"][..]] {
        let port = free_port();
        let _s = server(&[&["serve", "-p", &port.to_string()][..], proof].concat(), port);
        let peers = [format!("127.0.0.1:{port}")];
        for (proving, reason) in [(true, "ok"), (false, "auth")] {
            let mut extra = vec!["--bw-interval", "0"];
            if proving {
                extra.extend(proof);
            }
            let (args, mport) = monitor_args(&dir, &peers, &extra);
            let mut m = Proc::spawn(&mut fabdiag(&strs(&args)));
            let up = format!("fabdiag_monitor_peer_up{{peer=\"127.0.0.1:{port}\",reason=\"{reason}\"}}");
            page_until(&mut m, mport, reason, |p| p.contains(&up));
            m.signal(Signal::SIGTERM);
            assert_eq!(m.wait(SHORT).code, Some(0), "{proof:?}");
        }
    }
}

/// A `fabdiag serve` stopped with SIGSTOP (the kernel still takes its
/// connections, nothing answers) is a silent peer, as a hung node is:
/// never "something other than fabdiag" on its port. The monitor's own
/// --timeout is left longer than the probe's wait for a hello, as by
/// default.
#[test]
fn a_stopped_serve_is_a_silent_peer_not_a_stranger() {
    let _cpu = cpu();
    let dir = tempfile::tempdir().expect("a folder");
    let p = free_port();
    let s = server(&["serve", "-p", &p.to_string()], p);
    s.signal(Signal::SIGSTOP);
    let peers = [format!("127.0.0.1:{p}")];
    let (args, mport) = monitor_args(&dir, &peers, &["--interval", "2", "--budget", "50", "--timeout", "12"]);
    let mut m = Proc::spawn(&mut fabdiag(&strs(&args)));
    let silent = format!("fabdiag_monitor_peer_up{{peer=\"127.0.0.1:{p}\",reason=\"silent\"}}");
    let page = page_until(&mut m, mport, "the stopped serve's state", |page| {
        page.lines()
            .any(|l| l.starts_with("fabdiag_monitor_peer_up{") && !l.contains("reason=\"ok\""))
    });
    assert!(page.lines().any(|l| l.starts_with(&silent)), "{page}");
    let log = m.stderr_now();
    assert!(
        log.contains(&format!(
            "127.0.0.1:{p} down (silent): peer accepted the connection and sent no fabdiag hello"
        )),
        "{log}"
    );
    s.signal(Signal::SIGCONT);
}
