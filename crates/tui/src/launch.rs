//! Starting the full-screen UI on an engine (`podcode`, `podcode tui`): open the session
//! (a new one is held back until its first prompt stores and titles it:
//! `Engine::first_prompt` runs before each prompt is sent), fill the transcript of a
//! resumed one, forward the UI's ops to the session, run the UI, then close the session and
//! stop the engine.

use crate::input::slash_popup::{SlashChoice, choices};
use std::sync::Arc;

use podcode_core::{Drafts, Engine, SessionOptions, SessionPick};
use podcode_protocol::Op;

use crate::{AppState, EngineServices, Entry, TuiError, TuiParams};

/// What to open.
pub struct LaunchOptions {
    /// A new session, the newest one, or one by id.
    pub pick: SessionPick,
    /// The agent profile.
    pub agent: String,
    /// The model as `provider/model-id`, if not the config's or the profile's.
    pub model: Option<String>,
    /// Work in a new git worktree.
    pub worktree: bool,
    /// `NO_COLOR` is set (the front end reads the environment).
    pub no_color: bool,
}

/// Opens the session and runs the UI until the user quits.
/// Returns the id of the session shown last when it is stored (a new session is stored at
/// its first prompt), so the caller can say how to resume it.
pub async fn launch(engine: Arc<Engine>, opts: LaunchOptions) -> Result<Option<String>, TuiError> {
    let LaunchOptions {
        pick,
        agent,
        model,
        worktree,
        no_color,
    } = opts;
    let resumed = !matches!(pick, SessionPick::New { .. });
    let session = engine
        .open_session(SessionOptions {
            pick: pick.clone(),
            agent: agent.clone(),
            model,
            max_steps: None,
            worktree,
        })
        .await?;
    // A new session is stored when its first prompt is sent, and titled from it.
    let drafts = Arc::new(Drafts::new());
    if matches!(pick, SessionPick::New { .. }) {
        engine.hold_until_prompted(&drafts, session.id())?;
    }
    let model_name = session.model().await;
    let cwd_text = session.directory().to_string_lossy().into_owned();
    let mut state = AppState::new(&model_name, &agent, &cwd_text, session.id());
    state.status.title = session.title().to_string();
    if resumed {
        let (items, _) = engine.transcript(session.id())?;
        state.todos = crate::todo_panel::TodoPanel::from_items(&items);
        state.transcript = crate::transcript::Transcript::from_items(session.id(), items);
        let totals = engine.totals(session.id())?;
        state.status.set_totals(totals.own, totals.tree);
    }
    state.no_color = no_color;
    // Printed before the screen switched too, but only visible there after quitting.
    for warning in engine.warnings().iter().chain(&engine.sandbox_warnings()) {
        state
            .transcript
            .entries
            .push(Entry::Notice(format!("⚠ {warning}")));
    }
    for (message, source) in engine.tool_errors().await {
        state
            .transcript
            .entries
            .push(Entry::Notice(format!("⚠ {message} ({source})")));
    }
    if let Some(notice) = session.worktree_notice() {
        state.transcript.entries.push(Entry::Notice(notice));
    }
    state.tools_info = engine.tool_lines().await;
    let custom = engine.command_infos().into_iter().map(|c| SlashChoice {
        name: c.name,
        hint: c.argument_hint.unwrap_or_default(),
        description: if c.from_repository {
            format!("{} (from the repository)", c.description)
                .trim()
                .to_string()
        } else {
            c.description
        },
        custom: true,
    });
    state.input.commands = choices(custom.collect());
    let port = session.port();
    let (ops, mut op_rx) = tokio::sync::mpsc::unbounded_channel();
    let forward = port.clone();
    let (prompted, held) = (engine.clone(), drafts.clone());
    tokio::spawn(async move {
        while let Some(op) = op_rx.recv().await {
            let first = match &op {
                Op::Prompt {
                    session_id, text, ..
                } => Some((session_id, text.clone())),
                Op::Command {
                    session_id,
                    name,
                    arguments,
                } => Some((
                    session_id,
                    format!("/{name} {arguments}").trim_end().to_string(),
                )),
                _ => None,
            };
            if let Some((session_id, text)) = first {
                // When the store cannot be written the prompt goes on anyway: the
                // turn then fails on the same store and the UI shows its error.
                prompted.first_prompt(&held, session_id, &text).ok();
            }
            forward.send(op);
        }
    });
    let services = Arc::new(EngineServices::new(engine.clone(), model_name).with_drafts(drafts));
    let result = crate::run(TuiParams {
        state,
        events: port.subscribe(),
        open_asks: port.open_asks(),
        ops,
        services,
    })
    .await;
    session.close().await;
    engine.shutdown().await;
    let last = result?;
    Ok(engine.session(&last).is_ok().then_some(last))
}
