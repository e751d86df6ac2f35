//! The join: every rank connects and says hello within the join limit;
//! a connection that says nothing holds up no other. Never prints.

use super::arrivals::Arrivals;
use super::*;

impl super::Coordinator<'_> {
    pub(super) fn join(&mut self, listener: &TcpListener) -> Result<(), SweepError> {
        let deadline = Instant::now() + self.cfg.join_timeout;
        let mut arrivals = Arrivals::new(listener)?;
        let mut joined = 0;
        let mut stopped = None;
        while joined < self.cfg.size && Instant::now() < deadline {
            // in slices, so a stop is heard while ranks are still awaited
            let ready = arrivals.next(listener, deadline)?;
            stopped = self.obs.stopped();
            if stopped.is_some() {
                break;
            }
            for s in ready {
                if self.admit(s) {
                    joined += 1;
                }
            }
        }
        let reason = match stopped {
            Some(why) => format!("had not joined when the sweep was stopped by {why}"),
            None => format!("never joined within {} s", self.cfg.join_timeout.as_secs()),
        };
        // (one that said why it could not start keeps its reason)
        for r in self
            .ranks
            .iter_mut()
            .filter(|r| r.conn.is_none() && r.node.reason.is_none())
        {
            r.node.reason = Some(reason.clone());
        }
        Ok(())
    }

    /// Reads a newcomer's join and welcomes or refuses it.
    fn admit(&mut self, s: TcpStream) -> bool {
        let _ = s.set_nodelay(true);
        // (without it, a rank cut off is still found by the round's limit)
        let _ = protocol::watch_link(&s);
        let _ = s.set_write_timeout(Some(self.cfg.step_timeout));
        let refuse = |s: &TcpStream, reason: String| {
            let _ = protocol::send(s, &ToRank::Refused { reason });
            false
        };
        let Ok(ToCoordinator::Join {
            protocol,
            version,
            rank,
            size,
            host,
            device,
            gpu,
            pair_port,
            unable,
            nonce,
            auth_method,
            lldp,
        }) = protocol::recv(&s, Some(Instant::now() + Duration::from_secs(5)))
        else {
            return false;
        };
        let major_minor = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
        if protocol != SWEEP_PROTOCOL || major_minor(&version) != major_minor(&self.cfg.version) {
            return refuse(
                &s,
                format!(
                    "rank {rank} runs fabdiag {version} (sweep protocol {protocol}), rank 0 runs {} (protocol {SWEEP_PROTOCOL})",
                    self.cfg.version
                ),
            );
        }
        // before anything it says is taken: a process without the proof
        // neither takes a rank's place nor sends a result
        let deadline = Instant::now() + Duration::from_secs(5);
        if let Err(why) = crate::auth::admit(
            &s,
            self.cfg.auth.as_ref(),
            nonce.as_deref().map(|n| (n, auth_method)),
            deadline,
        ) {
            return refuse(&s, format!("rank {rank} from {host} refused: {why}"));
        }
        if size != self.cfg.size {
            return refuse(
                &s,
                format!(
                    "rank {rank} was started with {size} ranks, rank 0 with {}",
                    self.cfg.size
                ),
            );
        }
        let Some(slot) = self.ranks.get_mut(rank) else {
            return refuse(&s, format!("rank {rank} is out of range for {size} ranks"));
        };
        let lldp = lldp.map(|l| l.map_err(|e| e.chars().take(300).collect::<String>()));
        // (a rank that said it could not start has its slot too)
        if slot.conn.is_some() || slot.node.reason.is_some() {
            let first = slot.node.host.clone().unwrap_or_default();
            return refuse(
                &s,
                format!("rank {rank} joined twice (first from {first}, again from {host})"),
            );
        }
        if let Some(why) = unable {
            // it takes no part: its pairs go untested, with its reason
            let _ = protocol::send(&s, &ToRank::Refused { reason: "noted".into() });
            slot.node.host = Some(host);
            slot.node.device = device;
            slot.node.gpu = gpu;
            slot.node.lldp = lldp;
            slot.node.reason = Some(format!("could not start: {why}"));
            return true;
        }
        let Ok(ip) = s.peer_addr().map(|a| fabdiag_proto::plain(a).ip()) else {
            return false;
        };
        if let Err(e) = self.ready.add(&s, EpollEvent::new(EpollFlags::EPOLLIN, rank as u64)) {
            return refuse(&s, format!("rank 0 cannot watch rank {rank}'s connection: {e}"));
        }
        if protocol::send(
            &s,
            &ToRank::Welcome {
                test: self.cfg.test.clone(),
                figure: self.cfg.figure,
                victim_test: self.cfg.victim.as_ref().map(|v| v.test.clone()),
            },
        )
        .is_err()
        {
            return false;
        }
        slot.node.host = Some(host);
        slot.node.device = device;
        slot.node.gpu = gpu;
        slot.node.lldp = lldp;
        slot.node.addr = Some(std::net::SocketAddr::new(ip, pair_port).to_string());
        slot.node.status = NodeStatus::Ok;
        slot.conn = Some(s);
        true
    }
}
