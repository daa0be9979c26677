//! The tools a step offers the model. The list is rebuilt only when it changes — another
//! registry (plugins reloaded) or another pick (a tool offered once another was called) —
//! so consecutive steps share one `ToolList`, and with it the JSON each wire protocol
//! writes of it and the estimate of its size.

use std::sync::{Arc, Mutex};

use podcode_providers::ToolList;
use podcode_tools::ToolRegistry;

use super::Agent;
use crate::budget::estimate_tools;
use crate::history::{History, called_tools};

/// The last list offered: what it was built from, and its estimated size in characters.
pub(super) struct Offered {
    registry: Arc<ToolRegistry>,
    picks: Vec<usize>,
    list: ToolList,
    chars: u64,
}

/// The agent's cache of the last offered list.
pub(super) type OfferedCache = Mutex<Option<Offered>>;

impl Agent {
    pub(super) fn tool_specs(&self, with_tools: bool, history: &History) -> ToolList {
        if !with_tools {
            return ToolList::default();
        }
        // A tool the rules deny outright is not offered, as opencode does; it stays in the
        // registry, so a model that calls it anyway is told which rule denies it. The same
        // for one offered after another tool's first call that the conversation lacks.
        let registry = self.runtime.registry();
        // The conversation is read once per step, and only when some tool waits for a call.
        let mut called = None;
        let picks: Vec<usize> = (registry.tools().iter().enumerate())
            .filter(|(_, t)| !self.runtime.denies_outright(t.id()))
            .filter(|(_, t)| {
                t.tool.spec().offered_after.as_deref().is_none_or(|first| {
                    called
                        .get_or_insert_with(|| called_tools(history))
                        .contains(first)
                })
            })
            .map(|(i, _)| i)
            .collect();
        let mut cache = self.offered.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(last) = cache.as_ref()
            && Arc::ptr_eq(&last.registry, &registry)
            && last.picks == picks
        {
            return last.list.clone();
        }
        let tools = registry.tools();
        let list = ToolList::from(
            (picks.iter())
                .map(|&i| tools[i].tool.spec().clone())
                .collect::<Vec<_>>(),
        );
        let chars = estimate_tools(&list);
        *cache = Some(Offered {
            registry: registry.clone(),
            picks,
            list: list.clone(),
            chars,
        });
        list
    }

    /// The estimated size of `tools` in characters: remembered for the list last offered
    /// (a `tool.definition` hook's rewrite is a new list, measured anew).
    pub(super) fn tools_chars(&self, tools: &ToolList) -> u64 {
        let cache = self.offered.lock().unwrap_or_else(|p| p.into_inner());
        match cache.as_ref() {
            Some(last) if last.list.same_list(tools) => last.chars,
            _ => estimate_tools(tools),
        }
    }
}
