//! The merged tool set. `ToolSet::build` loads every `ToolSource` in precedence order
//! (built-ins first, later sources win a collision, protected ids are refused, every
//! replacement and load problem is recorded in the registry) — the engine and tests use the
//! same builder. `ToolSets` keeps the newest set for a running engine: before each model
//! request a session asks it to `refresh`, which rebuilds the set when a source's stamp
//! changed (files edited on disk, an MCP server became ready); each session then picks the
//! new set up through its own `SessionTools` reloader.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use podcode_agent::{ReloadedTools, ToolReloader};
use podcode_config::ToolSwitches;
use podcode_protocol::Event;
use podcode_tools::{SourceKind, ToolHook, ToolRegistry};
use tokio::sync::{Mutex, broadcast};

use crate::sources::{Plugins, ToolSource};

/// One built tool set: the registry and the hooks its plugins brought.
#[derive(Clone)]
pub struct ToolSet {
    /// Every loaded tool.
    pub registry: Arc<ToolRegistry>,
    /// The plugins' pipeline hooks.
    pub hooks: Vec<Arc<dyn ToolHook>>,
    /// Bumped on every rebuild, so sessions know they are behind.
    pub generation: u64,
    /// Each source's stamp as its load gave it (`None`: the source gives none).
    load_stamps: Vec<Option<u64>>,
}

impl ToolSet {
    /// Loads every source in order and merges what they offer.
    pub async fn build(sources: &[Arc<dyn ToolSource>]) -> ToolSet {
        Self::build_switched(sources, &ToolSwitches::default()).await
    }

    /// [`Self::build`], then the tools `switches` names are taken out (they stay listed as
    /// switched off, so `podcode tools` can say why they are missing).
    pub async fn build_switched(
        sources: &[Arc<dyn ToolSource>],
        switches: &ToolSwitches,
    ) -> ToolSet {
        let mut registry = ToolRegistry::new();
        let mut hooks = Vec::new();
        let mut load_stamps = Vec::new();
        for source in sources {
            let load = source.load().await;
            load_stamps.push(load.stamp);
            for (label, tools) in load.groups {
                if label.kind == SourceKind::Builtin {
                    for tool in tools {
                        registry.register_builtin(tool);
                    }
                } else {
                    registry.merge(label, tools);
                }
            }
            for p in load.problems {
                registry.add_problem(&p.source, p.level, p.message);
            }
            hooks.extend(load.hooks);
        }
        if !switches.disable.is_empty() {
            registry.switch_off(|id| switches.switched_off_by(id).map(str::to_string));
        }
        ToolSet {
            registry: Arc::new(registry),
            hooks,
            generation: 0,
            load_stamps,
        }
    }
}

fn stamp_of(sources: &[Arc<dyn ToolSource>]) -> u64 {
    combine(sources.iter().map(|s| s.stamp()))
}

fn combine(stamps: impl Iterator<Item = u64>) -> u64 {
    stamps.fold(0u64, |acc, s| acc.rotate_left(7) ^ s)
}

/// Builds the set, with its sources' stamps taken before their loads (so a change during
/// a load shows at the next refresh) — or, for a source that stamps its own loads, from
/// the load itself (one look at the disk instead of two).
async fn build_stamped(sources: &[Arc<dyn ToolSource>], switches: &ToolSwitches) -> (ToolSet, u64) {
    let before: Vec<Option<u64>> = sources
        .iter()
        .map(|s| (!s.stamps_its_loads()).then(|| s.stamp()))
        .collect();
    let set = ToolSet::build_switched(sources, switches).await;
    let stamp = combine(sources.iter().enumerate().map(|(i, s)| {
        before[i]
            .or_else(|| set.load_stamps.get(i).copied().flatten())
            .unwrap_or_else(|| s.stamp())
    }));
    (set, stamp)
}

/// The engine's live tool set and the sources it is built from.
pub struct ToolSets {
    sources: Vec<Arc<dyn ToolSource>>,
    /// Tools the config switched off (`[tools] disable`, opencode's `tools`).
    switches: ToolSwitches,
    plugins: Option<Arc<Plugins>>,
    stamp: std::sync::Mutex<u64>,
    latest: std::sync::Mutex<ToolSet>,
    /// Serialises rebuilds: two sessions noticing the same change build once.
    rebuilding: Mutex<()>,
    /// Feeds plugins' `event` hooks from the engine's event bus.
    feed: Mutex<Option<podcode_plugins::EventFeed>>,
    /// Subscribed before any session runs and held until the plugins' hooks are known, so
    /// their `event` hooks hear a session from its first event.
    early: std::sync::Mutex<Option<broadcast::Receiver<Event>>>,
    bus: broadcast::Sender<Event>,
    /// Warnings that belong to no session (a plugin's `event` hook failed): every open
    /// session shows them.
    notices: broadcast::Sender<Event>,
    /// Reads a turn's file diffs from the change journal for `session.diff` events.
    diffs: Option<podcode_plugins::DiffLookup>,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl ToolSets {
    /// Builds the first set. `plugins` is the plugin source among `sources`, for reports.
    pub async fn start(
        sources: Vec<Arc<dyn ToolSource>>,
        plugins: Option<Arc<Plugins>>,
        bus: broadcast::Sender<Event>,
    ) -> Self {
        Self::start_switched(sources, plugins, bus, ToolSwitches::default(), None).await
    }

    /// [`Self::start`] with tools switched off in every set it builds, and plugins' `event`
    /// hooks told each turn's file diffs through `diffs`.
    pub async fn start_switched(
        sources: Vec<Arc<dyn ToolSource>>,
        plugins: Option<Arc<Plugins>>,
        bus: broadcast::Sender<Event>,
        switches: ToolSwitches,
        diffs: Option<podcode_plugins::DiffLookup>,
    ) -> Self {
        let (set, stamp) = build_stamped(&sources, &switches).await;
        let sets = Self {
            sources,
            switches,
            plugins,
            stamp: std::sync::Mutex::new(stamp),
            latest: std::sync::Mutex::new(set),
            rebuilding: Mutex::new(()),
            feed: Mutex::new(None),
            early: std::sync::Mutex::new(Some(bus.subscribe())),
            bus,
            notices: broadcast::channel(256).0,
            diffs,
        };
        sets.feed_event_hooks().await;
        sets
    }

    /// The newest tool set.
    pub fn latest(&self) -> ToolSet {
        lock(&self.latest).clone()
    }

    /// Warnings for every session (see `notices`).
    pub fn subscribe_notices(&self) -> broadcast::Receiver<Event> {
        self.notices.subscribe()
    }

    /// The sender of `subscribe_notices` (plugin toasts go out through it).
    pub fn notice_sender(&self) -> broadcast::Sender<Event> {
        self.notices.clone()
    }

    /// The plugin source, when plugins are loaded.
    pub fn plugins(&self) -> Option<&Arc<Plugins>> {
        self.plugins.as_ref()
    }

    /// Rebuilds the set when a source changed; returns the newest set either way.
    pub async fn refresh(&self) -> ToolSet {
        let now = stamp_of(&self.sources);
        if *lock(&self.stamp) == now {
            return self.latest();
        }
        let _one = self.rebuilding.lock().await;
        if *lock(&self.stamp) == now {
            return self.latest();
        }
        let (mut set, stamp) = build_stamped(&self.sources, &self.switches).await;
        set.generation = lock(&self.latest).generation + 1;
        *lock(&self.latest) = set.clone();
        *lock(&self.stamp) = stamp;
        self.feed_event_hooks().await;
        for s in &self.sources {
            s.retire().await;
        }
        set
    }

    /// Plugins' `event` hooks see every event of every session; their failures are
    /// reported once as warnings to every session (front ends show them, none writes to stderr
    /// behind a full-screen UI).
    async fn feed_event_hooks(&self) {
        let mut feed = self.feed.lock().await;
        let held = match feed.take() {
            Some(old) => old.hand_over().await,
            None => lock(&self.early).take(),
        };
        let state = self.plugins.as_ref().and_then(|p| p.state());
        let Some(state) = state else {
            // Not loaded yet: keep listening, the next build knows.
            if self.plugins.is_some() {
                *lock(&self.early) = held.or_else(|| Some(self.bus.subscribe()));
            }
            return;
        };
        // No `event` hook: no receiver, so the bus costs nothing.
        let Some(hooks) = state.hooks.clone().filter(|h| h.handles("event")) else {
            return;
        };
        let notices = self.notices.clone();
        *feed = hooks.forward_events(
            held.unwrap_or_else(|| self.bus.subscribe()),
            Arc::new(move |message| {
                let _ = notices.send(Event::Warning { message });
            }),
            self.diffs.clone(),
        );
    }

    /// Delivers the events plugins' `event` hooks have not heard yet (bounded), then shuts
    /// every source down (sidecars, MCP servers).
    pub async fn shutdown(&self) {
        let feed = self.feed.lock().await.take();
        if let Some(f) = feed {
            f.drain(std::time::Duration::from_secs(10)).await;
        }
        for s in &self.sources {
            s.shutdown().await;
        }
    }
}

/// One session's view of the engine's tool set: hands the agent each newer set once.
pub struct SessionTools {
    /// The engine's tool sets.
    pub sets: Arc<ToolSets>,
    /// The generation this session last took.
    pub seen: AtomicU64,
}

#[async_trait]
impl ToolReloader for SessionTools {
    async fn reload(&self) -> Option<ReloadedTools> {
        let set = self.sets.refresh().await;
        if self.seen.swap(set.generation, Ordering::SeqCst) == set.generation {
            return None;
        }
        Some(ReloadedTools {
            registry: set.registry,
            hooks: set.hooks,
        })
    }
}
