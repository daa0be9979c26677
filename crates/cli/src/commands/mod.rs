//! One module per subcommand.

pub mod acp;
pub mod agents;
pub mod auth;
pub mod call;
pub mod changes;
pub mod mcp;
pub mod permissions;
pub mod plugins;
pub mod run;
pub mod sandbox;
pub mod serve;
pub mod sessions;
pub mod tools;
pub mod trust;
pub mod tui;

use clap::Args;
use podcode_core::SessionPick;

/// Which session a prompt goes to, and its agent and model (`run` and `tui`).
#[derive(Args, Default, Clone)]
pub struct SessionArgs {
    /// The agent profile: `build` (all tools), `plan` (read-only), or one from config or an
    /// agent file (`podcode agents` lists them).
    #[arg(long, default_value = "build")]
    pub agent: String,
    /// The model as `provider/model-id` (overrides config and the agent profile).
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Continue the most recent session started in this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub continue_last: bool,
    /// Continue session ID.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

impl SessionArgs {
    /// The session to open: `--session`, the newest (`--continue`), or a new one titled
    /// `title`.
    pub fn pick(&self, title: &str) -> SessionPick {
        match (&self.session, self.continue_last) {
            (Some(id), _) => SessionPick::Id(id.clone()),
            (None, true) => SessionPick::Continue,
            (None, false) => SessionPick::New {
                title: title.to_string(),
            },
        }
    }
}
