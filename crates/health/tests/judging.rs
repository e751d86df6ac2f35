//! The expectations file, the judging of figures and links, the verdict
//! lines and the Slurm decision, each against what the operator must see.

use fabdiag_health::expect::{self, DomainExpect, Expect, ExpectError, Measured, MeasuredDomain};
use fabdiag_health::judge::{self, Source};
use fabdiag_health::link::{LinkFacts, ProviderLink};
use fabdiag_health::slurm::{self, Action, NodeState};
use fabdiag_health::verdict::summary_line;
use fabdiag_health::{Check, Health, Verdict};

const SRC: Source = Source("health.toml");

#[test]
fn expectations_are_read_strictly() {
    let ok = "providers = [\"verbs\"]\ngpus = 8\nmax_gpu_nic = \"PIX\"\nmin_locked_memory_mib = \"unlimited\"\n\n[[domain]]\nprovider = \"verbs\"\ndomain = \"mlx5_0\"\nlink_speed_gbps = 400\nmin_write_bw_mb_s = 40000\n";
    let e = expect::parse(ok, "h.toml").unwrap();
    assert_eq!(e.gpus, Some(8));
    assert_eq!(e.domains[0].link_speed_gbps, Some(400.0));
    for (text, msg) in [
        (
            "[[domain]]\nprovider = \"verbs\"\ndomain = \"mlx5_0\"\nmin_write_bw = 3\n",
            "h.toml at line 4: unknown field `min_write_bw`",
        ),
        (
            "gpus = \"eight\"\n",
            "h.toml at line 1: invalid type: string \"eight\", expected u32",
        ),
        (
            "max_gpu_nic = \"NEAR\"\n",
            "h.toml at line 1: max_gpu_nic = \"NEAR\": one of PIX, PXB, PHB, NODE, SYS",
        ),
        (
            "[[domain]]\nprovider = \"tcp\"\ndomain = \"lo\"\nmax_send_lat_us = -1\n",
            "h.toml at line 4: tcp:lo: max_send_lat_us = -1: must be a positive number",
        ),
        (
            "gpus = 2\n\n[[domain]]\nprovider = \"tcp\"\ndomain = \"lo\"\n\n[[domain]]\nprovider = \"tcp\"\ndomain = \"eth0\"\nmin_write_bw_mb_s = -5\n",
            "h.toml at line 10: tcp:eth0: min_write_bw_mb_s = -5: must be a positive number",
        ),
        (
            "max_gpu_nic = \"PIX\"\nmin_host_to_gpu_gb_s = nan\n",
            "h.toml at line 2: min_host_to_gpu_gb_s = NaN: must be a positive number",
        ),
        (
            "gpus = 1\n[[domain]]\nprovider = \"\"\ndomain = \"lo\"\n",
            "h.toml at line 2: every [[domain]] needs a provider and a domain",
        ),
        (
            "min_locked_memory_mib = \"lots\"\n",
            "h.toml at line 1: min_locked_memory_mib = \"lots\": a number of MiB or \"unlimited\"",
        ),
        (
            "[[domain]]\nprovider = \"tcp\"\n",
            "h.toml at line 1: missing field `domain`",
        ),
    ] {
        let e = expect::parse(text, "h.toml").unwrap_err();
        let shown = match &e {
            ExpectError::Syntax(m) | ExpectError::Value(m) => m.clone(),
        };
        assert!(shown.starts_with(msg), "{text:?}: {shown}");
        assert!(!shown.contains('\n'), "one line: {shown}");
    }
}

#[test]
fn written_expectations_read_back_with_the_margin() {
    let m = Measured {
        providers: vec!["verbs".into(), "shm".into()],
        gpus: Some(8),
        host_to_gpu_gb_s: Some(50.0),
        gpu_to_host_gb_s: Some(25.0),
        gpu_nic: Some(fabdiag_health::topology::Connection::Pix),
        domains: vec![MeasuredDomain {
            provider: "verbs".into(),
            domain: "mlx5_0".into(),
            link_gbps: Some(400.0),
            write_bw_mb_s: Some(40000.0),
            send_lat_us: Some(2.5),
            flap_counter: true,
        }],
    };
    let text = expect::write(&m, 0.2, "node07");
    assert!(text.starts_with("# fabdiag health expectations, written by `fabdiag health --write-expect` on node07"));
    let e = expect::parse(&text, "w.toml").unwrap();
    assert_eq!(
        (e.min_host_to_gpu_gb_s, e.min_gpu_to_host_gb_s),
        (Some(40.0), Some(20.0))
    );
    assert_eq!(e.max_gpu_nic.as_deref(), Some("PIX"));
    let d = &e.domains[0];
    assert_eq!(
        (
            d.min_write_bw_mb_s,
            d.max_send_lat_us,
            d.link_speed_gbps,
            d.max_flaps_per_hour
        ),
        (Some(32000.0), Some(3.0), Some(400.0), Some(5.0))
    );
}

fn dom() -> DomainExpect {
    DomainExpect {
        provider: "verbs".into(),
        domain: "mlx5_0".into(),
        link_speed_gbps: Some(400.0),
        min_write_bw_mb_s: Some(20000.0),
        max_send_lat_us: Some(3.0),
        max_flaps_per_hour: Some(5.0),
    }
}

fn link(up: bool, rate: Option<f64>) -> Result<LinkFacts, String> {
    Ok(LinkFacts {
        device: "mlx5_0 port 1".into(),
        up,
        state: if up { "4: ACTIVE" } else { "1: DOWN" }.into(),
        rate_gbps: rate,
        flaps: Some(3),
    })
}

#[test]
fn figures_and_links_against_their_limits() {
    let c = judge::write_bw("verbs:mlx5_0", &Ok(9800.0), &dom(), &SRC);
    assert_eq!(c.verdict, Verdict::Critical);
    assert_eq!(
        c.text(),
        "verbs:mlx5_0 loopback write-bw: 9800 MB/s < 20000 MB/s (health.toml)"
    );
    let c = judge::send_lat("verbs:mlx5_0", &Ok(2.0), &dom(), &SRC);
    assert_eq!((c.verdict, c.detail.as_str()), (Verdict::Ok, "2.00 us (<= 3.00 us)"));
    let c = judge::write_bw("verbs:mlx5_0", &Err("no route".into()), &dom(), &SRC);
    assert_eq!((c.verdict, c.detail.as_str()), (Verdict::Critical, "failed: no route"));
    let none: Result<ProviderLink, String> = Err("not reported".into());
    let c = judge::link("verbs:mlx5_0", &link(false, Some(400.0)), &none, &dom(), &SRC);
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (
            Verdict::Critical,
            "mlx5_0 port 1 is 1: DOWN (not up) [sysfs; libfabric: not reported]"
        )
    );
    let c = judge::link("verbs:mlx5_0", &link(true, Some(200.0)), &none, &dom(), &SRC);
    assert_eq!(
        c.detail,
        "mlx5_0 port 1 at 200 Gb/s < 400 Gb/s (health.toml) [sysfs; libfabric: not reported]"
    );
    let c = judge::link("verbs:mlx5_0", &link(true, None), &none, &dom(), &SRC);
    assert_eq!(c.verdict, Verdict::Unknown);
    // without a limit, a link that cannot be read is said, not failed
    let why = "shm has no NIC behind it".to_string();
    let c = judge::link("shm:shm", &Err(why.clone()), &Err(why), &DomainExpect::default(), &SRC);
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (Verdict::Ok, "not read: shm has no NIC behind it")
    );
}

fn provider(up: Option<bool>, rate: Option<f64>) -> Result<ProviderLink, String> {
    Ok(ProviderLink {
        device: "mlx5_0".into(),
        up,
        rate_gbps: rate,
    })
}

#[test]
fn the_providers_view_of_a_link_beside_sysfs() {
    let d = dom();
    // both agree: one line naming both sources
    let c = judge::link(
        "verbs:mlx5_0",
        &link(true, Some(400.0)),
        &provider(Some(true), Some(400.0)),
        &d,
        &SRC,
    );
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (Verdict::Ok, "mlx5_0 port 1 4: ACTIVE, 400 Gb/s [sysfs, libfabric]")
    );
    // down by either is down, and the other's word is kept
    let c = judge::link(
        "verbs:mlx5_0",
        &link(true, Some(400.0)),
        &provider(Some(false), None),
        &d,
        &SRC,
    );
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (
            Verdict::Critical,
            "mlx5_0 is down (not up; sysfs says 4: ACTIVE) [sysfs, libfabric]"
        )
    );
    // the lower rate is held to the limit, whichever source gave it
    let c = judge::link(
        "verbs:mlx5_0",
        &link(true, Some(400.0)),
        &provider(Some(true), Some(200.0)),
        &d,
        &SRC,
    );
    assert_eq!(c.verdict, Verdict::Critical);
    assert!(c.detail.starts_with("mlx5_0 at 200 Gb/s < 400 Gb/s"), "{}", c.detail);
    // under no limit, rates that disagree are a warning naming both
    let free = DomainExpect::default();
    let c = judge::link(
        "verbs:mlx5_0",
        &link(true, Some(400.0)),
        &provider(Some(true), Some(200.0)),
        &free,
        &SRC,
    );
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (
            Verdict::Warning,
            "mlx5_0 port 1 4: ACTIVE, but sysfs says 400 Gb/s and libfabric 200 Gb/s [sysfs, libfabric]"
        )
    );
    // within 1 %: the same figure (HDR's 200 and a driver's 199.5)
    let c = judge::link(
        "verbs:mlx5_0",
        &link(true, Some(200.0)),
        &provider(Some(true), Some(199.5)),
        &free,
        &SRC,
    );
    assert_eq!(c.verdict, Verdict::Ok, "{}", c.detail);
    // one rate between two sources: the line says whose it is
    let c = judge::link(
        "verbs:mlx5_0",
        &link(true, None),
        &provider(Some(true), Some(400.0)),
        &free,
        &SRC,
    );
    assert_eq!(
        c.detail,
        "mlx5_0 port 1 4: ACTIVE, 400 Gb/s (libfabric) [sysfs, libfabric]"
    );
    // sysfs unreadable: the provider's word alone, said as such
    let gone: Result<LinkFacts, String> = Err("no /sys/class/infiniband, net or cxi entry named mlx5_0".into());
    let c = judge::link("verbs:mlx5_0", &gone, &provider(Some(true), Some(400.0)), &d, &SRC);
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (
            Verdict::Ok,
            "mlx5_0 up, 400 Gb/s [libfabric; sysfs: no /sys/class/infiniband, net or cxi entry named mlx5_0]"
        )
    );
    assert_eq!(c.figure, Some(400.0));
    // a provider that says "unknown" proves nothing: UNKNOWN under a limit
    let c = judge::link("verbs:mlx5_0", &gone, &provider(None, Some(400.0)), &d, &SRC);
    assert_eq!(c.verdict, Verdict::Unknown, "{}", c.detail);
    let c = judge::link("verbs:mlx5_0", &gone, &provider(None, None), &free, &SRC);
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (
            Verdict::Ok,
            "mlx5_0 link state unknown [libfabric; sysfs: no /sys/class/infiniband, net or cxi entry named mlx5_0]"
        )
    );
}

#[test]
fn flap_rates_from_two_readings() {
    let d = dom();
    let first = judge::flaps("x", None, (10, 1000.0), &d, &SRC).unwrap();
    assert_eq!(first.verdict, Verdict::Ok);
    assert!(first.detail.starts_with("first reading"), "{}", first.detail);
    // 6 flaps in an hour: at the limit of 5 an hour
    let c = judge::flaps("x", Some((10, 1000.0)), (16, 4600.0), &d, &SRC).unwrap();
    assert_eq!(c.verdict, Verdict::Critical);
    assert_eq!(c.detail, "6 in 3600 s = 6.0 per hour >= 5 (health.toml)");
    let c = judge::flaps("x", Some((10, 1000.0)), (11, 4600.0), &d, &SRC).unwrap();
    assert_eq!(c.verdict, Verdict::Ok);
    // a counter that went back is said, never a negative or zero rate
    let c = judge::flaps("x", Some((10, 1000.0)), (2, 4600.0), &d, &SRC).unwrap();
    assert!(c.detail.contains("went back from 10 to 2"), "{}", c.detail);
    assert!(judge::flaps("x", None, (1, 1.0), &DomainExpect::default(), &SRC).is_none());
}

#[test]
fn the_worst_check_is_the_summary() {
    let checks = vec![
        Check::new("libfabric", "", Verdict::Ok, "loads (1.17)"),
        Check::new("link", "tcp:eth1", Verdict::Warning, "x"),
        Check::new(
            "loopback write-bw",
            "verbs:mlx5_1",
            Verdict::Critical,
            "9800 MB/s < 20000 MB/s (health.toml)",
        ),
        Check::new("budget", "", Verdict::Unknown, "y"),
    ];
    assert_eq!(Verdict::worst(&checks), Verdict::Critical);
    assert_eq!(
        summary_line(Verdict::Critical, &checks, 3.0),
        "fabdiag health: CRITICAL: verbs:mlx5_1 loopback write-bw: 9800 MB/s < 20000 MB/s (health.toml) (and 2 more)"
    );
    assert_eq!(Verdict::worst(&checks[..2]), Verdict::Warning);
    assert_eq!(
        Verdict::worst(&[checks[1].clone(), checks[3].clone()]),
        Verdict::Unknown
    );
    let h = Health::new("n1", checks[..1].to_vec(), 1.25, 10.0, None);
    assert_eq!(
        h.text(),
        "fabdiag health: OK: 1 check passed in 1.2 s\nOK       libfabric: loads (1.17)\n"
    );
    assert_eq!(
        [Verdict::Ok, Verdict::Warning, Verdict::Critical, Verdict::Unknown].map(Verdict::exit_code),
        [0, 1, 2, 3]
    );
}

const SHOWN: &str = "NodeName=node07 Arch=x86_64 CoresPerSocket=1
   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=fabdiag
   Reason=fabdiag: CRITICAL: verbs:mlx5_0 link: mlx5_0 port 1 is 1: DOWN (not up) [root@2026-11-26T14:11:04]
";

#[test]
fn slurm_drains_and_resumes_only_its_own() {
    let ours = slurm::parse_show_node(SHOWN).unwrap();
    assert_eq!(ours.state, "IDLE+DRAIN");
    assert_eq!(
        ours.reason.as_deref(),
        Some("fabdiag: CRITICAL: verbs:mlx5_0 link: mlx5_0 port 1 is 1: DOWN (not up)")
    );
    let by_hand = NodeState {
        state: "IDLE+DRAIN".into(),
        reason: Some("maintenance: new DIMM".into()),
    };
    let idle = NodeState {
        state: "IDLE".into(),
        reason: None,
    };
    let bad = "fabdiag health: CRITICAL: verbs:mlx5_0 link: down";
    assert_eq!(slurm::decide(Verdict::Ok, "", &ours), Action::Resume);
    assert!(matches!(slurm::decide(Verdict::Ok, "", &by_hand), Action::Leave(_)));
    assert!(matches!(
        slurm::decide(Verdict::Critical, bad, &by_hand),
        Action::Leave(_)
    ));
    assert_eq!(
        slurm::decide(Verdict::Critical, bad, &idle),
        Action::Drain("fabdiag: CRITICAL: verbs:mlx5_0 link: down".into())
    );
    for v in [Verdict::Warning, Verdict::Unknown] {
        assert!(matches!(slurm::decide(v, bad, &ours), Action::Leave(_)), "{v:?}");
        assert!(matches!(slurm::decide(v, bad, &idle), Action::Leave(_)), "{v:?}");
    }
    assert_eq!(
        slurm::scontrol_args("node07", &Action::Resume).unwrap(),
        ["update", "nodename=node07", "state=resume"]
    );
    let long = slurm::reason(&"x".repeat(500));
    assert!(long.len() <= 200 && long.starts_with("fabdiag: ") && long.ends_with("..."));
    assert!(slurm::parse_show_node("nothing here").is_none());
}

#[test]
fn locked_memory_and_gpus() {
    let e = Expect::default();
    let c = judge::locked_memory(Some(8 << 20), &e, true, &SRC).unwrap();
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (Verdict::Warning, "8 MiB < 64 MiB (RDMA providers pin every buffer)")
    );
    assert!(judge::locked_memory(Some(8 << 20), &e, false, &SRC).is_none());
    let want = expect::parse("min_locked_memory_mib = \"unlimited\"\n", "x").unwrap();
    let c = judge::locked_memory(Some(1 << 30), &want, false, &SRC).unwrap();
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (Verdict::Critical, "1024 MiB < unlimited (health.toml)")
    );
    assert!(judge::gpus(&Err("no driver".into()), &e, &SRC).is_none());
    let eight = expect::parse("gpus = 8\n", "x").unwrap();
    let c = judge::gpus(&Ok(7), &eight, &SRC).unwrap();
    assert_eq!(
        (c.verdict, c.detail.as_str()),
        (Verdict::Critical, "7 found, 8 expected (health.toml)")
    );
}

mod properties {
    use fabdiag_health::expect::{self, ExpectError};
    use proptest::prelude::*;

    proptest! {
        /// Whatever an expectations file holds, reading it never panics,
        /// and a refusal is one line that starts with the file's name.
        #[test]
        fn any_text_is_read_or_refused_in_one_line(text in ".*(\n.*){0,6}") {
            match expect::parse(&text, "h.toml") {
                Ok(_) => {}
                Err(ExpectError::Syntax(m) | ExpectError::Value(m)) => {
                    prop_assert!(m.starts_with("h.toml"), "{}", m);
                    prop_assert!(!m.contains('\n'), "{}", m);
                }
            }
        }

        #[test]
        fn any_value_of_a_known_key_is_read_or_refused(key in "(gpus|max_gpu_nic|min_locked_memory_mib|min_write_bw_mb_s|providers)", v in "[-0-9a-zA-Z\"\\[\\]., ]{0,12}") {
            let text = format!("{key} = {v}\n");
            if let Err(ExpectError::Syntax(m) | ExpectError::Value(m)) = expect::parse(&text, "h.toml") {
                prop_assert!(!m.contains('\n'), "{}", m);
            }
        }
    }
}
