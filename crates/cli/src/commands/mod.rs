//! One module per subcommand.

pub mod acp;
pub mod agents;
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
