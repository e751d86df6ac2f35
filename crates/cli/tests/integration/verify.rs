//! `--verify` on the client/server bandwidth tools, real processes on
//! loopback (tcp and shm): every size's data checked where it lands (the
//! server's target for writes and sends, the client's buffer for reads;
//! both for bidirectional runs), and a deliberately corrupted destination
//! is an error naming the size and offset on both sides, with the
//! measured rows kept.

use crate::common::*;

#[test]
fn every_bandwidth_tool_verifies_every_size_both_ways() {
    let _cpu = cpu();
    for tool in ["write-bw", "read-bw", "send-bw"] {
        for provider in ["tcp", "shm"] {
            for bidir in [false, true] {
                let mut args = vec![
                    "-P", provider, "-n", "3", "-l", "8", "-s", "1:16384", "--verify", "--json",
                ];
                if bidir {
                    args.push("-b");
                }
                let (c, s) = pair(tool, &["--json"], &args);
                assert_eq!(c.code, Some(0), "{tool} {provider} {bidir}: {}", c.stderr);
                assert_eq!(s.code, Some(0), "{tool} {provider} {bidir}: {}", s.stderr);
                for doc in [c.json(), s.json()] {
                    assert_eq!(doc["config"]["verify"], true);
                    assert_eq!(doc["results"].as_array().unwrap().len(), 15);
                }
            }
        }
    }
}

#[test]
fn a_corrupted_destination_fails_the_run_with_the_offset() {
    let _cpu = cpu();
    // who checks: the server for writes and sends, the client for reads
    for (tool, checker) in [("write-bw", "server"), ("send-bw", "server"), ("read-bw", "client")] {
        for provider in ["tcp", "shm"] {
            let (c, s) = pair_env(
                tool,
                &[("FABDIAG_TEST_CORRUPT_OFFSET", "5")],
                &["--json"],
                &[
                    "-P", provider, "-n", "2", "-l", "4", "-s", "256:512", "--verify", "--json",
                ],
            );
            let what = format!("{tool} {provider}");
            both_exit(&c, &s, 2, &what);
            let line = one_line(&c.stderr);
            assert!(line.contains("data check failed for size 256: the "), "{what}: {line}");
            assert!(line.contains(&format!("{checker}'s ")), "{what}: {line}");
            assert!(line.contains(" holds 0x"), "{what}: {line}");
            let j = c.json();
            assert_eq!(j["error"]["kind"], "runtime");
            assert_eq!(
                j["results"].as_array().unwrap().len(),
                1,
                "{what}: the measured size is kept"
            );
        }
    }
}

/// send-bw's receiver checks every slot a message of the size landed in,
/// not only the latest message's: 8 messages into 6 posted receives (the
/// batch of 4 plus 2), the flip in slot 2 (offset 2 × 512 + 5), which the
/// last message (slot 1) never touched.
#[test]
fn send_bw_checks_every_receive_slot() {
    let _cpu = cpu();
    for provider in ["tcp", "shm"] {
        let (c, s) = pair_env(
            "send-bw",
            &[("FABDIAG_TEST_CORRUPT_OFFSET", "1029")],
            &[],
            &["-P", provider, "-n", "2", "-l", "4", "-s", "512", "--verify"],
        );
        both_exit(&c, &s, 2, provider);
        let line = one_line(&c.stderr);
        assert!(
            line.contains("data check failed for size 512: the server's RX buffer at offset 1029 holds 0x"),
            "{provider}: {line}"
        );
    }
}
