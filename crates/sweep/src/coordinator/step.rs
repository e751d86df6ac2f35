//! One step: every live rank's order out, the answers read as they
//! arrive (one epoll set) within the step's limit, each pair settled from
//! its two sides' outcomes. Never prints.

use super::*;

/// Every rank's answer to a step: its outcomes, one per flow (one error
/// for all when it left), or None when it gave none.
type Answers = Vec<Option<Vec<SideOutcome>>>;

/// Rank `rank`'s account of its flow in slot `slot`: that outcome, or
/// the one error it answered for all of them (it left, or was stopped).
fn side(answers: &Answers, rank: usize, slot: usize) -> Option<SideOutcome> {
    let got = answers.get(rank)?.as_ref()?;
    match got.get(slot) {
        Some(o) => Some(o.clone()),
        None => got.first().filter(|o| got.len() == 1 && o.error.is_some()).cloned(),
    }
}

/// A rank's order for a step of `kind`: its one pair test in a round or
/// re-test, all of its flows of a pattern's step, or idle.
fn order(kind: StepKind, step: u64, mut mine: Vec<FlowOrder>) -> ToRank {
    match (kind, mine.len()) {
        (_, 0) => ToRank::Idle { step },
        // (several flows of one pair at once: `--flows`)
        (StepKind::Round | StepKind::Retest, 1) => {
            let f = mine.swap_remove(0);
            ToRank::Pair {
                step,
                role: f.role,
                peer: f.peer,
                peer_addr: f.peer_addr,
            }
        }
        (_, _) => ToRank::Flows {
            step,
            flows: mine,
            start_in_ms: FLOWS_START_MS,
        },
    }
}

/// The ranks a step still waits for an answer from.
struct Waiting {
    pending: Vec<bool>,
    left: usize,
}

impl Waiting {
    fn new(pending: Vec<bool>) -> Waiting {
        let left = pending.iter().filter(|&&p| p).count();
        Waiting { pending, left }
    }

    fn is(&self, rank: usize) -> bool {
        self.pending.get(rank).copied().unwrap_or(false)
    }

    /// No longer waited for (answered, or given up on); false if it was
    /// not.
    fn settle(&mut self, rank: usize) -> bool {
        let was = self.is(rank);
        if was {
            self.pending[rank] = false;
            self.left -= 1;
        }
        was
    }

    /// Every rank still waited for.
    fn all(&self) -> Vec<usize> {
        (0..self.pending.len()).filter(|&r| self.pending[r]).collect()
    }
}

impl super::Coordinator<'_> {
    /// One step (`drive_step`), and the observer told when it lost ranks.
    pub(super) fn run_step(
        &mut self,
        kind: StepKind,
        index: usize,
        label: &str,
        pairs: &[Pair],
    ) -> (Vec<PairRecord>, Option<LatFigures>) {
        let lost = |c: &Self| c.ranks.iter().filter(|r| r.node.status == NodeStatus::Lost).count();
        let lost_before = lost(self);
        let out = self.drive_step(kind, index, label, pairs);
        if lost(self) != lost_before {
            let nodes = self.nodes();
            self.obs.statuses(&nodes);
        }
        out
    }

    /// One step: orders to every live rank, then every answer, bounded.
    /// Its pairs' records, and a pattern victim's latency figures (a pair
    /// record has no room for them).
    fn drive_step(
        &mut self,
        kind: StepKind,
        index: usize,
        label: &str,
        pairs: &[Pair],
    ) -> (Vec<PairRecord>, Option<LatFigures>) {
        self.step += 1;
        let step = self.step;
        let t0 = Instant::now();
        let mut cpu = Duration::ZERO;
        let round = (kind == StepKind::Round).then_some(index);
        let mut out: Vec<PairRecord> = pairs.iter().map(|p| PairRecord::planned(p, round)).collect();
        // each rank's flows in the order it is given them, and where each
        // pair's two sides are among them
        let mut flows: Vec<Vec<FlowOrder>> = vec![Vec::new(); self.ranks.len()];
        let mut slots: Vec<Option<(usize, usize)>> = vec![None; pairs.len()];
        // (a pattern's victim rides last in its steps)
        let victim = match kind {
            StepKind::Split | StepKind::Phase => self.cfg.victim.as_ref().map(|_| pairs.len() - 1),
            StepKind::Round | StepKind::Retest => None,
        };
        for (i, p) in pairs.iter().enumerate() {
            match (self.live(p.client), self.live(p.server)) {
                (true, true) => {
                    let addr = |r: usize| self.ranks[r].node.addr.clone().unwrap_or_default();
                    slots[i] = Some((flows[p.client].len(), flows[p.server].len()));
                    let (to_server, to_client) = (addr(p.server), addr(p.client));
                    flows[p.client].push(FlowOrder {
                        role: PairRole::Client,
                        peer: p.server,
                        peer_addr: to_server,
                        victim: victim == Some(i),
                    });
                    flows[p.server].push(FlowOrder {
                        role: PairRole::Server,
                        peer: p.client,
                        peer_addr: to_client,
                        victim: victim == Some(i),
                    });
                }
                (c, _) => {
                    let gone = if c { p.server } else { p.client };
                    out[i].untested = true;
                    out[i].error = Some(format!("not tested: {}", self.why_not(gone)).into());
                }
            }
        }
        let partners: Vec<Vec<usize>> = flows.iter().map(|f| f.iter().map(|o| o.peer).collect()).collect();
        let tick = Instant::now();
        for (rank, mine) in flows.into_iter().enumerate() {
            let Some(conn) = self.ranks[rank].conn.as_ref() else {
                continue;
            };
            let msg = order(kind, step, mine);
            if let Err(e) = protocol::send(conn, &msg) {
                self.lose(rank, format!("could not be sent its order for {label} ({e})"));
            }
        }
        cpu += tick.elapsed();
        let (answers, busy) = self.answers(step, label, &partners);
        cpu += busy;
        let mut measure_s: f64 = 0.0;
        let mut victim_lat = None;
        for (i, p) in pairs.iter().enumerate() {
            let Some((cs, ss)) = slots[i] else { continue };
            let rec = &mut out[i];
            let (mut c, mut s) = (side(&answers, p.client, cs), side(&answers, p.server, ss));
            if victim == Some(i) {
                victim_lat = c.as_mut().and_then(|c| c.lat.take());
            }
            self.note_counters(p, rec, c.as_mut(), s.as_mut());
            measure_s = measure_s.max(c.as_ref().map_or(0.0, |c| c.measure_s));
            self.settle_pair(p, rec, c, s);
        }
        let wall_s = t0.elapsed().as_secs_f64();
        self.steps.push(StepRecord {
            kind,
            index,
            pairs: pairs.len(),
            wall_s,
            measure_s,
            overhead_s: (wall_s - measure_s).max(0.0),
            coordinator_busy_s: cpu.as_secs_f64(),
        });
        (out, victim_lat)
    }

    /// Pair `p`'s record from its client's and server's accounts (None:
    /// that side never answered).
    fn settle_pair(&self, p: &Pair, rec: &mut PairRecord, c: Option<SideOutcome>, s: Option<SideOutcome>) {
        match (c, s) {
            (Some(c), s) => {
                // a server that never answered was lost: say so beside
                // what the client saw, which names no rank
                let server_lost = (s.is_none() && !self.live(p.server)).then(|| self.why_not(p.server));
                rec.elapsed_s = c.elapsed_s;
                rec.measure_s = c.measure_s;
                rec.rows = c.rows.into_iter().collect();
                rec.value = c.value;
                rec.error = match (c.error, s.and_then(|s| s.error), server_lost) {
                    (Some(ce), Some(se), _) if ce != se => {
                        Some(format!("{ce} (server rank {}: {se})", p.server).into())
                    }
                    (Some(ce), None, Some(lost)) => Some(format!("{ce} (server {lost})").into()),
                    (Some(ce), _, _) => Some(ce.into()),
                    (None, Some(se), _) if rec.value.is_none() => {
                        Some(format!("server rank {}: {se}", p.server).into())
                    }
                    (None, _, _) => None,
                };
                if rec.error.is_some() {
                    rec.value = None;
                }
            }
            (None, s) => {
                // what the server saw of it, when it said
                let seen = s
                    .and_then(|s| s.error)
                    .map(|se| format!(" (server rank {}: {se})", p.server))
                    .unwrap_or_default();
                rec.error = Some(format!("client {}{seen}", self.why_not(p.client)).into());
            }
        }
    }

    /// Each side's NIC counters: what its rank reads (kept once, with the
    /// node), and the pair's changes worth a look (kept with the pair
    /// only when there is one).
    fn note_counters(
        &mut self,
        p: &Pair,
        rec: &mut PairRecord,
        c: Option<&mut SideOutcome>,
        s: Option<&mut SideOutcome>,
    ) {
        let mut noted = PairNoted::default();
        for (rank, side, into) in [(p.client, c, &mut noted.client), (p.server, s, &mut noted.server)] {
            let Some(o) = side else { continue };
            if let (Some(read), Some(r)) = (o.counters_read.take(), self.ranks.get_mut(rank)) {
                r.node.counters.get_or_insert(read);
            }
            *into = std::mem::take(&mut o.noted);
        }
        if !noted.client.is_empty() || !noted.server.is_empty() {
            rec.counters = Some(Box::new(noted));
        }
    }

    /// Every live rank's answer to `step`, read as answers arrive. A rank
    /// is waited for until the step's limit, or `PARTNER_GRACE` after its
    /// pair partner reported their pair failed if that comes first; one
    /// that says nothing by then, or whose connection fails, is lost.
    /// Returns the answers by rank and the time spent reading them.
    fn answers(&mut self, step: u64, label: &str, partners: &[Vec<usize>]) -> (Answers, Duration) {
        let n = self.ranks.len();
        let deadline = Instant::now() + self.cfg.step_timeout;
        let silent = format!(
            "stopped answering: no answer within {:.0} s in {label}",
            self.cfg.step_timeout.as_secs_f64()
        );
        let mut busy = Duration::ZERO;
        let mut answers: Answers = vec![None; n];
        let mut waiting = Waiting::new(self.ranks.iter().map(|r| r.conn.is_some()).collect());
        // earlier limits than the step's: (when, rank, whose report)
        let mut graces: BinaryHeap<Reverse<(Instant, usize, usize)>> = BinaryHeap::new();
        let mut events = vec![EpollEvent::empty(); n.clamp(1, 1024)];
        while waiting.left > 0 {
            let now = Instant::now();
            // limits that passed: a rank its partner gave up on, then all
            while let Some(&Reverse((when, rank, reporter))) = graces.peek() {
                if when > now {
                    break;
                }
                graces.pop();
                if waiting.settle(rank) {
                    let secs = PARTNER_GRACE.as_secs();
                    self.lose(
                        rank,
                        format!("stopped answering: no answer within {secs} s of rank {reporter}'s report that their pair failed, in {label}"),
                    );
                }
            }
            if now >= deadline {
                for rank in waiting.all() {
                    self.lose(rank, silent.clone());
                }
                break;
            }
            if waiting.left == 0 {
                break;
            }
            let wake = graces.peek().map_or(deadline, |Reverse((w, _, _))| (*w).min(deadline));
            // at least 1 ms: 0 would poll without waiting
            let ms = wake.saturating_duration_since(now).as_millis().clamp(1, 1000) as u16;
            let got = match self.ready.wait(&mut events, EpollTimeout::from(ms)) {
                Ok(k) => k,
                Err(nix::errno::Errno::EINTR) => 0,
                Err(e) => {
                    // (only a bad descriptor or buffer makes epoll_wait fail)
                    for rank in waiting.all() {
                        self.lose(rank, format!("could not be watched in {label} (epoll: {e})"));
                    }
                    break;
                }
            };
            for ev in &events[..got] {
                let rank = ev.data() as usize;
                let Some(conn) = self.ranks.get(rank).and_then(|r| r.conn.as_ref()) else {
                    continue;
                };
                let tick = Instant::now();
                let pending = waiting.is(rank);
                // answered already: a stray message, or its connection
                // closing (read now, or it would wake every wait)
                let until = if pending {
                    deadline
                } else {
                    tick + Duration::from_secs(1)
                };
                // an answer with an error gives the failed flows' partners
                // only the grace left (one error for all: every partner)
                let mut answered = |outcomes: Vec<SideOutcome>, waiting: &mut Waiting| {
                    let mine = partners.get(rank).map_or(&[][..], Vec::as_slice);
                    let all = outcomes.len() == 1;
                    for (k, &p) in mine.iter().enumerate() {
                        let failed = outcomes.get(if all { 0 } else { k }).is_some_and(|o| o.error.is_some());
                        if failed && waiting.is(p) {
                            graces.push(Reverse((Instant::now() + PARTNER_GRACE, p, rank)));
                        }
                    }
                    answers[rank] = Some(outcomes);
                    waiting.settle(rank);
                };
                let lost = match protocol::recv::<ToCoordinator>(conn, Some(until)) {
                    Ok(ToCoordinator::Done { step: s, outcome }) if pending && s == step => {
                        answered(self.opened(rank, vec![outcome]), &mut waiting);
                        None
                    }
                    Ok(ToCoordinator::FlowsDone { step: s, outcomes }) if pending && s == step => {
                        answered(self.opened(rank, outcomes), &mut waiting);
                        None
                    }
                    // (held inside a provider call: its reason answers the
                    // pair test it was in)
                    Ok(ToCoordinator::Leave { step: s, reason }) => {
                        if pending && s == Some(step) {
                            let outcome = SideOutcome {
                                error: Some(reason.clone()),
                                ..SideOutcome::default()
                            };
                            answered(vec![outcome], &mut waiting);
                        }
                        Some(format!("left the sweep: {reason}"))
                    }
                    // a late answer to an earlier step, or a stray join
                    Ok(_) => None,
                    Err(ReadFail::Timeout) if pending => Some(silent.clone()),
                    Err(ReadFail::Timeout) => None,
                    Err(e) => Some(format!("was lost in {label}: {e}")),
                };
                if let Some(why) = lost {
                    waiting.settle(rank);
                    self.lose(rank, why);
                }
                busy += tick.elapsed();
            }
        }
        (answers, busy)
    }

    /// `outcomes`, with the endpoints they say rank `rank` has opened
    /// noted on its node (cumulative on the rank; an idle answer carries
    /// none).
    fn opened(&mut self, rank: usize, outcomes: Vec<SideOutcome>) -> Vec<SideOutcome> {
        if let Some(r) = self.ranks.get_mut(rank) {
            for o in &outcomes {
                r.node.endpoint_opens = r.node.endpoint_opens.max(o.opens);
                r.node.endpoint_open_s = r.node.endpoint_open_s.max(o.open_s);
            }
        }
        outcomes
    }
}
