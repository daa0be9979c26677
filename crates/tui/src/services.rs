//! What the UI needs from the front end that wires it, beyond the `Op`/`Event` channels:
//! the stored transcript of a session to resume, and the choices its pickers offer (models,
//! agent profiles) and the `/plugins` report. The CLI implements it over its `App`; tests
//! implement it over fixed data.

use podcode_protocol::StepUsage;

use crate::transcript::Entry;

/// One row of a picker: `value` is what picking it sends, `label` and `detail` are shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PickItem {
    pub value: String,
    pub label: String,
    pub detail: String,
}

impl PickItem {
    pub fn new(value: &str, detail: &str) -> Self {
        Self {
            value: value.into(),
            label: value.into(),
            detail: detail.into(),
        }
    }
}

pub trait TuiServices: Send + Sync {
    /// A stored session as transcript entries, and the tokens it used so far.
    fn transcript(&self, session_id: &str) -> Result<(Vec<Entry>, StepUsage), String>;
    /// Models the `/model` picker offers (configured, used by profiles, used before).
    fn models(&self) -> Vec<PickItem>;
    /// The agent profiles `/agent` offers.
    fn agents(&self) -> Vec<PickItem>;
    /// The `/plugins` report: the JavaScript runtime and each plugin file's status.
    fn plugins(&self) -> Vec<String>;
}

/// Services with nothing to offer (render tests, embedding without a config).
#[derive(Debug, Default)]
pub struct NoServices;

impl TuiServices for NoServices {
    fn transcript(&self, _: &str) -> Result<(Vec<Entry>, StepUsage), String> {
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
}
