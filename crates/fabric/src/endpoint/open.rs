//! Opening an endpoint: the fabric, domain, completion queue, address
//! vector and endpoint, in that order, each owned by its handle as soon as
//! it exists (so a failure part-way closes what was opened), then every
//! buffer registered (host memory with fi_mr_reg, device memory through
//! FI_HMEM).

use super::{check, prepared, Endpoint, Handle, HotConsts, Region};
use crate::contexts::LentContexts;
use crate::discovery::{InfoList, ProviderInfo};
use crate::held_calls::CallCount;
use crate::{consts, ffi, FabricError, Memory};
use std::os::raw::c_void;
use std::ptr;

impl Endpoint {
    /// Opens entry `index` of `list` and registers `buffers` with it
    /// (device memory through FI_HMEM).
    pub fn open(list: &InfoList, index: usize, buffers: Vec<Memory>) -> Result<Self, FabricError> {
        Self::open_with(list, index, buffers, None)
    }

    /// `open`, lending every operation that completes a context of
    /// fabdiag's own, as a provider with FI_CONTEXT requires, whether or
    /// not this one asks: `slots` of them (0: as many as the provider's
    /// queues). How machines without such a provider test that path.
    pub fn open_lending_contexts(
        list: &InfoList,
        index: usize,
        buffers: Vec<Memory>,
        slots: usize,
    ) -> Result<Self, FabricError> {
        Self::open_with(list, index, buffers, Some(slots))
    }

    fn open_with(
        list: &InfoList,
        index: usize,
        buffers: Vec<Memory>,
        lend: Option<usize>,
    ) -> Result<Self, FabricError> {
        let info = list
            .raw(index)
            .ok_or_else(|| FabricError::Bounds(format!("no provider entry {index}")))?;
        let pi = list
            .get(index)
            .cloned()
            .ok_or_else(|| FabricError::Bounds(format!("no provider entry {index}")))?;
        if pi.mr_key_size > 8 {
            return Err(FabricError::Unsupported {
                provider: pi.provider.clone(),
                what: format!("{}-byte raw memory keys", pi.mr_key_size),
            });
        }
        let mut e = Endpoint::unopened(&pi, lend);
        e.open_handles(info)?;
        e.register(buffers)?;
        Ok(e)
    }

    /// An endpoint for provider entry `pi` with nothing opened yet: every
    /// handle null, so whatever is opened from here is closed on drop.
    fn unopened(pi: &ProviderInfo, lend: Option<usize>) -> Endpoint {
        Endpoint {
            ep: ptr::null_mut(),
            cq: ptr::null_mut(),
            av: ptr::null_mut(),
            domain: ptr::null_mut(),
            regions: Vec::new(),
            serial: prepared::next_serial(),
            ep_h: Handle(ptr::null_mut()),
            av_h: Handle(ptr::null_mut()),
            cq_h: Handle(ptr::null_mut()),
            domain_h: Handle(ptr::null_mut()),
            fabric_h: Handle(ptr::null_mut()),
            virt_addr: pi.mr_mode & consts::mr_virt_addr() != 0,
            mr_endpoint: pi.mr_mode & consts::mr_endpoint() != 0,
            provider: pi.provider.clone(),
            domain_name: pi.domain.clone(),
            inject_size: pi.inject_size,
            tx_size: pi.tx_size.max(1),
            rx_size: pi.rx_size.max(1),
            delivery_complete: pi.delivery_complete,
            string_address: pi.string_address,
            selective: false,
            contexts: match lend {
                Some(n) if n > 0 => Some(LentContexts::new(n, n)),
                _ if pi.needs_context || lend.is_some() => {
                    Some(LentContexts::new(context_slots(pi.tx_size), context_slots(pi.rx_size)))
                }
                _ => None,
            },
            scratch: vec![ffi::RawCompletion::default(); 64],
            calls: CallCount::new(&pi.provider),
            leak: false,
            hot: HotConsts::read(),
            yield_empty: false,
        }
    }

    /// Opens the fabric, domain, CQ, AV and endpoint of `info` in turn,
    /// each owned by its handle as soon as it exists.
    fn open_handles(&mut self, info: *mut ffi::FiInfo) -> Result<(), FabricError> {
        let mut fabric = ptr::null_mut();
        // SAFETY: info is a live entry of the caller's list; fabric receives a new
        // object which self.fabric_h owns from here on (closed on any error).
        check("fi_fabric", unsafe { ffi::fdg_fabric(info, &mut fabric) })?;
        // SAFETY: fabric was just opened successfully.
        self.fabric_h = Handle(unsafe { ffi::fdg_fabric_fid(fabric) });
        // SAFETY: fabric and info are live; the domain is owned by domain_h.
        check("fi_domain", unsafe { ffi::fdg_domain(fabric, info, &mut self.domain) })?;
        // SAFETY: the domain was just opened.
        self.domain_h = Handle(unsafe { ffi::fdg_domain_fid(self.domain) });
        // (psm3 gives both as u64::MAX: no limit of its own)
        let cq_size = self.tx_size.saturating_add(self.rx_size).min(1 << 20) as usize;
        // SAFETY: domain is live; the CQ is owned by cq_h.
        check("fi_cq_open", unsafe {
            ffi::fdg_cq_open(self.domain, cq_size, &mut self.cq)
        })?;
        // SAFETY: the CQ was just opened.
        self.cq_h = Handle(unsafe { ffi::fdg_cq_fid(self.cq) });
        // SAFETY: domain is live; the AV is owned by av_h.
        check("fi_av_open", unsafe { ffi::fdg_av_open(self.domain, &mut self.av) })?;
        // SAFETY: the AV was just opened.
        self.av_h = Handle(unsafe { ffi::fdg_av_fid(self.av) });
        let mut selective = 0;
        // SAFETY: domain, info, cq and av are live; selective is a local the
        // shim writes; on failure the shim closes the half-made endpoint
        // itself and leaves ep null.
        check("fi_endpoint", unsafe {
            ffi::fdg_endpoint(self.domain, info, self.cq, self.av, &mut self.ep, &mut selective)
        })?;
        self.selective = selective != 0;
        // SAFETY: the endpoint was just opened and enabled.
        self.ep_h = Handle(unsafe { ffi::fdg_ep_fid(self.ep) });
        Ok(())
    }

    /// Registers `buffers` in order (region i is buffer i): host memory
    /// with fi_mr_reg, device memory through FI_HMEM.
    fn register(&mut self, buffers: Vec<Memory>) -> Result<(), FabricError> {
        // host bytes registered, this buffer's included, for a
        // registration that fails at the locked-memory limit
        let mut pinned = 0u64;
        for (i, buf) in buffers.into_iter().enumerate() {
            let mut mr = ptr::null_mut();
            let mut desc = ptr::null_mut();
            let mut key = 0u64;
            let (call, rc) = match &buf {
                // SAFETY: buf is a live mapping of buf.len() bytes that this
                // Endpoint keeps until after the MR is closed (see Drop).
                Memory::Host(h) => ("fi_mr_reg", unsafe {
                    ffi::fdg_mr_reg(
                        self.domain,
                        self.ep,
                        i32::from(self.mr_endpoint),
                        h.as_ptr().cast(),
                        h.len(),
                        i as u64 + 1,
                        &mut mr,
                        &mut desc,
                        &mut key,
                    )
                }),
                // SAFETY: the device allocation of d.len() bytes lives in
                // this Endpoint until after the MR is closed (see Drop); the
                // provider reaches it through the GPU runtime, not the CPU.
                Memory::Device(d) => ("fi_mr_regattr (FI_HMEM)", unsafe {
                    ffi::fdg_mr_reg_hmem(
                        self.domain,
                        self.ep,
                        i32::from(self.mr_endpoint),
                        d.address() as *mut c_void,
                        d.len() as usize,
                        d.iface().code(),
                        d.device(),
                        i32::from(d.device_only()),
                        i as u64 + 1,
                        &mut mr,
                        &mut desc,
                        &mut key,
                    )
                }),
            };
            if rc == -libc::ENOSYS || rc == -libc::EOPNOTSUPP {
                if let Memory::Device(d) = &buf {
                    // a libfabric built without this GPU interface, or one
                    // built with it that could not start it here (a CUDA
                    // build whose libcudart.so the loader cannot find):
                    // only its start-up log tells which, and doctor reads it
                    return Err(FabricError::NoGpu(format!(
                        "this libfabric cannot register {} memory ({}): it was built without that interface, or cannot start it here (fabdiag doctor says which; a CUDA build needs the toolkit's libcudart.so on LD_LIBRARY_PATH); to build one with it, scripts/build-libfabric-cuda.sh, then point FABDIAG_LIBFABRIC at it and check with fi_info -c FI_HMEM",
                        d.iface().name(),
                        FabricError::call(call, rc)
                    )));
                }
            }
            if let Memory::Host(h) = &buf {
                pinned += h.len() as u64;
                if rc != 0 {
                    return Err(FabricError::registration(call, rc, pinned, crate::lockable_bytes()));
                }
            }
            check(call, rc)?;
            // SAFETY: mr was just registered.
            let fid = unsafe { ffi::fdg_mr_fid(mr) };
            self.regions.push(Region {
                buf,
                mr: Handle(fid),
                desc,
                key,
            });
        }
        Ok(())
    }
}

/// Slots to lend a queue of `size` entries when the provider requires
/// FI_CONTEXT: one per entry, up to 16,384 (psm3 gives u64::MAX, no limit
/// of its own; fabdiag never has more in flight: a list is at most 16,382
/// operations and its receives two more).
fn context_slots(size: u64) -> usize {
    size.min(1 << 14) as usize
}
