//! One prompt's turn, driven to its end the way `podcode run` drives it: the prompt is sent
//! with the session tree's figures noted first (so the turn's summary can count what its
//! sub-agents spent), an untitled continued session takes the prompt as its title, and the
//! caller follows the event stream until `Event::TurnFinished`.

use podcode_protocol::{Event, Op, StepUsage, TurnEnd, TurnSummary};
use tokio::sync::broadcast;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::session::Session;
use crate::totals::Totals;

/// A prompt that was sent: its session and the tree's totals before it.
pub struct PromptedTurn {
    id: String,
    before: Totals,
}

impl Engine {
    /// Sends `text` to `session` as one prompt (no attached files).
    pub fn send_prompt(&self, session: &Session, text: &str) -> Result<PromptedTurn, EngineError> {
        let id = session.id().to_string();
        // The tree's figures before the turn: its summary counts what sub-agents spent in it.
        let before = self.totals(&id)?;
        // A continued session that has no title yet (one opened elsewhere) takes this prompt's.
        self.name_session(&id, text)?;
        session.port().send(Op::Prompt {
            session_id: id.clone(),
            text: text.to_string(),
            files: Vec::new(),
        });
        Ok(PromptedTurn { id, before })
    }

    /// What the turn's sub-agents spent (tokens, cost), read once the turn ended.
    pub fn sub_agents_spent(&self, turn: &PromptedTurn) -> Result<StepUsage, EngineError> {
        Ok(self.totals(&turn.id)?.since(&turn.before).sub_agents())
    }
}

/// Hands each event to `on_event` until the turn ends and returns its summary (`None`:
/// the stream closed first). `on_lag(n)` is told when `n` events were missed.
pub async fn until_turn_end(
    mut events: broadcast::Receiver<Event>,
    mut on_event: impl FnMut(&Event),
    mut on_lag: impl FnMut(u64),
) -> Option<TurnSummary> {
    loop {
        let event = match events.recv().await {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                on_lag(n);
                continue;
            }
            Err(_) => return None,
        };
        on_event(&event);
        if let Event::TurnFinished { summary, .. } = event {
            return Some(summary);
        }
    }
}

/// The exit status for how a turn ended: 0 answered (or summarized at the step limit), 130
/// aborted, 1 failed.
pub fn exit_status(end: TurnEnd) -> u8 {
    match end {
        TurnEnd::Answered | TurnEnd::MaxSteps => 0,
        TurnEnd::Aborted => 130,
        TurnEnd::Error => 1,
    }
}
