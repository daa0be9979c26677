//! One line for an error and its causes, as a front end prints it: each cause after a colon,
//! unless the text so far already says it — many errors repeat their source in their own
//! message (`cannot open the store at …: disk full`), and printing the chain as it is would
//! say it twice.

/// `parts` (the error's message, then each cause's) joined by `: `, each said once.
pub fn error_chain(parts: impl IntoIterator<Item = String>) -> String {
    let mut out = String::new();
    for part in parts {
        if part.is_empty() || out.contains(&part) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_already_holds_is_said_once() {
        let parts = |p: &[&str]| error_chain(p.iter().map(|s| s.to_string()));
        assert_eq!(
            parts(&["c.toml:2:5: unclosed table", "c.toml:2:5: unclosed table"]),
            "c.toml:2:5: unclosed table"
        );
        assert_eq!(
            parts(&["cannot open the store at /d/p.db: disk full", "disk full"]),
            "cannot open the store at /d/p.db: disk full"
        );
        assert_eq!(
            parts(&["loading the plugins", "bun exited"]),
            "loading the plugins: bun exited"
        );
    }
}
