//! Where each operation of a batch lands (originals §2.8): operation i uses
//! offset i × roundup(size, align) locally and remotely, wrapping to 0 when
//! the next operation would not fit in the registered length or in
//! `--buf-sz`; every batch restarts at 0.

/// `roundup(max_size, align) × list_size`, capped at `max_buf`.
pub fn buffer_size(max_size: u64, align: u64, list_size: u64, max_buf: u64) -> u64 {
    let gran = max_size.div_ceil(align.max(1)).saturating_mul(align.max(1));
    gran.saturating_mul(list_size).min(max_buf).max(max_size)
}

/// Steps offsets through one batch.
#[derive(Clone, Debug)]
pub struct Stepper {
    size: u64,
    gran: u64,
    limit: u64,
    next: u64,
}

impl Stepper {
    /// `registered` is the buffer length; `max_buf` is `--buf-sz`.
    pub fn new(size: u64, align: u64, registered: u64, max_buf: u64) -> Self {
        let gran = size.div_ceil(align.max(1)).saturating_mul(align.max(1));
        let limit = registered.min(if max_buf == 0 { u64::MAX } else { max_buf });
        Stepper {
            size,
            gran,
            limit,
            next: 0,
        }
    }

    /// Offset for the next operation of this batch.
    pub fn next_offset(&mut self) -> u64 {
        let off = self.next;
        let following = off.saturating_add(self.gran);
        self.next = if following.saturating_add(self.size) > self.limit {
            0
        } else {
            following
        };
        off
    }

    /// The offset `next_offset` would return, without advancing.
    pub fn peek(&self) -> u64 {
        self.next
    }

    pub fn restart(&mut self) {
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_buffer_is_16_mib() {
        assert_eq!(buffer_size(65536, 64, 256, 4294967296), 16777216);
        // capped by --buf-sz, but never below one operation
        assert_eq!(buffer_size(65536, 64, 256, 100000), 100000);
        assert_eq!(buffer_size(65536, 64, 256, 1000), 65536);
        // alignment rounds each slot up
        assert_eq!(buffer_size(100, 64, 4, u64::MAX), 512);
    }

    #[test]
    fn steps_by_aligned_size_and_wraps() {
        let mut s = Stepper::new(100, 64, 512, 0);
        let offs: Vec<u64> = (0..6).map(|_| s.next_offset()).collect();
        assert_eq!(offs, vec![0, 128, 256, 384, 0, 128]);
        // --buf-sz smaller than the registration forces overlap
        let mut s = Stepper::new(64, 64, 4096, 128);
        let offs: Vec<u64> = (0..4).map(|_| s.next_offset()).collect();
        assert_eq!(offs, vec![0, 64, 0, 64]);
        s.restart();
        assert_eq!(s.next_offset(), 0);
    }
}
