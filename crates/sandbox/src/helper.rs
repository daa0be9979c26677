//! The helper: the small program a sandboxed command is started through. `podcode
//! __sandbox-exec --policy <json> -- CMD ARGS…` (or the `podcode-sandbox-exec` binary with
//! the same arguments) parses the policy, restricts itself and then `exec`s CMD, which
//! inherits every restriction and cannot lift any:
//!
//! 1. Landlock: read and execute everywhere; write (create, delete, rename, truncate) only
//!    beneath the policy's writable roots and a few device files; with the network off,
//!    TCP bind and connect are refused too (Landlock ABI 4 and later).
//! 2. seccomp: with the network off, `socket()` for IPv4 and IPv6 fails with EACCES (Unix
//!    sockets keep working, so local tools that talk over them still do), and `io_uring`
//!    (which can open sockets without the `socket` syscall) is refused.
//! 3. no_new_privs (set by both of the above): setuid programs cannot regain rights.
//!
//! Nothing here allocates after `exec`, and the helper never returns: it either becomes
//! CMD or exits with 126 (sandbox could not be set up) or 127 (CMD not found), printing
//! why on stderr, which the caller shows as the command's output.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::policy::{Mode, Policy, WRITABLE_DEVICES};

/// The hidden subcommand of the `podcode` binary that runs the helper.
pub const HELPER_SUBCOMMAND: &str = "__sandbox-exec";

/// The Landlock ABI whose rights Podcode asks for; older kernels get what they support
/// (best effort), newer rights are not needed.
const TARGET_ABI: ABI = ABI::V4;

/// Exit status when the sandbox could not be set up (like a shell's "cannot execute").
pub const EXIT_SETUP_FAILED: i32 = 126;
/// Exit status when the command does not exist.
pub const EXIT_NOT_FOUND: i32 = 127;

#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    #[error("usage: {HELPER_SUBCOMMAND} --policy <json> -- <command> [args…]")]
    Usage,
    #[error("the sandbox policy is not valid JSON: {0}")]
    Policy(#[from] serde_json::Error),
    #[error("could not apply the Landlock file rules: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("could not build the seccomp network filter: {0}")]
    SeccompBuild(#[from] seccompiler::BackendError),
    #[error("could not install the seccomp network filter: {0}")]
    Seccomp(#[from] seccompiler::Error),
}

/// Parses `--policy <json> -- CMD ARGS…` (the arguments after the subcommand name).
pub fn parse_args(args: &[OsString]) -> Result<(Policy, Vec<OsString>), HelperError> {
    let mut it = args.iter();
    let (Some(flag), Some(json), Some(dashes)) = (it.next(), it.next(), it.next()) else {
        return Err(HelperError::Usage);
    };
    if flag != "--policy" || dashes != "--" {
        return Err(HelperError::Usage);
    }
    let policy: Policy = serde_json::from_str(&json.to_string_lossy())?;
    let cmd: Vec<OsString> = it.cloned().collect();
    if cmd.is_empty() {
        return Err(HelperError::Usage);
    }
    Ok((policy, cmd))
}

/// Applies `policy` to this process (Landlock, seccomp, no_new_privs). Returns how much
/// Landlock enforced. Only ever call this in a process that is about to `exec`.
pub fn restrict_self(policy: &Policy) -> Result<RulesetStatus, HelperError> {
    let status = if policy.mode == Mode::Full {
        RulesetStatus::NotEnforced
    } else {
        landlock_rules(policy)?
    };
    // A kernel without seccomp filters cannot keep the network off; Podcode said so at
    // start (`KernelSupport::missing_protection`), and the command still runs.
    if !policy.network && seccomp_available() {
        let program: BpfProgram = network_filter()?.try_into()?;
        seccompiler::apply_filter(&program)?;
    }
    Ok(status)
}

fn landlock_rules(policy: &Policy) -> Result<RulesetStatus, HelperError> {
    let read = AccessFs::from_read(TARGET_ABI);
    let all = AccessFs::from_all(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let mut created = ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], read))?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, all))?;
    if policy.mode == Mode::WorkspaceWrite {
        created = created.add_rules(path_beneath_rules(&policy.writable, all))?;
    }
    Ok(created.restrict_self()?.ruleset)
}

fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
}

/// `socket(AF_INET | AF_INET6, …)` and `io_uring_setup` fail with EACCES; everything else
/// is allowed.
fn network_filter() -> Result<SeccompFilter, HelperError> {
    let domain = |family: libc::c_int| -> Result<SeccompRule, HelperError> {
        Ok(SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            family as u64,
        )?])?)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_socket,
        vec![domain(libc::AF_INET)?, domain(libc::AF_INET6)?],
    );
    rules.insert(libc::SYS_io_uring_setup, vec![]);
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    Ok(SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )?)
}

/// The helper's whole life: parse, restrict, `exec`. `args` are the arguments after the
/// subcommand name. Never returns.
pub fn run_helper(args: &[OsString]) -> ! {
    let (policy, cmd) = match parse_args(args) {
        Ok(parsed) => parsed,
        Err(e) => fail(EXIT_SETUP_FAILED, &e.to_string()),
    };
    if let Err(e) = restrict_self(&policy) {
        fail(EXIT_SETUP_FAILED, &e.to_string());
    }
    let err = std::process::Command::new(&cmd[0]).args(&cmd[1..]).exec();
    let code = if err.kind() == std::io::ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_SETUP_FAILED
    };
    fail(
        code,
        &format!("{}: {err}", std::path::Path::new(&cmd[0]).display()),
    )
}

fn fail(code: i32, message: &str) -> ! {
    eprintln!("podcode sandbox: {message}");
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_parse_or_say_how_to_call() {
        let json = r#"{"mode":"read-only","network":false,"writable":[]}"#;
        let (p, cmd) = parse_args(&os(&["--policy", json, "--", "echo", "hi"])).unwrap();
        assert_eq!(p.mode, Mode::ReadOnly);
        assert_eq!(cmd, os(&["echo", "hi"]));
        for bad in [
            os(&[]),
            os(&["--policy", json, "--"]),
            os(&["--policy", json, "echo"]),
        ] {
            assert!(matches!(parse_args(&bad), Err(HelperError::Usage)));
        }
        assert_eq!(
            HelperError::Usage.to_string(),
            "usage: __sandbox-exec --policy <json> -- <command> [args…]"
        );
        assert!(matches!(
            parse_args(&os(&["--policy", "{", "--", "x"])),
            Err(HelperError::Policy(_))
        ));
    }

    #[test]
    fn the_network_filter_compiles_for_this_machine() {
        let program: BpfProgram = network_filter().unwrap().try_into().unwrap();
        assert!(!program.is_empty());
    }
}
