//! --use-hp: too few free huge pages is refused with the originals'
//! message; with pages reserved the run uses them. Reserving pages needs
//! root (CI has it); the test restores the kernel's setting afterwards.

use crate::common::*;
use std::time::Duration;

const NR: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
const FREE: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";

fn read(p: &str) -> u64 {
    std::fs::read_to_string(p).unwrap().trim().parse().unwrap()
}

struct Restore(u64);
impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(NR, self.0.to_string());
    }
}

#[test]
fn hugepages_refused_when_short_and_used_when_reserved() {
    let _cpu = cpu();
    let before = read(NR);
    let _restore = Restore(before);
    // 16 MiB buffers on each side of --local: 8 pages each
    std::fs::write(NR, (before.saturating_sub(read(FREE))).to_string()).expect("write nr_hugepages (needs root)");
    let o = run(
        &["write-bw", "--local", "--use-hp", "2M", "-n", "5"],
        Duration::from_secs(30),
    );
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(
        o.stderr.contains("Insufficient 2M huge pages. Need 8 to run"),
        "{}",
        o.stderr
    );

    std::fs::write(NR, (before + 16).to_string()).unwrap();
    if read(FREE) < 16 {
        skipped(format!(
            "its second half: the kernel granted only {} free 2M pages",
            read(FREE)
        ));
        return;
    }
    let o = run(
        &["write-bw", "--local", "--use-hp", "2m", "-n", "5"],
        Duration::from_secs(30),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.contains("Hugepages        : Enabled (2M - 8 pages)\n"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("Max RDMA Buf     : 4294967296 (16777216 used)\n"));
}
