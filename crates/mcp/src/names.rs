//! Tool ids for MCP tools: `<server>_<tool>`, sanitised to the id rule
//! `^[A-Za-z][A-Za-z0-9_-]{0,63}$`. Characters outside the rule become `_`; a name that
//! does not start with a letter gets an `mcp_` prefix; a name longer than 64 characters,
//! or one that collides with an id already given out, is cut and ends in a short hash of
//! the original name so two different tools never share an id.

use std::collections::HashSet;

const MAX_ID: usize = 64;

/// A stable 6-hex-digit hash (FNV-1a), so ids survive restarts and cache round trips.
fn short_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{:06x}", h & 0x00ff_ffff)
}

fn sanitise(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert_str(0, "mcp_");
    }
    out
}

fn with_hash(base: &str, original: &str) -> String {
    let hash = short_hash(original);
    let keep = MAX_ID - hash.len() - 1;
    let cut: String = base.chars().take(keep).collect();
    format!("{cut}_{hash}")
}

/// Gives out ids for one server's tools, never the same id twice.
#[derive(Default)]
pub struct IdAllocator {
    used: HashSet<String>,
}

impl IdAllocator {
    /// An allocator with no ids given out yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id for `tool` on `server`.
    pub fn id(&mut self, server: &str, tool: &str) -> String {
        let original = format!("{server}_{tool}");
        let base = sanitise(&original);
        let mut id = if base.len() > MAX_ID || self.used.contains(&base) {
            with_hash(&base, &original)
        } else {
            base.clone()
        };
        let mut salt = 0u32;
        while self.used.contains(&id) {
            salt += 1;
            id = with_hash(&base, &format!("{original}#{salt}"));
        }
        self.used.insert(id.clone());
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(id: &str) -> bool {
        id.len() <= 64
            && id.starts_with(|c: char| c.is_ascii_alphabetic())
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_join_with_an_underscore() {
        let mut ids = IdAllocator::new();
        assert_eq!(ids.id("everything", "echo"), "everything_echo");
        assert_eq!(ids.id("everything", "get-sum"), "everything_get-sum");
    }

    #[test]
    fn bad_characters_and_leading_digits_are_sanitised() {
        let mut ids = IdAllocator::new();
        assert_eq!(ids.id("my server", "read.file"), "my_server_read_file");
        assert_eq!(ids.id("1x", "t"), "mcp_1x_t");
    }

    #[test]
    fn long_and_colliding_names_get_a_short_hash() {
        let mut ids = IdAllocator::new();
        let long = "a".repeat(80);
        let id = ids.id("srv", &long);
        assert!(valid(&id), "{id}");
        assert_eq!(id.len(), 64);
        let a = ids.id("s", "a.b");
        let b = ids.id("s", "a/b");
        assert_eq!(a, "s_a_b");
        assert_ne!(a, b);
        assert!(valid(&b) && b.starts_with("s_a_b_"), "{b}");
        // Stable across runs.
        assert_eq!(IdAllocator::new().id("srv", &long), id);
    }
}
