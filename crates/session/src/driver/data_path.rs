//! The endpoint as the driver sees it: post one operation, post a receive,
//! poll completions, look at registered bytes. `fabric::Endpoint` is the
//! real one; tests and the hot-loop measurement drive a fake that
//! completes everything at once, so the driver's own cost per operation
//! can be seen without a fabric.

use fabdiag_fabric::{
    AtomicOperands, AtomicSpec, Completion, Endpoint, FabricError, Memory, OpFlags, PeerId, Posted, Prepared, RegionId,
    RemoteRegion,
};

/// One operation from our initiator buffer at `off` (the same offset in
/// the peer's target for one-sided operations).
pub struct Post<'a> {
    pub what: What<'a>,
    pub off: u64,
    pub len: u64,
    pub peer: PeerId,
    pub flags: OpFlags,
}

pub enum What<'a> {
    Write(&'a RemoteRegion),
    Read(&'a RemoteRegion),
    Send,
    Atomic(&'a AtomicSpec, AtomicOperands, &'a RemoteRegion),
}

pub trait DataPath {
    /// Largest payload the provider takes with FI_INJECT.
    fn inject_size(&self) -> u64;
    /// The provider's name ("shm", "tcp;ofi_rxm", "cxi", ...).
    fn provider(&self) -> &str;
    fn rx_depth(&self) -> u64;
    fn region_len(&self, id: RegionId) -> u64;
    fn region(&self, id: RegionId) -> Option<&[u8]>;
    fn region_mut(&mut self, id: RegionId) -> Option<&mut [u8]>;
    /// The region of either kind (device memory has no host slice).
    fn memory(&self, _id: RegionId) -> Option<&Memory> {
        None
    }
    fn memory_mut(&mut self, _id: RegionId) -> Option<&mut Memory> {
        None
    }
    /// Is the region device memory? (Its bytes cannot be injected.)
    fn on_device(&self, id: RegionId) -> bool {
        matches!(self.memory(id), Some(Memory::Device(_)))
    }
    /// Will an operation posted with `f` leave a completion entry?
    fn completes(&self, f: OpFlags) -> bool;
    fn post(&mut self, p: &Post<'_>) -> Result<Posted, FabricError>;
    /// A send or receive range checked once and posted many times (the
    /// latency loop's send and each receive slot): `Endpoint::prepare`.
    type Prepared: Copy;
    fn prepare(&self, id: RegionId, off: u64, len: u64, f: OpFlags) -> Result<Self::Prepared, FabricError>;
    fn send_prepared(&mut self, p: &Self::Prepared, peer: PeerId) -> Result<Posted, FabricError>;
    fn recv_prepared(&mut self, p: &Self::Prepared, context: u64) -> Result<Posted, FabricError>;
    fn recv(&mut self, id: RegionId, off: u64, len: u64, context: u64) -> Result<Posted, FabricError>;
    fn poll(&mut self, out: &mut [Completion]) -> Result<usize, FabricError>;
    /// Never close what this endpoint holds (a run that failed).
    fn leak_on_drop(&mut self);
    /// The bytes the batch now starting may have in flight at once (what
    /// watches the endpoint's calls weighs a held call by).
    fn expect_work(&mut self, _bytes: u64) {}
    /// Waits for the device work this process queued on any of its
    /// buffers (`Memory::settle`): what a provider's completions may
    /// precede.
    fn settle(&mut self) -> Result<(), FabricError> {
        let mut id = 0;
        while let Some(m) = self.memory(RegionId(id)) {
            m.settle()?;
            id += 1;
        }
        Ok(())
    }
}

/// Our initiator (TX) buffer.
const INITIATOR: RegionId = RegionId(0);

impl DataPath for Endpoint {
    fn inject_size(&self) -> u64 {
        Endpoint::inject_size(self)
    }
    fn provider(&self) -> &str {
        Endpoint::provider(self)
    }
    fn rx_depth(&self) -> u64 {
        Endpoint::rx_depth(self)
    }
    fn region_len(&self, id: RegionId) -> u64 {
        Endpoint::region_len(self, id)
    }
    fn region(&self, id: RegionId) -> Option<&[u8]> {
        Endpoint::region(self, id)
    }
    fn region_mut(&mut self, id: RegionId) -> Option<&mut [u8]> {
        Endpoint::region_mut(self, id)
    }
    fn memory(&self, id: RegionId) -> Option<&Memory> {
        Endpoint::memory(self, id)
    }
    fn memory_mut(&mut self, id: RegionId) -> Option<&mut Memory> {
        Endpoint::memory_mut(self, id)
    }
    fn completes(&self, f: OpFlags) -> bool {
        Endpoint::completes(self, f)
    }
    fn post(&mut self, p: &Post<'_>) -> Result<Posted, FabricError> {
        let (off, len, peer, f) = (p.off, p.len, p.peer, p.flags);
        match &p.what {
            What::Write(target) => self.write(INITIATOR, off, len, peer, target, off, f, 0),
            What::Read(target) => self.read(INITIATOR, off, len, peer, target, off, 0),
            What::Send => self.send(INITIATOR, off, len, peer, f, 0),
            What::Atomic(spec, ops, target) => self.atomic(spec, ops, peer, target, off, f, 0),
        }
    }
    type Prepared = Prepared;
    fn prepare(&self, id: RegionId, off: u64, len: u64, f: OpFlags) -> Result<Prepared, FabricError> {
        Endpoint::prepare(self, id, off, len, f)
    }
    fn send_prepared(&mut self, p: &Prepared, peer: PeerId) -> Result<Posted, FabricError> {
        Endpoint::send_prepared(self, p, peer, 0)
    }
    fn recv_prepared(&mut self, p: &Prepared, context: u64) -> Result<Posted, FabricError> {
        Endpoint::recv_prepared(self, p, context)
    }
    fn recv(&mut self, id: RegionId, off: u64, len: u64, context: u64) -> Result<Posted, FabricError> {
        Endpoint::recv(self, id, off, len, context)
    }
    fn poll(&mut self, out: &mut [Completion]) -> Result<usize, FabricError> {
        Endpoint::poll(self, out)
    }
    fn leak_on_drop(&mut self) {
        Endpoint::leak_on_drop(self)
    }
    fn expect_work(&mut self, bytes: u64) {
        Endpoint::expect_work(self, bytes)
    }
}
