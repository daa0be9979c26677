//! Podcode's sandbox for the processes tools start (`bash` commands, executable tools, the
//! plugin sidecar). The engine builds a `Sandbox` (launcher) from the `[sandbox]` config;
//! spawners turn their command into `helper __sandbox-exec --policy <json> -- cmd…`, and
//! the helper (`run_helper`) applies Landlock file rules, a seccomp network filter and
//! no_new_privs before it `exec`s the command. `KernelSupport` says what this kernel can
//! enforce, `denial::detect` reads a failed command's output for what the sandbox
//! refused (for the escalation ask), and `mask` keeps API keys away from the model.
//!
//! Network off is enforced twice: seccomp refuses `socket()` for IPv4/IPv6 (all
//! protocols, on every kernel with seccomp; Unix sockets stay usable), and on Landlock ABI
//! 4+ TCP bind/connect are refused too.

pub mod denial;
pub mod helper;
mod launcher;
mod mask;
mod policy;
mod status;

pub use denial::{Denial, denied_note, detect};
pub use helper::{HELPER_SUBCOMMAND, run_helper};
pub use launcher::{Sandbox, Settings};
pub use mask::{MIN_SECRET_LEN, Secret, mask_secrets, secrets_from_env};
pub use policy::{Mode, Policy, WRITABLE_DEVICES};
pub use status::{KernelSupport, LandlockSupport};
