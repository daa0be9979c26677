//! What a front end offers when the user picks a model or an agent profile: the models in
//! use, configured, named by a profile or used before; the built-in profiles and the
//! config's, each with a one-line description.

use crate::engine::Engine;

/// One choice: `value` is what picking it sends (`Op::SetModel`/`SetAgent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What picking it sends (a `provider/model-id` or an agent name).
    pub value: String,
    /// A short description shown beside it.
    pub detail: String,
}

impl Engine {
    /// `current` first, then the config default, the profiles' models, models used before;
    /// a model that cannot be used here (no credentials for its provider, an unknown
    /// provider) goes last, its detail saying why.
    pub fn model_choices(&self, current: &str) -> Vec<Choice> {
        let mut items: Vec<Choice> = Vec::new();
        let mut add = |value: &str, detail: String| {
            if !value.is_empty() && !items.iter().any(|i| i.value == value) {
                items.push(Choice {
                    value: value.into(),
                    detail,
                });
            }
        };
        add(current, "in use at start".into());
        let config = self.config();
        if let Some(m) = &config.model {
            add(m, "config default".into());
        }
        for (name, agent) in &config.agent {
            if let Some(m) = &agent.model {
                add(m, format!("agent {name}"));
            }
        }
        if let Ok(sessions) = self.sessions(true) {
            for s in sessions {
                if let Some(m) = &s.model {
                    add(m, "used before".into());
                }
            }
        }
        let (mut usable, mut unusable) = (Vec::new(), Vec::new());
        for (i, mut c) in items.into_iter().enumerate() {
            // The model in use stays first whatever the check says: it is what runs.
            match (i > 0).then(|| self.check_model(Some(&c.value))) {
                Some(Err(e)) => {
                    let why = e.to_string();
                    let first = why.lines().next().unwrap_or_default();
                    c.detail = format!("can't be used here: {}", clip(first, 70));
                    unusable.push(c);
                }
                _ => usable.push(c),
            }
        }
        usable.append(&mut unusable);
        usable
    }

    /// The profiles a user can pick (mode `primary` or `all`, not hidden): the built-ins,
    /// then agent files and config, each with the first line of its description.
    pub fn agent_choices(&self) -> Vec<Choice> {
        self.agents()
            .entries()
            .iter()
            .filter(|e| !e.disabled && e.profile.is_primary() && !e.profile.hidden)
            .map(|e| Choice {
                value: e.profile.name.clone(),
                detail: e
                    .profile
                    .description
                    .as_deref()
                    .or(e.profile.prompt.as_deref())
                    .and_then(|p| p.lines().next())
                    .unwrap_or("from config")
                    .chars()
                    .take(60)
                    .collect(),
            })
            .collect()
    }
}

/// `text` cut to `max` characters, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
