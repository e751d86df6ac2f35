//! `fabdiag health`: a verdict on this node within a time budget. It reads
//! the expectations, then checks one thing after another (libfabric, the
//! providers and domains, limits, each NIC's link and a short loopback
//! write-bw and send-lat, each GPU's host -> GPU copy, the PCI topology),
//! keeping every finished check where a watchdog thread can see it: when
//! the budget runs out (a provider call held, a GPU hung) the watchdog
//! prints the verdict UNKNOWN with the checks made so far and ends the
//! process, so Slurm never has to kill it. Then `--slurm` drains or
//! resumes the node. The judging is fabdiag_health's.

mod act;
mod measure;

pub use act::node_name;

use super::sysfs_root;
use crate::signals::lock;
use crate::streams::print_stdout;
use fabdiag_health::expect::{self, DomainExpect, Expect, Measured, MeasuredDomain};
use fabdiag_health::judge::{self, Source};
use fabdiag_health::{bare, link, topology, Check, Health, Verdict};
use fabdiag_model::Provider;
use fabdiag_options::health::{parse, usage, HealthOptions, DEFAULT_EXPECT};
use fabdiag_options::Action;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the watchdog can see: the checks so far and what is running.
#[derive(Default)]
struct Progress {
    checks: Vec<Check>,
    step: String,
    /// The outcome is being printed (by the main thread or the watchdog).
    done: bool,
}

type Shared = Arc<Mutex<Progress>>;

fn push(p: &Shared, c: Check) {
    lock(p).checks.push(c);
}

fn step(p: &Shared, what: String) {
    lock(p).step = what;
}

fn print(h: &Health, json: bool, metrics: Option<&str>) {
    if json {
        print_stdout(&(serde_json::to_string_pretty(h).unwrap_or_else(|_| "{}".into()) + "\n"));
    } else {
        print_stdout(&h.text());
    }
    write_metrics(h, metrics);
}

/// `--metrics FILE`: the verdict for Prometheus. A file that cannot be
/// written is said; the exit code stays the node's verdict, which Slurm
/// and NHC act on.
fn write_metrics(h: &Health, metrics: Option<&str>) {
    let Some(path) = metrics else {
        return;
    };
    let file = crate::metrics_file::name(std::path::Path::new(path));
    let written = fabdiag_health::metrics::health(h, crate::metrics_file::now_unix_s(), &file)
        .map_err(|e| e.to_string())
        .and_then(|text| crate::metrics_file::write(std::path::Path::new(path), &text));
    if let Err(m) = written {
        tell!("fabdiag health: {m}");
    }
}

/// The expectations and where they came from: `--expect` (which must
/// exist), else the default file if it exists, else none. Read as the
/// untrusted file it is, within `limit` (the budget's: a FIFO, a device,
/// a huge file or a file system that does not answer never holds the
/// verdict up).
fn load_expect(given: Option<&str>, limit: Duration) -> Result<(Expect, Option<String>), String> {
    use fabdiag_files::read::{text_within, ReadError, CONFIG_CAP};
    let path = given.unwrap_or(DEFAULT_EXPECT);
    let text = match text_within(std::path::Path::new(path), CONFIG_CAP, limit) {
        Ok(t) => t,
        Err(ReadError::Absent(_)) if given.is_none() => return Ok((Expect::default(), None)),
        Err(e) => return Err(format!("cannot read {path}: {e}")),
    };
    let e = expect::parse(&text, path).map_err(|e| e.to_string())?;
    Ok((e, Some(path.to_string())))
}

/// Ends the run with UNKNOWN when the budget is spent.
fn watchdog(p: Shared, node: String, o: &HealthOptions, start: Instant, source: Option<String>) {
    let (budget, json, metrics) = (o.budget_s, o.json, o.metrics.clone());
    // a little before the budget, so the verdict is out within it
    let at = Duration::from_secs_f64((budget - 0.25).max(0.5));
    let spawned = std::thread::Builder::new()
        .name("fabdiag-health-watchdog".into())
        .spawn(move || {
            std::thread::sleep(at.saturating_sub(start.elapsed()));
            let mut g = lock(&p);
            if g.done {
                return;
            }
            g.done = true;
            let what = format!("{} did not finish within the {budget} s budget", g.step);
            g.checks.push(Check::new("budget", "", Verdict::Unknown, what));
            let h = Health::new(&node, g.checks.clone(), start.elapsed().as_secs_f64(), budget, source);
            print(&h, json, metrics.as_deref());
            std::process::exit(i32::from(Verdict::Unknown.exit_code()));
        });
    if let Err(e) = spawned {
        tell!("fabdiag health: warning: no watchdog ({e}): a held call is not cut off");
    }
}

/// The domains to look at: the file's, then `-d`'s not in it.
fn domains(e: &Expect, extra: &[(String, String)]) -> Vec<DomainExpect> {
    let mut out = e.domains.clone();
    for (p, d) in extra {
        if !out.iter().any(|x| &x.provider == p && &x.domain == d) {
            out.push(DomainExpect {
                provider: p.clone(),
                domain: d.clone(),
                ..DomainExpect::default()
            });
        }
    }
    out
}

/// What a link check saw, for the loopback's record.
struct LinkSeen {
    rate_gbps: Option<f64>,
    flap_counter: bool,
}

/// One NIC's link, and flaps since last time: sysfs, whether or not
/// libfabric lists the domain, and the provider's fi_nic where libfabric
/// loaded.
fn check_link(p: &Shared, d: &DomainExpect, src: &Source, loaded: bool, state: &mut act::FlapState) -> LinkSeen {
    let subject = format!("{}:{}", d.provider, d.domain);
    let l = link::link(&sysfs_root(), &d.provider, &d.domain);
    let fi = match link::no_nic(&d.provider) {
        Some(why) => Err(why),
        None if loaded => measure::provider_link(&d.provider, &d.domain),
        None => Err("not loaded".into()),
    };
    push(p, judge::link(&subject, &l, &fi, d, src));
    let Ok(facts) = l else {
        return LinkSeen {
            rate_gbps: fi.ok().and_then(|f| f.rate_gbps),
            flap_counter: false,
        };
    };
    if let Some(now) = facts.flaps {
        let now = (now, act::unix_now());
        if let Some(c) = judge::flaps(&subject, state.get(&subject).copied(), now, d, src) {
            push(p, c);
        }
        state.insert(subject, now);
    }
    LinkSeen {
        rate_gbps: facts.rate_gbps.or(fi.ok().and_then(|f| f.rate_gbps)),
        flap_counter: facts.flaps.is_some(),
    }
}

/// One NIC's loopback write-bw and send-lat.
fn check_loopback(p: &Shared, d: &DomainExpect, src: &Source, l: LinkSeen, m: &mut Measured) {
    let subject = format!("{}:{}", d.provider, d.domain);
    step(p, format!("loopback write-bw on {subject}"));
    let bw = measure::write_bw(&d.provider, &d.domain);
    push(p, judge::write_bw(&subject, &bw, d, src));
    step(p, format!("loopback send-lat on {subject}"));
    let lat = measure::send_lat(&d.provider, &d.domain);
    push(p, judge::send_lat(&subject, &lat, d, src));
    m.domains.push(MeasuredDomain {
        provider: d.provider.clone(),
        domain: d.domain.clone(),
        link_gbps: l.rate_gbps,
        write_bw_mb_s: bw.ok(),
        send_lat_us: lat.ok(),
        flap_counter: l.flap_counter,
    });
}

/// The NICs a bare health checks (no expectations file, no `-d`): those
/// this node has, as many as the budget holds, the rest named in a check
/// of their own; none that can run a test is CRITICAL.
fn bare_wanted(p: &Shared, o: &HealthOptions, present: &[(String, Vec<String>)]) -> Vec<DomainExpect> {
    let route = fabdiag_files::read::text(std::path::Path::new("/proc/net/route"), 1 << 20).unwrap_or_default();
    let iface = bare::default_route_iface(&route);
    let found = bare::domains(present, measure::RDMA_PROVIDERS, iface.as_deref());
    if found.is_empty() {
        let mut why = "libfabric offers no provider here that can run a test (no RDMA provider, no tcp on the default route's interface, no shm)".to_string();
        if let Some(f) = std::env::var("FI_PROVIDER").ok().filter(|v| !v.is_empty()) {
            why.push_str(&format!("; FI_PROVIDER={f} is set"));
        }
        push(p, Check::new("providers", "", Verdict::Critical, why));
    }
    let fit = bare::fitting(o.budget_s);
    if found.len() > fit {
        let left: Vec<String> = found[fit..].iter().map(|(p, d)| format!("{p}:{d}")).collect();
        let what = format!(
            "not checked within the {} s budget: {} (raise --budget)",
            o.budget_s,
            left.join(", ")
        );
        push(p, Check::new("budget", "", Verdict::Ok, what));
    }
    let extra: Vec<(String, String)> = found.into_iter().take(fit).collect();
    domains(&Expect::default(), &extra)
}

/// libfabric, its providers and domains, limits, and each NIC (`bare`:
/// those the node has, `bare_wanted`).
fn check_fabric(p: &Shared, o: &HealthOptions, e: &Expect, src: &Source, m: &mut Measured, bare: bool) {
    step(p, "loading libfabric".into());
    let lib = measure::libfabric();
    let loaded = lib.is_ok();
    push(p, judge::libfabric(lib));
    let mut wanted = domains(e, &o.domains);
    let mut present = Vec::new();
    if loaded {
        step(p, "listing providers".into());
        match measure::providers() {
            Ok(list) => present = list,
            Err(why) => push(p, Check::new("providers", "", Verdict::Critical, why)),
        }
        for c in judge::providers(&present, e, src) {
            push(p, c);
        }
        if bare {
            wanted = bare_wanted(p, o, &present);
        }
    }
    // as -P names them: a layered "tcp;ofi_rxm" is selected by "tcp"
    for (name, _) in &present {
        let core = Provider::named(name).core().to_string();
        if !m.providers.contains(&core) {
            m.providers.push(core);
        }
    }
    let rdma = present
        .iter()
        .any(|(name, _)| Provider::named(name).has_any(measure::RDMA_PROVIDERS));
    // doctor's reading: a soft limit of None is unlimited (or unreadable)
    let limits = super::doctor::limits();
    if let Some(c) = judge::locked_memory(limits.locked_memory_bytes.and_then(|l| l.soft), e, rdma, src) {
        push(p, c);
    }
    if let Some(c) = judge::open_files(limits.open_files.and_then(|l| l.soft), e, src) {
        push(p, c);
    }
    if let Some(c) = judge::hugepages(measure::free_hugepages_2m(), e, src) {
        push(p, c);
    }
    let mut state = act::read_state(&o.state_dir).unwrap_or_else(|why| {
        let what = format!("earlier counters not read: {why}");
        push(p, Check::new("link flaps", "", Verdict::Ok, what));
        act::FlapState::default()
    });
    let keeps = wanted.iter().any(|d| d.max_flaps_per_hour.is_some());
    // the link first: a NIC whose link is down is said so before what
    // follows from it (libfabric no longer listing its domain)
    for d in &wanted {
        let link = check_link(p, d, src, loaded, &mut state);
        if !loaded {
            continue;
        }
        match judge::domain(&present, d) {
            Some(missing) => push(p, missing),
            None => check_loopback(p, d, src, link, m),
        }
    }
    if keeps {
        if let Err(why) = act::write_state(&o.state_dir, &state) {
            push(
                p,
                Check::new("link flaps", "", Verdict::Ok, format!("rates not kept: {why}")),
            );
        }
    }
}

/// Each GPU's copy, and the GPUs' places on the PCI tree.
fn check_gpus(p: &Shared, e: &Expect, src: &Source, m: &mut Measured) {
    step(p, "looking for GPUs".into());
    let found = measure::gpus();
    let count = found.as_ref().map(|d| d.len() as u32).map_err(Clone::clone);
    if let Some(c) = judge::gpus(&count, e, src) {
        push(p, c);
    }
    if let Ok(devs) = &found {
        m.gpus = Some(devs.len() as u32);
        for d in devs {
            let subject = format!("GPU{} ({})", d.ordinal, d.pci_bus_id);
            step(p, format!("host <-> GPU copies on {subject}"));
            let (to_gpu, from_gpu) = measure::gpu_copies(d);
            push(p, judge::gpu_copy(&subject, &to_gpu, e, src));
            push(p, judge::gpu_copy_back(&subject, &from_gpu, e, src));
            let slowest = |kept: Option<f64>, r: &Result<f64, String>| match (kept, r) {
                (Some(k), Ok(v)) => Some(k.min(*v)),
                (None, Ok(v)) => Some(*v),
                (k, Err(_)) => k,
            };
            m.host_to_gpu_gb_s = slowest(m.host_to_gpu_gb_s, &to_gpu);
            m.gpu_to_host_gb_s = slowest(m.gpu_to_host_gb_s, &from_gpu);
        }
    }
    step(p, "reading the PCI tree".into());
    let tree = topology::Tree::read(&sysfs_root());
    let place = topology::placement(&tree);
    m.gpu_nic = place
        .gpus
        .iter()
        .filter_map(|g| g.nearest.as_ref().map(|(_, c)| *c))
        .max();
    for c in judge::topology(&place, e, src) {
        push(p, c);
    }
}

/// `--topology`: the GPU × NIC matrix, and exit.
fn topology_only(json: bool) -> u8 {
    let root = sysfs_root();
    let tree = topology::Tree::read(&root);
    if tree.devices.is_empty() {
        tell!(
            "fabdiag health: no PCI devices visible under {}",
            root.join("sys/bus/pci/devices").display()
        );
        return Verdict::Unknown.exit_code();
    }
    let place = topology::placement(&tree);
    if json {
        print_stdout(&(serde_json::to_string_pretty(&place).unwrap_or_default() + "\n"));
    } else {
        print_stdout(&topology::matrix_text(&place));
    }
    Verdict::Ok.exit_code()
}

pub fn run(prog: &str, args: &[String]) -> u8 {
    let o = match parse(args) {
        Ok(Action::Run(o)) => o,
        Ok(_) => {
            print_stdout(&usage(prog));
            return Verdict::Ok.exit_code();
        }
        Err(fabdiag_options::OptionError::Invalid(m) | fabdiag_options::OptionError::Unavailable(m)) => {
            tell!("{prog}: {m}");
            return Verdict::Unknown.exit_code();
        }
    };
    if o.topology {
        return topology_only(o.json);
    }
    if let Some(path) = o.metrics.as_deref() {
        if let Err(m) = crate::metrics_file::check(std::path::Path::new(path)) {
            tell!("{prog}: {m}");
            return Verdict::Unknown.exit_code();
        }
    }
    let start = Instant::now();
    // (the watchdog starts after it; the read itself is held to the budget)
    let read_limit = Duration::from_secs_f64((o.budget_s - 0.5).max(0.5));
    let (e, path) = match load_expect(o.expect.as_deref(), read_limit) {
        Ok(x) => x,
        Err(m) => {
            tell!("{prog}: UNKNOWN: {m}");
            let check = Check::new("expect", o.expect.as_deref().unwrap_or(""), Verdict::Unknown, m);
            let node = act::node_name(o.node.as_deref());
            write_metrics(
                &Health::new(&node, vec![check], start.elapsed().as_secs_f64(), o.budget_s, None),
                o.metrics.as_deref(),
            );
            return Verdict::Unknown.exit_code();
        }
    };
    let node = act::node_name(o.node.as_deref());
    let shared: Shared = Arc::default();
    watchdog(Arc::clone(&shared), node.clone(), &o, start, path.clone());
    let src_name = path.as_deref().map_or("health.toml".to_string(), |p| {
        std::path::Path::new(p)
            .file_name()
            .map_or(p.to_string(), |f| f.to_string_lossy().into_owned())
    });
    let src = Source(&src_name);
    let mut m = Measured::default();
    let bare = path.is_none() && o.domains.is_empty();
    check_fabric(&shared, &o, &e, &src, &mut m, bare);
    check_gpus(&shared, &e, &src, &mut m);
    let checks = {
        let mut g = lock(&shared);
        if g.done {
            // the watchdog is printing UNKNOWN and ends the process
            drop(g);
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        g.done = true;
        g.checks.clone()
    };
    let mut h = Health::new(&node, checks, start.elapsed().as_secs_f64(), o.budget_s, path);
    conclude(prog, &o, &mut h, &m)
}

/// `--write-expect`, `--slurm`, then the output and the exit code.
fn conclude(prog: &str, o: &HealthOptions, h: &mut Health, m: &Measured) -> u8 {
    if let Some(file) = &o.write_expect {
        let text = expect::write(m, 0.2, &h.node);
        let written = if file == "-" {
            print_stdout(&text);
            Ok(())
        } else {
            fabdiag_files::write::whole(std::path::Path::new(file), text.as_bytes())
                .map_err(|e| format!("cannot write {file}: {e}"))
        };
        match written {
            Ok(()) if file != "-" => tell!("{prog}: wrote {file} from this node's figures (check it before use)"),
            Ok(()) => {}
            Err(why) => {
                tell!("{prog}: UNKNOWN: {why}");
                return Verdict::Unknown.exit_code();
            }
        }
        if file == "-" {
            return h.verdict.exit_code();
        }
    }
    if o.slurm {
        let left = Duration::from_secs_f64((o.budget_s - h.elapsed_s).max(2.0));
        h.slurm = Some(match act::slurm(&h.node, h.verdict, &h.summary, o.dry_run, left) {
            Ok(done) => done,
            Err(why) => {
                tell!("{prog}: {why}");
                format!("not acted on: {why}")
            }
        });
    }
    print(h, o.json, o.metrics.as_deref());
    h.verdict.exit_code()
}
