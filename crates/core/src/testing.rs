//! Test support (feature `test-support`): a throwaway workspace for driving the engine in
//! tests and benches of this crate and the front ends. One temporary directory holds `repo/`
//! (with an empty `.git` marker, so it is the project root), `config/`, `data/` and `home/`;
//! `config/config.toml` names the scripted model server (`podcode_providers::testing`) as
//! `scripted/test`, so an engine loaded here talks to a real HTTP server and a real SQLite
//! store and never to the user's own config.

// Test support only (feature `test-support`): a failed setup panics so the test that uses it
// fails at that line, as `#[test]` code does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Dirs, Engine, EngineError, Session, SessionOptions, SessionPick};

/// A temporary project, config, data and home directory; removed when dropped.
pub struct ScratchWorkspace {
    root: tempfile::TempDir,
}

impl ScratchWorkspace {
    /// `model_url` is the scripted model server's base URL; `extra_config` is TOML added after
    /// the `model` line (top-level keys, then tables such as `[[permission]]` or
    /// `[provider.scripted.headers]`).
    pub fn new(model_url: &str, extra_config: &str) -> std::io::Result<Self> {
        let root = tempfile::tempdir()?;
        for dir in ["repo/.git", "config", "data", "home"] {
            std::fs::create_dir_all(root.path().join(dir))?;
        }
        std::fs::write(
            root.path().join("config/config.toml"),
            format!(
                "model = \"scripted/test\"\n{extra_config}\n[provider.scripted]\nbase_url = \"{model_url}\"\n[provider.scripted.models.\"test\"]\ncontext = 128000\n"
            ),
        )?;
        Ok(Self { root })
    }

    /// The directory holding `repo/`, `config/`, `data/` and `home/`.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The project directory sessions work in.
    pub fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }

    /// Podcode's global directories (and opencode's, under `home/`), all inside the
    /// workspace: nothing comes from the process environment.
    pub fn dirs(&self) -> Dirs {
        Dirs::under(self.root.path())
    }

    /// An engine for `repo/` with this workspace's directories.
    pub fn engine(&self) -> Result<Arc<Engine>, EngineError> {
        Ok(Arc::new(Engine::load_in(Some(self.repo()), self.dirs())?))
    }
}

/// A new session of the `build` agent on the config's model, outside any worktree.
pub async fn open_build_session(engine: &Arc<Engine>, title: &str) -> Result<Session, EngineError> {
    engine
        .open_session(SessionOptions {
            pick: SessionPick::New {
                title: title.to_string(),
            },
            agent: "build".into(),
            model: None,
            max_steps: None,
            worktree: false,
        })
        .await
}
