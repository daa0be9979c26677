//! When and how long to wait before trying a request again: retryable statuses, exponential
//! backoff with jitter, and the server's `retry-after` / `retry-after-ms` headers.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How failed requests are retried. Only failures before the first streamed event are
/// retried: HTTP 429/500/502/503/504/529, connection errors, and streams that break before
/// producing anything. A response's `x-should-retry: true|false` header (sent by the
/// OpenAI and Anthropic APIs) overrides the status-based decision.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total tries including the first (default 4).
    pub max_attempts: u32,
    /// Backoff after the n-th failure is `base_delay × 2^n` (default 500 ms) plus up to 20 %
    /// jitter, capped at `max_delay` (default 8 s).
    pub base_delay: Duration,
    /// The longest backoff between tries.
    pub max_delay: Duration,
    /// A server's `retry-after` is honoured up to this long (default 60 s).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait after failure number `failures` (0 for the first failure), without a
    /// `retry-after` from the server.
    pub fn backoff(&self, failures: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(failures.min(16)));
        let capped = exp.min(self.max_delay);
        let jitter = capped.mul_f64(0.2 * random_unit());
        (capped + jitter).min(self.max_delay.max(capped))
    }

    /// The wait before the next try: the server's `retry-after` (capped) when it sent one,
    /// else the backoff.
    pub(crate) fn delay(&self, failures: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(d) => d.min(self.max_retry_after),
            None => self.backoff(failures),
        }
    }
}

/// Statuses worth another try: rate limits, overload and gateway failures.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

/// `retry-after-ms` (OpenAI), else `retry-after` as seconds (fractions allowed) or an HTTP
/// date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    parse_retry_after(header("retry-after")?, now)
}

pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn duration_from_secs(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// A number in [0, 1) from the standard library's per-process random hasher keys.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x5eed);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy::default();
        for n in 0..3 {
            let want = Duration::from_millis(500 << n);
            let got = p.backoff(n);
            assert!(got >= want && got <= want.mul_f64(1.2), "{n}: {got:?}");
        }
        assert_eq!(p.backoff(30), Duration::from_secs(8));
    }

    #[test]
    fn retry_after_in_seconds_dates_and_ms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(parse_retry_after(&date, now), Some(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);

        let mut h = HeaderMap::new();
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(1500)));
        // The server's wait is capped.
        assert_eq!(
            RetryPolicy::default().delay(0, Some(Duration::from_secs(600))),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn retryable_statuses() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s));
        }
        for s in [400, 401, 403, 404, 422, 501] {
            assert!(!is_retryable_status(s));
        }
    }
}
