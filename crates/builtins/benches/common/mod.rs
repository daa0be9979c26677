//! Shared by the built-ins' benches: every built-in behind the real pipeline with the
//! default rules plus a bench's own, a runtime, and the process's peak memory.
#![allow(dead_code)]

use podcode_builtins::{default_rules, register_all};
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::ToolRegistry;
use podcode_tools::testing::{Harness, Setup, harness};

/// All built-ins; `allow` lists `(permission, pattern)` pairs allowed on top of the defaults.
pub fn builtins(allow: &[(&str, &str)]) -> Harness {
    builtins_with(allow, |_| {})
}

/// `builtins` with the runtime options changed by `opts` (e.g. another sandbox).
pub fn builtins_with(
    allow: &[(&str, &str)],
    opts: impl FnOnce(&mut podcode_tools::RuntimeOptions) + 'static,
) -> Harness {
    let mut registry = ToolRegistry::new();
    register_all(&mut registry);
    let mut rules = default_rules();
    rules.extend(
        allow
            .iter()
            .map(|(p, pat)| PermissionRule::new(p, pat, PermissionAction::Allow)),
    );
    harness(
        registry,
        Setup {
            rules,
            opts: Box::new(opts),
            ..Default::default()
        },
    )
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("bench: runtime")
}
