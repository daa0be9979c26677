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
        let op = Op::Prompt {
            session_id: session.id().to_string(),
            text: text.to_string(),
            files: Vec::new(),
        };
        self.send_turn(session, text, op)
    }

    /// Sends custom command `name` (a leading slash is dropped) with `arguments` to
    /// `session` (`podcode run --command`).
    pub fn send_command(
        &self,
        session: &Session,
        name: &str,
        arguments: &str,
    ) -> Result<PromptedTurn, EngineError> {
        let name = name.trim_start_matches('/');
        let op = Op::Command {
            session_id: session.id().to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let (_, title) = prompt_and_title(&[arguments.to_string()], Some(name));
        self.send_turn(session, &title, op)
    }

    fn send_turn(
        &self,
        session: &Session,
        title: &str,
        op: Op,
    ) -> Result<PromptedTurn, EngineError> {
        let id = session.id().to_string();
        // The tree's figures before the turn: its summary counts what sub-agents spent in it.
        let before = self.totals(&id)?;
        // A continued session that has no title yet (one opened elsewhere) takes this prompt's.
        self.name_session(&id, title)?;
        session.port().send(op);
        Ok(PromptedTurn { id, before })
    }

    /// What the turn's sub-agents spent (tokens, cost), read once the turn ended.
    pub fn sub_agents_spent(&self, turn: &PromptedTurn) -> Result<StepUsage, EngineError> {
        Ok(self.totals(&turn.id)?.since(&turn.before).sub_agents())
    }
}

/// The async runtime a one-turn command (`podcode run`) drives its session on: one worker
/// thread beside the caller's. Tokio's default, a worker per core, hands each step's work
/// between threads: between a tool's result and the next model request it measured 1.02 ms
/// with two workers, 0.81 ms with one (bench/side_by_side.py's 20 `read` calls, 2 cores).
/// A prompt on the terminal is answered on a blocking thread (`AskPolicy::Blocking`), so it
/// never holds the worker.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
}

/// `podcode run -`: the prompt is what standard input holds; other words are the prompt.
pub fn stdin_if_dash(words: &[String]) -> std::io::Result<Vec<String>> {
    match words {
        [dash] if dash == "-" => Ok(vec![
            std::io::read_to_string(std::io::stdin())?
                .trim_end()
                .to_string(),
        ]),
        words => Ok(words.to_vec()),
    }
}

/// `podcode run`'s words as one prompt, and the new session's title: the prompt, or for
/// custom command `command`, `/name arguments`. Among several words, one holding spaces
/// (quoted on the command line) is quoted again, so a command's `$1` gets it whole; a
/// single word is the arguments as they are.
pub fn prompt_and_title(words: &[String], command: Option<&str>) -> (String, String) {
    let prompt = match command {
        Some(_) if words.len() > 1 => words
            .iter()
            .map(|w| {
                if w.contains(char::is_whitespace) && !w.contains('"') {
                    format!("\"{w}\"")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => words.join(" "),
    };
    let title = match command {
        None => prompt.clone(),
        Some(c) => format!("/{} {prompt}", c.trim_start_matches('/'))
            .trim_end()
            .to_string(),
    };
    (prompt, title)
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

/// On Ctrl-C: aborts the session's turn (saying so on stderr); a second Ctrl-C exits at once
/// with status 130.
pub fn abort_on_ctrl_c(session: &Session) {
    let (port, session_id) = (session.port(), session.id().to_string());
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\naborting… (Ctrl-C again to quit at once)");
            port.send(Op::Abort { session_id });
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}

/// On Ctrl-C: cancels `abort` (a `podcode tool call`), saying so on stderr.
pub fn cancel_on_ctrl_c(abort: &tokio_util::sync::CancellationToken) {
    let abort = abort.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\naborting…");
            abort.cancel();
        }
    });
}
