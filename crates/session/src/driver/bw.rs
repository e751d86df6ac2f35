//! One bandwidth iteration on the fabric (originals §3.1-3.3): a batch of
//! one-sided operations waited for in full; send_bw's batch closed by the
//! receiver's empty response; its bidirectional form, where each side
//! answers the other's batch; and the follower, which starts a batch only
//! once the leader has, so no message is left in flight when it stops.

use super::{peer, DataPath, DriveError, FabricDriver, Op};
use fabdiag_engine::{Activity, BwDriver, Measure, Step, SyncPoint};
use fabdiag_fabric::Posted;
use fabdiag_proto::{Message, Phase, ProtoError};

impl<W: DataPath + ?Sized> FabricDriver<'_, W> {
    fn iteration_inner(&mut self, size: u64) -> Result<Step, DriveError> {
        match (self.cfg.op, self.cfg.activity, self.cfg.bidirectional) {
            (_, Activity::Passive, _) => Err(DriveError::Protocol("a passive side runs no iterations".into())),
            (Op::Write | Op::Read | Op::Atomic(_), _, _) => {
                self.post_batch(size)?;
                self.wait_until(|d| d.tx_done >= d.tx_posted)?;
                Ok(Step::Done)
            }
            (Op::Send, Activity::Active, false) => {
                self.post_batch(size)?;
                let k = self.iteration + 1;
                let want = self.base_responses + k;
                self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_responses >= want)?;
                self.iteration = k;
                Ok(Step::Done)
            }
            (Op::Send, Activity::Active, true) => self.bidirectional_send_iteration(size),
            (Op::Send, Activity::Follower, _) => self.follow(size),
        }
    }

    /// Send a batch, take the peer's batch, answer it, take the answer.
    fn bidirectional_send_iteration(&mut self, size: u64) -> Result<Step, DriveError> {
        self.post_batch(size)?;
        let k = self.iteration + 1;
        let want_data = self.base_data + k * self.cfg.list_size;
        self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_data >= want_data)?;
        while self.send_response()? == Posted::Busy {
            self.progress()?;
        }
        let want_resp = self.base_responses + k;
        self.wait_until(|d| d.tx_done >= d.tx_posted && d.rx_responses >= want_resp)?;
        self.iteration = k;
        Ok(Step::Done)
    }

    fn follow(&mut self, size: u64) -> Result<Step, DriveError> {
        let started = self.base_data + self.iteration * self.cfg.list_size;
        let mut round = 0u32;
        loop {
            if self.rx_data > started {
                return self.bidirectional_send_iteration(size);
            }
            self.progress()?;
            round = round.wrapping_add(1);
            if !round.is_multiple_of(16) {
                continue;
            }
            match self.link.poll(Phase::Run)? {
                None => {}
                Some(
                    m @ Message::Barrier {
                        phase: Phase::PostRun, ..
                    },
                ) => {
                    self.stashed_post_run = Some(m);
                    return Ok(Step::PeerFinished);
                }
                Some(other) => {
                    return Err(DriveError::Proto(ProtoError::Unexpected {
                        phase: Phase::Run,
                        got: other.kind().into(),
                    }))
                }
            }
        }
    }
}

impl<W: DataPath + ?Sized> BwDriver for FabricDriver<'_, W> {
    type Error = DriveError;

    fn barrier(&mut self, point: SyncPoint, size: u64) -> Result<(), DriveError> {
        peer::barrier(self, point, size)
    }

    fn iteration(&mut self, size: u64) -> Result<Step, DriveError> {
        self.iteration_inner(size).map_err(|e| self.explain(e))
    }

    fn exchange(&mut self, size: u64, mine: Measure) -> Result<Measure, DriveError> {
        peer::exchange(self, size, mine)
    }
}
