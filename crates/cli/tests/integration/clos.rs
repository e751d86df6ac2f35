//! A Clos of network namespaces (scripts/dev/lib/netns-clos.sh): 2 spines
//! and 4 leaves as real routers, 2 hosts a leaf, ECMP between the leaves
//! hashed on the TCP ports, every switch port shaped to 200 Mbit/s, lldpd
//! in every namespace. One fixed placement of a fault a kind, each by
//! scripts/dev/demos/clos-fault.sh, and a sweep across it with the map:
//! what is asserted is which element is named first, which the fault
//! decides whatever the machine's load (a slowed element runs at a tenth
//! of the fabric's rate; a leaf dropping frames makes every pair through
//! it resend hundreds of packets, the others a few). The campaign of
//! random placements is scripts/dev/demos/clos-campaign.sh. Needs root,
//! iproute2, nftables and lldpd (CI has them); without them it fails.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// clos-fault.sh KIND WHERE... -- --json EXTRA...: rank 0's document.
fn clos_fault(kind: &str, place: &[&str], extra: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/dev/demos/clos-fault.sh");
    let mut c = Command::new("bash");
    c.arg(script).arg(kind).args(place).arg("--").arg("--json").args(extra);
    c.env("FABDIAG_BIN", bin());
    let o = Proc::spawn(&mut c).wait(LIMIT * 4);
    // (a pair through a leaf dropping frames may fail outright: exit 2)
    assert!(
        matches!(o.code, Some(0) | Some(2) | Some(5)),
        "{kind}: exit {:?}: {}",
        o.code,
        o.stderr
    );
    o.json()
}

fn first_blamed(doc: &Value) -> Vec<String> {
    doc["fabric"]["blamed"][0]["elements"]
        .as_array()
        .map(|e| e.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn a_clos_of_namespaces_names_the_faulty_element() {
    require_root();
    let _cpu = cpu();
    let host = clos_fault("host", &["5"], &[]);
    assert_eq!(first_blamed(&host), ["node5"], "{}", host["fabric"]);
    assert_eq!(
        host["fabric"]["blamed"][0]["retest"]["verdict"], "confirmed",
        "{}",
        host["fabric"]
    );
    let drop = clos_fault("drop", &["3", "5"], &[]);
    assert_eq!(first_blamed(&drop), ["leaf3"], "{}", drop["fabric"]);
    assert!(
        drop["fabric"]["blamed"][0]["lossy"].as_u64() >= Some(3),
        "{}",
        drop["fabric"]
    );
    let uplink = clos_fault("uplink", &["2", "1"], &[]);
    assert_eq!(
        first_blamed(&uplink),
        ["leaf2-spine1", "leaf2-spine2"],
        "{}",
        uplink["fabric"]
    );
    // the map's ports, as clos_map writes them
    assert_eq!(
        uplink["fabric"]["map"]["cables"][2]["ends"][0],
        serde_json::json!(["leaf2:s1", "spine1:l2"])
    );
}
