//! `WireMemo`: each message of a conversation as the chat completions body last wrote it.
//! A session sends its whole conversation at every step, and all but the newest messages
//! are the same as in the step before: an entry is reused while the message at its place
//! equals the one it was written from (comparing costs a fraction of writing JSON, with its
//! escaping), and written again otherwise — a compacted or rewritten conversation included.
//! Kept per session (the request's `cache_key`), a few at most.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::request::message_items;
use crate::Message;

/// One message's items (a user message with tool results is several) as written JSON.
pub(crate) type Items = Arc<[Box<RawValue>]>;

/// The written items of the last conversations sent (one per request `cache_key`, the session:
/// a sub-agent sharing its parent's client keeps its own), each by position.
#[derive(Debug, Default)]
pub(crate) struct WireMemo(Vec<(Option<String>, Written)>);

/// One conversation's messages, each with its items as written.
type Written = Vec<(Message, Items)>;

/// How many conversations a memo keeps (the least recently sent goes first).
const CONVERSATIONS: usize = 4;

impl WireMemo {
    /// The items of each of `messages`, reusing what this memo holds for an equal message
    /// at the same place of the conversation `key` names.
    pub(crate) fn items(
        &mut self,
        key: Option<&str>,
        messages: &[Message],
    ) -> serde_json::Result<Vec<Items>> {
        let at = self.0.iter().position(|(k, _)| k.as_deref() == key);
        let (_, mut memo) = match at {
            Some(i) => self.0.remove(i),
            None => (None, Vec::new()),
        };
        let mut out = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            if let Some((was, items)) = memo.get(i)
                && was == m
            {
                out.push(items.clone());
                continue;
            }
            let items = message_items(m)?;
            let entry = (m.clone(), items.clone());
            match memo.get_mut(i) {
                Some(slot) => *slot = entry,
                None => memo.push(entry),
            }
            out.push(items);
        }
        memo.truncate(messages.len());
        self.0.push((key.map(str::to_string), memo));
        if self.0.len() > CONVERSATIONS {
            self.0.remove(0);
        }
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
        let first = memo.items(Some("s1"), &[user("a"), user("b")]).unwrap();
        // Another session's request between the two keeps its own entries.
        memo.items(Some("s2"), &[user("x")]).unwrap();
        let again = memo
            .items(Some("s1"), &[user("a"), user("b"), user("c")])
            .unwrap();
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
        let compacted = memo
            .items(Some("s1"), &[user("summary"), user("c")])
            .unwrap();
        assert_eq!(
            written(&compacted),
            [
                r#"{"role":"user","content":"summary"}"#,
                r#"{"role":"user","content":"c"}"#
            ]
        );
        assert!(!Arc::ptr_eq(&compacted[1], &again[1]));
        let s1 = memo
            .0
            .iter()
            .find(|(k, _)| k.as_deref() == Some("s1"))
            .unwrap();
        assert_eq!(s1.1.len(), 2);
        for i in 0..CONVERSATIONS + 2 {
            memo.items(Some(&format!("other{i}")), &[user("y")])
                .unwrap();
        }
        assert_eq!(memo.0.len(), CONVERSATIONS);
    }
}
