//! The event log: every event of the sessions a server drives, numbered and kept in the
//! store (`events` table), so a client that reconnects replays exactly what it missed.
//!
//! Flow: `Engine::event_log` starts it once; from then on each session `open_session`
//! opens is attached: the session's writer (`sequence.rs`) puts each event it numbers into
//! one unbounded queue, tagged with the session id (so nothing is dropped and the order is
//! the session's own; there is no forwarding task that could lag). One writer task
//! takes whatever is queued, appends it to the store in one transaction (off the async
//! threads, so the agent loop is never slowed by SQLite), and only then publishes each
//! event with its `seq` on the live stream. Publishing after the commit, by one writer, in
//! `seq` order, is what makes "replay from the store, then continue live" gapless: a reader
//! subscribes first, reads the store after its last id, then skips live events it already
//! replayed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use podcode_protocol::Event;
use podcode_store::{NewEvent, Store};
use tokio::sync::{broadcast, mpsc};

use crate::error::EngineError;
use crate::session::Port;

/// Live events a slow reader may fall behind by before it must catch up from the store.
const LIVE_EVENTS: usize = 8192;
/// Most events written in one transaction.
const BATCH: usize = 1024;

/// One logged event: its id in the log, the (top-level) session it belongs to, the event.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    /// Position in the log: increasing, the SSE event id.
    pub seq: i64,
    /// The top-level session it belongs to.
    pub session_id: String,
    /// The event.
    pub event: Event,
}

/// The event's type name: the `type` tag of its JSON (`text_delta`, `tool_started`, …).
pub fn event_type(event: &Event) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_default()
}

/// Every session's events, appended to the store in order and fanned out live, so a client can
/// replay from a position and then follow.
pub struct EventLog {
    store: Arc<Store>,
    queue: mpsc::UnboundedSender<(String, Event)>,
    live: broadcast::Sender<Arc<LoggedEvent>>,
    /// The newest `seq` published live (set after it was sent), and each session's open
    /// turn (updated before an event is sent): read together, they say where a client
    /// resumes.
    head: Arc<Mutex<Head>>,
}

/// The log's position and what it says about open turns at that position.
#[derive(Default)]
struct Head {
    seq: i64,
    /// Per top-level session: the `seq` of its running turn's `UserMessage`, and that
    /// message's id. Gone when the turn's `TurnFinished` is logged.
    open_turns: HashMap<String, (i64, String)>,
}

impl Head {
    /// A committed event's effect on the open turns: noted *before* it is published, so a
    /// client that has seen a `TurnFinished` never gets a resume point that still counts the
    /// turn as running (its transcript cut before the prompt). Either order of the two reads
    /// stays consistent: an open turn replays from its `UserMessage`, which is committed.
    fn note_turns(&mut self, e: &LoggedEvent) {
        match &e.event {
            Event::UserMessage {
                session_id,
                message_id,
                ..
            } if *session_id == e.session_id => {
                self.open_turns
                    .insert(session_id.clone(), (e.seq, message_id.clone()));
            }
            Event::TurnFinished { session_id, .. } if *session_id == e.session_id => {
                self.open_turns.remove(session_id);
            }
            _ => {}
        }
    }
}

fn lock(head: &Mutex<Head>) -> MutexGuard<'_, Head> {
    match head.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Where a client showing a session picks up: the stored transcript before `before` (all of
/// it when `None`), then the log's events after `after`. A running turn is replayed whole
/// from the log — its prompt, every delta, every call — so a page reloaded mid-answer shows
/// the answer exactly once, however much of it the store holds yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePoint {
    /// The log position to stream after (an SSE `Last-Event-ID`).
    pub after: i64,
    /// Show stored messages only up to (not including) this one.
    pub before: Option<String>,
}

impl EventLog {
    /// Starts the writer (needs a Tokio runtime).
    pub(crate) fn start(store: Arc<Store>) -> Result<Arc<EventLog>, EngineError> {
        let (queue, rx) = mpsc::unbounded_channel();
        let (live, _) = broadcast::channel(LIVE_EVENTS);
        let head = Arc::new(Mutex::new(Head {
            seq: store.last_event_seq()?,
            open_turns: HashMap::new(),
        }));
        tokio::spawn(write(store.clone(), rx, live.clone(), head.clone()));
        Ok(Arc::new(EventLog {
            store,
            queue,
            live,
            head,
        }))
    }

    /// The newest event already published live. A reader that reads this, then
    /// subscribes, then replays `since(head)` from the store misses nothing: an event
    /// published in between is committed, so the store has it.
    pub fn head(&self) -> i64 {
        lock(&self.head).seq
    }

    /// Where a client that shows `session_id` from now on resumes (see `ResumePoint`).
    /// Read before the transcript: a message stored after this point is either before
    /// `before` or its events come after `after`.
    pub fn resume_point(&self, session_id: &str) -> ResumePoint {
        let head = lock(&self.head);
        match head.open_turns.get(session_id) {
            Some((seq, message_id)) => ResumePoint {
                after: seq - 1,
                before: Some(message_id.clone()),
            },
            None => ResumePoint {
                after: head.seq,
                before: None,
            },
        }
    }

    /// Logs every event of a session's stream from now on: its writer queues each one
    /// here as it numbers it, so the log holds exactly what the live stream delivered.
    pub(crate) fn attach(&self, port: &Port) {
        port.log_into(self.queue.clone());
    }

    /// Logged events as they are written, in `seq` order. A receiver that lags gets
    /// `Lagged`: read the missed ones with `since`.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<LoggedEvent>> {
        self.live.subscribe()
    }

    /// Up to `limit` logged events after `after` (of one session, or all), oldest first.
    /// A row this build cannot read (written by a newer one) is skipped.
    pub fn since(
        &self,
        after: i64,
        session_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, EngineError> {
        let rows = self.store.events_after(after, session_id, limit)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let event = serde_json::from_str(&r.data).ok()?;
                Some(LoggedEvent {
                    seq: r.seq,
                    session_id: r.session_id,
                    event,
                })
            })
            .collect())
    }
}

async fn write(
    store: Arc<Store>,
    mut rx: mpsc::UnboundedReceiver<(String, Event)>,
    live: broadcast::Sender<Arc<LoggedEvent>>,
    head: Arc<Mutex<Head>>,
) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(e) => batch.push(e),
                Err(_) => break,
            }
        }
        let rows: Vec<NewEvent> = batch
            .iter()
            .map(|(session_id, event)| NewEvent {
                session_id: session_id.clone(),
                kind: event_type(event),
                data: serde_json::to_string(event).unwrap_or_default(),
            })
            .collect();
        let db = store.clone();
        let written = tokio::task::spawn_blocking(move || db.append_events(&rows)).await;
        match written {
            Ok(Ok(seqs)) => {
                for (seq, (session_id, event)) in seqs.into_iter().zip(batch) {
                    let e = Arc::new(LoggedEvent {
                        seq,
                        session_id,
                        event,
                    });
                    lock(&head).note_turns(&e);
                    let _ = live.send(e.clone());
                    // After the send: `head()` promises the event was published.
                    lock(&head).seq = e.seq;
                }
            }
            // Events without a place in the log cannot be replayed or numbered; the turn
            // itself is recorded in the store as always.
            Ok(Err(e)) => eprintln!("podcode: could not write the event log: {e}"),
            Err(e) => eprintln!("podcode: could not write the event log: {e}"),
        }
    }
}
