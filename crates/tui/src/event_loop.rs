//! The event loop: one `tokio::select!` over terminal input (crossterm's `EventStream`),
//! runtime events (the broadcast every front end reads), permission asks and a tick.
//! Events are applied in batches and the screen is redrawn at most ~30 times a second, so
//! a flood of output never starves the keyboard. The terminal is restored on every exit
//! path, and by ratatui's panic hook on a panic.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use podcode_protocol::{Event, Op, PermissionReply};
use podcode_store::{NewSession, Store};
use podcode_tools::{RevertOptions, RevertTarget, revert};
use tokio::sync::{broadcast, mpsc};

use crate::asker::PendingAsk;
use crate::changes_view::{load_changes, revert_selected};
use crate::error::TuiError;
use crate::keys::{Action, handle_key};
use crate::render::draw;
use crate::state::{AppState, Entry, PermissionModal, Screen};

const FRAME: Duration = Duration::from_millis(33);
const TICK: Duration = Duration::from_millis(100);

/// What the UI runs on: the state to start from and the channels to the core.
pub struct TuiParams {
    pub state: AppState,
    pub store: Arc<Store>,
    pub events: broadcast::Receiver<Event>,
    pub asks: mpsc::UnboundedReceiver<PendingAsk>,
    /// `Op::Prompt` and `Op::Abort` go here; the front end's wiring runs them.
    pub ops: mpsc::UnboundedSender<Op>,
}

/// Runs the UI until the user quits; the terminal is restored before it returns.
pub async fn run(params: TuiParams) -> Result<(), TuiError> {
    let mut terminal = ratatui::try_init()?;
    let result = event_loop(&mut terminal, params).await;
    ratatui::restore();
    result
}

struct Loop {
    state: AppState,
    store: Arc<Store>,
    ops: mpsc::UnboundedSender<Op>,
    asks: VecDeque<PendingAsk>,
    last_turn_changes: Vec<String>,
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    params: TuiParams,
) -> Result<(), TuiError> {
    let TuiParams {
        state,
        store,
        mut events,
        asks: mut ask_rx,
        ops,
    } = params;
    let mut ui = Loop {
        state,
        store,
        ops,
        asks: VecDeque::new(),
        last_turn_changes: Vec::new(),
    };
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
                Some(Ok(TermEvent::Resize(_, _))) => dirty = true,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            event = events.recv(), if events_open => {
                match event {
                    Ok(e) => ui.apply(&e),
                    Err(broadcast::error::RecvError::Lagged(n)) => ui.state.entries.push(
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
            Some(ask) = ask_rx.recv() => {
                ui.asks.push_back(ask);
                ui.open_next_ask();
                dirty = true;
            }
            _ = tick.tick() => {
                ui.drop_abandoned_asks();
                if ui.state.busy || ui.state.modal.is_some() {
                    ui.state.tick(TICK.as_millis() as u64);
                    dirty = true;
                }
            }
            _ = tokio::time::sleep(wait), if dirty => {}
        }
    }
    if ui.state.busy {
        let _ = ui.ops.send(Op::Abort {
            session_id: ui.state.session_id.clone(),
        });
    }
    Ok(())
}

impl Loop {
    fn apply(&mut self, event: &Event) {
        if let Event::TurnFinished { summary, .. } = event {
            self.last_turn_changes = summary.changes.clone();
            if self.state.screen == Screen::Changes {
                self.reload_changes();
            }
        }
        self.state.apply_event(event);
    }

    fn reload_changes(&mut self) {
        if let Err(e) = load_changes(&mut self.state, &self.store) {
            self.state.changes.message = Some(e.to_string());
        }
    }

    /// Runs an action; `true` means quit.
    fn act(&mut self, action: Action) -> bool {
        let session_id = self.state.session_id.clone();
        match action {
            Action::None => {}
            Action::Quit => return true,
            Action::Submit(text) => {
                let _ = self.ops.send(Op::Prompt {
                    session_id,
                    text,
                    files: Vec::new(),
                });
            }
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
                revert_selected(&mut self.state, &self.store, scope, force);
            }
            Action::NewSession => self.new_session(),
            Action::Undo => self.undo(),
        }
        false
    }

    fn answer(&mut self, reply: PermissionReply) {
        self.state.modal = None;
        if let Some(ask) = self.asks.pop_front() {
            if matches!(reply, PermissionReply::Reject { .. }) {
                self.state.mark_denied(&ask.request.call_id);
            }
            let _ = ask.reply.send(reply);
        }
        self.open_next_ask();
    }

    fn open_next_ask(&mut self) {
        if self.state.modal.is_some() {
            return;
        }
        if let Some(ask) = self.asks.front() {
            self.state.modal = Some(PermissionModal {
                tool: ask.request.tool.clone(),
                call_id: ask.request.call_id.clone(),
                request: ask.request.request.clone(),
                feedback: None,
            });
        }
    }

    /// Asks whose call was aborted meanwhile (nobody waits for the answer) are closed.
    fn drop_abandoned_asks(&mut self) {
        let before = self.asks.len();
        let front_closed = self.asks.front().is_some_and(|a| a.reply.is_closed());
        self.asks.retain(|a| !a.reply.is_closed());
        if front_closed {
            self.state.modal = None;
        }
        if self.asks.len() != before {
            self.open_next_ask();
        }
    }

    fn new_session(&mut self) {
        if self.state.busy {
            self.state.entries.push(Entry::Notice(
                "a turn is still running (esc aborts it)".into(),
            ));
            return;
        }
        let created = self.store.create_session(&NewSession {
            agent: self.state.agent.clone(),
            cwd: self.state.cwd.clone(),
            main_cwd: self.state.cwd.clone(),
            model: Some(self.state.model.clone()),
            title: String::new(),
            ..Default::default()
        });
        match created {
            Ok(row) => {
                let mut fresh = AppState::new(
                    &self.state.model,
                    &self.state.agent,
                    &self.state.cwd,
                    &row.id,
                );
                fresh.no_color = self.state.no_color;
                fresh.history = std::mem::take(&mut self.state.history);
                self.state = fresh;
                self.last_turn_changes.clear();
            }
            Err(e) => self
                .state
                .entries
                .push(Entry::Notice(format!("could not start a session: {e}"))),
        }
    }

    /// Reverts the last turn's changes, newest first.
    fn undo(&mut self) {
        if self.last_turn_changes.is_empty() {
            self.state.entries.push(Entry::Notice(
                "nothing to undo: the last turn changed no file".into(),
            ));
            return;
        }
        let opts = RevertOptions {
            force: false,
            session_id: self.state.session_id.clone(),
        };
        let mut done = 0;
        for id in self.last_turn_changes.iter().rev() {
            match revert(&self.store, &RevertTarget::Change(id.clone()), &opts) {
                Ok(out) => done += out.reverted.len(),
                Err(e) => {
                    self.state
                        .entries
                        .push(Entry::Notice(format!("undo stopped: {e}")));
                    break;
                }
            }
        }
        self.state.entries.push(Entry::Notice(format!(
            "undid {done} change(s) of the last turn"
        )));
        self.last_turn_changes.clear();
    }
}
