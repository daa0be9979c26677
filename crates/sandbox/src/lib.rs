//! Podcode's sandbox for the processes tools start (`bash` commands, executable tools, the
//! plugin sidecar). The engine builds a `Sandbox` (launcher) from the `[sandbox]` config;
//! spawners turn their command into `helper __sandbox-exec --policy <json> -- cmd…`, and
//! the helper (`run_helper`) puts the command in its own mount and PID namespaces
//! (`namespaces`: `.git`, `.podcode`, `.opencode` read-only, no other process visible),
//! applies Landlock file rules, a seccomp filter and no_new_privs, and supervises it
//! (`supervise`), logging every write or connection it refuses (`notify`,
//! `denial::read_log`) for the escalation ask. `KernelSupport` says what this system can
//! enforce, and `mask` keeps API keys away from the model.
//!
//! Network off is enforced twice: seccomp refuses `socket()` for IPv4/IPv6 (all
//! protocols, on every kernel with seccomp; Unix sockets stay usable), and on Landlock ABI
//! 4+ TCP bind/connect are refused too.

mod busy;
pub mod denial;
pub mod helper;
mod launcher;
mod mask;
mod namespaces;
mod notify;
mod policy;
mod status;
mod supervise;

pub use busy::{BUSY_PATIENCE, retry_while_busy};
pub use denial::{Denial, denial_for, denied_note, detect, log_len, logged_denial, read_log};
pub use helper::{HELPER_BINARY, HELPER_SUBCOMMAND, helper_beside, helper_main, run_helper};
pub use launcher::{Sandbox, Settings};
pub use mask::{MIN_SECRET_LEN, Secret, hide_own_memory, mask_secrets, secrets_from_env};
pub use policy::{HomeLayer, Mode, PROTECTED_NAMES, Policy, WRITABLE_DEVICES, protected_paths};
pub use status::{KernelSupport, LandlockSupport, NamespaceSupport};
