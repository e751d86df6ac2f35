//! Providers that require a context of the caller's per operation
//! (FI_CONTEXT or FI_CONTEXT2: psm2, psm3, opx). Debian's libfabric has
//! none of them, so every tool runs here with the test hook that makes
//! fabdiag lend contexts anyway, on tcp and shm, with two slots a side so
//! they run out and operations wait for them: a slot never given back
//! stalls the tool, which this test sees (that each completion carries
//! its own tag back is crates/fabric/tests/contexts.rs's to check: these
//! tools would not notice). Where the libfabric under
//! test has psm3 (`scripts/dev/support/psm3-check.sh` builds one and runs this with
//! it), every tool also runs on psm3 between two network namespaces;
//! elsewhere that part says loudly that it was skipped.

use crate::common::netns::*;
use crate::common::*;

const LEND_TWO: (&str, &str) = ("FABDIAG_TEST_OP_CONTEXTS", "2");

/// Each tool with the options that keep it short, checking data where the
/// tool can.
const TOOLS: [(&str, &[&str]); 8] = [
    ("write-bw", &["-n", "5", "-s", "8:65536", "--verify"]),
    ("read-bw", &["-n", "5", "-s", "8:65536", "--verify"]),
    ("send-bw", &["-n", "5", "-s", "8:65536", "--verify"]),
    ("atomic-bw", &["-n", "5"]),
    ("send-lat", &["-n", "20", "-s", "8:4096"]),
    ("write-lat", &["-n", "20", "-s", "8:4096"]),
    ("read-lat", &["-n", "20", "-s", "8:4096"]),
    ("atomic-lat", &["-n", "20"]),
];

/// A client's JSON: every size measured, every count as asked, every data
/// check passed.
fn check_results(tool: &str, prov: &str, c: &Output) {
    let j = c.json();
    let results = j["results"].as_array().expect("results");
    assert!(!results.is_empty(), "{tool} on {prov}: no results");
    for r in results {
        if let Some(ops) = r["ops"].as_u64() {
            assert!(
                ops > 0 && ops % r["iterations"].as_u64().unwrap_or(1) == 0,
                "{tool} on {prov}: {r}"
            );
        } else {
            assert_eq!(r["iterations"], 20, "{tool} on {prov}: {r}");
        }
        for v in r["verification"].as_array().map_or(&[][..], Vec::as_slice) {
            assert_eq!(v["ok"], true, "{tool} on {prov}: {v}");
        }
    }
}

#[test]
fn every_tool_runs_with_lent_contexts_on_the_providers_here() {
    let _cpu = cpu();
    for prov in ["tcp", "shm"] {
        for (tool, extra) in TOOLS {
            let mut client = vec!["-P", prov, "--json"];
            client.extend_from_slice(extra);
            let (c, s) = pair_env(tool, &[LEND_TWO], &["-P", prov, "--json"], &client);
            both_exit(&c, &s, 0, &format!("{tool} on {prov} with lent contexts"));
            check_results(tool, prov, &c);
        }
        let o = Proc::spawn(
            fabdiag(&[
                "gpu-loopback-bw",
                "-P",
                prov,
                "-n",
                "64",
                "-i",
                "3",
                "--verify",
                "--json",
            ])
            .envs([LEND_TWO]),
        )
        .wait(LIMIT);
        assert_eq!(o.code, Some(0), "gpu-loopback-bw on {prov}: {}", o.stderr);
        assert_eq!(o.json()["results"][0]["ops"], 3 * 64, "{}", o.stdout);
    }
}

#[test]
fn every_tool_runs_on_psm3_across_two_hosts() {
    let Some(psm3) = providers_here().iter().find(|p| p["provider"] == "psm3") else {
        skipped(
            "this libfabric has no psm3 provider (Debian's has none); scripts/dev/support/psm3-check.sh builds one \
             and runs this test against it",
        );
        return;
    };
    require_root();
    // psm3 needs a context per message (FI_CONTEXT): before fabdiag lent
    // them, doctor said it had no messaging
    assert_eq!(psm3["msg"], true, "{psm3}");
    let _cpu = cpu();
    let ns = Netns::new(9);
    for (k, (tool, extra)) in TOOLS.into_iter().enumerate() {
        let port = 49400 + k as u16;
        let p = port.to_string();
        let srv = Proc::spawn(&mut ns.cmd(&ns.a, &[tool, "-P", "psm3", "-p", &p, "--json"]));
        wait_listen_in_ns(srv.pid(), port);
        let mut args = vec![tool, "198.18.9.1", "-P", "psm3", "-p", p.as_str(), "--json"];
        args.extend_from_slice(extra);
        let c = Proc::spawn(&mut ns.cmd(&ns.b, &args)).wait(LIMIT);
        let s = srv.wait(LIMIT);
        both_exit(&c, &s, 0, &format!("{tool} on psm3"));
        check_results(tool, "psm3", &c);
        // psm3 picks the namespace's veth, the one interface it has
        assert!(
            c.json()["config"]["device"]
                .as_str()
                .is_some_and(|d| d.starts_with("vb")),
            "{}",
            c.stdout
        );
    }
}
