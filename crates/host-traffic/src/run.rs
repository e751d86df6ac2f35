//! One host-traffic session on a GPU: allocate what the plan says, then
//! per test: prepare the regions (pattern where the test reads, zeros
//! where it writes), queue a start gate and the work on two streams,
//! release the gate, keep host copies going for as long as the test lasts
//! (the tile work, or `--test-duration`), read the events, and check the
//! data. Every wait is bounded by `deadline` unless timeouts are off.
//! Progress leaves through a callback; nothing here prints.

use crate::account::{figures, AccountError, Figures, Timeline};
use crate::deadline::limit;
use crate::pattern::{self, VEC};
use crate::plan::{GpuFacts, Plan, PlanError, Request, HOST_SLOTS};
use fabdiag_gpu::cuda::{Context, DeviceMem, Event, HostMem, Kernels, Stream, Words};
use fabdiag_gpu::{poll_until, GpuError};
use fabdiag_model::host_traffic::{Dir, TrafficTest};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// The start gate gives up after this long (the host queues a test's
/// work in well under a second).
const GATE_NS: u64 = 10_000_000_000;
/// How often the host looks at the GPU while a test runs.
const POLL: Duration = Duration::from_micros(100);

// The mapped words: the gate, its two time-out flags, counters, then one
// progress word per block (public for the kernels' CPU tests).
pub const FLAG: usize = 0;
pub const GATE_TIMEOUT_COPY: usize = 1;
pub const GATE_TIMEOUT_TILE: usize = 2;
pub const TILE_BAD: usize = 3;
pub const CHECK_COUNT: usize = 4;
pub const CHECK_FIRST: usize = 5;
pub const PROGRESS: usize = 6;

#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error("data check failed: {0}")]
    Data(String),
    #[error("the start gate timed out: the {0} stream was not released within 10 s")]
    Gate(&'static str),
}

/// An open GPU with a test's memory, streams and kernels.
pub struct Session {
    ctx: Arc<Context>,
    kernels: Kernels,
    dev: DeviceMem,
    host: HostMem,
    words: Words,
    copies: Stream,
    tiles: Stream,
    pub plan: Plan,
    pub facts: GpuFacts,
    /// The GPU's NUMA node, where the pinned host memory was placed.
    pub numa: Option<u32>,
    timeouts: bool,
}

impl Session {
    /// Opens GPU `ordinal` (PCI bus id `bus_id`, for its NUMA node) and
    /// allocates for `req`. `overlap`: some test runs host and tile traffic
    /// at once.
    pub fn open(ordinal: i32, bus_id: &str, req: &Request, overlap: bool, timeouts: bool) -> Result<Session, RunError> {
        let ctx = Context::open(ordinal)?;
        let (free, _) = ctx.memory()?;
        let facts = GpuFacts {
            sm_count: ctx.sm_count()?,
            l2_bytes: ctx.l2_bytes()?,
            free_bytes: free,
            copy_engines: ctx.copy_engines()?,
        };
        let plan = Plan::new(req, &facts, overlap)?;
        let kernels = Kernels::load(&ctx)?;
        let dev = DeviceMem::new(&ctx, plan.tile_region + plan.host_region)?;
        let node = fabdiag_gpu::numa::node_of(bus_id);
        let host = HostMem::new(&ctx, plan.host_region, false, node)?;
        let words = Words::new(&ctx, PROGRESS + plan.blocks as usize)?;
        Ok(Session {
            copies: Stream::new(&ctx)?,
            tiles: Stream::new(&ctx)?,
            ctx,
            kernels,
            dev,
            host,
            words,
            plan,
            facts,
            numa: node,
            timeouts,
        })
    }

    pub fn ordinal(&self) -> i32 {
        self.ctx.ordinal()
    }

    /// Ends the session without freeing what it holds on the GPU, for a
    /// process about to exit after a failed test. A test that timed out
    /// may leave work queued that never ends, and the driver's frees and
    /// context release wait for queued work (cuMemFree synchronises), so
    /// dropping the session then would hang the process; the memory goes
    /// with the process instead.
    pub fn abandon(self) {
        std::mem::forget(self);
    }

    fn set(&self, i: usize, v: u64) {
        if let Some(w) = self.words.get(i) {
            w.store(v, Ordering::SeqCst);
        }
    }

    fn word(&self, i: usize) -> u64 {
        self.words.get(i).map_or(0, |w| w.load(Ordering::SeqCst))
    }

    /// Transfers each thread block has finished in the current (or last)
    /// test: `--dump-tiles`'s overview after a failure.
    pub fn tile_overview(&self) -> Vec<u64> {
        (0..self.plan.blocks as usize)
            .map(|b| self.word(PROGRESS + b))
            .collect()
    }

    /// The tile work done so far, 0.0 to 1.0.
    fn tile_progress(&self) -> f64 {
        let p = &self.plan;
        let done: u64 = (0..p.blocks as usize).map(|b| self.word(PROGRESS + b)).sum();
        let all = u64::from(p.blocks).saturating_mul(p.iterations).max(1);
        done as f64 / all as f64
    }

    /// Runs one test. `seed` makes its data its own; `duration_s` is how
    /// long a host-only test streams; `progress` hears 0.0..1.0. Errors
    /// do not name the test: the caller files them under it.
    pub fn run(
        &mut self,
        test: TrafficTest,
        seed: u32,
        duration_s: f64,
        progress: &mut dyn FnMut(f64),
    ) -> Result<Figures, RunError> {
        let p = self.plan;
        let work = if test.tile.is_some() { p.tile_bytes } else { 0 };
        let lim = limit(work, if test.tile.is_none() { duration_s } else { 0.0 }, self.timeouts);
        self.prepare(test, seed, lim)?;
        // queue: gates, start events, the tile work, the first host chunks
        let t0 = Instant::now();
        let origin = Event::new(&self.ctx, true)?;
        let tile_start = Event::new(&self.ctx, true)?;
        let tile_end = Event::new(&self.ctx, true)?;
        let host_start = Event::new(&self.ctx, true)?;
        if let Some(dir) = test.tile {
            self.kernels
                .gate(&self.tiles, &self.words, FLAG, GATE_TIMEOUT_TILE, GATE_NS)?;
            self.tiles.record(&origin)?;
            self.tiles.record(&tile_start)?;
            self.kernels.tile(
                &self.tiles,
                dir == Dir::Write,
                &self.dev,
                p.walk(seed),
                &self.words,
                TILE_BAD,
                Some(PROGRESS),
            )?;
            self.tiles.record(&tile_end)?;
        }
        let mut chunks: Vec<Arc<Event>> = Vec::new();
        if test.host.is_some() {
            self.kernels
                .gate(&self.copies, &self.words, FLAG, GATE_TIMEOUT_COPY, GATE_NS)?;
            if test.tile.is_none() {
                self.copies.record(&origin)?;
            }
            self.copies.record(&host_start)?;
            for _ in 0..HOST_SLOTS {
                self.queue_chunk(test, &mut chunks)?;
            }
        }
        // go
        self.set(FLAG, 1);
        let released = Instant::now();
        if test.host.is_some() {
            // keep HOST_SLOTS chunks in flight until the test's time is up
            let mut retired = 0usize;
            poll_until("the test", t0, lim, POLL, || -> Result<bool, RunError> {
                self.check_gates()?;
                let over = match test.tile {
                    Some(_) => tile_end.done()?,
                    None => released.elapsed().as_secs_f64() >= duration_s,
                };
                if !over {
                    while retired < chunks.len() && chunks[retired].done()? {
                        retired += 1;
                        self.queue_chunk(test, &mut chunks)?;
                    }
                    progress(match test.tile {
                        Some(_) => self.tile_progress(),
                        None => (released.elapsed().as_secs_f64() / duration_s).min(1.0),
                    });
                }
                Ok(over)
            })?;
            self.copies.finish(lim, "the host copies")?;
        }
        if test.tile.is_some() {
            poll_until("the tile work", t0, lim, POLL, || {
                progress(self.tile_progress());
                tile_end.done()
            })?;
        }
        self.check_gates()?;
        progress(1.0);
        // read the clocks
        let mut t = Timeline::default();
        if test.tile.is_some() {
            t.tile = Some((origin.ms_until(&tile_start)?, origin.ms_until(&tile_end)?));
        }
        if test.host.is_some() {
            t.host_start = Some(origin.ms_until(&host_start)?);
            t.host_ends = chunks.iter().map(|c| origin.ms_until(c)).collect::<Result<_, _>>()?;
        }
        let f = figures(&t, test.host.is_some(), test.tile.is_some(), p.chunk, work)?;
        self.check(test, seed, chunks.len() as u64, lim)?;
        Ok(f)
    }

    fn check_gates(&self) -> Result<(), RunError> {
        if self.word(GATE_TIMEOUT_COPY) != 0 {
            return Err(RunError::Gate("host copy"));
        }
        if self.word(GATE_TIMEOUT_TILE) != 0 {
            return Err(RunError::Gate("tile"));
        }
        Ok(())
    }

    /// Queues host chunk number `chunks.len()` and its end event.
    fn queue_chunk(&mut self, test: TrafficTest, chunks: &mut Vec<Arc<Event>>) -> Result<(), RunError> {
        let p = self.plan;
        let slot = chunks.len() as u64 % HOST_SLOTS;
        let (dev_off, host_off) = (p.host_offset() + slot * p.chunk, slot * p.chunk);
        let end = match test.host {
            Some(Dir::Write) => self
                .copies
                .copy_to_device(&self.dev, dev_off, &mut self.host, host_off, p.chunk)?,
            Some(Dir::Read) => self
                .copies
                .copy_to_host(&mut self.host, host_off, &self.dev, dev_off, p.chunk)?,
            None => return Ok(()),
        };
        chunks.push(end);
        Ok(())
    }

    /// Puts the pattern where the test reads and zeros where it writes.
    fn prepare(&mut self, test: TrafficTest, seed: u32, lim: Option<Duration>) -> Result<(), RunError> {
        let p = self.plan;
        for i in 0..PROGRESS + p.blocks as usize {
            self.set(i, 0);
        }
        self.set(CHECK_FIRST, u64::MAX);
        match test.tile {
            Some(Dir::Read) => self.kernels.fill(&self.tiles, &self.dev, 0, p.tile_region, 0, seed)?,
            Some(Dir::Write) => self.tiles.memset(&self.dev, 0, p.tile_region, 0)?,
            None => {}
        }
        let first = p.host_offset() / VEC;
        match test.host {
            Some(Dir::Write) => {
                self.tiles.memset(&self.dev, p.host_offset(), p.host_region, 0)?;
                let bytes = self.host.bytes(lim)?;
                pattern::fill(bytes, seed, first);
            }
            Some(Dir::Read) => {
                self.kernels
                    .fill(&self.tiles, &self.dev, p.host_offset(), p.host_region, first, seed)?;
                self.host.bytes(lim)?.fill(0);
            }
            None => {}
        }
        self.tiles.finish(lim, "preparing the test's memory")?;
        Ok(())
    }

    /// Checks what the test wrote: the tile walk, the host region on the
    /// device, or the host buffer.
    fn check(&mut self, test: TrafficTest, seed: u32, chunks: u64, lim: Option<Duration>) -> Result<(), RunError> {
        let p = self.plan;
        match test.tile {
            Some(Dir::Read) => {
                let bad = self.word(TILE_BAD);
                if bad != 0 {
                    return Err(RunError::Data(format!(
                        "tile reads found {bad} 4-byte words that differ from what was written to device memory"
                    )));
                }
            }
            Some(Dir::Write) => {
                self.kernels.verify_tiles(
                    &self.tiles,
                    &self.dev,
                    p.walk(seed),
                    p.pieces_per_block(),
                    &self.words,
                    CHECK_COUNT,
                    CHECK_FIRST,
                )?;
                self.tiles.finish(lim, "checking the tile writes")?;
                self.device_verdict("tile writes", 0)?;
            }
            None => {}
        }
        let used = chunks.min(HOST_SLOTS) * p.chunk;
        let first = p.host_offset() / VEC;
        match test.host {
            Some(Dir::Write) => {
                self.set(CHECK_COUNT, 0);
                self.set(CHECK_FIRST, u64::MAX);
                self.kernels.verify(
                    &self.tiles,
                    &self.dev,
                    p.host_offset(),
                    used,
                    first,
                    seed,
                    &self.words,
                    CHECK_COUNT,
                    CHECK_FIRST,
                )?;
                self.tiles.finish(lim, "checking the host writes")?;
                self.device_verdict("host writes", p.host_offset())?;
            }
            Some(Dir::Read) => {
                let bytes = self.host.bytes(lim)?;
                if let Some(m) = pattern::first_mismatch(&bytes[..used as usize], seed, first) {
                    return Err(RunError::Data(format!(
                        "host reads: byte {} of the host buffer holds 0x{:02x}, the GPU's memory held 0x{:02x}",
                        m.offset, m.found, m.expected
                    )));
                }
            }
            None => {}
        }
        Ok(())
    }

    fn device_verdict(&self, whose: &str, base: u64) -> Result<(), RunError> {
        let bad = self.word(CHECK_COUNT);
        if bad == 0 {
            return Ok(());
        }
        let first = self.word(CHECK_FIRST);
        Err(RunError::Data(format!(
            "{whose}: {bad} 16-byte vectors of device memory differ from the pattern, the first at byte {}",
            base + first.saturating_mul(VEC)
        )))
    }
}
