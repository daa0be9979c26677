//! `WireMemo`: each message of a conversation as the chat completions body last wrote it.
//! A session sends its whole conversation at every step, and all but the newest messages
//! are the same as in the step before: an entry is reused while the message at its place
//! equals the one it was written from (comparing costs a fraction of writing JSON, with its
//! escaping), and written again otherwise — a compacted or rewritten conversation included.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::request::message_items;
use crate::Message;

/// One message's items (a user message with tool results is several) as written JSON.
pub(crate) type Items = Arc<[Box<RawValue>]>;

/// The written items of the last conversation sent, by position.
#[derive(Debug, Default)]
pub(crate) struct WireMemo(Vec<(Message, Items)>);

impl WireMemo {
    /// The items of each of `messages`, reusing what this memo holds for an equal message
    /// at the same place.
    pub(crate) fn items(&mut self, messages: &[Message]) -> serde_json::Result<Vec<Items>> {
        let mut out = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            if let Some((was, items)) = self.0.get(i)
                && was == m
            {
                out.push(items.clone());
                continue;
            }
            let items = message_items(m)?;
            let entry = (m.clone(), items.clone());
            match self.0.get_mut(i) {
                Some(slot) => *slot = entry,
                None => self.0.push(entry),
            }
            out.push(items);
        }
        self.0.truncate(messages.len());
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Part, Role};

    fn user(text: &str) -> Message {
        Message {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    fn written(items: &[Items]) -> Vec<String> {
        (items.iter().flat_map(|m| m.iter()))
            .map(|r| r.get().to_string())
            .collect()
    }

    #[test]
    fn an_equal_message_reuses_its_json_and_a_changed_one_is_written_again() {
        let mut memo = WireMemo::default();
        let first = memo.items(&[user("a"), user("b")]).unwrap();
        let again = memo.items(&[user("a"), user("b"), user("c")]).unwrap();
        assert!(Arc::ptr_eq(&first[0], &again[0]) && Arc::ptr_eq(&first[1], &again[1]));
        assert_eq!(
            written(&again),
            [
                r#"{"role":"user","content":"a"}"#,
                r#"{"role":"user","content":"b"}"#,
                r#"{"role":"user","content":"c"}"#
            ]
        );
        // A conversation rewritten at its start (compaction) is written from what it is now.
        let compacted = memo.items(&[user("summary"), user("c")]).unwrap();
        assert_eq!(
            written(&compacted),
            [
                r#"{"role":"user","content":"summary"}"#,
                r#"{"role":"user","content":"c"}"#
            ]
        );
        assert!(!Arc::ptr_eq(&compacted[1], &again[1]));
        assert_eq!(memo.0.len(), 2);
    }
}
