//! One timed latency operation on the fabric (originals §3.6, §3.7, §3.9): a
//! write or read waited for, or send_lat's round trip (our message out, the
//! server's echo back) halved; and the clocks that time it.

use super::{peer, DataPath, DriveError, FabricDriver, Op, COMPLETIONS_PER_POLL};
use fabdiag_clock::{Calibration, RawClock};
use fabdiag_engine::{Activity, LatDriver, Measure, SyncPoint};
use fabdiag_fabric::{OpFlags, Posted};

/// How latency is timed.
#[derive(Clone, Debug)]
pub enum LatClock {
    /// CLOCK_MONOTONIC_RAW, read by the call or by the counter it counts
    /// (`RawClock`).
    Raw(RawClock),
    /// The CPU cycle counter, converted with this calibration.
    Cycles(Calibration),
}

impl LatClock {
    /// CLOCK_MONOTONIC_RAW by the call: a side that times nothing, or a
    /// test.
    pub const CALL: LatClock = LatClock::Raw(RawClock::Call);

    #[inline]
    fn now(&self) -> u64 {
        match self {
            LatClock::Raw(r) => r.now(),
            LatClock::Cycles(_) => fabdiag_clock::cycles().unwrap_or(0),
        }
    }

    #[inline]
    fn elapsed_ns(&self, t0: u64, t1: u64) -> u64 {
        match self {
            LatClock::Raw(r) => r.elapsed_ns(t0, t1),
            LatClock::Cycles(c) => c.to_ns(t1.wrapping_sub(t0)),
        }
    }

    /// The calibrated frequency, for the banner.
    pub fn mhz(&self) -> Option<f64> {
        match self {
            LatClock::Cycles(c) => Some(c.mhz),
            LatClock::Raw(_) => None,
        }
    }

    /// What each timestamp is read with ("clock_gettime", "rdtsc"), for
    /// the JSON.
    pub fn reads(&self) -> &'static str {
        match self {
            LatClock::Raw(r) => r.reads(),
            LatClock::Cycles(_) if cfg!(target_arch = "aarch64") => "cntvct_el0",
            LatClock::Cycles(_) => "rdtsc",
        }
    }
}

impl<W: DataPath + ?Sized> FabricDriver<'_, W> {
    fn measure_inner(&mut self, size: u64) -> Result<u64, DriveError> {
        if let Op::Atomic(plan) = self.cfg.op {
            self.load_operands(plan, 1)?;
        }
        let inject = self.inject_ok(size);
        if self.cfg.op == Op::Send {
            return self.round_trip(size, inject);
        }
        let t0 = self.cfg.clock.now();
        while self.post(size, 0, inject)? == Posted::Busy {
            if self.progress()? == 0 {
                self.watch()?;
            }
        }
        let t1 = self.wait_marked(|d| d.tx_done >= d.tx_posted, |d| d.cfg.clock.now())?;
        Ok(self.cfg.clock.elapsed_ns(t0, t1))
    }

    /// send_lat's round trip: our message out, the server's echo back,
    /// halved. The send is checked before the clock starts, and the echo's
    /// slot is posted again once the clock is read.
    fn round_trip(&mut self, size: u64, inject: bool) -> Result<u64, DriveError> {
        let f = OpFlags { inject, silent: inject };
        let send = self.prepared_send(size, f)?;
        let awaited = u64::from(self.ep.completes(f));
        let want_echo = self.rx_data + 1;
        let t0 = self.cfg.clock.now();
        while self.ep.send_prepared(&send, self.peer)? == Posted::Busy {
            if self.progress()? == 0 {
                self.watch()?;
            }
        }
        self.tx_posted += awaited;
        self.hold_reposts = true;
        // one completion a poll, whether one or two are awaited: asked for
        // two, psm3 polls its sockets for the second before it returns
        // the first
        self.poll_max = 1;
        // the clock stops as the echo is dequeued, before it is accounted
        let waited = self.wait_marked(
            |d| d.tx_done >= d.tx_posted && d.rx_data >= want_echo,
            |d| d.cfg.clock.now(),
        );
        self.poll_max = COMPLETIONS_PER_POLL;
        self.hold_reposts = false;
        let t1 = waited?;
        self.repost()?;
        Ok(self.cfg.clock.elapsed_ns(t0, t1) / 2)
    }
}

impl<W: DataPath + ?Sized> LatDriver for FabricDriver<'_, W> {
    type Error = DriveError;

    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        peer::barrier(self, point, size)
    }

    fn measure(&mut self, size: u64) -> Result<u64, DriveError> {
        self.measure_inner(size).map_err(|e| self.explain(e))
    }

    /// The server reports how many echoes it sent (send_lat) so a
    /// de-synchronised run is caught instead of reported.
    fn exchange(&mut self, size: u64, ops: u64) -> Result<u64, DriveError> {
        let mine = if self.cfg.activity == Activity::Passive {
            self.echoes_sent
        } else {
            ops
        };
        let theirs = peer::exchange(
            self,
            size,
            Measure {
                elapsed_ns: 0,
                ops: mine,
            },
        )?;
        Ok(theirs.ops)
    }
}
