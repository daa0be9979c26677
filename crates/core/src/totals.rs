//! Totals of a session tree. A session whose `task` calls started sub-agents is one piece
//! of work: what it spent (tokens, cost) is its own figures plus every sub-agent session's
//! under it (`parent_id`, recursively), and front ends show that tree total wherever they
//! show totals, with the session's own figures beside it. The store sums the rows
//! (`Store::tree_usage`); this module gives front ends the pair, and the context meter of a
//! stored session (what a front end shows on reopening it before any new request).

use podcode_agent::StoredPart;
use podcode_protocol::StepUsage;

use crate::engine::Engine;
use crate::error::EngineError;

/// What a session spent: its own model requests, and those of its whole tree (the
/// session and its sub-agents). Equal when it started no sub-agent.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    /// The session's own model requests.
    pub own: StepUsage,
    /// The session's and every sub-agent's below it, at any depth.
    pub tree: StepUsage,
}

impl Totals {
    /// Whether sub-agents spent anything (the tree differs from the session's own figures).
    pub fn has_sub_agents(&self) -> bool {
        self.own != self.tree
    }

    /// What the sub-agents spent: the tree's figures less the session's own.
    pub fn sub_agents(&self) -> StepUsage {
        minus(&self.tree, &self.own)
    }

    /// What the tree spent since `before` (a turn's totals: the session's and its
    /// sub-agents' requests during it). Costs subtract only when both are known.
    pub fn since(&self, before: &Totals) -> Totals {
        Totals {
            own: minus(&self.own, &before.own),
            tree: minus(&self.tree, &before.tree),
        }
    }
}

fn minus(a: &StepUsage, b: &StepUsage) -> StepUsage {
    StepUsage {
        input_tokens: a.input_tokens.saturating_sub(b.input_tokens),
        output_tokens: a.output_tokens.saturating_sub(b.output_tokens),
        cache_read_tokens: a.cache_read_tokens.saturating_sub(b.cache_read_tokens),
        cache_write_tokens: a.cache_write_tokens.saturating_sub(b.cache_write_tokens),
        reasoning_tokens: a.reasoning_tokens.saturating_sub(b.reasoning_tokens),
        cost: match (a.cost, b.cost) {
            (Some(a), Some(b)) => Some((a - b).max(0.0)),
            (a, _) => a,
        },
    }
}

impl Engine {
    /// A session's totals with its sub-agents' (see [`Totals`]); zero for a session not
    /// stored yet (a front end stores a new session on its first prompt).
    pub fn totals(&self, id: &str) -> Result<Totals, EngineError> {
        let store = self.store()?;
        Ok(Totals {
            own: store.session_usage(id)?.unwrap_or_default(),
            tree: store.tree_usage(id)?.unwrap_or_default(),
        })
    }

    /// The context meter of stored session `id` as `Event::Usage` last reported it: the
    /// prompt tokens of its last model request that reported usage (`None` before any),
    /// and the context window of `model` (`provider/model-id`; 0 when not of that form).
    pub fn context_use(&self, id: &str, model: &str) -> Result<Option<(u64, u64)>, EngineError> {
        let store = self.store()?;
        let mut last = None;
        // Newest message first: only its last step with usage counts.
        for m in store.messages(id)?.iter().rev() {
            last = store
                .parts(&m.id)?
                .iter()
                .rev()
                .find_map(|p| match StoredPart::parse(p) {
                    StoredPart::Step(st) if st.usage != StepUsage::default() => {
                        Some(st.usage.input_tokens)
                    }
                    _ => None,
                });
            if last.is_some() {
                break;
            }
        }
        let window = podcode_providers::ModelRef::parse(model).map_or(0, |m| {
            podcode_providers::model_info(self.config(), &m).context
        });
        Ok(last.map(|tokens| (tokens, window)))
    }
}
