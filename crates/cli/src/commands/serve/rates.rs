//! `fabdiag serve --max-tests-per-minute`: how many tests each client (an
//! address) started in the last minute, and whether it may start one
//! more. Bounded: only the last minute's starts are kept, and an address
//! is forgotten once its last start is a minute old, so a crowd of
//! addresses costs memory only while it keeps coming. Counts; never
//! answers a client (the server does).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

pub struct Rates {
    per_minute: u32,
    started: HashMap<IpAddr, VecDeque<Instant>>,
}

impl Rates {
    pub fn new(per_minute: u32) -> Rates {
        Rates {
            per_minute,
            started: HashMap::new(),
        }
    }

    /// Whether `ip` may start a test at `now`; if so, it is counted. A
    /// refusal says how long until its oldest start of the minute leaves
    /// the window.
    pub fn admit(&mut self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        self.forget_before(now);
        let starts = self.started.entry(ip).or_default();
        if starts.len() >= self.per_minute as usize {
            let oldest = starts.front().copied().unwrap_or(now);
            return Err(WINDOW.saturating_sub(now.saturating_duration_since(oldest)));
        }
        starts.push_back(now);
        Ok(())
    }

    /// Addresses being kept (for the tests: the memory stays bounded).
    #[cfg(test)]
    pub fn addresses(&self) -> usize {
        self.started.len()
    }

    fn forget_before(&mut self, now: Instant) {
        self.started.retain(|_, starts| {
            while starts
                .front()
                .is_some_and(|&t| now.saturating_duration_since(t) >= WINDOW)
            {
                starts.pop_front();
            }
            !starts.is_empty()
        });
    }

    /// The server's line for a refused client.
    pub fn refusal(&self, ip: IpAddr, wait: Duration) -> String {
        format!(
            "{ip} started {} tests in the last minute, this server's limit (fabdiag serve --max-tests-per-minute); try again in {} s",
            self.per_minute,
            wait.as_secs().max(1)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_gets_its_tests_a_minute_and_no_more() {
        let t0 = Instant::now();
        let (a, b): (IpAddr, IpAddr) = ("198.18.0.1".parse().unwrap(), "198.18.0.2".parse().unwrap());
        let mut r = Rates::new(2);
        assert_eq!(r.admit(a, t0), Ok(()));
        assert_eq!(r.admit(a, t0 + Duration::from_secs(10)), Ok(()));
        assert_eq!(r.admit(a, t0 + Duration::from_secs(20)), Err(Duration::from_secs(40)));
        // another address is not held to the first's count
        assert_eq!(r.admit(b, t0 + Duration::from_secs(20)), Ok(()));
        // the first start leaves the window after a minute
        assert_eq!(r.admit(a, t0 + Duration::from_secs(60)), Ok(()));
        assert!(r.refusal(a, Duration::from_millis(300)).ends_with("try again in 1 s"));
    }

    #[test]
    fn a_crowd_of_addresses_is_forgotten_after_a_minute() {
        let t0 = Instant::now();
        let mut r = Rates::new(1);
        for i in 0..10_000u32 {
            let ip = IpAddr::from((0xC612_0000 | (i & 0xFFFF)).to_be_bytes());
            let _ = r.admit(ip, t0 + Duration::from_millis(u64::from(i)));
        }
        assert_eq!(r.addresses(), 10_000);
        let late: IpAddr = "198.19.0.1".parse().unwrap();
        assert_eq!(r.admit(late, t0 + Duration::from_secs(71)), Ok(()));
        assert_eq!(r.addresses(), 1);
    }
}
