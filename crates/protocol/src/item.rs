//! The conversation as every front end shows it: one `Item` per prompt, answer, reasoning
//! block, tool call, compaction and revert note. The engine builds items from the store
//! (`Engine::transcript`), and `ItemFold` (`fold.rs`) builds the same items from a
//! session's live `Event`s, so a front end renders one model whichever way it got the
//! conversation. The few readings both sides share (a call's diff, a `task` call's child
//! session) are functions here, so the two cannot drift apart.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ToolCallState;

/// One entry of a conversation (JSON: an object with a `kind` tag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// A prompt the user wrote, with the files attached to it.
    User {
        /// The stored user message (as `Event::UserMessage` names it).
        message_id: String,
        /// The prompt as the model reads it.
        text: String,
        /// Paths of the attached files.
        #[serde(default)]
        files: Vec<String>,
    },
    /// Assistant text (one block: text between two reasoning blocks or tool calls).
    Assistant {
        /// The assistant message it belongs to.
        message_id: String,
        /// The text.
        text: String,
    },
    /// Model reasoning.
    Reasoning {
        /// The assistant message it belongs to.
        message_id: String,
        /// The reasoning text.
        text: String,
    },
    /// A tool call the model asked for.
    Tool(ToolItem),
    /// The conversation sent to the model was compacted from here on (the store keeps
    /// every original message); what `Event::Compacted` carries.
    Compaction {
        /// `auto`, `overflow` or `manual`.
        reason: String,
        /// Old tool outputs replaced by a one-line marker.
        pruned: u32,
        /// Messages replaced by the summary.
        summarized: u32,
        /// Estimated prompt tokens before.
        tokens_before: u64,
        /// Estimated prompt tokens after.
        tokens_after: u64,
    },
    /// What the model was told after the user reverted changes (sent with its next request).
    RevertNote {
        /// The note, one line per reverted file.
        text: String,
    },
}

/// A tool call as a card shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolItem {
    /// The call's id.
    pub call_id: String,
    /// The tool's id.
    pub tool: String,
    /// The arguments as parsed from the model's request (`null` until the call starts, and
    /// when they could not be parsed).
    pub args: Value,
    /// The result's title (while running: the latest one the tool set).
    pub title: String,
    /// Running, or how it ended.
    pub state: ToolCallState,
    /// How long it ran (0 while running).
    pub elapsed_ms: u64,
    /// The output the model read, or the error text of a call that did not complete.
    pub output: String,
    /// How many attachments the result had.
    pub attachments: usize,
    /// The file with the full output, when it was truncated.
    pub spill_path: Option<String>,
    /// The diff of the file change it made, when there was one.
    pub diff: Option<String>,
    /// For a `task` call: the sub-agent's session.
    pub child_session_id: Option<String>,
}

impl ToolItem {
    /// A call just asked for: running, nothing known but its id and tool.
    pub fn requested(call_id: &str, tool: &str) -> Self {
        Self {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args: Value::Null,
            title: String::new(),
            state: ToolCallState::Running,
            elapsed_ms: 0,
            output: String::new(),
            attachments: 0,
            spill_path: None,
            diff: None,
            child_session_id: None,
        }
    }
}

/// The diff a result's metadata carries (`metadata.diff`, when not empty).
pub fn diff_of(metadata: &Value) -> Option<String> {
    metadata
        .get("diff")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
}

/// The sub-agent session a `task` call's result names (`metadata.sessionId`).
pub fn child_of(tool: &str, metadata: &Value) -> Option<String> {
    if tool != "task" {
        return None;
    }
    metadata
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_serialise_with_a_kind_tag_and_the_keys_the_web_page_reads() {
        let mut call = ToolItem::requested("call_1", "read");
        call.args = json!({"filePath": "a.txt"});
        call.state = ToolCallState::TimedOut;
        let v = serde_json::to_value(Item::Tool(call)).unwrap();
        assert_eq!(v["kind"], "tool");
        assert_eq!(v["call_id"], "call_1");
        assert_eq!(v["state"], "timed_out");
        assert_eq!(v["args"]["filePath"], "a.txt");
        for key in [
            "title",
            "elapsed_ms",
            "output",
            "attachments",
            "spill_path",
            "diff",
        ] {
            assert!(v.get(key).is_some(), "{key} missing");
        }
        let note = Item::RevertNote { text: "x".into() };
        assert_eq!(
            serde_json::to_string(&note).unwrap(),
            r#"{"kind":"revert_note","text":"x"}"#
        );
        let back: Item = serde_json::from_value(v).unwrap();
        assert!(matches!(back, Item::Tool(t) if t.state == ToolCallState::TimedOut));
    }

    #[test]
    fn diff_and_child_are_read_from_metadata() {
        assert_eq!(diff_of(&json!({"diff": ""})), None);
        assert_eq!(diff_of(&json!({"diff": "+a"})).as_deref(), Some("+a"));
        assert_eq!(child_of("read", &json!({"sessionId": "ses_1"})), None);
        assert_eq!(
            child_of("task", &json!({"sessionId": "ses_1"})).as_deref(),
            Some("ses_1")
        );
    }
}
