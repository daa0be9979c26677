//! Provider options from a plugin's `chat.params` hook, put into a request body as opencode's
//! AI SDK providers put them: a few options have camelCase names that the SDK maps to a
//! wire field (`reasoningEffort` → `reasoning_effort`; Anthropic's `thinking.budgetTokens`
//! → `budget_tokens`); any other key goes into the body as it is (the OpenAI-compatible SDK
//! passes unknown options through the same way). A key the client already set (model,
//! messages, tools, stream) is never replaced: options add to a request, they do not
//! rewrite the conversation.

use serde_json::{Map, Value};

/// Which wire format the body is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    OpenAi,
    Anthropic,
}

/// Body fields the client owns.
const RESERVED: &[&str] = &[
    "model",
    "messages",
    "tools",
    "stream",
    "stream_options",
    "system",
];

/// Adds `options` to `body`.
pub(crate) fn merge(body: &mut Map<String, Value>, options: &Map<String, Value>, wire: Wire) {
    for (key, value) in options {
        let (key, value) = wire_field(key, value, wire);
        if RESERVED.contains(&key.as_str()) {
            continue;
        }
        body.insert(key, value);
    }
}

fn wire_field(key: &str, value: &Value, wire: Wire) -> (String, Value) {
    match (wire, key) {
        (Wire::OpenAi, "reasoningEffort") => ("reasoning_effort".into(), value.clone()),
        (Wire::OpenAi, "textVerbosity") => ("verbosity".into(), value.clone()),
        (Wire::Anthropic, "thinking") => {
            let mut thinking = value.clone();
            if let Some(obj) = thinking.as_object_mut()
                && let Some(budget) = obj.remove("budgetTokens")
            {
                obj.insert("budget_tokens".into(), budget);
            }
            ("thinking".into(), thinking)
        }
        _ => (key.to_string(), value.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merged(options: Value, wire: Wire) -> Value {
        let mut body = json!({"model": "m", "stream": true});
        let body_map = body.as_object_mut().unwrap();
        merge(body_map, options.as_object().unwrap(), wire);
        body
    }

    #[test]
    fn known_names_are_mapped_and_others_pass_through() {
        let body = merged(
            json!({"reasoningEffort": "low", "foo": 1, "model": "other"}),
            Wire::OpenAi,
        );
        assert_eq!(
            body,
            json!({"model": "m", "stream": true, "reasoning_effort": "low", "foo": 1})
        );
        let body = merged(
            json!({"thinking": {"type": "enabled", "budgetTokens": 1024}}),
            Wire::Anthropic,
        );
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 1024})
        );
    }
}
