//! `host-traffic` / gc-hosttraffictest: the options, the GPU, then each
//! test of each repeat through fabdiag-host-traffic, printed as it finishes (or
//! one JSON document), then thresholds and the exit code. The first
//! failing test ends the run (a CUDA fault poisons the context) with its
//! error in its own result; what finished before it is kept, and so it is
//! when SIGINT or SIGTERM stops the run (the signal thread reports the
//! finished tests, then the process dies by the signal).

use crate::streams::print_stdout;
use crate::version::VERSION;
use crate::{exit, signals};
use fabdiag_host_traffic::plan::Request;
use fabdiag_host_traffic::run::{RunError, Session};
use fabdiag_model::host_traffic::TrafficResult;
use fabdiag_options::host_traffic::{parse, usage, TrafficAction, TrafficOptions};
use fabdiag_report::host_traffic::{document, sequence_line, text_line, threshold_failures};
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::{Arc, Mutex};

/// What a run holds so far: the document's configuration (it grows as
/// the GPU is opened), the finished tests, and what a stop signal reports.
struct Kept {
    config: Vec<(&'static str, String)>,
    repeats: Vec<Vec<TrafficResult>>,
    /// When a stop would come: "while opening the GPU", "during host ->
    /// buffer -> tile in repeat 2 of 3", "between tests".
    when: String,
    /// `-v`'s bar, cleared before the stop's line is printed.
    bar: Option<ProgressBar>,
    /// The outcome is being printed: a stop now only ends the process.
    finished: bool,
}

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            config: Vec::new(),
            repeats: Vec::new(),
            when: "while opening the GPU".into(),
            bar: None,
            finished: false,
        }
    }
}

/// The line a stop signal prints: when it came, and what was kept.
fn stop_line(sig: &str, when: &str, finished: usize) -> String {
    match finished {
        1 => format!("stopped by {sig} {when} (1 test finished)"),
        n => format!("stopped by {sig} {when} ({n} tests finished)"),
    }
}

/// `Kept::when` for a test: its description, and the repeat if there are
/// several.
fn during(test: &str, repeat: usize, repeats: usize) -> String {
    match repeats {
        1 => format!("during {test}"),
        _ => format!("during {test} in repeat {repeat} of {repeats}"),
    }
}

/// Watches for SIGINT and SIGTERM (before the GPU runtime starts a
/// thread): the first one prints what `kept` holds, then ends the process
/// by it.
fn watch_stops(prog: &str, json: bool, kept: &Arc<Mutex<Kept>>) -> nix::Result<()> {
    let who = prog.to_string();
    signals::report_on_stop(prog, Arc::clone(kept), move |k: &Kept, sig| {
        if k.finished {
            return;
        }
        if let Some(b) = &k.bar {
            b.finish_and_clear();
        }
        let done = k.repeats.iter().map(Vec::len).sum();
        let line = stop_line(sig.as_str(), &k.when, done);
        tell!("{who}: {line}");
        if json {
            print_document(&k.config, &k.repeats, Some(&line));
        }
    })
}

/// `host-traffic` / gc-hosttraffictest: options, the GPU, then the tests.
pub fn run(prog: &str, args: &[String]) -> u8 {
    let json = args.iter().any(|a| a == "-j" || a == "--json-output");
    let kept = Arc::new(Mutex::new(Kept::default()));
    let fail = |code: u8, msg: &str| -> u8 {
        tell!("{prog}: {msg}");
        if json {
            print_document(&signals::lock(&kept).config, &[], Some(msg));
        }
        code
    };
    let o = match parse(args) {
        Ok(TrafficAction::Help) => {
            print_stdout(&usage(prog));
            return exit::OK;
        }
        Ok(TrafficAction::Version) => {
            print_stdout(&format!("{prog} version: {VERSION}\n"));
            return exit::OK;
        }
        Ok(TrafficAction::Run(o)) => o,
        Err(m) => return fail(exit::USAGE, &format!("{m} (see -h)")),
    };
    if let Err(e) = watch_stops(prog, o.json, &kept) {
        tell!("{prog}: warning: cannot watch for SIGINT/SIGTERM ({e}): a stop will lose this run's results");
    }
    for n in &o.notes {
        tell!("{prog}: {n}");
    }
    signals::lock(&kept).config = vec![
        ("number_of_ipus", "1".into()),
        (
            "tile_transfers_enabled",
            o.tests.iter().any(|t| t.tile.is_some()).to_string(),
        ),
        ("transfer_size_64byte_blocks", o.payload_blocks.to_string()),
        ("iterations", o.iterations.to_string()),
        (
            "host_transfers_enabled",
            o.tests.iter().any(|t| t.host.is_some()).to_string(),
        ),
        ("host_chunk_bytes", o.chunk.to_string()),
    ];
    let cuda = match fabdiag_gpu::Cuda::load() {
        Ok(c) => c,
        Err(e) => return fail(exit::UNAVAILABLE, &e.to_string()),
    };
    let devices = match cuda.devices() {
        Ok(d) if d.is_empty() => return fail(exit::UNAVAILABLE, &fabdiag_gpu::GpuError::NoDevices.to_string()),
        Ok(d) => d,
        Err(e) => return fail(exit::RUNTIME, &e.to_string()),
    };
    let dev = match fabdiag_gpu::resolve(&devices, &o.device) {
        Ok(d) => d.clone(),
        Err(e) => return fail(exit::USAGE, &e.to_string()),
    };
    signals::lock(&kept).config.extend([
        ("gpu_name", dev.name.clone()),
        ("gpu_pci_bus_id", dev.pci_bus_id.clone()),
        ("gpu_uuid", dev.uuid.clone()),
        ("gpu_sm_count", dev.sm_count.to_string()),
        ("gpu_copy_engines", dev.copy_engines.to_string()),
    ]);
    let req = Request {
        tiles: o.tiles,
        payload_blocks: o.payload_blocks,
        iterations: o.iterations,
        chunk: o.chunk,
    };
    let overlap = o.tests.iter().any(|t| t.host.is_some() && t.tile.is_some());
    let mut s = match Session::open(dev.ordinal, &dev.pci_bus_id, &req, overlap, o.timeout) {
        Ok(s) => s,
        Err(e) => {
            let code = match e {
                RunError::Plan(_) => exit::UNAVAILABLE,
                RunError::Gpu(fabdiag_gpu::GpuError::NoDriver { .. }) => exit::UNAVAILABLE,
                _ => exit::RUNTIME,
            };
            return fail(code, &e.to_string());
        }
    };
    let p = s.plan;
    {
        let config = &mut signals::lock(&kept).config;
        // the original's order: tiles_per_ipu third
        config.insert(2, ("tiles_per_ipu", p.blocks.to_string()));
        config.extend([
            ("threads_per_tile", p.threads.to_string()),
            ("tile_region_bytes", p.tile_region.to_string()),
            ("host_region_bytes", p.host_region.to_string()),
            ("numa_node", s.numa.map_or("none".into(), |n| n.to_string())),
        ]);
    }
    if o.verbose {
        tell!(
            "{prog}: {} ({}), {} SMs, L2 {} MiB, {} copy engines; {} blocks x {} threads over {} MiB of tiles in {} KiB slices, host chunks of {} MiB over {} MiB",
            dev.name,
            dev.pci_bus_id,
            s.facts.sm_count,
            s.facts.l2_bytes >> 20,
            s.facts.copy_engines,
            p.blocks,
            p.threads,
            p.tile_region >> 20,
            p.block_region >> 10,
            p.chunk >> 20,
            p.host_region >> 20
        );
    }
    let code = run_tests(prog, &o, &mut s, &kept);
    if code == exit::RUNTIME {
        // a failed test may have left work on the GPU that never ends
        s.abandon();
    }
    code
}

/// The original's JSON document, on stdout.
fn print_document(config: &[(&str, String)], repeats: &[Vec<TrafficResult>], error: Option<&str>) {
    print_stdout(&(serde_json::to_string_pretty(&document(config, repeats, error)).unwrap_or_default() + "\n"));
}

fn bar(verbose: bool, what: &str) -> Option<ProgressBar> {
    verbose.then(|| {
        let b = ProgressBar::new(1000);
        if let Ok(style) = ProgressStyle::with_template("{msg:24} [{bar:40}] {percent:>3}% {elapsed}") {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_message(what.to_string());
        b
    })
}

fn run_tests(prog: &str, o: &TrafficOptions, s: &mut Session, kept: &Mutex<Kept>) -> u8 {
    let mut failure: Option<String> = None;
    'all: for rep in 0..o.repeat as usize {
        if !o.json {
            print_stdout(&sequence_line(rep + 1, o.repeat as usize));
        }
        signals::lock(kept).repeats.push(Vec::new());
        for (i, &test) in o.tests.iter().enumerate() {
            let b = bar(o.verbose, &test.description());
            {
                let mut k = signals::lock(kept);
                k.when = during(&test.description(), rep + 1, o.repeat as usize);
                k.bar.clone_from(&b);
            }
            let seed = 0x1000 * (rep as u32 + 1) + i as u32;
            let outcome = s.run(test, seed, o.duration_s, &mut |f| {
                if let Some(b) = &b {
                    b.set_position((f * 1000.0) as u64);
                }
            });
            signals::lock(kept).bar = None;
            if let Some(b) = b {
                b.finish_and_clear();
            }
            let r = match outcome {
                Ok(f) => TrafficResult {
                    test,
                    duration_s: f.duration_s,
                    host_duration_s: f.host_duration_s,
                    host_bytes: f.host_bytes,
                    tile_bytes: f.tile_bytes,
                    error: None,
                },
                Err(e) => {
                    let msg = format!("{}: {e}", test.description());
                    if o.dump_tiles {
                        for (b, done) in s.tile_overview().iter().enumerate() {
                            tell!("{prog}: tile {b}: {done} of {} transfers", o.iterations);
                        }
                    }
                    failure = Some(msg);
                    TrafficResult {
                        test,
                        duration_s: 0.0,
                        host_duration_s: None,
                        host_bytes: 0,
                        tile_bytes: 0,
                        error: Some(e.to_string()),
                    }
                }
            };
            // kept before it is printed, and the lock not held while printing
            {
                let mut k = signals::lock(kept);
                k.when = "between tests".into();
                if let Some(last) = k.repeats.last_mut() {
                    last.push(r.clone());
                }
            }
            if !o.json {
                print_stdout(&text_line(&r));
            }
            if failure.is_some() {
                break 'all;
            }
        }
    }
    let (config, repeats) = {
        let mut k = signals::lock(kept);
        k.finished = true;
        (std::mem::take(&mut k.config), std::mem::take(&mut k.repeats))
    };
    let all: Vec<TrafficResult> = repeats.iter().flatten().cloned().collect();
    let missed = threshold_failures(&all, o.min_tile_gbps, o.min_host_gbps);
    let (code, line) = match (&failure, missed.first()) {
        (Some(f), _) => (exit::RUNTIME, Some(f.clone())),
        (None, Some(_)) => (exit::THRESHOLD, Some(missed.join("; "))),
        (None, None) => (exit::OK, None),
    };
    if let Some(l) = &line {
        tell!("{prog}: {l}");
    }
    if o.json {
        print_document(&config, &repeats, line.as_deref());
    }
    code
}

#[cfg(test)]
mod tests {
    use super::{during, stop_line};

    #[test]
    fn a_stop_says_when_it_came_and_what_was_kept() {
        assert_eq!(
            stop_line("SIGINT", "while opening the GPU", 0),
            "stopped by SIGINT while opening the GPU (0 tests finished)"
        );
        assert_eq!(
            stop_line("SIGTERM", &during("host -> buffer -> tile", 1, 1), 0),
            "stopped by SIGTERM during host -> buffer -> tile (0 tests finished)"
        );
        assert_eq!(
            stop_line("SIGINT", &during("buffer <- tile", 2, 3), 1),
            "stopped by SIGINT during buffer <- tile in repeat 2 of 3 (1 test finished)"
        );
        assert_eq!(
            stop_line("SIGTERM", "between tests", 13),
            "stopped by SIGTERM between tests (13 tests finished)"
        );
    }
}
