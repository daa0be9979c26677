//! The event streams (Server-Sent Events): one session's, or every served session's.
//!
//! Each message is `id:` the event's `seq` in the event log, `event:` its type, `data:` the
//! engine's `Event` JSON plus `"session"`. A stream starts after `Last-Event-ID` (header, or
//! `?last_event_id=`), or after the newest event when there is none: it subscribes to the
//! live log first, then replays from the store what comes after that id, then forwards live
//! events, skipping any it already replayed — so nothing is lost or sent twice. A client
//! that falls behind the live log is caught up from the store the same way.
//!
//! What waits for a client is bounded: messages queued for its connection may hold at most
//! [`CLIENT_BUFFER`] bytes. Replaying from the store waits for room (the store is the
//! buffer); a live event that finds no room ends the stream instead — the client stopped
//! reading, and holding the backlog for it would cost the server memory without bound. It
//! reconnects with `Last-Event-ID` (an `EventSource` does by itself) and is replayed from
//! the store what it missed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, KeepAliveStream, Sse};
use futures_util::Stream;
use podcode_core::{EventLog, LoggedEvent};
use podcode_protocol::Event;
use serde::Deserialize;
use tokio::sync::{Semaphore, broadcast, mpsc};
use utoipa::IntoParams;

use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;

/// Keep-alive comments keep proxies and browsers from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Events read from the store per query while replaying.
const PAGE: usize = 1000;
/// The most bytes of messages queued for one client.
pub const CLIENT_BUFFER: usize = 1 << 20;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Replay every logged event after this id (as the `Last-Event-ID` header does); `0`
    /// replays the whole log.
    pub last_event_id: Option<i64>,
}

type BoxStream = Box<dyn Stream<Item = Result<SseEvent, Infallible>> + Send + Unpin>;
type EventStream = Sse<KeepAliveStream<BoxStream>>;

/// The events of one session (opened when it is stored but not open).
#[utoipa::path(
    get,
    path = "/api/sessions/{id}/events",
    tag = "events",
    params(("id" = String, Path, description = "Session id"), StreamQuery,
        ("Last-Event-ID" = Option<i64>, Header, description = "Replay after this event id")),
    responses(
        (status = 200, description = "text/event-stream: `id` seq, `event` type, `data` Event JSON with `session`", content_type = "text/event-stream", body = String),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)
    )
)]
pub async fn session_events(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<StreamQuery>,
    headers: HeaderMap,
) -> ApiResult<EventStream> {
    // Another project's session is only followed, never opened (driven) here.
    let row = state.engine.session(&id)?;
    if state.foreign(&row).is_none() {
        state.open(&id).await?;
    }
    Ok(stream(&state, Some(id), last_id(&headers, &q)))
}

/// The events of every session the server drives.
#[utoipa::path(
    get,
    path = "/api/events",
    tag = "events",
    params(StreamQuery,
        ("Last-Event-ID" = Option<i64>, Header, description = "Replay after this event id")),
    responses(
        (status = 200, description = "text/event-stream, as the session stream", content_type = "text/event-stream", body = String),
        (status = 401, body = ErrorBody)
    )
)]
pub async fn all_events(
    State(state): State<Arc<AppState>>,
    Query(q): Query<StreamQuery>,
    headers: HeaderMap,
) -> EventStream {
    stream(&state, None, last_id(&headers, &q))
}

fn last_id(headers: &HeaderMap, q: &StreamQuery) -> Option<i64> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .or(q.last_event_id)
}

fn stream(state: &AppState, session: Option<String>, last: Option<i64>) -> EventStream {
    let log = state.log.clone();
    // Read the head before subscribing: whatever is published after it is either received
    // live or (if published before the subscription) already in the store.
    let after = last.unwrap_or_else(|| log.head()).max(0);
    let live = log.subscribe();
    let (tx, rx) = mpsc::unbounded_channel::<Queued>();
    let room = Arc::new(Semaphore::new(CLIENT_BUFFER));
    let out = Outbox {
        tx,
        room: room.clone(),
    };
    let stop = state.stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = forward(log, session, after, live, out) => {}
            _ = stop.cancelled() => {}
        }
    });
    // A message handed to the connection gives its room back.
    let body = futures_util::stream::unfold((rx, room), |(mut rx, room)| async move {
        let q = rx.recv().await?;
        room.add_permits(q.size as usize);
        Some((Ok(q.event), (rx, room)))
    });
    Sse::new(Box::new(Box::pin(body)) as BoxStream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
}

/// A message on its way to a client, with the room it takes.
struct Queued {
    event: SseEvent,
    size: u32,
}

/// The sending side of a client's queue, bounded in bytes by `room`.
struct Outbox {
    tx: mpsc::UnboundedSender<Queued>,
    room: Arc<Semaphore>,
}

impl Outbox {
    /// The room `bytes` takes (a message larger than the whole buffer takes all of it).
    fn size(bytes: usize) -> u32 {
        u32::try_from(bytes.clamp(1, CLIENT_BUFFER)).unwrap_or(u32::MAX)
    }
    /// Queues `event`, waiting for room; false when the client is gone.
    async fn send(&self, (event, bytes): (SseEvent, usize)) -> bool {
        let size = Self::size(bytes);
        // Waiting for room ends when the client goes away, not only when it reads.
        let permit = tokio::select! {
            permit = self.room.acquire_many(size) => permit,
            _ = self.tx.closed() => return false,
        };
        match permit {
            Ok(permit) => permit.forget(),
            Err(_) => return false,
        }
        self.tx.send(Queued { event, size }).is_ok()
    }
    /// Queues `event` if there is room now; false when there is not (or the client is gone).
    fn offer(&self, (event, bytes): (SseEvent, usize)) -> bool {
        let size = Self::size(bytes);
        match self.room.try_acquire_many(size) {
            Ok(permit) => permit.forget(),
            Err(_) => return false,
        }
        self.tx.send(Queued { event, size }).is_ok()
    }
}

/// Replays, then follows the live log, until the client goes away or stops reading.
async fn forward(
    log: Arc<EventLog>,
    session: Option<String>,
    mut sent: i64,
    mut live: broadcast::Receiver<Arc<LoggedEvent>>,
    tx: Outbox,
) {
    let ready = SseEvent::default().comment("ready");
    if !tx.send((ready, 8)).await {
        return;
    }
    loop {
        // Catch up from the store (at the start, and after falling behind).
        loop {
            let page = match log.since(sent, session.as_deref(), PAGE) {
                Ok(p) => p,
                Err(e) => {
                    let text = format!("event log: {e}");
                    let size = text.len();
                    tx.send((SseEvent::default().comment(text), size)).await;
                    return;
                }
            };
            let Some(last) = page.last().map(|e| e.seq) else {
                break;
            };
            for e in coalesce(page) {
                if !tx.send(message(&e)).await {
                    return;
                }
            }
            sent = last;
        }
        loop {
            match live.recv().await {
                Ok(e) => {
                    if e.seq <= sent || session.as_ref().is_some_and(|s| *s != e.session_id) {
                        continue;
                    }
                    // No room: the client is not reading. End its stream (what is queued
                    // still goes out); it resumes from its last id.
                    if !tx.offer(message(&e)) {
                        return;
                    }
                    sent = e.seq;
                }
                Err(broadcast::error::RecvError::Lagged(_)) => break,
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

/// One SSE message for a logged event, and about how many bytes it is.
fn message(e: &LoggedEvent) -> (SseEvent, usize) {
    let mut data = serde_json::to_value(&e.event).unwrap_or_default();
    let kind = data
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("event")
        .to_string();
    if let Some(obj) = data.as_object_mut() {
        obj.insert("session".into(), e.session_id.clone().into());
    }
    let data = data.to_string();
    let size = data.len() + kind.len() + 32;
    let event = SseEvent::default()
        .id(e.seq.to_string())
        .event(kind)
        .data(data);
    (event, size)
}

/// Merges runs of text (or reasoning) deltas of one message into one event carrying the
/// run's last id: a replay sends the same text in far fewer messages.
pub fn coalesce(events: Vec<LoggedEvent>) -> Vec<LoggedEvent> {
    let mut out: Vec<LoggedEvent> = Vec::with_capacity(events.len());
    for e in events {
        if let Some(prev) = out.last_mut()
            && prev.session_id == e.session_id
        {
            match (&mut prev.event, &e.event) {
                (
                    Event::TextDelta { message_id, text },
                    Event::TextDelta {
                        message_id: next_id,
                        text: more,
                    },
                )
                | (
                    Event::ReasoningDelta { message_id, text },
                    Event::ReasoningDelta {
                        message_id: next_id,
                        text: more,
                    },
                ) if message_id == next_id => {
                    text.push_str(more);
                    prev.seq = e.seq;
                    continue;
                }
                _ => {}
            }
        }
        out.push(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(seq: i64, id: &str, text: &str) -> LoggedEvent {
        LoggedEvent {
            seq,
            session_id: "s".into(),
            event: Event::TextDelta {
                message_id: id.into(),
                text: text.into(),
            },
        }
    }

    #[test]
    fn replay_merges_runs_of_deltas_of_one_message_and_keeps_the_last_id() {
        let warn = LoggedEvent {
            seq: 4,
            session_id: "s".into(),
            event: Event::Warning {
                message: "w".into(),
            },
        };
        let out = coalesce(vec![
            delta(1, "m1", "Hel"),
            delta(2, "m1", "lo"),
            delta(3, "m2", "!"),
            warn.clone(),
            delta(5, "m2", "?"),
        ]);
        assert_eq!(
            out,
            vec![
                delta(2, "m1", "Hello"),
                delta(3, "m2", "!"),
                warn,
                delta(5, "m2", "?")
            ]
        );
    }
}
