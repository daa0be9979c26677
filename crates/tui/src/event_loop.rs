//! The event loop: one `tokio::select!` over terminal input (crossterm's `EventStream`),
//! runtime events (the broadcast every front end reads), permission asks and a tick.
//! Events are applied in batches and the screen is redrawn at most ~30 times a second, so
//! a flood of output never starves the keyboard. The terminal is restored on every exit
//! path, and by ratatui's panic hook on a panic.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event as TermEvent, EventStream,
};
use futures_util::StreamExt;
use podcode_protocol::{Event, Op, PermissionReply, PermissionRequest, TurnEnd};
use tokio::sync::{broadcast, mpsc};

use crate::changes_view::{load_changes, revert_selected};
use crate::error::TuiError;
use crate::keys::{Action, handle_key};
use crate::modal::PermissionModal;
use crate::render::draw;
use crate::services::TuiServices;
use crate::state::{AppState, Screen};
use crate::transcript::Entry;

const FRAME: Duration = Duration::from_millis(33);
const TICK: Duration = Duration::from_millis(100);

/// What the UI runs on: the state to start from and the channels to the core.
pub struct TuiParams {
    /// The screen state to start from (a resumed transcript, the status line).
    pub state: AppState,
    /// The session's events; permission asks arrive here as `Event::PermissionAsked`.
    pub events: broadcast::Receiver<Event>,
    /// Asks already open when the UI starts (`Event::PermissionAsked`).
    pub open_asks: Vec<Event>,
    /// `Op::Prompt`, `Op::Abort`, `Op::SetModel`/`SetAgent` go here; the front end's
    /// wiring runs them.
    pub ops: mpsc::UnboundedSender<Op>,
    /// Stored transcripts and picker choices (see `TuiServices`).
    pub services: Arc<dyn TuiServices>,
}

/// Runs the UI until the user quits; the terminal is restored before it returns. Returns
/// the id of the session shown last (the user may have switched).
pub async fn run(params: TuiParams) -> Result<String, TuiError> {
    let mut terminal = ratatui::try_init()?;
    // A panic restores the terminal (ratatui's hook) and must hand the mouse back too.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        hook(info);
    }));
    // Pasted text arrives as one event (newlines included) instead of keys that would
    // submit it line by line; the wheel and clicks reach the UI (shift-drag still selects
    // text in most terminals).
    let _ = crossterm::execute!(std::io::stdout(), EnableBracketedPaste, EnableMouseCapture);
    let result = event_loop(&mut terminal, params).await;
    let _ = crossterm::execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture
    );
    ratatui::restore();
    result
}

/// An ask waiting for the user's answer.
pub(crate) struct OpenAsk {
    pub(crate) request_id: String,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) request: PermissionRequest,
}

pub(crate) struct Loop {
    pub(crate) state: AppState,
    pub(crate) ops: mpsc::UnboundedSender<Op>,
    pub(crate) services: Arc<dyn TuiServices>,
    pub(crate) asks: VecDeque<OpenAsk>,
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    params: TuiParams,
) -> Result<String, TuiError> {
    let TuiParams {
        state,
        mut events,
        open_asks,
        ops,
        services,
    } = params;
    let mut ui = Loop {
        state,
        ops,
        services,
        asks: VecDeque::new(),
    };
    for ask in &open_asks {
        ui.apply(ask);
    }
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    let mut dirty = true;
    let mut events_open = true;
    let mut last_draw: Option<Instant> = None;
    loop {
        let since = last_draw.map(|t| t.elapsed()).unwrap_or(FRAME);
        if dirty && since >= FRAME {
            terminal.draw(|f| draw(f, &ui.state))?;
            last_draw = Some(Instant::now());
            dirty = false;
        }
        let wait = FRAME.saturating_sub(since);
        tokio::select! {
            term = input.next() => match term {
                Some(Ok(TermEvent::Key(key))) => {
                    let action = handle_key(&mut ui.state, key);
                    if ui.act(action) {
                        break;
                    }
                    dirty = true;
                }
                Some(Ok(TermEvent::Paste(text))) => {
                    if ui.state.modal.is_none() && ui.state.picker.is_none() {
                        ui.state.input.buffer.paste(&text);
                        dirty = true;
                    }
                }
                Some(Ok(TermEvent::Mouse(m))) => dirty |= crate::mouse::handle_mouse(&mut ui.state, m),
                Some(Ok(TermEvent::Resize(_, _))) => dirty = true,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            event = events.recv(), if events_open => {
                match event {
                    Ok(e) => ui.apply(&e),
                    Err(broadcast::error::RecvError::Lagged(n)) => ui.state.transcript.entries.push(
                        Entry::Notice(format!("⚠ {n} events were dropped (the screen could not keep up)")),
                    ),
                    Err(broadcast::error::RecvError::Closed) => events_open = false,
                }
                // Apply whatever else is queued before drawing again.
                while let Ok(e) = events.try_recv() {
                    ui.apply(&e);
                }
                dirty = true;
            }
            _ = tick.tick() => {
                if ui.state.input.poll_completion(&ui.state.status.cwd) {
                    dirty = true;
                }
                if ui.state.status.busy || ui.state.modal.is_some() {
                    ui.state.tick(TICK.as_millis() as u64);
                    dirty = true;
                }
            }
            _ = tokio::time::sleep(wait), if dirty => {}
        }
    }
    if ui.state.status.busy {
        let _ = ui.ops.send(Op::Abort {
            session_id: ui.state.session_id.clone(),
        });
    }
    Ok(ui.state.session_id)
}

impl Loop {
    fn apply(&mut self, event: &Event) {
        match event {
            Event::PermissionAsked {
                request_id,
                call_id,
                tool,
                request,
                ..
            } => {
                // Asks open at start can also arrive as events: each is shown once.
                if self.asks.iter().any(|a| &a.request_id == request_id) {
                    return;
                }
                self.asks.push_back(OpenAsk {
                    request_id: request_id.clone(),
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    request: request.clone(),
                });
                self.open_next_ask();
                return;
            }
            Event::PermissionResolved { request_id, .. } => {
                self.close_ask(request_id);
                return;
            }
            _ => {}
        }
        self.state.apply_event(event);
        if let Event::TurnFinished { summary, .. } = event {
            if self.state.screen == Screen::Changes {
                self.reload_changes();
            }
            self.send_queued(summary.end == TurnEnd::Aborted);
        }
    }

    /// After a turn: the next queued prompt goes, unless the user aborted (then the queue
    /// comes back into the input box for them to decide).
    fn send_queued(&mut self, aborted: bool) {
        if self.state.input.queued.is_empty() {
            return;
        }
        if aborted {
            let texts: Vec<String> = self.state.input.queued.drain(..).map(|(t, _)| t).collect();
            let mut text = texts.join("\n\n");
            if !self.state.input.buffer.is_empty() {
                text = format!("{}\n\n{text}", self.state.input.buffer.text());
            }
            self.state.input.buffer.set(&text);
            self.state.transcript.entries.push(Entry::Notice(
                "the turn was aborted: your queued prompts are back in the input box".into(),
            ));
            return;
        }
        let (text, files) = self.state.input.queued.remove(0);
        self.state.push_user(&text);
        match self.state.input.custom_command(&text) {
            Some((name, arguments)) => self.run_command(name, arguments),
            None => self.prompt(text, files),
        }
    }

    /// Runs a custom command; its filled-in prompt shows when the session reports it.
    fn run_command(&mut self, name: String, arguments: String) {
        let _ = self.ops.send(Op::Command {
            session_id: self.state.session_id.clone(),
            name,
            arguments,
        });
    }

    /// Sends a prompt; it and its attached files show when the session reports them.
    fn prompt(&mut self, text: String, files: Vec<String>) {
        let _ = self.ops.send(Op::Prompt {
            session_id: self.state.session_id.clone(),
            text,
            files,
        });
    }

    pub(crate) fn notice(&mut self, text: String) {
        self.state.transcript.entries.push(Entry::Notice(text));
    }

    pub(crate) fn reload_changes(&mut self) {
        if let Err(e) = load_changes(&mut self.state, self.services.as_ref()) {
            self.state.changes.message = Some(e.to_string());
        }
    }

    /// Runs an action; `true` means quit.
    fn act(&mut self, action: Action) -> bool {
        let session_id = self.state.session_id.clone();
        match action {
            Action::None => {}
            Action::Quit => return true,
            Action::Submit { text, files } => self.prompt(text, files),
            Action::Abort => {
                let _ = self.ops.send(Op::Abort { session_id });
            }
            Action::Answer(reply) => self.answer(reply),
            Action::RejectAndAbort => {
                self.answer(PermissionReply::Reject { feedback: None });
                let _ = self.ops.send(Op::Abort { session_id });
            }
            Action::OpenChanges => {
                self.state.screen = Screen::Changes;
                self.state.changes.message = None;
                self.state.changes.conflict = None;
                self.reload_changes();
            }
            Action::Revert(scope, force) => {
                revert_selected(&mut self.state, self.services.as_ref(), scope, force);
            }
            Action::NewSession => self.new_session(),
            Action::Undo => self.undo(),
            Action::Compact => {
                self.state
                    .transcript
                    .notice("compacting the conversation…".to_string());
                let _ = self.ops.send(Op::Compact { session_id });
            }
            Action::OpenPicker(kind) => self.open_picker(kind),
            Action::Pick(kind, value) => self.pick(kind, value),
            Action::ShowPlugins => {
                self.report(self.services.plugins(), "no plugin report available")
            }
            Action::ShowSkills => self.report(self.services.skills(), "no skills report available"),
            Action::ShowCommands => self.report(
                self.services.command_lines(),
                "no commands report available",
            ),
            Action::RunCommand { name, arguments } => self.run_command(name, arguments),
        }
        false
    }

    /// A report (`/plugins`, `/skills`) as a notice in the transcript.
    fn report(&mut self, lines: Vec<String>, none: &str) {
        let text = if lines.is_empty() {
            none.to_string()
        } else {
            lines.join("\n")
        };
        self.state.transcript.entries.push(Entry::Notice(text));
    }

    fn answer(&mut self, reply: PermissionReply) {
        self.state.modal = None;
        if let Some(ask) = self.asks.pop_front() {
            self.state.transcript.mark_waiting(&ask.call_id, false);
            if matches!(reply, PermissionReply::Reject { .. }) {
                self.state.transcript.mark_denied(&ask.call_id);
            }
            let _ = self.ops.send(Op::PermissionReply {
                request_id: ask.request_id,
                reply,
            });
        }
        self.open_next_ask();
    }

    fn open_next_ask(&mut self) {
        if self.state.modal.is_some() {
            return;
        }
        if let Some(ask) = self.asks.front() {
            self.state.transcript.mark_waiting(&ask.call_id, true);
            self.state.modal = Some(PermissionModal::new(
                &ask.tool,
                &ask.call_id,
                ask.request.clone(),
            ));
        }
    }

    /// An ask answered elsewhere or abandoned (its call was aborted) closes here too.
    fn close_ask(&mut self, request_id: &str) {
        let front = self
            .asks
            .front()
            .is_some_and(|a| a.request_id == request_id);
        if let Some(ask) = self.asks.iter().find(|a| a.request_id == request_id) {
            let call = ask.call_id.clone();
            self.state.transcript.mark_waiting(&call, false);
        }
        self.asks.retain(|a| a.request_id != request_id);
        if front {
            self.state.modal = None;
            self.open_next_ask();
        }
    }
}
