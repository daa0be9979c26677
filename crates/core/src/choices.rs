//! What a front end offers when the user picks a model or an agent profile: the models in
//! use, configured, named by a profile or used before; the built-in profiles and the
//! config's, each with a one-line description.

use crate::engine::Engine;

/// One choice: `value` is what picking it sends (`Op::SetModel`/`SetAgent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub detail: String,
}

impl Engine {
    /// `current` first, then the config default, the profiles' models, models used before.
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
        items
    }

    /// `build`, `plan`, then the profiles the config defines.
    pub fn agent_choices(&self) -> Vec<Choice> {
        let mut items = vec![
            Choice {
                value: "build".into(),
                detail: "every tool; edits and commands ask as configured".into(),
            },
            Choice {
                value: "plan".into(),
                detail: "read-only: no edits, no shell".into(),
            },
        ];
        for (name, agent) in &self.config().agent {
            if items.iter().any(|i| &i.value == name) {
                continue;
            }
            let detail = agent
                .prompt
                .as_deref()
                .and_then(|p| p.lines().next())
                .unwrap_or("from config")
                .chars()
                .take(60)
                .collect::<String>();
            items.push(Choice {
                value: name.clone(),
                detail,
            });
        }
        items
    }
}
