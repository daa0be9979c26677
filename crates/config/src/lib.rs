//! Podcode configuration: where config and data live (`dirs`), what `config.toml` may contain
//! (`model`), and how the global and project files are read, checked and merged (`load`).
//!
//! Errors name the file, line, column and key; unknown keys are warnings, never errors. In a
//! workspace the user has not trusted, the project's file may only narrow (`untrusted`).
//! opencode's `opencode.json(c)` files are read too and mapped onto the same shape (`opencode`),
//! and what plugins' `config` hooks add to opencode's config object is mapped the same way
//! (`hook_config`).

mod auth_store;
mod dirs;
mod error;
mod front_matter;
mod hook_config;
mod load;
mod locate;
mod model;
mod opencode;
mod sandbox;
mod substitute;
mod trust;
mod untrusted;

pub use auth_store::AuthStore;
pub use dirs::{Dirs, OpencodeDirs, project_config_file, project_root};
pub use error::ConfigError;
pub use front_matter::{parse_front_matter, split_front_matter};
pub use hook_config::{HookAdditions, hook_additions, opencode_view};
pub use load::{
    ConfigFile, LoadedConfig, load, load_files, load_str, load_with_trust, load_workspace,
};
pub use model::{
    AgentConfig, AgentMode, BrowserConfig, CommandConfig, CompactionConfig, Config, CostOverride,
    FormatterConfig, FormatterEntry, LspConfig, LspServerConfig, McpServerConfig, ModelOverride,
    ProviderApi, ProviderConfig, TaskConfig, ToolConfig, ToolFilter, ToolOutputConfig,
    ToolSwitches,
};
pub use opencode::{OpencodeImport, files as opencode_files};
pub use sandbox::{SandboxConfig, SandboxMode, SandboxOverride};
pub use substitute::{ProjectAccess, is_secret_name};
pub use trust::TrustList;
