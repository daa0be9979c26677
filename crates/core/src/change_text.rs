//! What `podcode changes` and `podcode revert` print: one line per journaled change (id,
//! time, operation, diffstat, file, session, call, and what reverted it or what it
//! reverts), one change as a unified diff, and what a revert restored. The front end prints
//! what this returns.

use podcode_protocol::{RecordedChange, RevertReport, display_text, sanitize_for_terminal};

use crate::engine::Engine;
use crate::error::EngineError;

/// Lines added and removed by a change.
pub fn diffstat(c: &RecordedChange) -> (usize, usize) {
    let old: &str = &display_text(c.old_content.as_deref());
    let new: &str = &display_text(c.new_content.as_deref());
    let diff = similar::TextDiff::from_lines(old, new);
    let (mut add, mut del) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => add += 1,
            similar::ChangeTag::Delete => del += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (add, del)
}

/// One change as a unified diff, safe to print on a terminal.
pub fn change_diff(c: &RecordedChange) -> String {
    sanitize_for_terminal(&crate::changes::unified_diff(
        &c.file,
        &display_text(c.old_content.as_deref()),
        &display_text(c.new_content.as_deref()),
    ))
    .into_owned()
}

impl Engine {
    /// One line per change, in the order given.
    pub fn change_lines(&self, changes: &[RecordedChange]) -> Result<Vec<String>, EngineError> {
        let mut out = Vec::new();
        for c in changes {
            let (add, del) = diffstat(c);
            let when = humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_millis(c.time.max(0) as u64),
            );
            let mut note = String::new();
            if let Some(r) = &c.reverts {
                note = format!("  (reverts {r})");
            } else if let Some(by) = self.reverted_by(&c.id)? {
                note = format!("  (reverted by {by})");
            }
            out.push(format!(
                "{}  {when}  {:6}  +{add} -{del}  {}  {}  call {}{note}",
                c.id,
                c.op.as_str(),
                c.file,
                c.session_id,
                c.call_id.as_deref().unwrap_or("-")
            ));
        }
        Ok(out)
    }
}

/// What a revert restored (or that there was nothing to revert); `Err` with the text to
/// show when it refused (a file changed since, with its diff) or failed.
pub fn revert_lines(report: &RevertReport) -> Result<Vec<String>, String> {
    if let Some(conflict) = &report.conflict {
        return Err(sanitize_for_terminal(&crate::changes::conflict_text(conflict)).into_owned());
    }
    if let Some(e) = &report.error {
        return Err(e.clone());
    }
    let mut out = Vec::new();
    if report.reverted.is_empty() {
        out.push(format!(
            "Nothing to revert{}.",
            if report.skipped.is_empty() {
                ""
            } else {
                " (already reverted)"
            }
        ));
    }
    for c in &report.reverted {
        out.push(format!(
            "restored {} ({} → {})",
            c.file,
            c.op.as_str(),
            c.id
        ));
    }
    Ok(out)
}
