//! Identifiers and timestamps. Ids are a short kind prefix plus a ULID, so they sort by
//! creation time and say what they name (`ses_…`, `msg_…`, `call_…`, `chg_…`).

use std::time::{SystemTime, UNIX_EPOCH};

/// A new id such as `ses_01jd…`: `prefix` names the kind of thing it identifies.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// Milliseconds since the Unix epoch; the store keeps every time in this unit.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_their_prefix_and_sort_by_time() {
        let a = new_id("ses");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_id("ses");
        assert!(a.starts_with("ses_"));
        assert_eq!(a.len(), 4 + 26);
        assert!(a < b);
    }
}
