//! Shared setup for the built-in tools' tests: every built-in registered, the default
//! permission rules plus a test's own, through the real pipeline and store.
#![allow(dead_code)]

use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::ToolRegistry;
use podcode_tools::testing::{Harness, Setup, harness};

pub fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    podcode_builtins::register_all(&mut r);
    r
}

/// All built-ins, `default_rules()` then `extra`, with the user answering `replies` in order.
pub fn builtins(replies: Vec<PermissionReply>, extra: Vec<PermissionRule>) -> Harness {
    let mut rules = podcode_builtins::default_rules();
    rules.extend(extra);
    harness(
        registry(),
        Setup {
            rules,
            replies,
            ..Default::default()
        },
    )
}

/// `[permission * allow]` when `yes`, else nothing.
pub fn allow_if(permission: &str, yes: bool) -> Vec<PermissionRule> {
    if yes {
        vec![PermissionRule::new(
            permission,
            "*",
            PermissionAction::Allow,
        )]
    } else {
        vec![]
    }
}
