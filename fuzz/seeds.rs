//! Writes the seed corpus of each fuzz target (fuzz/corpus/TARGET/) from
//! typed values through fabdiag's own encoders, so the fuzzer starts from
//! what the real wire and files hold; the sweep files come from a real
//! simulated sweep's --output folder given as the argument.
//! Run by scripts/dev/demos/fuzz.sh; its output is committed.
use fabdiag_model::{TestSpec, Tool};
use fabdiag_proto::auth::Method;
use fabdiag_proto::{write_frame, ErrorClass, Hello, Message, Phase, RegionDesc, MAGIC, PROTOCOL};
use fabdiag_sweep::protocol::{FlowOrder, PairRole, SideOutcome, ToCoordinator, ToRank};
use std::path::Path;

fn put(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target);
    std::fs::create_dir_all(&dir).expect("corpus folder");
    std::fs::write(dir.join(name), bytes).expect("seed written");
}

fn framed(payloads: &[Vec<u8>]) -> Vec<u8> {
    let mut w = Vec::new();
    for p in payloads {
        write_frame(&mut w, p).expect("frame");
    }
    w
}

fn messages() -> Vec<Message> {
    let spec = TestSpec::new(Tool::WriteBw).to_wire().expect("spec");
    vec![
        Message::Hello(Hello {
            magic: MAGIC.into(),
            protocol: PROTOCOL,
            tool: "write_bw".into(),
            version: "0.1.0".into(),
            auth: false,
            auth_method: Default::default(),
        }),
        Message::Hello(Hello {
            magic: MAGIC.into(),
            protocol: PROTOCOL,
            tool: "cxi_send_lat".into(),
            version: "0.1.0".into(),
            auth: true,
            auth_method: Method::Munge,
        }),
        Message::Config { params: spec },
        Message::Endpoint {
            provider: "tcp".into(),
            domain: "lo".into(),
            address: vec![2, 0, 0x9c, 0x40, 127, 0, 0, 1],
            regions: vec![RegionDesc {
                addr: 0x7f00_0000_0000,
                key: 7,
                len: 1 << 20,
            }],
            memory: None,
        },
        Message::Barrier {
            phase: Phase::PreRun,
            size: Some(65536),
        },
        Message::Results {
            size: 65536,
            elapsed_ns: 1_000_000,
            ops: 512,
        },
        Message::Heartbeat,
        Message::Challenge {
            nonce: "00".repeat(32),
        },
        Message::Proof {
            nonce: Some("11".repeat(32)),
            mac: "22".repeat(32),
        },
        Message::Proof {
            nonce: Some("33".repeat(32)),
            mac: format!("MUNGE:{}:", "AwQFAAAqz0JIMXBlxvCV".repeat(12)),
        },
        Message::Error {
            phase: Phase::Run,
            message: "fi_write failed".into(),
            kind: ErrorClass::Runtime,
        },
    ]
}

/// The control protocol's seeds: a session's messages, framed and not,
/// and every tool's run spec.
fn protocol() {
    let ms = messages();
    let payloads: Vec<Vec<u8>> = ms.iter().map(|m| serde_json::to_vec(m).expect("message")).collect();
    for (i, p) in payloads.iter().enumerate() {
        put("message", &format!("message-{i}"), p);
    }
    put("frame", "session", &framed(&payloads));
    put("frame", "empty-frame", &framed(&[Vec::new()]));
    for tool in Tool::all() {
        let spec = TestSpec::new(tool).to_wire().expect("spec");
        put("run_spec", tool.subcommand(), spec.to_string().as_bytes());
    }
}

/// The sweep's messages, both ways, framed.
fn sweep_wire() {
    let up = [
        ToCoordinator::Join {
            protocol: 1,
            version: "0.1.0".into(),
            rank: 3,
            size: 8,
            host: "node3".into(),
            device: Some("mlx5_0".into()),
            gpu: None,
            pair_port: 40123,
            unable: None,
            nonce: Some("ab".repeat(32)),
            auth_method: Method::Munge,
        },
        ToCoordinator::Proof { mac: "cd".repeat(32) },
        ToCoordinator::Done {
            step: 4,
            outcome: SideOutcome {
                value: Some(9876.5),
                elapsed_s: 1.5,
                measure_s: 1.0,
                opens: 2,
                open_s: 0.01,
                ..SideOutcome::default()
            },
        },
        ToCoordinator::FlowsDone {
            step: 4,
            outcomes: vec![
                SideOutcome {
                    value: Some(12.5),
                    ..SideOutcome::default()
                },
                SideOutcome {
                    error: Some("rank 3 never connected for the pair test (waited 10 s)".into()),
                    ..SideOutcome::default()
                },
            ],
        },
        ToCoordinator::Leave {
            step: Some(5),
            reason: "a provider call is held".into(),
        },
    ];
    let down = [
        ToRank::Welcome {
            test: TestSpec::new(Tool::SendLat).to_wire().expect("spec"),
            figure: Default::default(),
            victim_test: Some(TestSpec::new(Tool::WriteLat).to_wire().expect("spec")),
        },
        ToRank::Pair {
            step: 4,
            role: PairRole::Client,
            peer: 2,
            peer_addr: "198.18.0.2:40123".into(),
        },
        ToRank::Flows {
            step: 4,
            flows: vec![FlowOrder {
                role: PairRole::Server,
                peer: 3,
                peer_addr: "198.18.0.4:40123".into(),
                victim: false,
            }],
            start_in_ms: 3000,
        },
        ToRank::Idle { step: 5 },
        ToRank::Refused {
            reason: "protocol 2; this coordinator speaks 1".into(),
        },
        ToRank::Challenge {
            nonce: "ef".repeat(32),
            mac: "01".repeat(32),
        },
        ToRank::Finish,
    ];
    let up: Vec<Vec<u8>> = up.iter().map(|m| serde_json::to_vec(m).expect("up")).collect();
    let down: Vec<Vec<u8>> = down.iter().map(|m| serde_json::to_vec(m).expect("down")).collect();
    put("sweep_wire", "to-coordinator", &framed(&up));
    put("sweep_wire", "to-rank", &framed(&down));
}

/// A simulated sweep's folder `out`: its document, and its records as the
/// folder target splits them.
fn sweep_files(out: &Path) {
    let read = |name: &str| std::fs::read(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    put("sweep_doc", "sweep.json", &read("sweep.json"));
    let mut folder = read("meta.json");
    folder.push(0);
    folder.extend(read("nodes.json"));
    folder.push(0);
    folder.extend(read("pairs.jsonl"));
    put("sweep_folder", "folder", &folder);
}

/// A command line for each command, as the options target reads them.
fn command_lines() {
    let tools: Vec<Tool> = Tool::all().collect();
    let argv = |pick: usize, args: &[&str]| {
        let mut v = vec![pick as u8];
        v.extend(args.join("\0").bytes());
        v
    };
    put(
        "options",
        "write-bw",
        &argv(0, &["-s", "8:65536", "-D", "2", "--json", "198.18.0.2"]),
    );
    put(
        "options",
        "send-lat",
        &argv(3, &["-n", "1000", "--percentiles", "50,99,99.9", "--local"]),
    );
    put(
        "options",
        "sweep",
        &argv(
            tools.len(),
            &[
                "--simulate",
                "8",
                "--tool",
                "write-bw",
                "--output",
                "o",
                "--",
                "-s",
                "65536",
            ],
        ),
    );
    put(
        "options",
        "serve",
        &argv(tools.len() + 1, &["-p", "49152", "-P", "tcp", "--json"]),
    );
    put(
        "options",
        "health",
        &argv(tools.len() + 2, &["--budget", "10", "-d", "tcp:lo", "--json"]),
    );
    put(
        "options",
        "host-traffic",
        &argv(
            tools.len() + 3,
            &["-d", "0", "--test-duration", "1", "--tile-read", "-j"],
        ),
    );
}

fn main() {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: seeds SWEEP_OUTPUT_FOLDER");
        std::process::exit(2);
    };
    protocol();
    sweep_wire();
    sweep_files(Path::new(&out));
    command_lines();
}
