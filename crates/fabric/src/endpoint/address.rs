//! Addresses: this endpoint's own (to send to the peer), a printable
//! form, and a peer's inserted into the address vector after its bytes,
//! which come from the network, are checked against what the provider
//! will read.

use super::{check, Endpoint};
use crate::{ffi, FabricError};
use std::ffi::CStr;
use std::os::raw::c_char;

/// Index of a peer inserted in this endpoint's address vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerId(pub(super) u64);

impl PeerId {
    /// A peer by its address-vector index (`insert_peer` returns real
    /// ones; stand-in endpoints in tests take any).
    pub fn from_index(index: u64) -> PeerId {
        PeerId(index)
    }
}

impl Endpoint {
    /// This endpoint's raw address, to send to the peer.
    pub fn name(&self) -> Result<Vec<u8>, FabricError> {
        let mut buf = vec![0u8; 256];
        let mut len = buf.len();
        // SAFETY: ep is live; buf has `len` writable bytes.
        let rc = unsafe { ffi::fdg_getname(self.ep, buf.as_mut_ptr().cast(), &mut len) };
        if rc != 0 && len > buf.len() {
            buf.resize(len, 0);
            // SAFETY: as above with the size the provider asked for.
            check("fi_getname", unsafe {
                ffi::fdg_getname(self.ep, buf.as_mut_ptr().cast(), &mut len)
            })?;
        } else {
            check("fi_getname", rc)?;
        }
        buf.truncate(len);
        Ok(buf)
    }

    /// A printable form of a raw address (fi_av_straddr).
    pub fn address_string(&self, raw: &[u8]) -> String {
        let mut out = vec![0 as c_char; 256];
        let mut len = out.len();
        // SAFETY: av is live; raw is a provider address we got from
        // fi_getname (ours or the peer's); out has len writable bytes and the
        // shim NUL-terminates within it.
        unsafe { ffi::fdg_av_straddr(self.av, raw.as_ptr().cast(), out.as_mut_ptr(), &mut len) };
        if let Some(last) = out.last_mut() {
            *last = 0;
        }
        // SAFETY: out is NUL-terminated (forced above).
        unsafe { CStr::from_ptr(out.as_ptr()) }.to_string_lossy().into_owned()
    }

    /// Adds a peer's raw address. The bytes come from the network, so they
    /// are checked first against what the provider will read from them.
    pub fn insert_peer(&mut self, raw: &[u8]) -> Result<PeerId, FabricError> {
        let own = self.name()?;
        check_peer_address(raw, own.len(), self.string_address, &self.provider)?;
        let scoped = (!self.string_address)
            .then(|| link_local_on_own_link(raw, &own))
            .flatten();
        let raw = scoped.as_deref().unwrap_or(raw);
        let mut a = 0u64;
        // SAFETY: av is live; raw holds at least one address of this
        // provider's format: as many bytes as ours, or for string addresses
        // a NUL terminator within the slice (checked above), so the provider
        // reads nothing past it.
        check("fi_av_insert", unsafe {
            ffi::fdg_av_insert(self.av, raw.as_ptr().cast(), &mut a)
        })?;
        Ok(PeerId(a))
    }
}

/// A peer's link-local IPv6 socket address, made reachable from here.
/// Its interface (scope id) is the peer's own interface number, which
/// means nothing on this host (connect fails with EINVAL); a link-local
/// peer is reachable only on the link this endpoint is bound to, so it
/// takes our own address's scope. None when either is not a link-local
/// sockaddr_in6, or ours has no scope: the peer's bytes are used as sent.
fn link_local_on_own_link(peer: &[u8], own: &[u8]) -> Option<Vec<u8>> {
    // struct sockaddr_in6: family (2, native order), port (2), flowinfo
    // (4), address (16), scope id (4)
    const ADDR: std::ops::Range<usize> = 8..24;
    const SCOPE: std::ops::Range<usize> = 24..28;
    let link_local_in6 = |a: &[u8]| {
        a.len() >= SCOPE.end
            && u16::from_ne_bytes([a[0], a[1]]) == libc::AF_INET6 as u16
            && <[u8; 16]>::try_from(&a[ADDR]).is_ok_and(|ip| std::net::Ipv6Addr::from(ip).is_unicast_link_local())
    };
    if !link_local_in6(peer) || !link_local_in6(own) || own[SCOPE].iter().all(|&b| b == 0) {
        return None;
    }
    let mut fixed = peer.to_vec();
    fixed[SCOPE].copy_from_slice(&own[SCOPE]);
    Some(fixed)
}

/// What a provider reads from a peer's address. Fixed-size formats (sockaddr,
/// cxi) read as many bytes as our own address has. String addresses
/// (FI_ADDR_STR: shm) are read up to their NUL, and their length differs
/// between endpoints: shm's holds the process id, so a 4-digit and a 5-digit
/// pid give 18 and 19 bytes. Equal lengths would refuse a real peer there.
fn check_peer_address(raw: &[u8], own_len: usize, string_address: bool, provider: &str) -> Result<(), FabricError> {
    if string_address {
        return match raw.iter().position(|&b| b == 0) {
            Some(0) => Err(FabricError::Bounds(format!(
                "peer fabric address for provider {provider} is empty"
            ))),
            Some(_) => Ok(()),
            None => Err(FabricError::Bounds(format!(
                "peer fabric address for provider {provider} is not a terminated string ({} bytes)",
                raw.len()
            ))),
        };
    }
    if raw.len() < own_len {
        return Err(FabricError::Bounds(format!(
            "peer fabric address is {} bytes, provider {provider} needs {own_len}",
            raw.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::link_local_on_own_link;

    /// A sockaddr_in6 as a provider's fi_getname gives it.
    fn in6(addr: [u16; 8], scope: u32) -> Vec<u8> {
        let mut a = Vec::new();
        a.extend_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        a.extend_from_slice(&4000u16.to_be_bytes());
        a.extend_from_slice(&[0; 4]);
        addr.iter().for_each(|s| a.extend_from_slice(&s.to_be_bytes()));
        a.extend_from_slice(&scope.to_ne_bytes());
        a
    }

    #[test]
    fn a_link_local_peer_takes_our_interface_and_nothing_else_changes() {
        let (peer, own) = (
            in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 2], 7),
            in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 1], 3),
        );
        assert_eq!(
            link_local_on_own_link(&peer, &own),
            Some(in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 2], 3))
        );
        // a routed peer, a peer seen through a routed address of ours, an
        // IPv4 peer, and ours without an interface: the peer's bytes stand
        let global = in6([0xfd00, 0, 0, 0, 0, 0, 0, 2], 0);
        assert_eq!(link_local_on_own_link(&global, &own), None);
        assert_eq!(link_local_on_own_link(&peer, &global), None);
        assert_eq!(
            link_local_on_own_link(&peer, &in6([0xfe80, 0, 0, 0, 0, 0, 0xa, 1], 0)),
            None
        );
        let mut v4 = vec![0u8; 16];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        assert_eq!(link_local_on_own_link(&v4, &own), None);
        assert_eq!(link_local_on_own_link(&peer[..20], &own), None, "too short to be one");
    }
}
