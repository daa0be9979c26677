//! Permission asks as events. The pipeline's `Asker` for every engine session: an ask is
//! kept as pending, announced as `Event::PermissionAsked` on the session's stream, and
//! settled by the first `Op::PermissionReply` naming it — whoever sends it (a terminal
//! prompt, the TUI modal, a policy, a parent session). When the call is aborted while the
//! ask is open (nobody waits any more), or when it is answered, `Event::PermissionResolved`
//! tells every front end to close its prompt.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use podcode_protocol::{Event, PermissionReply};
use podcode_tools::{AskRequest, Asker, EventSink};
use tokio::sync::oneshot;

#[derive(Default)]
struct Pending {
    waiting: HashMap<String, (oneshot::Sender<PermissionReply>, Event)>,
    order: Vec<String>,
    /// Asks a stop closed before the turn's abort reached their calls: the calls keep
    /// waiting until then, so they end as stopped, not as refused by the user.
    stopping: Vec<oneshot::Sender<PermissionReply>>,
}

pub struct EventAsker {
    pending: Mutex<Pending>,
    /// Where asks and their resolutions are published: the session's one writer, so an
    /// ask is ordered with the call's own events.
    publish: EventSink,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl EventAsker {
    pub fn new(publish: EventSink) -> Arc<Self> {
        Arc::new(Self {
            pending: Mutex::new(Pending::default()),
            publish,
        })
    }

    /// Settles an open ask; `false` when it was already settled or never existed.
    pub fn reply(&self, request_id: &str, reply: PermissionReply) -> bool {
        let entry = {
            let mut p = lock(&self.pending);
            p.order.retain(|id| id != request_id);
            p.waiting.remove(request_id)
        };
        let Some((tx, _)) = entry else {
            return false;
        };
        (self.publish)(Event::PermissionResolved {
            request_id: request_id.to_string(),
            reply: Some(reply.clone()),
        });
        tx.send(reply).is_ok()
    }

    /// Every open ask, oldest first, as `PermissionAsked` events (for an answerer that
    /// joined late or missed events).
    pub fn open_asks(&self) -> Vec<Event> {
        let p = lock(&self.pending);
        p.order
            .iter()
            .filter_map(|id| p.waiting.get(id).map(|(_, e)| e.clone()))
            .collect()
    }

    /// Closes every open ask because the turn is being stopped: a late answer is refused
    /// (nothing would run it) and every front end closes its prompt at once. The calls go
    /// on waiting until [`Self::release_stopped`], after the turn's abort.
    pub fn close_for_stop(&self) {
        let closed: Vec<String> = {
            let mut p = lock(&self.pending);
            let ids = std::mem::take(&mut p.order);
            let mut closed = Vec::new();
            for id in ids {
                if let Some((tx, _)) = p.waiting.remove(&id) {
                    p.stopping.push(tx);
                    closed.push(id);
                }
            }
            closed
        };
        for request_id in closed {
            (self.publish)(Event::PermissionResolved {
                request_id,
                reply: None,
            });
        }
    }

    /// The turn's abort has been signalled: the calls whose asks a stop closed stop
    /// waiting (without an answer, so they end as aborted).
    pub fn release_stopped(&self) {
        let released = std::mem::take(&mut lock(&self.pending).stopping);
        drop(released);
    }

    fn abandon(&self, request_id: &str) {
        let removed = {
            let mut p = lock(&self.pending);
            p.order.retain(|id| id != request_id);
            p.waiting.remove(request_id).is_some()
        };
        if removed {
            (self.publish)(Event::PermissionResolved {
                request_id: request_id.to_string(),
                reply: None,
            });
        }
    }
}

/// Closes the ask when the waiting call goes away without an answer.
struct Abandon<'a> {
    asker: &'a EventAsker,
    request_id: &'a str,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.asker.abandon(self.request_id);
    }
}

#[async_trait]
impl Asker for EventAsker {
    async fn ask(&self, request: &AskRequest) -> PermissionReply {
        let (tx, rx) = oneshot::channel();
        let event = Event::PermissionAsked {
            session_id: request.session_id.clone(),
            request_id: request.request_id.clone(),
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            request: request.request.clone(),
        };
        {
            let mut p = lock(&self.pending);
            p.waiting
                .insert(request.request_id.clone(), (tx, event.clone()));
            p.order.push(request.request_id.clone());
        }
        let _guard = Abandon {
            asker: self,
            request_id: &request.request_id,
        };
        (self.publish)(event);
        rx.await.unwrap_or(PermissionReply::Reject {
            feedback: Some(
                "the session closed before anyone answered the permission prompt".into(),
            ),
        })
    }
}
