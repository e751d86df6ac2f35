//! The topology reader against fixture trees laid out as the kernel lays
//! them out (fabdiag_testkit::sysfs), class by class against what
//! `nvidia-smi topo -m` prints for such machines.

use fabdiag_health::topology::{acs_from_config, matrix_text, placement, Acs, Connection, Tree};
use fabdiag_testkit::sysfs;

fn labels(root: &std::path::Path) -> Vec<Vec<&'static str>> {
    placement(&Tree::read(root))
        .gpus
        .iter()
        .map(|g| g.to_nics.iter().map(|c| c.label()).collect())
        .collect()
}

#[test]
fn dgx_h100_like_tree_classes_as_nvidia_smi() {
    let d = tempfile::tempdir().unwrap();
    let expected = sysfs::dgx_h100(d.path());
    assert_eq!(labels(d.path()), expected);
    let p = placement(&Tree::read(d.path()));
    assert_eq!(p.gpus.len(), 8);
    // each GPU's nearest NIC is its own switch's, by the name mlx5_N
    for (i, g) in p.gpus.iter().enumerate() {
        assert_eq!(g.nearest, Some((format!("mlx5_{i}"), Connection::Pix)), "{g:?}");
        assert_eq!(g.numa_node, Some(if i < 4 { 0 } else { 1 }));
    }
    assert!(p.downtrained.is_empty(), "{:?}", p.downtrained);
    let text = matrix_text(&p);
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row,
        [
            "GPU0",
            "PIX",
            "NODE",
            "NODE",
            "NODE",
            "SYS",
            "SYS",
            "SYS",
            "SYS",
            "0-55,112-167",
            "0",
            "mlx5_0",
            "(PIX)"
        ]
    );
    assert!(text.contains("NIC7: mlx5_7 (0000:ce:00.0)"), "{text}");
}

#[test]
fn gpu_across_sockets_from_its_only_nic() {
    let d = tempfile::tempdir().unwrap();
    let expected = sysfs::two_socket(d.path());
    assert_eq!(labels(d.path()), expected);
    let p = placement(&Tree::read(d.path()));
    assert_eq!(p.gpus[0].nearest, Some(("mlx5_0".into(), Connection::Sys)));
}

#[test]
fn switches_host_bridge_downtrained_links_and_acs() {
    let d = tempfile::tempdir().unwrap();
    let expected = sysfs::switches_downtrained(d.path());
    assert_eq!(labels(d.path()), expected);
    let p = placement(&Tree::read(d.path()));
    let g = &p.gpus[0];
    assert_eq!(g.nearest, Some(("mlx5_0".into(), Connection::Pxb)));
    // the redirecting downstream port is on the GPU's path to mlx5_0
    assert_eq!(g.acs_redirect, vec!["0000:02:00.0".to_string()]);
    let mut down: Vec<(String, bool)> = p.downtrained.iter().map(|t| (t.address.clone(), t.narrow)).collect();
    down.sort();
    assert_eq!(
        down,
        vec![("0000:05:00.0".to_string(), true), ("0000:06:00.0".to_string(), false)]
    );
    assert_eq!(
        p.downtrained.iter().find(|t| t.narrow).map(|t| t.describe()),
        Some("x8 at 16 GT/s, capable of x16 at 16 GT/s".to_string())
    );
}

#[test]
fn no_sysfs_is_an_empty_tree_and_short_config_is_not_visible() {
    let d = tempfile::tempdir().unwrap();
    assert!(Tree::read(d.path()).devices.is_empty());
    assert_eq!(acs_from_config(&[0u8; 256]), Acs::NotVisible);
    // a capability list that points at itself ends
    let mut c = vec![0u8; 4096];
    c[0x100..0x104].copy_from_slice(&(0x0001u32 | (0x100 << 20)).to_le_bytes());
    assert_eq!(acs_from_config(&c), Acs::NoRedirect);
}

#[test]
fn the_h100_machine_as_read_there() {
    let d = tempfile::tempdir().unwrap();
    let expected = sysfs::h100_vm(d.path());
    assert_eq!(labels(d.path()), expected);
    let p = placement(&Tree::read(d.path()));
    assert_eq!(p.gpus.len(), 1);
    assert_eq!(p.gpus[0].gpu, "0000:00:06.0");
    assert_eq!(p.gpus[0].nearest, Some(("eth0".into(), Connection::Phb)));
    assert!(p.downtrained.is_empty(), "{:?}", p.downtrained);
    // the row as fabdiag health --topology printed it on that machine
    let text = matrix_text(&p);
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row, ["GPU0", "PHB", "0-15", "N/A", "eth0", "(PHB)"]);
}
