//! Which sessions have a turn running right now, across every driver of one engine: a
//! front end's driver (`session.rs`) and a `task` call driving a sub-agent's child session
//! (`child.rs`). A session holds its place here for as long as a turn of it runs, so a
//! second driver of the same session — a client prompting a sub-agent's session while its
//! parent's `task` call runs it, or a `task` call resuming a child a client is prompting —
//! gets the busy answer instead of a second turn on the same history.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Who drives a running turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    /// The session's own driver (a front end's prompt).
    Own,
    /// A `task` call of its parent.
    Task,
}

/// The sessions with a running turn (see the module doc).
#[derive(Default)]
pub(crate) struct ActiveSessions {
    running: Mutex<HashMap<String, Driver>>,
    /// Every session a front end has open, by id (the newest port of each): a plugin's
    /// `client.session.command` runs its command through it.
    ports: Mutex<HashMap<String, crate::session::WeakPort>>,
}

impl ActiveSessions {
    fn running(&self) -> MutexGuard<'_, HashMap<String, Driver>> {
        match self.running.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Remembers `port` as session `id`'s open port (forgetting closed ones).
    pub(crate) fn open_port(&self, id: &str, port: crate::session::WeakPort) {
        let mut ports = match self.ports.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        ports.retain(|_, p| p.upgrade().is_some());
        ports.insert(id.to_string(), port);
    }

    /// Session `id`'s port, while a front end has it open.
    pub(crate) fn port(&self, id: &str) -> Option<crate::session::Port> {
        let ports = match self.ports.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        ports.get(id)?.upgrade()
    }

    /// The sessions with a turn running now.
    pub(crate) fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.running().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Who drives the turn of `id` running now, if one runs.
    pub(crate) fn driver(&self, id: &str) -> Option<Driver> {
        self.running().get(id).copied()
    }

    /// Takes `id`'s place for one turn driven by `by`; `None` when a turn of it runs.
    pub(crate) fn hold(self: &Arc<Self>, id: &str, by: Driver) -> Option<ActiveTurn> {
        let mut running = self.running();
        if running.contains_key(id) {
            return None;
        }
        running.insert(id.to_string(), by);
        Some(ActiveTurn {
            sessions: self.clone(),
            id: id.to_string(),
        })
    }
}

/// A running turn's place; the session is free again when it is dropped.
pub(crate) struct ActiveTurn {
    sessions: Arc<ActiveSessions>,
    id: String,
}

impl Drop for ActiveTurn {
    fn drop(&mut self) {
        self.sessions.running().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_has_one_running_turn_until_it_ends() {
        let active = Arc::new(ActiveSessions::default());
        let turn = active.hold("s1", Driver::Task).expect("free");
        assert_eq!(active.driver("s1"), Some(Driver::Task));
        assert!(
            active.hold("s1", Driver::Own).is_none(),
            "a second turn is refused"
        );
        assert!(
            active.hold("s2", Driver::Own).is_some(),
            "another session is free"
        );
        drop(turn);
        assert_eq!(active.driver("s1"), None);
        assert!(active.hold("s1", Driver::Own).is_some());
    }
}
