//! Golden tests: the renderer, fed the original document's parameters and
//! numbers, must reproduce the original's client and server outputs byte for
//! byte (files under tests/golden are cut verbatim from 001_*.txt).

use fabdiag_model::{BwRun, BwTool, Hugepages, Mem, PollMode, Role, RowView, SideMem, TestMode};
use fabdiag_report::bw_text::render;
use fabdiag_report::legacy::listening;

fn run(tool: BwTool, role: Role, mode: TestMode, min: u64, max: u64, bidir: bool) -> BwRun {
    let (local, remote) = match role {
        Role::Server => ("NIC 0x12 PID 0 VNI 10", "NIC 0x12 PID 0"),
        Role::Client => ("NIC 0x13 PID 0 VNI 10", "NIC 0x12 PID 0"),
    };
    let remote = if role == Role::Server { "NIC 0x13 PID 0" } else { remote };
    BwRun {
        tool,
        role,
        provider: "cxi".into(),
        device: "cxi0".into(),
        service_id: 1,
        mode,
        min_size_bytes: min,
        max_size_bytes: max,
        list_size: 256,
        bidirectional: bidir,
        hrp: (tool == BwTool::WriteBw).then(|| "Enabled".into()),
        idc: (tool != BwTool::ReadBw).then(|| "Enabled".into()),
        max_buf_bytes: 4294967296,
        buf_used_bytes: 16777216,
        buf_align_bytes: 64,
        hugepages: Hugepages::Disabled,
        local_address: local.into(),
        remote_address: remote.into(),
        delivery_complete: true,
        poll: PollMode::Spin,
        client_mem: SideMem::system(),
        server_mem: SideMem::system(),
        gpus_found: None,
        verify: false,
    }
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn row(size: u64, count: Option<u64>, bw: f64, rate: f64) -> RowView {
    RowView {
        size,
        count,
        bw_mb_s: bw,
        rate_mpkt_s: rate,
    }
}

const WRITE_BW: [(u64, f64, f64); 7] = [
    (1024, 29314.66, 28.627597),
    (2048, 36613.15, 17.877517),
    (4096, 34763.74, 16.974481),
    (8192, 38461.53, 18.780044),
    (16384, 40333.92, 19.694297),
    (32768, 41334.64, 20.182929),
    (65536, 40550.70, 19.800147),
];

#[test]
fn write_bw_bidirectional_range_duration_matches_the_original() {
    let server_counts = [71568640, 44694528, 21218560, 11737856, 6154752, 3153664, 1522688];
    let client_counts = [71572224, 44694272, 21218304, 11737856, 6154752, 3153664, 1571328];
    for (role, counts, file) in [
        (Role::Server, server_counts, "original_write_server.txt"),
        (Role::Client, client_counts, "original_write_client.txt"),
    ] {
        let r = run(
            BwTool::WriteBw,
            role,
            TestMode::Duration { duration_s: 5 },
            1024,
            65536,
            true,
        );
        let rows: Vec<RowView> = WRITE_BW
            .iter()
            .zip(counts)
            .map(|(&(s, bw, rate), c)| row(s, Some(c), bw, rate))
            .collect();
        let mut text = String::new();
        if role == Role::Server {
            text = format!("{}\n", listening(49194));
        }
        text.push_str(&render(&r, &rows));
        assert_eq!(text, golden(file), "{file}");
    }
}

#[test]
fn read_and_send_unidirectional_single_size_match_the_original() {
    let cases = [
        (BwTool::ReadBw, 21479.54, 10.488056, "read"),
        (BwTool::SendBw, 23772.52, 11.607674, "send"),
    ];
    for (tool, bw, rate, word) in cases {
        for role in [Role::Server, Role::Client] {
            let r = run(
                tool,
                role,
                TestMode::Iterations { iterations: 1000 },
                65536,
                65536,
                false,
            );
            // the server initiated nothing in a unidirectional run: "-"
            let count = (role == Role::Client).then_some(256000);
            let mut text = String::new();
            if role == Role::Server {
                text = format!("{}\n", listening(49194));
            }
            text.push_str(&render(&r, &[row(65536, count, bw, rate)]));
            let file = format!(
                "original_{word}_{}.txt",
                if role == Role::Server { "server" } else { "client" }
            );
            assert_eq!(text, golden(&file), "{file}");
        }
    }
}

/// Cases the original documents do not show, written out by hand from its format: a
/// unidirectional range on the server (every count `-`), huge pages, and
/// HRP not applicable.
#[test]
fn unidirectional_range_on_the_server() {
    let mut r = run(
        BwTool::WriteBw,
        Role::Server,
        TestMode::Iterations { iterations: 1000 },
        1024,
        2048,
        false,
    );
    r.hrp = Some("Disabled - Not Applicable".into());
    r.buf_used_bytes = 2097152;
    r.hugepages = Hugepages::Enabled {
        size: "2M".into(),
        pages: 1,
    };
    let rows = [row(1024, None, 12345.678, 12.0563271), row(2048, None, 0.0, 0.0)];
    let want = "\
---------------------------------------------------
    CXI RDMA Write Bandwidth Test
Device           : cxi0
Service ID       : 1
Client TX Mem    : System
Server RX Mem    : System
Test Type        : Iteration
Iterations       : 1000
Min Write Size   : 1024
Max Write Size   : 2048
List Size        : 256
HRP              : Disabled - Not Applicable
IDC              : Enabled
Bidirectional    : Disabled
Max RDMA Buf     : 4294967296 (2097152 used)
RDMA Buf Align   : 64
Hugepages        : Enabled (2M - 1 pages)
Local (server)   : NIC 0x12 PID 0 VNI 10
Remote (client)  : NIC 0x13 PID 0
---------------------------------------------------
RDMA Size[B]      Writes  BW[MB/s]  PktRate[Mpkt/s]
        1024           -  12345.68        12.056327
        2048           -      0.00         0.000000
---------------------------------------------------
";
    assert_eq!(render(&r, &rows), want);
}

#[test]
fn bidirectional_single_size_send_client() {
    let mut r = run(
        BwTool::SendBw,
        Role::Client,
        TestMode::Duration { duration_s: 4294967295 },
        8,
        8,
        true,
    );
    r.idc = Some("Disabled".into());
    r.hugepages = Hugepages::NotApplicable;
    r.list_size = 16382;
    let want = "\
---------------------------------------------------
    CXI RDMA Send Bandwidth Test
Device           : cxi0
Service ID       : 1
Client TX Mem    : System
Server RX Mem    : System
Test Type        : Duration
Duration         : 4294967295 seconds
Send Size        : 8
List Size        : 16382
IDC              : Disabled
Bidirectional    : Enabled
Max RDMA Buf     : 4294967296 (16777216 used)
RDMA Buf Align   : 64
Hugepages        : Disabled - Not Applicable
Local (client)   : NIC 0x13 PID 0 VNI 10
Remote (server)  : NIC 0x12 PID 0
---------------------------------------------------
Send Size[B]       Sends  BW[MB/s]  PktRate[Mpkt/s]
           8  9999999999  99999.99    999999.999999
---------------------------------------------------
";
    assert_eq!(render(&r, &[row(8, Some(9999999999), 99999.994, 999999.9999994)]), want);
}

/// The original's cxi_gpu_loopback_bw example (GPU memory on both buffers),
/// byte for byte, from the same model a real run fills in.
#[test]
fn gpu_loopback_bw_matches_the_original() {
    let mut r = run(
        BwTool::GpuLoopbackBw,
        Role::Client,
        TestMode::Duration { duration_s: 10 },
        131072,
        131072,
        false,
    );
    r.list_size = 8192;
    r.client_mem = SideMem {
        tx: Mem::Gpu { index: 0 },
        rx: Mem::Gpu { index: 2 },
        gpu_type: Some("AMD".into()),
    };
    r.gpus_found = Some(4);
    let text = render(&r, &[row(131072, Some(1810432), 189.49 * 1000.0 / 8.0, 11.565970)]);
    let original = golden("original_loopback_gpu.txt");
    // the file holds the original's screen: its fence and command line first
    let body: String = original
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with("```"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(text, body);
    // system memory: no GPU Type line, no Found line
    let mut r = r.clone();
    r.client_mem = SideMem::system();
    r.gpus_found = None;
    let text = render(&r, &[]);
    assert!(
        text.contains("TX Mem           : System\nRX Mem           : System\nTest Type"),
        "{text}"
    );
    assert!(!text.contains("GPU"), "{text}");
}

/// GPU buffers on a client/server tool: the type follows the line of the
/// buffer on a GPU (originals §2.7), and `Found` closes the banner.
#[test]
fn gpu_memory_lines_of_the_pair_tools() {
    let mut r = run(
        BwTool::WriteBw,
        Role::Client,
        TestMode::Iterations { iterations: 1000 },
        65536,
        65536,
        false,
    );
    r.client_mem.tx = Mem::Gpu { index: 1 };
    r.client_mem.gpu_type = Some("NVIDIA".into());
    r.gpus_found = Some(2);
    let text = render(&r, &[]);
    assert!(
        text.contains("Client TX Mem    : GPU 1\nClient GPU Type  : NVIDIA\nServer RX Mem    : System\nTest Type"),
        "{text}"
    );
    assert!(
        text.contains("Remote (server)  : NIC 0x12 PID 0\nFound 2 GPU(s)\n---"),
        "{text}"
    );
}
