//! Provider and domain discovery through fi_getinfo. Turns "nothing matched"
//! into the specific reason (unknown provider, missing capability, unknown
//! domain) before any endpoint is opened.

use crate::{consts, ffi, load, FabricError};
use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::ptr;
use std::sync::OnceLock;

/// What a test needs from a provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// One-sided writes into the peer's memory.
    RmaWrite,
    /// One-sided reads from the peer's memory.
    RmaRead,
    /// Two-sided messages.
    Msg,
    /// Remote atomic operations.
    Atomic,
    /// RMA writes to and from device (GPU) memory.
    RmaWriteHmem,
    /// RMA reads to and from device memory.
    RmaReadHmem,
    /// Messages to and from device memory.
    MsgHmem,
}

impl Capability {
    fn bits(self) -> u64 {
        match self {
            Capability::RmaWrite => consts::rma() | consts::write() | consts::remote_write(),
            Capability::RmaRead => consts::rma() | consts::read() | consts::remote_read(),
            Capability::Msg => consts::msg() | consts::send() | consts::recv(),
            Capability::Atomic => {
                consts::atomic() | consts::read() | consts::write() | consts::remote_read() | consts::remote_write()
            }
            Capability::RmaWriteHmem => Capability::RmaWrite.bits() | consts::hmem(),
            Capability::RmaReadHmem => Capability::RmaRead.bits() | consts::hmem(),
            Capability::MsgHmem => Capability::Msg.bits() | consts::hmem(),
        }
    }

    /// The same with device memory (FI_HMEM), where libfabric has it.
    pub fn with_device_memory(self) -> Capability {
        match self {
            Capability::RmaWrite => Capability::RmaWriteHmem,
            Capability::RmaRead => Capability::RmaReadHmem,
            Capability::Msg => Capability::MsgHmem,
            other => other,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Capability::RmaWrite => "RMA write (FI_RMA|FI_WRITE|FI_REMOTE_WRITE)",
            Capability::RmaRead => "RMA read (FI_RMA|FI_READ|FI_REMOTE_READ)",
            Capability::Msg => "messaging (FI_MSG|FI_SEND|FI_RECV)",
            Capability::Atomic => "atomics (FI_ATOMIC)",
            Capability::RmaWriteHmem => "RMA write with device memory (FI_HMEM)",
            Capability::RmaReadHmem => "RMA read with device memory (FI_HMEM)",
            Capability::MsgHmem => "messaging with device memory (FI_HMEM)",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Provider name as the user typed it; "tcp" also matches "tcp;ofi_rxm".
    pub provider: Option<String>,
    pub domain: Option<String>,
    pub capability: Option<Capability>,
}

/// Scalars of one fi_info entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderInfo {
    pub provider: String,
    pub fabric: String,
    pub domain: String,
    pub inject_size: u64,
    pub tx_size: u64,
    pub rx_size: u64,
    pub max_msg_size: u64,
    pub manual_progress: bool,
    pub delivery_complete: bool,
    pub(crate) mr_mode: u64,
    pub(crate) mr_key_size: u64,
    /// Addresses are NUL-terminated strings (FI_ADDR_STR, e.g. shm), whose
    /// length varies between endpoints (shm's name holds the process id).
    pub(crate) string_address: bool,
    /// Every operation that completes must carry a struct fi_context the
    /// provider may write into (FI_CONTEXT or FI_CONTEXT2: psm2, psm3, opx).
    pub(crate) needs_context: bool,
    /// The NIC behind the entry (fi_nic), where the provider fills it in.
    pub nic: Option<Nic>,
}

/// A port's state as fi_nic(3) gives it (`enum fi_link_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Unknown or not applicable.
    Unknown,
    Down,
    Up,
}

/// The link attributes of fi_nic(3). Zero is "not given" for the numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicLink {
    pub state: LinkState,
    /// The active data rate, bits per second.
    pub speed_bps: u64,
    pub mtu: u64,
    /// "InfiniBand", "Ethernet" (verbs); empty when not given.
    pub network_type: String,
    pub address: String,
}

/// The NIC behind a libfabric entry (fi_nic(3)): verbs, efa and cxi fill it
/// in; libfabric 1.17's tcp, udp and shm do not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nic {
    /// The device's name ("mlx5_0", "cxi0"); empty when not given.
    pub device: String,
    pub driver: String,
    /// "0000:3b:00.0", when the NIC is on PCI.
    pub pci: Option<String>,
    pub link: Option<NicLink>,
}

/// An owned fi_info list; entries are opened by index.
pub struct InfoList {
    head: *mut ffi::FiInfo,
    entries: Vec<(*mut ffi::FiInfo, ProviderInfo)>,
}

impl Drop for InfoList {
    fn drop(&mut self) {
        if !self.head.is_null() {
            // SAFETY: head came from fi_getinfo and is freed exactly once.
            unsafe { ffi::fdg_freeinfo(self.head) };
        }
    }
}

impl InfoList {
    pub fn entries(&self) -> impl Iterator<Item = &ProviderInfo> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&ProviderInfo> {
        self.entries.get(i).map(|(_, v)| v)
    }

    pub(crate) fn raw(&self, i: usize) -> Option<*mut ffi::FiInfo> {
        self.entries.get(i).map(|(p, _)| *p)
    }
}

fn cstr(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: libfabric strings in fi_info are NUL-terminated and live as
        // long as the list, which outlives this call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The fi_nic of one entry.
fn nic_of(entry: *const ffi::FiInfo) -> Option<Nic> {
    let mut v = std::mem::MaybeUninit::<ffi::NicView>::uninit();
    // SAFETY: entry is a valid entry of a live list; fdg_nic_view fully
    // initialises the view (memset, then field copies) whatever it returns.
    let (present, v) = unsafe {
        let present = ffi::fdg_nic_view(entry, v.as_mut_ptr());
        (present, v.assume_init())
    };
    if present == 0 {
        return None;
    }
    let state = match v.link_state {
        1 => LinkState::Down,
        2 => LinkState::Up,
        _ => LinkState::Unknown,
    };
    Some(Nic {
        device: cstr(v.name),
        driver: cstr(v.driver),
        pci: (v.has_pci != 0).then(|| {
            format!(
                "{:04x}:{:02x}:{:02x}.{:x}",
                v.pci_domain, v.pci_bus, v.pci_device, v.pci_function
            )
        }),
        link: (v.has_link != 0).then(|| NicLink {
            state,
            speed_bps: v.link_speed,
            mtu: v.link_mtu,
            network_type: cstr(v.network_type),
            address: cstr(v.link_address),
        }),
    })
}

fn getinfo(caps: u64, op_flags: u64, prov: Option<&str>) -> Result<InfoList, FabricError> {
    let prov_c = prov.map(|p| CString::new(p).unwrap_or_default());
    let hints = ffi::Hints {
        caps,
        tx_op_flags: op_flags,
        prov_name: prov_c.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
        domain_name: ptr::null(),
    };
    let mut head: *mut ffi::FiInfo = ptr::null_mut();
    // SAFETY: hints points to a live struct whose strings outlive the call;
    // head receives a list we own (freed in InfoList::drop).
    let rc = unsafe { ffi::fdg_getinfo(&hints, &mut head) };
    if rc != 0 {
        if -rc == consts::enodata() {
            return Ok(InfoList {
                head: ptr::null_mut(),
                entries: Vec::new(),
            });
        }
        return Err(FabricError::call("fi_getinfo", rc));
    }
    let mut entries = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        let mut v = std::mem::MaybeUninit::<ffi::InfoView>::uninit();
        // SAFETY: cur is a valid entry of the list; fdg_info_view fully
        // initialises the view (memset + field copies).
        let v = unsafe {
            ffi::fdg_info_view(cur, v.as_mut_ptr());
            v.assume_init()
        };
        entries.push((
            cur,
            ProviderInfo {
                provider: cstr(v.prov_name),
                fabric: cstr(v.fabric_name),
                domain: cstr(v.domain_name),
                inject_size: v.inject_size,
                tx_size: v.tx_size,
                rx_size: v.rx_size,
                max_msg_size: v.max_msg_size,
                manual_progress: v.data_progress == 2,
                delivery_complete: op_flags & consts::delivery_complete() != 0,
                mr_mode: v.mr_mode,
                mr_key_size: v.mr_key_size,
                string_address: v.addr_format == consts::addr_str(),
                needs_context: v.needs_context != 0,
                nic: nic_of(cur),
            },
        ));
        // SAFETY: cur is valid; next is either null or the next entry.
        cur = unsafe { ffi::fdg_info_next(cur) };
    }
    Ok(InfoList { head, entries })
}

/// "tcp" matches "tcp;ofi_rxm" (the core provider under a utility layer),
/// matching fi_getinfo's own prov_name rule, case-insensitively. (Above
/// this crate, fabdiag-model's `Provider` keeps the same rule.)
fn provider_matches(wanted: &str, actual: &str) -> bool {
    actual.eq_ignore_ascii_case(wanted) || has_part(actual, wanted)
}

/// Whether the provider `name` (`tcp;ofi_rxm`) has `part` as its core or
/// one of its layers, ignoring ASCII case.
pub(crate) fn has_part(name: &str, part: &str) -> bool {
    name.split(';').any(|p| p.eq_ignore_ascii_case(part))
}

/// Names of every RDM provider present, for error messages and `--list`.
/// Asked of libfabric once per process: a full fi_getinfo costs tens of
/// milliseconds, and the set does not change while a process runs.
pub fn provider_names() -> Result<Vec<String>, FabricError> {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    if let Some(n) = NAMES.get() {
        return Ok(n.clone());
    }
    load()?;
    let all = getinfo(0, 0, None)?;
    let set: BTreeSet<String> = all.entries().map(|e| e.provider.clone()).collect();
    Ok(NAMES.get_or_init(|| set.into_iter().collect()).clone())
}

/// Lists the endpoints matching `q`, or says precisely why there are none.
/// For RMA writes, delivery-complete semantics are asked for first (so a
/// completion means the data reached the target, as the originals' ACK
/// counting does) and dropped only for providers that cannot offer them.
pub fn discover(q: &Query) -> Result<InfoList, FabricError> {
    load()?;
    let available = provider_names()?;
    let mut available_s = if available.is_empty() {
        "none".to_string()
    } else {
        available.join(", ")
    };
    // libfabric hides every provider FI_PROVIDER does not name, so "not on
    // this machine" may only mean "filtered out": say so where it applies
    if let Some(filter) = std::env::var("FI_PROVIDER").ok().filter(|v| !v.is_empty()) {
        available_s.push_str(&format!(", with FI_PROVIDER={filter} set"));
    }
    if let Some(p) = &q.provider {
        if !available.iter().any(|a| provider_matches(p, a)) {
            return Err(FabricError::UnknownProvider {
                name: p.clone(),
                available: available_s,
            });
        }
    }
    let caps = q.capability.map_or(0, Capability::bits);
    // Only writes need it: a read completes when its data has landed here,
    // and send_bw confirms each batch with the receiver's response. (The
    // shm provider of libfabric 1.17 never completes delivery-complete
    // sends, so asking for it everywhere would break send_bw there.)
    let dc = if matches!(q.capability, Some(Capability::RmaWrite | Capability::RmaWriteHmem)) {
        consts::delivery_complete()
    } else {
        0
    };
    let mut list = getinfo(caps, dc, q.provider.as_deref())?;
    if list.is_empty() {
        list = getinfo(caps, 0, q.provider.as_deref())?;
    }
    // fi_getinfo's prov_name hint is exact for some versions; filter
    // ourselves, preferring an exact name ("net") over providers layered on
    // that core ("net;ofi_rxm").
    if let Some(p) = &q.provider {
        let exact = list.entries.iter().any(|(_, e)| e.provider.eq_ignore_ascii_case(p));
        list.entries.retain(|(_, e)| {
            if exact {
                e.provider.eq_ignore_ascii_case(p)
            } else {
                provider_matches(p, &e.provider)
            }
        });
    }
    if list.is_empty() {
        let needed = q.capability.map_or("an RDM endpoint", Capability::describe).to_string();
        return Err(match &q.provider {
            Some(p) => FabricError::MissingCapability {
                provider: p.clone(),
                needed,
            },
            None => FabricError::NoCapableProvider {
                needed,
                available: available_s,
            },
        });
    }
    if let Some(d) = &q.domain {
        let domains: BTreeSet<String> = list.entries().map(|e| e.domain.clone()).collect();
        list.entries.retain(|(_, e)| &e.domain == d);
        if list.is_empty() {
            return Err(FabricError::UnknownDomain {
                provider: q.provider.clone().unwrap_or_else(|| "any".into()),
                domain: d.clone(),
                available: domains.into_iter().collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::provider_matches;

    #[test]
    fn layered_provider_names_match_their_core() {
        assert!(provider_matches("tcp", "tcp;ofi_rxm"));
        assert!(provider_matches("TCP", "tcp"));
        assert!(provider_matches("tcp;ofi_rxm", "tcp;ofi_rxm"));
        assert!(!provider_matches("tc", "tcp;ofi_rxm"));
        assert!(!provider_matches("shm", "tcp;ofi_rxm"));
    }
}
