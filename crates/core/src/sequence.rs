//! One writer per session: every event a session says — the agent loop's, its tool calls',
//! its permission asks, its sub-agents', the driver's own (a refused turn, a revert) — goes
//! through `Sequencer::publish`, which numbers it and hands it on while holding one lock.
//!
//! Data flow: producers call `publish` synchronously (the tool runtime's `EventSink`, the
//! asker, `Port::emit`, a child's wrapping sink). Under the lock the event gets the next
//! number, goes into the event log's queue when the session is logged (unbounded, so the
//! log never drops what the live stream delivered; its writer commits in batches), and is
//! sent to the live receivers. So the live stream, the numbered stream and the log are one
//! sequence in one order, with no forwarding task in between that could reorder or lag.

use std::sync::{Arc, Mutex, MutexGuard};

use podcode_protocol::Event;
use tokio::sync::{broadcast, mpsc};

/// An event with its place in its session's sequence (1, 2, 3, … from the session's opening).
#[derive(Debug, Clone, PartialEq)]
pub struct Numbered {
    /// Gapless and strictly increasing within one opened session.
    pub seq: u64,
    /// The event.
    pub event: Event,
}

/// Where a logged session's events are queued for the store: `(session id, event)`.
pub(crate) type LogQueue = mpsc::UnboundedSender<(String, Event)>;

struct State {
    last: u64,
    log: Option<(String, LogQueue)>,
}

/// A session's one writer (see the module doc).
pub(crate) struct Sequencer {
    state: Mutex<State>,
    live: broadcast::Sender<Event>,
    numbered: broadcast::Sender<Arc<Numbered>>,
}

impl Sequencer {
    /// A writer whose live stream is `live`.
    pub(crate) fn new(live: broadcast::Sender<Event>) -> Arc<Self> {
        let (numbered, _) = broadcast::channel(crate::session::SESSION_EVENTS);
        Arc::new(Self {
            state: Mutex::new(State { last: 0, log: None }),
            live,
            numbered,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Numbers `event` and hands it to the log and the live receivers, in one order.
    pub(crate) fn publish(&self, event: Event) {
        let mut state = self.state();
        state.last += 1;
        let seq = state.last;
        if let Some((id, queue)) = &state.log
            && queue.send((id.clone(), event.clone())).is_err()
        {
            state.log = None;
        }
        if self.numbered.receiver_count() > 0 {
            let _ = self.numbered.send(Arc::new(Numbered {
                seq,
                event: event.clone(),
            }));
        }
        // No receivers is fine: a front end subscribes when it wants the stream.
        let _ = self.live.send(event);
    }

    /// Queues every event from now on for the event log, tagged with `session_id`.
    pub(crate) fn log_into(&self, session_id: &str, queue: LogQueue) {
        self.state().log = Some((session_id.to_string(), queue));
    }

    /// A receiver of the live stream from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.live.subscribe()
    }

    /// A receiver of the numbered stream from now on.
    pub(crate) fn subscribe_numbered(&self) -> broadcast::Receiver<Arc<Numbered>> {
        self.numbered.subscribe()
    }

    /// `publish` as a function a producer holds (the tool runtime, a sub-agent).
    pub(crate) fn sink(self: &Arc<Self>) -> podcode_tools::EventSink {
        let me = self.clone();
        Arc::new(move |event| me.publish(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning(n: usize) -> Event {
        Event::Warning {
            message: n.to_string(),
        }
    }

    #[test]
    fn threads_publishing_at_once_get_one_gapless_order_in_every_stream() {
        let (live, mut live_rx) = broadcast::channel(4096);
        let seq = Sequencer::new(live);
        let mut numbered = seq.subscribe_numbered();
        let (queue, mut logged) = mpsc::unbounded_channel();
        seq.log_into("s1", queue);
        std::thread::scope(|s| {
            for t in 0..4 {
                let sink = seq.sink();
                s.spawn(move || {
                    for i in 0..200 {
                        sink(warning(t * 1000 + i));
                    }
                });
            }
        });
        let mut order = Vec::new();
        for want in 1..=800u64 {
            let n = numbered.try_recv().expect("numbered");
            assert_eq!(n.seq, want);
            assert_eq!(live_rx.try_recv().expect("live"), n.event);
            let (id, e) = logged.try_recv().expect("logged");
            assert_eq!((id.as_str(), &e), ("s1", &n.event));
            order.push(n.event.clone());
        }
        assert!(numbered.try_recv().is_err() && logged.try_recv().is_err());
        // Each thread's own events keep their order.
        for t in 0..4 {
            let mine: Vec<_> = order
                .iter()
                .filter_map(|e| match e {
                    Event::Warning { message } => message.parse::<usize>().ok(),
                    _ => None,
                })
                .filter(|n| n / 1000 == t)
                .collect();
            assert_eq!(mine, (t * 1000..t * 1000 + 200).collect::<Vec<_>>());
        }
    }
}
