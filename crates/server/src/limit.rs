//! Failed authentication, limited and logged per peer.
//!
//! Each peer (an IPv4 address, or an IPv6 /64, since one host holds a whole /64) has a
//! bucket of [`BURST`] failures that refills one every [`REFILL`]. A wrong token, cookie or
//! sign-in code takes one; with the bucket empty, every `/api` request from that peer is
//! answered 429 with `Retry-After` until it refills, so guessing runs at ten a minute at
//! most. A request without any credential costs nothing (a page probing whether it is
//! signed in). Each failure is logged to stderr, and so is the moment a peer gets blocked.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures allowed in a row before a peer waits.
pub const BURST: u32 = 10;
/// One more failure is allowed after each of these.
pub const REFILL: Duration = Duration::from_secs(6);
/// Peers remembered at most; buckets that have refilled are forgotten first.
const PEERS: usize = 4096;

#[derive(Default)]
pub struct Limiter {
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    /// Failures left at `at`.
    left: f64,
    at: Instant,
}

impl Bucket {
    fn now(self, now: Instant) -> f64 {
        let refilled = now.duration_since(self.at).as_secs_f64() / REFILL.as_secs_f64();
        (self.left + refilled).min(f64::from(BURST))
    }
}

/// The key a peer's failures are counted under.
fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut seg = v6.segments();
                seg[4..].fill(0);
                IpAddr::V6(seg.into())
            }
        },
        v4 => v4,
    }
}

impl Limiter {
    /// How long `ip` must wait before its next attempt, if it is blocked.
    pub fn blocked(&self, ip: IpAddr) -> Option<Duration> {
        let buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = buckets.get(&key(ip))?;
        let left = bucket.now(Instant::now());
        (left < 1.0).then(|| REFILL.mul_f64(1.0 - left))
    }

    /// Counts a failure of `ip` and logs it; returns how long it must now wait, if blocked.
    pub fn fail(&self, ip: IpAddr, what: &str) -> Option<Duration> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= PEERS {
            buckets.retain(|_, b| b.now(now) < f64::from(BURST));
        }
        let bucket = buckets.entry(key(ip)).or_insert(Bucket {
            left: f64::from(BURST),
            at: now,
        });
        let left = (bucket.now(now) - 1.0).max(0.0);
        *bucket = Bucket { left, at: now };
        eprintln!("podcode serve: failed authentication from {ip}: {what}");
        if left < 1.0 {
            let wait = REFILL.mul_f64(1.0 - left);
            eprintln!(
                "podcode serve: too many failed attempts from {ip}: refusing it for {} s",
                wait.as_secs().max(1)
            );
            Some(wait)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_is_blocked_after_a_burst_of_failures_and_others_are_not() {
        let limiter = Limiter::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..BURST - 1 {
            assert_eq!(limiter.fail(a, "test"), None);
        }
        assert!(limiter.blocked(a).is_none());
        assert!(limiter.fail(a, "test").is_some());
        let wait = limiter.blocked(a).unwrap();
        assert!(wait <= REFILL && wait > Duration::ZERO);
        assert!(limiter.blocked(b).is_none());
        // One /64 is one peer.
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::2".parse().unwrap();
        for _ in 0..BURST {
            limiter.fail(v6a, "test");
        }
        assert!(limiter.blocked(v6b).is_some());
    }
}
