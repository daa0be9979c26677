//! One browser per session: started on the first `browser_*` call of the session, reused
//! by the next ones (calls of one session take turns), closed when the session ends, when
//! the process's tool sources shut down, or after `idle_timeout` without a call. A browser
//! that crashed or was killed is noticed at the next call, cleaned up and replaced, and that
//! call's output starts with a note.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use podcode_tools::{ToolContext, ToolError};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::gate::Gate;
use crate::launch::{self, Launched};
use crate::page::Tab;

pub(crate) struct Live {
    // Field order: the tab's listeners stop before the browser goes.
    pub(crate) tab: Tab,
    launched: Launched,
}

#[derive(Default)]
pub(crate) struct Slot {
    live: Option<Live>,
    last_used: Option<Instant>,
    reaper: Option<tokio::task::JoinHandle<()>>,
    /// The idle timeout closed the browser; the next call says so.
    reaped: bool,
}

/// A session's browser: the id of the `Browsers` owner whose tools started it, and the slot.
type OwnedSlot = (u64, Arc<AsyncMutex<Slot>>);

pub(crate) struct Pool {
    /// By session id.
    slots: Mutex<HashMap<String, OwnedSlot>>,
}

impl Pool {
    pub(crate) fn global() -> Arc<Pool> {
        static POOL: OnceLock<Arc<Pool>> = OnceLock::new();
        POOL.get_or_init(|| {
            Arc::new(Pool {
                slots: Mutex::new(HashMap::new()),
            })
        })
        .clone()
    }

    fn slot(&self, session: &str, owner: u64) -> Arc<AsyncMutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .entry(session.to_string())
            .or_insert_with(|| (owner, Arc::default()))
            .1
            .clone()
    }

    /// The session's browser, started (or restarted after a crash or the idle timeout)
    /// if needed, with the note the call's output starts with when it was restarted.
    /// `first`: the URL the call is about to open, checked (and asked about) before a
    /// browser is started for it — a refused URL starts none.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        session: &str,
        browsers: &crate::Browsers,
        first: Option<(&ToolContext, &str)>,
    ) -> Result<(OwnedMutexGuard<Slot>, Option<&'static str>), ToolError> {
        let slot = self.slot(session, browsers.owner());
        let mut guard = slot.clone().lock_owned().await;
        let mut note = None;
        let dead = match guard.live.as_mut() {
            Some(live) => !live.launched.responds().await,
            None => false,
        };
        let gate = Arc::new(Gate::default());
        if let (true, Some((ctx, url))) = (dead || guard.live.is_none(), first) {
            gate.begin(ctx);
            let verdict = gate.check(url, true).await;
            gate.end();
            verdict.map_err(|r| r.into_error())?;
        }
        if dead {
            if let Some(old) = guard.live.take() {
                let Live { tab, launched } = old;
                drop(tab);
                launched.close().await;
            }
            note = Some(crate::texts::RESTARTED);
        } else if guard.live.is_none() && std::mem::take(&mut guard.reaped) {
            note = Some(crate::texts::IDLE_RESTARTED);
        }
        if guard.live.is_none() {
            let settings = browsers.settings();
            let launched = launch::launch(settings).await?;
            let tab = match Tab::open(&launched.browser, launched.page.clone(), gate).await {
                Ok(tab) => tab,
                Err(e) => {
                    launched.close().await;
                    return Err(e);
                }
            };
            guard.live = Some(Live { tab, launched });
            if let Some(r) = guard.reaper.take() {
                r.abort();
            }
            guard.reaper = Some(tokio::spawn(reap(
                Arc::downgrade(&slot),
                settings.idle_timeout,
            )));
        }
        guard.last_used = Some(Instant::now());
        Ok((guard, note))
    }

    pub(crate) async fn close(&self, session: &str) {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.remove(session)
        };
        if let Some((_, slot)) = slot {
            shut(&mut *slot.lock().await).await;
        }
    }

    /// Closes the browsers of the sessions whose slot `owner`'s tools made.
    pub(crate) async fn close_owned(&self, owner: u64) {
        let all: Vec<_> = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let mine: Vec<String> = slots
                .iter()
                .filter(|(_, (o, _))| *o == owner)
                .map(|(k, _)| k.clone())
                .collect();
            mine.iter()
                .filter_map(|k| slots.remove(k))
                .map(|(_, s)| s)
                .collect()
        };
        for slot in all {
            shut(&mut *slot.lock().await).await;
        }
    }

    fn live_slots(&self) -> Vec<Arc<AsyncMutex<Slot>>> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.values().map(|(_, s)| s.clone()).collect()
    }

    pub(crate) fn running(&self) -> usize {
        self.pids().len()
    }

    pub(crate) fn pids(&self) -> Vec<u32> {
        self.live_slots()
            .iter()
            .filter_map(|s| {
                s.try_lock()
                    .ok()
                    .and_then(|g| g.live.as_ref()?.launched.pid)
            })
            .collect()
    }
}

impl Slot {
    pub(crate) fn tab(&self) -> Option<&Tab> {
        self.live.as_ref().map(|l| &l.tab)
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.live.as_ref()?.launched.pid
    }

    pub(crate) fn touch(&mut self) {
        self.last_used = Some(Instant::now());
    }
}

async fn shut(slot: &mut Slot) {
    if let Some(r) = slot.reaper.take() {
        r.abort();
    }
    if let Some(live) = slot.live.take() {
        let Live { tab, launched } = live;
        drop(tab);
        launched.close().await;
    }
}

/// Closes the slot's browser once it went unused for `idle`.
async fn reap(slot: std::sync::Weak<AsyncMutex<Slot>>, idle: Duration) {
    let tick = (idle / 4).max(Duration::from_millis(50));
    loop {
        tokio::time::sleep(tick).await;
        let Some(slot) = slot.upgrade() else { return };
        // A call in progress holds the lock: the browser is in use.
        let Ok(mut guard) = slot.try_lock() else {
            continue;
        };
        let unused = guard.last_used.map(|t| t.elapsed() >= idle).unwrap_or(true);
        if unused && guard.live.is_some() {
            guard.reaper = None;
            guard.reaped = true;
            if let Some(live) = guard.live.take() {
                let Live { tab, launched } = live;
                drop(tab);
                launched.close().await;
            }
            return;
        }
    }
}

/// Resident memory (bytes) of the process tree of every running browser.
pub(crate) fn tree_memory(pids: &[u32]) -> u64 {
    let all: Vec<u32> = pids.iter().flat_map(|p| launch::process_tree(*p)).collect();
    launch::resident_bytes(&all)
}
