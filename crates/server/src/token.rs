//! The server's bearer token and its lifetime.
//!
//! A token the server made lasts `ttl` (default [`DEFAULT_TTL`], `podcode serve
//! --token-ttl`); when it expires, `renew` makes the next one, which the front end prints
//! where the first was. A token the user chose (`PODCODE_SERVER_TOKEN`) lasts as long as
//! the server unless a lifetime was given; it cannot be renewed (the user chose it), so
//! once expired the server must be restarted with a new one. A request with an expired
//! token is told so, and how to get a new one (`Check::Expired`), rather than a bare
//! "unauthorized"; it does not count as a failed guess (only the holder of a real token
//! can send it).

use std::sync::RwLock;
use std::time::{Duration, Instant};

use crate::auth::{new_token, same};

/// How long a token the server made lasts unless `--token-ttl` says otherwise: a working
/// day and a night, after which the terminal shows the next one.
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// What a presented token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Valid,
    /// The current token past its lifetime, or one that was renewed since: the text to
    /// answer (how to get a new one).
    Expired(String),
    Wrong,
}

struct Current {
    value: String,
    expires: Option<Instant>,
    /// Tokens this one replaced (recognised to answer "expired", never accepted).
    previous: Vec<String>,
}

/// The token and when it expires.
pub struct Tokens {
    current: RwLock<Current>,
    ttl: Option<Duration>,
    chosen: bool,
}

/// At most this many renewed tokens are remembered (to say "expired" instead of "wrong").
const REMEMBERED: usize = 8;

impl Tokens {
    /// `value` lasting `ttl` (`None`: as long as the server); `chosen`: the user chose it.
    pub fn new(value: String, ttl: Option<Duration>, chosen: bool) -> Self {
        Self {
            current: RwLock::new(Current {
                value,
                expires: ttl.map(|t| Instant::now() + t),
                previous: Vec::new(),
            }),
            ttl,
            chosen,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Current> {
        // A panic while holding the lock cannot leave `Current` half-written.
        self.current.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The token clients must send now.
    pub fn value(&self) -> String {
        self.read().value.clone()
    }

    /// When the current token expires (`None`: never).
    pub fn expires(&self) -> Option<Instant> {
        self.read().expires
    }

    pub fn ttl(&self) -> Option<Duration> {
        self.ttl
    }

    /// Whether `presented` is the live token, an expired one or no token of ours.
    pub fn check(&self, presented: &str) -> Check {
        let now = Instant::now();
        let cur = self.read();
        if same(presented, &cur.value) {
            return match cur.expires {
                Some(at) if now >= at => Check::Expired(self.expired_text()),
                _ => Check::Valid,
            };
        }
        if cur.previous.iter().any(|p| same(presented, p)) {
            return Check::Expired(self.expired_text());
        }
        Check::Wrong
    }

    /// Replaces a token the server made with a new one lasting the same time, and returns
    /// it; `None` for a chosen token (only the user can choose the next one).
    pub fn renew(&self) -> Result<Option<String>, getrandom::Error> {
        if self.chosen {
            return Ok(None);
        }
        let next = new_token()?;
        let mut cur = self.current.write().unwrap_or_else(|e| e.into_inner());
        let old = std::mem::replace(&mut cur.value, next.clone());
        cur.previous.push(old);
        if cur.previous.len() > REMEMBERED {
            cur.previous.remove(0);
        }
        cur.expires = self.ttl.map(|t| Instant::now() + t);
        Ok(Some(next))
    }

    /// What a client with an expired token is told.
    pub fn expired_text(&self) -> String {
        let ttl = self
            .ttl
            .map(|t| humantime::format_duration(t).to_string())
            .unwrap_or_default();
        if self.chosen {
            format!(
                "the token expired: the token in PODCODE_SERVER_TOKEN lasts {ttl} here \
                 (`podcode serve --token-ttl`); restart `podcode serve` with a new one"
            )
        } else {
            format!(
                "the token expired: the server's tokens last {ttl} (`podcode serve \
                 --token-ttl`); use the newest token `podcode serve` printed in its terminal"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renewed_token_is_expired_and_the_next_one_valid() {
        let t = Tokens::new("first".into(), Some(Duration::from_secs(3600)), false);
        assert_eq!(t.check("first"), Check::Valid);
        assert_eq!(t.check("other"), Check::Wrong);
        let next = t.renew().unwrap().unwrap();
        assert_eq!(t.check(&next), Check::Valid);
        assert_eq!(
            t.check("first"),
            Check::Expired(
                "the token expired: the server's tokens last 1h (`podcode serve --token-ttl`); \
                 use the newest token `podcode serve` printed in its terminal"
                    .into()
            )
        );
    }

    #[test]
    fn a_chosen_token_expires_in_place_and_is_not_renewed() {
        let t = Tokens::new("mine".into(), Some(Duration::ZERO), true);
        assert_eq!(t.renew().unwrap(), None);
        assert_eq!(
            t.check("mine"),
            Check::Expired(
                "the token expired: the token in PODCODE_SERVER_TOKEN lasts 0s here \
                 (`podcode serve --token-ttl`); restart `podcode serve` with a new one"
                    .into()
            )
        );
        let forever = Tokens::new("mine".into(), None, true);
        assert_eq!(
            (forever.check("mine"), forever.expires()),
            (Check::Valid, None)
        );
    }
}
