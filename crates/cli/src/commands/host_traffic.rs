//! `host-traffic` / gc-hosttraffictest: the options, the GPU, then the
//! test. The measurement itself needs a GPU machine to be written and
//! verified on; until then this says so (exit 4) instead of printing
//! numbers it cannot stand by.

use crate::output::print_stdout;
use crate::{exit, VERSION};
use fabdiag_options::traffic::{parse, usage, TrafficAction};
use fabdiag_report::traffic::document;

/// `host-traffic` / gc-hosttraffictest: options, the GPU, then the test.
pub fn run(prog: &str, args: &[String]) -> u8 {
    let json = args.iter().any(|a| a == "-j" || a == "--json-output");
    let fail = |code: u8, msg: &str, config: &[(&str, String)]| -> u8 {
        eprintln!("{prog}: {msg}");
        if json {
            print_stdout(&(serde_json::to_string_pretty(&document(config, &[], Some(msg))).unwrap_or_default() + "\n"));
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
        Err(m) => return fail(exit::USAGE, &format!("{m} (see -h)"), &[]),
    };
    let mut config: Vec<(&str, String)> = vec![
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
        Err(e) => return fail(exit::UNAVAILABLE, &e.to_string(), &config),
    };
    let devices = match cuda.devices() {
        Ok(d) if d.is_empty() => {
            return fail(
                exit::UNAVAILABLE,
                &fabdiag_gpu::GpuError::NoDevices.to_string(),
                &config,
            )
        }
        Ok(d) => d,
        Err(e) => return fail(exit::RUNTIME, &e.to_string(), &config),
    };
    let dev = match fabdiag_gpu::resolve(&devices, &o.device) {
        Ok(d) => d.clone(),
        Err(e) => return fail(exit::USAGE, &e.to_string(), &config),
    };
    let tiles = o.tiles.unwrap_or(dev.sm_count.max(1) as u32);
    config.extend([
        ("tiles_per_ipu", tiles.to_string()),
        ("gpu_name", dev.name.clone()),
        ("gpu_pci_bus_id", dev.pci_bus_id.clone()),
        ("gpu_uuid", dev.uuid.clone()),
        ("gpu_sm_count", dev.sm_count.to_string()),
        ("gpu_copy_engines", dev.copy_engines.to_string()),
    ]);
    // The measurement (pinned host memory on the GPU's NUMA node, copy
    // streams, tile kernels, simultaneous start, event timing, data
    // checks) has to be written and verified on a GPU machine; until then
    // this build says so instead of printing numbers it cannot stand by.
    fail(
        exit::UNAVAILABLE,
        &format!(
            "found {} ({}), but this build cannot measure host/GPU traffic yet: the CUDA measurement is still to be developed on a GPU machine",
            dev.name, dev.pci_bus_id
        ),
        &config,
    )
}
