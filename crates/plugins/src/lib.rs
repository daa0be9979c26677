//! Tool sources beyond the built-ins that live on disk: executable tools (any language,
//! `describe` → JSON Schema, `run` → output) now; JS/TS plugins and opencode tool files
//! (the Bun/Node sidecar) join here. Discovery walks the tool folders, honours workspace
//! trust, caches manifests so listing tools spawns nothing, and reports every problem.

mod discovery;
mod executable;
mod manifest_cache;

pub use discovery::{Discovered, DiscoveryOptions, discover};
pub use executable::{ExecutableTool, describe_executable};
pub use manifest_cache::ManifestCache;
