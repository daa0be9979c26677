//! Podcode configuration: where config and data live (`dirs`), what `config.toml` may contain
//! (`model`), and how the global and project files are read, checked and merged (`load`).
//!
//! Errors name the file, line, column and key; unknown keys are warnings, never errors. In a
//! workspace the user has not trusted, the project's file may only narrow (`untrusted`).

mod dirs;
mod error;
mod load;
mod locate;
mod model;
mod trust;
mod untrusted;

pub use dirs::{Dirs, project_config_file, project_root};
pub use error::ConfigError;
pub use load::{LoadedConfig, load, load_str, load_with_trust};
pub use model::{
    AgentConfig, BrowserConfig, Config, McpServerConfig, ProviderApi, ProviderConfig, ToolConfig,
    ToolFilter, ToolOutputConfig,
};
pub use trust::TrustList;
