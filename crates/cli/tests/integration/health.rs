//! `fabdiag health`: verdicts and their exit codes on this machine's shm
//! and tcp, the expectations file, the budget's watchdog against a
//! provider call held on purpose, links and topology from fixture sysfs
//! trees (fabdiag_testkit::sysfs), the provider's fi_nic link beside them
//! (the test provider fdgnic), the shipped NHC check under a shell
//! harness, and the gate under real Slurm (scripts/dev/support/slurm-local.sh):
//! a veth whose peer goes down drains the node with fabdiag's reason, and
//! coming back resumes it, while a node drained by hand stays drained; the
//! shipped prolog stops a job on a CRITICAL node. The Slurm tests need
//! root, slurm-wlm and munge (scripts/install-deps.sh).

use crate::common::slurm::Slurm;
use crate::common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn health(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = fabdiag(&[&["health"][..], args].concat());
    for (k, v) in env {
        c.env(k, v);
    }
    // no site file of this machine's may steer the tests
    Proc::spawn(&mut c).wait(LIMIT)
}

fn first_line(o: &Output) -> &str {
    o.stdout.lines().next().unwrap_or_default()
}

/// Each of `lines` is a whole line of what `o` printed.
fn has_lines(o: &Output, lines: &[&str]) {
    for line in lines {
        assert!(
            o.stdout.lines().any(|l| l == *line),
            "no line {line:?} in:\n{}",
            o.stdout
        );
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// A bare `fabdiag health` (no expectations file, no `-d`) checks the
/// NICs the node has: here, with no RDMA NIC, tcp on the interface of the
/// default route, and shm, each its link and loopback; a node where
/// libfabric offers nothing that can run a test is CRITICAL.
#[test]
fn a_bare_check_looks_at_the_nics_the_node_has() {
    let _cpu = cpu();
    let route = std::fs::read_to_string("/proc/net/route").unwrap();
    let iface = fabdiag_health::bare::default_route_iface(&route);
    let o = health(&["--json", "--budget", "30"], &[]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    let doc = o.json();
    let checks = doc["checks"].as_array().unwrap();
    let measured = |subject: &str| {
        ["link", "loopback write-bw", "loopback send-lat"]
            .iter()
            .all(|name| checks.iter().any(|c| c["check"] == *name && c["subject"] == subject))
    };
    assert!(measured("shm:shm"), "{doc}");
    match iface {
        Some(i) => assert!(measured(&format!("tcp:{i}")), "{doc}"),
        None => println!("SKIPPED (in part) a_bare_check_looks_at_the_nics_the_node_has: no default route here, so no tcp NIC to check"),
    }
    let o = health(&[], &[("FI_PROVIDER", "nosuch")]);
    assert_eq!(o.code, Some(2), "{}{}", o.stdout, o.stderr);
    assert_eq!(
        o.stdout.lines().next(),
        Some("fabdiag health: CRITICAL: providers: libfabric offers no provider here that can run a test (no RDMA provider, no tcp on the default route's interface, no shm); FI_PROVIDER=nosuch is set")
    );
}

#[test]
fn verdicts_and_exit_codes_on_shm() {
    let _cpu = cpu();
    let d = tempfile::tempdir().unwrap();
    let ok = health(&["-d", "shm:shm", "--json"], &[]);
    assert_eq!(ok.code, Some(0), "{}{}", ok.stdout, ok.stderr);
    let doc = ok.json();
    assert_eq!(doc["schema"], "fabdiag-health/1");
    assert_eq!(doc["verdict"], "OK");
    let checks = doc["checks"].as_array().unwrap();
    let bw = checks
        .iter()
        .find(|c| c["check"] == "loopback write-bw")
        .expect("a write-bw check");
    assert_eq!(bw["subject"], "shm:shm");
    assert!(bw["figure"].as_f64().unwrap() > 0.0, "{bw}");
    assert!(checks.iter().any(|c| c["check"] == "loopback send-lat"));

    // a limit this loopback cannot meet: CRITICAL first, naming the file
    let f = write(
        d.path(),
        "site.toml",
        "[[domain]]\nprovider = \"shm\"\ndomain = \"shm\"\nmin_write_bw_mb_s = 1e9\n",
    );
    let bad = health(&["--expect", &f], &[]);
    assert_eq!(bad.code, Some(2), "{}{}", bad.stdout, bad.stderr);
    let line = first_line(&bad);
    assert!(
        line.starts_with("fabdiag health: CRITICAL: shm:shm loopback write-bw: ")
            && line.ends_with("< 1000000000 MB/s (site.toml)"),
        "{line}"
    );
    assert!(bad
        .stdout
        .lines()
        .any(|l| l.starts_with("CRITICAL shm:shm loopback write-bw")));

    // a domain that is not there, and a provider the file asks for
    let f = write(d.path(), "missing.toml", "providers = [\"nosuchprov\"]\n");
    let o = health(&["--expect", &f, "-d", "shm:nosuch0"], &[]);
    assert_eq!(o.code, Some(2), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("CRITICAL nosuchprov provider: missing (missing.toml)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("CRITICAL shm:nosuch0 domain: missing (the provider has: shm)"),
        "{}",
        o.stdout
    );
}

#[test]
fn bad_input_is_one_line_and_unknown() {
    let d = tempfile::tempdir().unwrap();
    let typo = write(
        d.path(),
        "typo.toml",
        "[[domain]]\nprovider = \"shm\"\ndomain = \"shm\"\nmin_bw = 3\n",
    );
    for (args, says) in [
        (vec!["--expect", typo.as_str()], "at line 4: unknown field `min_bw`"),
        (
            vec!["--expect", "/nonexistent/health.toml"],
            "cannot read /nonexistent/health.toml",
        ),
        (vec!["--budget", "0"], "Invalid budget: 0 (seconds, 1 to 3600)"),
        (vec!["-d", "shm"], "Invalid domain: 'shm'"),
        (vec!["--dry-run"], "--dry-run goes with --slurm"),
        (vec!["--frobnicate"], "unrecognized option '--frobnicate'"),
    ] {
        let o = health(&args, &[]);
        assert_eq!(o.code, Some(3), "{args:?}: {}{}", o.stdout, o.stderr);
        assert!(o.one_line().contains(says), "{args:?}: {}", o.stderr);
    }
}

#[test]
fn a_held_provider_call_ends_unknown_within_the_budget() {
    let _cpu = cpu();
    // the 50th data call never returns: the watchdog, not Slurm, ends it
    let o = health(
        &["-d", "shm:shm", "--budget", "3"],
        &[("FABDIAG_TEST_STALL_DATA_CALL", "50")],
    );
    assert_eq!(o.code, Some(3), "{}{}", o.stdout, o.stderr);
    assert_eq!(
        first_line(&o),
        "fabdiag health: UNKNOWN: budget: loopback write-bw on shm:shm did not finish within the 3 s budget"
    );
    // what was checked before it is kept
    assert!(o.stdout.contains("OK       libfabric: loads"), "{}", o.stdout);
    assert!(o.elapsed < Duration::from_secs(3), "ended after {:?}", o.elapsed);
}

#[test]
fn write_expect_writes_todays_figures_with_the_margin() {
    let _cpu = cpu();
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("made.toml");
    let o = health(&["-d", "shm:shm", "--write-expect", f.to_str().unwrap(), "--json"], &[]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);

    let doc = o.json();
    let bw = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "loopback write-bw")
        .and_then(|c| c["figure"].as_f64())
        .unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    let value: toml_value::Doc = toml_value::parse(&text);
    let written = value.domain_f64("min_write_bw_mb_s");
    assert!(
        (written - (bw * 0.8 * 100.0).round() / 100.0).abs() < 0.011,
        "{written} vs {bw}\n{text}"
    );
    assert!(value.list("providers").contains(&"shm".to_string()), "{text}");
    // read back: the same checks, now held to the file's limits
    let again = health(&["--expect", f.to_str().unwrap(), "--json"], &[]);
    let doc = again.json();
    let limited = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["subject"] == "shm:shm" && c["limit"].is_string())
        .count();
    assert_eq!(limited, 2, "{}", again.stdout);
}

/// Just enough of a TOML reader for the file --write-expect makes (the
/// test binary does not take a TOML crate for one test).
mod toml_value {
    pub struct Doc(String);

    pub fn parse(text: &str) -> Doc {
        Doc(text.to_string())
    }

    impl Doc {
        pub fn domain_f64(&self, key: &str) -> f64 {
            let prefix = format!("{key} = ");
            self.0
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("{key} in\n{}", self.0))
        }

        pub fn list(&self, key: &str) -> Vec<String> {
            let prefix = format!("{key} = [");
            self.0
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .map(|v| {
                    v.trim_end_matches(']')
                        .split(',')
                        .map(|s| s.trim().trim_matches('"').to_string())
                        .collect()
                })
                .unwrap_or_default()
        }
    }
}

#[test]
fn links_and_topology_from_a_fixture_tree() {
    let d = tempfile::tempdir().unwrap();
    fabdiag_testkit::sysfs::switches_downtrained(d.path());
    let root = d.path().to_str().unwrap();
    let f = write(
        d.path(),
        "h.toml",
        "[[domain]]\nprovider = \"verbs\"\ndomain = \"mlx5_0\"\nlink_speed_gbps = 200\n\n[[domain]]\nprovider = \"verbs\"\ndomain = \"mlx5_1\"\n",
    );
    let o = health(&["--expect", &f], &[("FABDIAG_TEST_SYSFS_ROOT", root)]);
    assert_eq!(o.code, Some(2), "{}{}", o.stdout, o.stderr);
    has_lines(
        &o,
        &[
        "CRITICAL verbs:mlx5_0 link: mlx5_0 port 1 at 100 Gb/s < 200 Gb/s (h.toml) [sysfs; libfabric: does not list the provider]",
        "CRITICAL verbs:mlx5_1 link: mlx5_1 port 1 is 1: DOWN (not up) [sysfs; libfabric: does not list the provider]",
        "OK       GPU0 (0000:05:00.0) nearest NIC: mlx5_0 PXB",
        "WARNING  0000:05:00.0 PCIe link: x8 at 16 GT/s, capable of x16 at 16 GT/s",
        "WARNING  0000:06:00.0 PCIe link: x16 at 8 GT/s, capable of x16 at 16 GT/s",
        ],
    );
    assert!(
        o.stdout
            .contains("WARNING  GPU0 (0000:05:00.0) ACS: P2P redirection on 0000:02:00.0 between it and mlx5_0"),
        "{}",
        o.stdout
    );

    // --topology: nvidia-smi's classes, and a GPU across sockets flagged
    let two = tempfile::tempdir().unwrap();
    fabdiag_testkit::sysfs::two_socket(two.path());
    let env = [("FABDIAG_TEST_SYSFS_ROOT", two.path().to_str().unwrap())];
    let o = health(&["--topology"], &env);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let row: Vec<&str> = o.stdout.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row, ["GPU0", "SYS", "56-111,168-223", "1", "mlx5_0", "(SYS)"]);
    let o = health(&[], &env);
    assert!(
        o.stdout
            .contains("WARNING  GPU0 (0000:81:00.0) nearest NIC: mlx5_0 SYS (across sockets)"),
        "{}",
        o.stdout
    );
    let empty = tempfile::tempdir().unwrap();
    let o = health(
        &["--topology"],
        &[("FABDIAG_TEST_SYSFS_ROOT", empty.path().to_str().unwrap())],
    );
    assert_eq!(o.code, Some(3));
    assert!(o.one_line().contains("no PCI devices visible under"), "{}", o.stderr);
}

/// The provider's own view of each link (fi_nic's link attributes) beside
/// sysfs's, through the real libfabric and the test provider fdgnic, which
/// fills them in as verbs, efa and cxi do on their hardware. The fixture
/// tree has mlx5_0 up at 100 Gb/s and mlx5_1 down.
#[test]
fn the_providers_link_attributes_beside_sysfs() {
    let d = tempfile::tempdir().unwrap();
    fabdiag_testkit::sysfs::switches_downtrained(d.path());
    let prov = fabdiag_testkit::nic_provider(&d.path().join("prov")).unwrap_or_else(|e| panic!("{e}"));
    let env = [
        ("FABDIAG_TEST_SYSFS_ROOT", d.path().to_str().unwrap()),
        ("FI_PROVIDER_PATH", prov.to_str().unwrap()),
        (
            "FDGNIC_DOMAINS",
            "mlx5_0=up:200:4096:0000:03:00.0,mlx5_1=up:200:4096,gone0=down:0:4096,quiet0",
        ),
    ];
    let f = write(
        d.path(),
        "h.toml",
        "[[domain]]\nprovider = \"fdgnic\"\ndomain = \"gone0\"\nlink_speed_gbps = 100\n",
    );
    let o = health(
        &[
            "--expect",
            &f,
            "-d",
            "fdgnic:mlx5_0",
            "-d",
            "fdgnic:mlx5_1",
            "-d",
            "fdgnic:quiet0",
            "--budget",
            "30",
        ],
        &env,
    );
    assert_eq!(o.code, Some(2), "{}{}", o.stdout, o.stderr);
    has_lines(
        &o,
        &[
        // down in libfabric's eyes, with no sysfs entry: the provider's word
        "CRITICAL fdgnic:gone0 link: gone0 is down (not up) [libfabric; sysfs: no /sys/class/infiniband, net or cxi entry named gone0]",
        // the two sources disagree on the rate: a warning naming both
        "WARNING  fdgnic:mlx5_0 link: mlx5_0 port 1 4: ACTIVE, but libfabric says 200 Gb/s and sysfs 100 Gb/s [sysfs, libfabric]",
        // down in sysfs is down, whatever the provider last saw
        "CRITICAL fdgnic:mlx5_1 link: mlx5_1 port 1 is 1: DOWN (not up; libfabric says up) [sysfs, libfabric]",
        // a provider that leaves fi_nic empty, and no sysfs entry
        "OK       fdgnic:quiet0 link: not read: no /sys/class/infiniband, net or cxi entry named quiet0; libfabric: not reported",
        ],
    );
    // the figure the JSON carries is the lower, held to nothing here
    let o = health(&["-d", "fdgnic:mlx5_0", "--json", "--budget", "30"], &env);
    let doc = o.json();
    let link = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "link")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (link["verdict"].as_str(), link["figure"].as_f64()),
        (Some("WARNING"), Some(100.0)),
        "{link}"
    );
}

/// The shipped NHC check under a harness that stands in for NHC's own
/// `die` and `log` (NHC itself is not packaged for Debian): OK passes,
/// CRITICAL dies with fabdiag's summary, UNKNOWN and WARNING only log.
#[test]
fn the_nhc_check_dies_on_critical_only() {
    let _cpu = cpu();
    let d = tempfile::tempdir().unwrap();
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/nhc/fabdiag.nhc");
    let bad = write(
        d.path(),
        "bad.toml",
        "[[domain]]\nprovider = \"shm\"\ndomain = \"shm\"\nmin_write_bw_mb_s = 1e9\n",
    );
    let harness = |args: &str| -> (i32, String) {
        let script = format!(
            "die() {{ echo \"die $1 $2\"; return 1; }}\nlog() {{ echo \"log $*\"; }}\n\
             FABDIAG={bin}\n. {check}\ncheck_fabdiag {args}\necho \"rc $?\"\n",
            bin = bin(),
            check = check.display()
        );
        let o = Command::new("bash").arg("-c").arg(&script).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let rc = out
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("rc "))
            .and_then(|v| v.parse().ok());
        (rc.unwrap_or(-1), out)
    };
    let (rc, out) = harness("-d shm:shm");
    assert_eq!(rc, 0, "{out}");
    assert!(!out.contains("die "), "{out}");
    let (rc, out) = harness(&format!("--expect {bad}"));
    assert_eq!(rc, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("die 1 fabdiag health: CRITICAL: shm:shm loopback write-bw")),
        "{out}"
    );
    let (rc, out) = harness("--budget 0");
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("log check_fabdiag: UNKNOWN")),
        "{out}"
    );
}

/// A veth pair in this namespace: `nic` is the NIC the gate watches, its
/// peer the cable's other end.
struct Veth {
    nic: String,
    peer: String,
}

impl Veth {
    fn new() -> Veth {
        let n = std::process::id() % 10000;
        let (nic, peer) = (format!("fdh{n}a"), format!("fdh{n}b"));
        let _ = Command::new("ip").args(["link", "del", &nic]).output();
        must(&["ip", "link", "add", &nic, "type", "veth", "peer", "name", &peer]);
        must(&["ip", "addr", "add", "198.19.250.1/30", "dev", &nic]);
        must(&["ip", "link", "set", &nic, "up"]);
        must(&["ip", "link", "set", &peer, "up"]);
        Veth { nic, peer }
    }

    fn peer(&self, state: &str) {
        must(&["ip", "link", "set", &self.peer, state]);
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.nic]).output();
    }
}

/// This machine's short host name: the Slurm node the local cluster has.
fn short_host_name() -> String {
    let full = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    full.trim().split('.').next().unwrap_or_default().to_string()
}

fn node_state(slurm: &Slurm, node: &str) -> (String, String) {
    let o = slurm.scontrol(&["show", "node", node]);
    let field = |k: &str| {
        o.stdout
            .lines()
            .flat_map(|l| {
                let l = l.trim();
                if k == "Reason=" {
                    l.strip_prefix(k).map(|r| vec![r.to_string()]).unwrap_or_default()
                } else {
                    l.split_whitespace()
                        .filter_map(|t| t.strip_prefix(k).map(String::from))
                        .collect()
                }
            })
            .next()
            .unwrap_or_default()
    };
    (field("State="), field("Reason="))
}

fn wait_state(slurm: &Slurm, node: &str, what: &str, ok: impl Fn(&str, &str) -> bool) -> (String, String) {
    let until = Instant::now() + Duration::from_secs(40);
    loop {
        let (state, reason) = node_state(slurm, node);
        if ok(&state, &reason) {
            return (state, reason);
        }
        assert!(Instant::now() < until, "{what}: still {state} ({reason})");
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn slurm_health_check_drains_a_bad_nic_and_resumes_it() {
    require_root();
    let _cpu = cpu();
    let d = tempfile::tempdir().unwrap();
    let veth = Veth::new();
    let expect = write(
        d.path(),
        "health.toml",
        &format!("[[domain]]\nprovider = \"tcp\"\ndomain = \"{}\"\n", veth.nic),
    );
    let log = d.path().join("hc.log");
    let conf_dir = std::env::temp_dir().join(format!("fabdiag-slurm-{}", std::process::id()));
    // slurmd runs the program with no arguments and almost no environment
    let program = write(
        d.path(),
        "healthcheck",
        &format!(
            "#!/bin/sh\nexport SLURM_CONF={conf}\nexec {bin} health --slurm --expect {expect} --state-dir {state} >>{log} 2>&1\n",
            conf = conf_dir.join("slurm.conf").display(),
            bin = bin(),
            state = d.path().join("state").display(),
            log = log.display(),
        ),
    );
    must(&["chmod", "+x", &program]);
    let slurm = Slurm::start_with(&format!("HealthCheckProgram={program}\nHealthCheckInterval=5"));
    assert_eq!(slurm.dir, conf_dir);
    let node = short_host_name();
    let runs = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("fabdiag health: ")
            .count()
    };
    let until = Instant::now() + Duration::from_secs(30);
    while runs() == 0 {
        assert!(Instant::now() < until, "slurmd never ran the health check");
        std::thread::sleep(Duration::from_millis(200));
    }

    // dry run, with a limit the loopback cannot meet: the command, not the act
    let bad = write(
        d.path(),
        "bad.toml",
        &format!(
            "[[domain]]\nprovider = \"tcp\"\ndomain = \"{}\"\nmin_write_bw_mb_s = 1e9\n",
            veth.nic
        ),
    );
    let o = health(
        &["--slurm", "--dry-run", "--expect", &bad],
        &[("SLURM_CONF", slurm.conf.as_str())],
    );
    assert_eq!(o.code, Some(2), "{}{}", o.stdout, o.stderr);
    let said = o.stdout.lines().last().unwrap_or_default();
    assert!(
        said.starts_with(&format!(
            "slurm: would run: scontrol update nodename={node} state=drain 'reason=fabdiag: CRITICAL: tcp:{}",
            veth.nic
        )),
        "{said}"
    );
    assert!(!node_state(&slurm, &node).0.contains("DRAIN"));

    // the cable's other end goes down: drained, with fabdiag's reason
    veth.peer("down");
    // (a run the link went down in the middle of may drain it first for
    // what failed in that run; the next run names the link)
    let link_down = format!("fabdiag: CRITICAL: tcp:{} link: {} is ", veth.nic, veth.nic);
    wait_state(&slurm, &node, "drained for the link", |s, r| {
        s.contains("DRAIN") && r.starts_with(&link_down)
    });
    // back up: resumed at a following run
    veth.peer("up");
    wait_state(&slurm, &node, "resume once the link is up", |s, _| !s.contains("DRAIN"));

    // drained by hand for something else: two more runs leave it so
    let o = slurm.scontrol(&[
        "update",
        &format!("nodename={node}"),
        "state=drain",
        "reason=maintenance: new DIMM",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let seen = runs();
    let until = Instant::now() + Duration::from_secs(40);
    while runs() < seen + 2 {
        assert!(Instant::now() < until, "the health check stopped running");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (state, reason) = node_state(&slurm, &node);
    assert!(state.contains("DRAIN"), "{state}");
    assert!(reason.starts_with("maintenance: new DIMM"), "{reason}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("drained by someone else (maintenance: new DIMM): not resumed"),
        "{text}"
    );
}

/// The shipped prolog under real Slurm: on CRITICAL the job does not run
/// and the node is drained with fabdiag's reason, which Slurm's own drain
/// for a failed prolog leaves in place; once the node passes again and is
/// resumed, the next job runs.
#[test]
fn the_shipped_prolog_stops_a_job_on_a_bad_node() {
    require_root();
    let _cpu = cpu();
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site.toml");
    let bad = "[[domain]]\nprovider = \"shm\"\ndomain = \"shm\"\nmin_write_bw_mb_s = 1e9\n";
    std::fs::write(&site, bad).unwrap();
    let conf_dir = std::env::temp_dir().join(format!("fabdiag-slurm-{}", std::process::id()));
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/slurm/prolog.sh");
    // slurmd runs the prolog with almost no environment: say where things are
    let prolog = write(
        d.path(),
        "prolog",
        &format!(
            "#!/bin/sh\nexport SLURM_CONF={conf} FABDIAG={bin} FABDIAG_HEALTH_ARGS='--expect {site} --budget 20'\nexec sh {shipped}\n",
            conf = conf_dir.join("slurm.conf").display(),
            bin = bin(),
            site = site.display(),
            shipped = shipped.display(),
        ),
    );
    must(&["chmod", "+x", &prolog]);
    let slurm = Slurm::start_with(&format!("Prolog={prolog}"));
    let node = short_host_name();

    let o = slurm.srun(&["-t", "1", "true"]);
    assert_ne!(
        o.code,
        Some(0),
        "the job ran on a CRITICAL node:{}{}",
        o.stdout,
        o.stderr
    );
    assert!(o.stderr.contains("prolog failed"), "{}", o.stderr);
    let (state, reason) = node_state(&slurm, &node);
    assert!(state.contains("DRAIN"), "{state}");
    assert!(
        reason.starts_with("fabdiag: CRITICAL: shm:shm loopback write-bw: "),
        "Slurm's drain for the failed prolog took the reason: {reason}"
    );

    // fixed: the health check resumes it, and the prolog lets the job run
    std::fs::write(&site, "[[domain]]\nprovider = \"shm\"\ndomain = \"shm\"\n").unwrap();
    let site_s = site.to_string_lossy().into_owned();
    let o = health(
        &["--slurm", "--expect", &site_s, "--node", &node],
        &[("SLURM_CONF", slurm.conf.as_str())],
    );
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(!node_state(&slurm, &node).0.contains("DRAIN"));
    let o = slurm.srun(&["-t", "1", "true"]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
}

/// `--write-expect` onto a link someone planted replaces the link and
/// leaves what it points to as it was.
#[test]
fn write_expect_never_writes_through_a_link() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "not yours\n").unwrap();
    let at = d.path().join("health.toml");
    std::os::unix::fs::symlink(&victim, &at).unwrap();
    let o = health(&["--write-expect", at.to_str().unwrap()], &[]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "not yours\n");
    assert!(std::fs::symlink_metadata(&at).unwrap().file_type().is_file());
    assert!(std::fs::read_to_string(&at)
        .unwrap()
        .starts_with("# fabdiag health expectations"));
}
