//! Per-operation context storage for providers that require FI_CONTEXT or
//! FI_CONTEXT2 (psm2, psm3, opx): such a provider keeps its own state for
//! an operation in memory the caller lends it, from the post until the
//! completion is read (fi_getinfo(3)). Each operation that leaves a
//! completion is posted with the address of one of these slots, and the
//! completion's context is mapped back to the caller's tag.
//!
//! Must not read or write a slot's bytes while its operation is in flight,
//! and must not dereference a context a provider hands back: it is only
//! compared with the slots' addresses.

use std::cell::UnsafeCell;
use std::os::raw::c_void;

/// One `struct fi_context2` (eight pointers), which also satisfies
/// FI_CONTEXT (four). `UnsafeCell`: the provider writes it through the
/// pointer it was given, behind Rust's back.
type Slot = UnsafeCell<[u64; 8]>;

/// The slots of one endpoint: transmits and receives apart, so receives
/// posted ahead (as many as a list) never leave a send without a slot.
pub(crate) struct LentContexts {
    tx: OpContexts,
    rx: OpContexts,
}

impl LentContexts {
    pub(crate) fn new(tx_slots: usize, rx_slots: usize) -> LentContexts {
        LentContexts {
            tx: OpContexts::new(tx_slots),
            rx: OpContexts::new(rx_slots),
        }
    }

    /// A slot for a receive (`recv`) or transmit tagged `tag`: see
    /// `OpContexts::take`.
    pub(crate) fn take(&mut self, tag: u64, recv: bool) -> Option<*mut c_void> {
        if recv {
            self.rx.take(tag)
        } else {
            self.tx.take(tag)
        }
    }

    pub(crate) fn give_back(&mut self, context: *mut c_void) {
        self.complete(context as u64);
    }

    /// The tag of the operation whose completion carries `context`, from
    /// whichever side lent it; None when neither did.
    pub(crate) fn complete(&mut self, context: u64) -> Option<u64> {
        self.tx.release(context).or_else(|| self.rx.release(context))
    }
}

struct OpContexts {
    slots: Box<[Slot]>,
    /// The caller's tag of the operation holding each slot; None: free.
    tags: Box<[Option<u64>]>,
    free: Vec<usize>,
}

impl OpContexts {
    /// Room for `capacity` operations in flight at once (at least one).
    fn new(capacity: usize) -> OpContexts {
        let capacity = capacity.max(1);
        OpContexts {
            slots: (0..capacity).map(|_| UnsafeCell::new([0; 8])).collect(),
            tags: vec![None; capacity].into_boxed_slice(),
            // popped from the end: slot 0 first
            free: (0..capacity).rev().collect(),
        }
    }

    /// A free slot for the operation tagged `tag`, as the context to post
    /// it with; None when every slot is in flight (the caller treats that
    /// as a full queue: reads completions, then posts again).
    fn take(&mut self, tag: u64) -> Option<*mut c_void> {
        let i = self.free.pop()?;
        self.tags[i] = Some(tag);
        Some(self.slots[i].get().cast())
    }

    /// The tag of the operation whose completion (or failed post) carries
    /// `context`, its slot freed; None when `context` is not a slot of
    /// these in flight.
    fn release(&mut self, context: u64) -> Option<u64> {
        let i = self.index(context)?;
        let tag = self.tags[i].take()?;
        self.free.push(i);
        Some(tag)
    }

    fn index(&self, context: u64) -> Option<usize> {
        let base = self.slots.as_ptr() as u64;
        let size = std::mem::size_of::<Slot>() as u64;
        let off = context.checked_sub(base)?;
        let i = usize::try_from(off / size).ok()?;
        (off % size == 0 && i < self.slots.len()).then_some(i)
    }

    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{LentContexts, OpContexts};

    #[test]
    fn a_completion_gives_back_the_tag_it_was_posted_with_and_frees_its_slot() {
        let mut c = OpContexts::new(2);
        let a = c.take(7).expect("a free slot");
        let b = c.take(9).expect("a second free slot");
        assert_ne!(a, b);
        assert_eq!(c.take(11), None, "two slots, two in flight: the queue is full");
        assert_eq!(c.release(b as u64), Some(9));
        assert_eq!(c.in_flight(), 1);
        let again = c.take(11).expect("the freed slot");
        assert_eq!(again, b);
        assert_eq!(c.release(a as u64), Some(7));
        assert_eq!(c.release(again as u64), Some(11));
        assert_eq!(c.in_flight(), 0);
    }

    #[test]
    fn contexts_that_are_not_a_slot_in_flight_map_to_nothing() {
        let mut c = OpContexts::new(4);
        let a = c.take(1).expect("a free slot") as u64;
        // a free slot, a completion read twice, inside a slot, past the
        // end, before the start, and a plain tag as a provider without
        // FI_CONTEXT would return
        let free_slot = a + 64;
        assert_eq!(c.release(free_slot), None);
        assert_eq!(c.release(a + 8), None);
        assert_eq!(c.release(a + 4 * 64), None);
        assert_eq!(c.release(a.wrapping_sub(64)), None);
        assert_eq!(c.release(3), None);
        assert_eq!(c.release(a), Some(1));
        assert_eq!(c.release(a), None, "its completion was already read");
    }

    #[test]
    fn receives_posted_ahead_leave_the_transmit_slots_free() {
        let mut c = LentContexts::new(1, 2);
        let r1 = c.take(1, true).expect("a receive slot");
        let r2 = c.take(2, true).expect("a second receive slot");
        assert_eq!(c.take(3, true), None, "two receive slots, both posted");
        let s = c.take(4, false).expect("a send still has its slot");
        assert_eq!(c.take(5, false), None);
        assert_eq!(c.complete(s as u64), Some(4));
        assert_eq!(c.complete(r2 as u64), Some(2));
        assert_eq!(c.complete(r1 as u64), Some(1));
        assert_eq!(c.complete(r1 as u64), None);
    }

    #[test]
    fn an_operation_not_posted_gives_its_slot_back() {
        let mut c = LentContexts::new(1, 1);
        let a = c.take(5, false).expect("a free slot");
        c.give_back(a);
        assert_eq!(c.tx.in_flight(), 0);
        assert!(c.take(6, false).is_some());
    }

    #[test]
    fn slots_are_as_large_and_aligned_as_struct_fi_context2() {
        // eight pointers on the 64-bit targets fabdiag builds for
        assert_eq!(std::mem::size_of::<super::Slot>(), 8 * std::mem::size_of::<*mut u8>());
        assert!(std::mem::align_of::<super::Slot>() >= std::mem::align_of::<*mut u8>());
    }
}
