//! The note a revert leaves for the model. After the user reverts changes (`podcode
//! revert`, the TUI's `/undo` or Changes view, the server's revert route, `Op::Revert`),
//! the conversation still holds the tool results that said the file was written; without a
//! word about the revert the model works from a file that is no longer there. So each
//! revert stores a user-role message (marked `synthetic`, so transcripts do not show it as
//! a prompt) in the conversation the user drives — the root of the session's tree, and the
//! sub-agent session itself when the revert was journaled under one — and `load_history`
//! sends it with the next request like any stored message, after a resume too.

use std::path::Path;

use podcode_protocol::RecordedChange;
use serde_json::json;

use crate::engine::Engine;
use crate::error::EngineError;

/// The model-facing line for one revert record (`reverted`: the record the revert
/// journaled; `redo`: it restored a change an earlier revert had undone).
pub fn revert_note_line(file: &str, file_gone: bool, redo: bool) -> String {
    if redo {
        format!(
            "The user restored the change to {file} that had been reverted (the file has that change again)."
        )
    } else if file_gone {
        format!(
            "The user reverted the change to {file} (the file no longer exists, as before the change)."
        )
    } else {
        format!(
            "The user reverted the change to {file} (the file is back to its previous content)."
        )
    }
}

impl Engine {
    /// Stores the note about `reverted` (the revert records of one revert, journaled under
    /// `session_id`) for the model, and returns it (the `RevertReport`'s `note`, which
    /// front ends show as an `Item::RevertNote`); nothing when nothing was reverted.
    pub(crate) fn note_revert(
        &self,
        session_id: &str,
        reverted: &[RecordedChange],
    ) -> Result<Option<String>, EngineError> {
        if reverted.is_empty() {
            return Ok(None);
        }
        let store = self.store()?;
        let Some(session) = store.session(session_id)? else {
            return Ok(None);
        };
        let mut lines = Vec::new();
        for record in reverted {
            // A record that reverts a revert record puts the original change back.
            let redo = match &record.reverts {
                Some(id) => store.change(id)?.is_some_and(|c| c.reverts.is_some()),
                None => false,
            };
            let file = Path::new(&record.file)
                .strip_prefix(&session.cwd)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| record.file.clone());
            let line = revert_note_line(&file, record.new_content.is_none(), redo);
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        let text = lines.join("\n");
        let root = session
            .root_id
            .clone()
            .unwrap_or_else(|| session.id.clone());
        let mut targets = vec![root];
        if session.id != targets[0] {
            targets.push(session.id.clone());
        }
        for id in targets {
            let content = json!({"agent": session.agent, "synthetic": true, "note": "revert"});
            let message = store.add_message(&id, "user", &content)?;
            store.add_part(&message, &id, "text", &json!({ "text": text }))?;
        }
        Ok(Some(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_revert_has_its_line() {
        assert_eq!(
            revert_note_line("undo_me.txt", false, false),
            "The user reverted the change to undo_me.txt (the file is back to its previous content)."
        );
        assert_eq!(
            revert_note_line("new.txt", true, false),
            "The user reverted the change to new.txt (the file no longer exists, as before the change)."
        );
        assert_eq!(
            revert_note_line("a.txt", false, true),
            "The user restored the change to a.txt that had been reverted (the file has that change again)."
        );
    }
}
