//! Placing host memory on a NUMA node: the calling thread's memory policy
//! is set to prefer the node while an allocation is made and first
//! touched, then restored. The GPU's node comes from sysfs. Never prints.

use crate::error::GpuError;

const MPOL_DEFAULT: libc::c_int = 0;
const MPOL_PREFERRED: libc::c_int = 1;

/// The NUMA node of the PCI device `bus_id` ("00000000:19:00.0"), if the
/// kernel knows one.
pub fn node_of(bus_id: &str) -> Option<u32> {
    // sysfs names devices with a 4-digit domain, lower case
    let id = bus_id.to_ascii_lowercase();
    let short = match id.split_once(':') {
        Some((dom, rest)) if dom.len() > 4 => format!("{}:{rest}", &dom[dom.len() - 4..]),
        _ => id,
    };
    let s = std::fs::read_to_string(format!("/sys/bus/pci/devices/{short}/numa_node")).ok()?;
    s.trim().parse::<i64>().ok().filter(|n| *n >= 0).map(|n| n as u32)
}

/// While alive, this thread's allocations prefer one node.
pub struct Preferred(());

impl Preferred {
    pub fn set(node: u32) -> Result<Preferred, GpuError> {
        if node >= 1024 {
            return Err(GpuError::Bounds(format!("NUMA node {node}")));
        }
        let mut mask = [0u64; 16];
        mask[(node / 64) as usize] = 1u64 << (node % 64);
        // SAFETY: set_mempolicy reads `maxnode` bits from the mask, which
        // holds 1024; it changes only this thread's policy.
        let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_PREFERRED, mask.as_ptr(), 1024u64) };
        if rc != 0 {
            return Err(GpuError::Bounds(format!(
                "cannot prefer NUMA node {node}: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Preferred(()))
    }
}

impl Drop for Preferred {
    fn drop(&mut self) {
        // SAFETY: MPOL_DEFAULT takes no mask; restores the thread's policy.
        let _ = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_DEFAULT, std::ptr::null::<u64>(), 0u64) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preference_is_set_and_undone() {
        // node 0 exists on every Linux machine
        let p = Preferred::set(0).expect("set_mempolicy on node 0");
        let v = vec![1u8; 1 << 20];
        assert_eq!(v.iter().map(|&x| x as u64).sum::<u64>(), 1 << 20);
        drop(p);
        assert!(Preferred::set(5000).is_err());
        assert_eq!(node_of("ffff:ff:1f.7"), None);
    }
}
