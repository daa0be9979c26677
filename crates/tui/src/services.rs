//! What the UI needs from the front end that wires it, beyond the `Op`/`Event` channels:
//! the stored transcript of a session to resume, and the choices its pickers offer (models,
//! agent profiles), the `/plugins` report, the session list, the change journal and its
//! reverts. The CLI implements it over the engine; tests
//! implement it over fixed data.

use podcode_protocol::{Item, RevertReport, RevertTarget, StepUsage};

use crate::changes::ChangeItem;

/// One row of a picker: `value` is what picking it sends, `label` and `detail` are shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PickItem {
    /// What picking it sends.
    pub value: String,
    /// What the row shows.
    pub label: String,
    /// A short description beside it.
    pub detail: String,
}

impl PickItem {
    /// An item showing its `value`, with `detail`.
    pub fn new(value: &str, detail: &str) -> Self {
        Self {
            value: value.into(),
            label: value.into(),
            detail: detail.into(),
        }
    }
}

/// What the TUI asks of the engine besides the session's events and ops: stored transcripts,
/// choices for the pickers, changes and reports. The binary implements it over `podcode-core`.
pub trait TuiServices: Send + Sync {
    /// A stored session's conversation items, and the tokens it used so far.
    fn transcript(&self, session_id: &str) -> Result<(Vec<Item>, StepUsage), String>;
    /// A stored session's totals: its own, and with its sub-agents' (zero when unknown).
    fn totals(&self, _session_id: &str) -> Result<(StepUsage, StepUsage), String> {
        Ok((StepUsage::default(), StepUsage::default()))
    }
    /// Models the `/model` picker offers (configured, used by profiles, used before).
    fn models(&self) -> Vec<PickItem>;
    /// The agent profiles `/agent` offers.
    fn agents(&self) -> Vec<PickItem>;
    /// The `/plugins` report: the JavaScript runtime and each plugin file's status.
    fn plugins(&self) -> Vec<String>;
    /// The `/skills` report: every skill with its source (the repository's marked), and the
    /// files refused and why.
    fn skills(&self) -> Vec<String> {
        Vec::new()
    }
    /// The `/commands` report: every custom command with its source, and the files not
    /// offered and why.
    fn command_lines(&self) -> Vec<String> {
        Vec::new()
    }
    /// The other sessions of directory `cwd` that have a conversation (not `current`),
    /// newest first, for the `/sessions` picker.
    fn sessions_here(&self, cwd: &str, current: &str) -> Result<Vec<PickItem>, String>;
    /// Starts a new session (`/new`) that works like session `like` (in a fresh worktree
    /// when `like` has one) and returns its id and, for a worktree, its directory.
    fn new_session(
        &self,
        like: &str,
        agent: &str,
        model: &str,
    ) -> Result<(String, Option<String>), String>;
    /// A stored session's title (`None`: no such session).
    fn session_title(&self, id: &str) -> Result<Option<String>, String>;
    /// The session's journaled changes for the Changes view.
    fn changes(&self, session_id: &str) -> Result<Vec<ChangeItem>, String>;
    /// Reverts `target`, journaled under `session_id`.
    fn revert(&self, session_id: &str, target: RevertTarget, force: bool) -> RevertReport;
}

/// Services with nothing to offer (render tests, embedding without a config).
#[derive(Debug, Default)]
pub struct NoServices;

impl TuiServices for NoServices {
    fn transcript(&self, _: &str) -> Result<(Vec<Item>, StepUsage), String> {
        Ok((Vec::new(), StepUsage::default()))
    }
    fn models(&self) -> Vec<PickItem> {
        Vec::new()
    }
    fn agents(&self) -> Vec<PickItem> {
        Vec::new()
    }
    fn plugins(&self) -> Vec<String> {
        Vec::new()
    }
    fn sessions_here(&self, _: &str, _: &str) -> Result<Vec<PickItem>, String> {
        Ok(Vec::new())
    }
    fn new_session(&self, _: &str, _: &str, _: &str) -> Result<(String, Option<String>), String> {
        Err("no store in this UI".into())
    }
    fn session_title(&self, _: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
    fn changes(&self, _: &str) -> Result<Vec<ChangeItem>, String> {
        Ok(Vec::new())
    }
    fn revert(&self, _: &str, _: RevertTarget, _: bool) -> RevertReport {
        RevertReport {
            error: Some("no store in this UI".into()),
            ..RevertReport::default()
        }
    }
}
