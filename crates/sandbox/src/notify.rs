//! The seccomp filter of a sandboxed command, and how the sandbox learns what it refused.
//!
//! With a denial log, the filter sends the syscalls that change the filesystem (open for
//! writing, create, mkdir, unlink, rename, link, symlink, mknod, truncate) and, with the
//! network off, IPv4/IPv6 `socket()` and `io_uring_setup` to a listener (seccomp user
//! notification) held by the helper's supervisor process (`supervise`). For a file
//! change the supervisor reads the path from the command's memory, resolves it, and logs
//! it when the policy does not allow the write; the syscall then continues, and Landlock
//! (or the read-only mount) refuses it: the log only reports, the kernel enforces. A
//! socket is refused by the supervisor itself (EACCES) and logged with the program's
//! name. Without a log, or on a kernel without user notification, the filter refuses the
//! sockets with EACCES itself, as before, and nothing is recorded.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::helper::HelperError;

/// seccompiler has no user-notification action: rules are compiled with this `Trace`
/// return value, which `install` rewrites to `SECCOMP_RET_USER_NOTIF`.
const PLACEHOLDER: u32 = 0x7ff0_0000;
const BPF_RET_K: u16 = 0x06;

/// Flags that make an open a write.
const WRITE_FLAGS: [libc::c_int; 4] = [libc::O_WRONLY, libc::O_RDWR, libc::O_CREAT, libc::O_TRUNC];

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, HelperError> {
    Ok(SeccompRule::new(conds)?)
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, HelperError> {
    Ok(SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Dword,
        op,
        value,
    )?)
}

/// One rule per write flag: the syscall matches when `flags` (argument `arg`) has any.
fn write_open_rules(arg: u8) -> Result<Vec<SeccompRule>, HelperError> {
    WRITE_FLAGS
        .iter()
        .map(|&f| rule(vec![cond(arg, SeccompCmpOp::MaskedEq(f as u64), f as u64)?]))
        .collect()
}

/// The syscalls whose path argument the supervisor checks (all unconditionally matched
/// except the opens, which match only with a write flag).
fn file_change_rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, HelperError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_openat, write_open_rules(2)?);
    for nr in [
        libc::SYS_openat2,
        libc::SYS_mkdirat,
        libc::SYS_unlinkat,
        libc::SYS_renameat2,
        libc::SYS_linkat,
        libc::SYS_symlinkat,
        libc::SYS_mknodat,
        libc::SYS_truncate,
    ] {
        rules.insert(nr, vec![]);
    }
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_open, write_open_rules(1)?);
        for nr in [
            libc::SYS_creat,
            libc::SYS_mkdir,
            libc::SYS_rmdir,
            libc::SYS_unlink,
            libc::SYS_rename,
            libc::SYS_renameat,
            libc::SYS_link,
            libc::SYS_symlink,
            libc::SYS_mknod,
        ] {
            rules.insert(nr, vec![]);
        }
    }
    Ok(rules)
}

fn network_rules(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) -> Result<(), HelperError> {
    rules.insert(
        libc::SYS_socket,
        vec![
            rule(vec![cond(0, SeccompCmpOp::Eq, libc::AF_INET as u64)?])?,
            rule(vec![cond(0, SeccompCmpOp::Eq, libc::AF_INET6 as u64)?])?,
        ],
    );
    rules.insert(libc::SYS_io_uring_setup, vec![]);
    Ok(())
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    on_match: SeccompAction,
) -> Result<BpfProgram, HelperError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    Ok(SeccompFilter::new(rules, SeccompAction::Allow, on_match, arch)?.try_into()?)
}

/// Installs this process's seccomp filter. With `notify`, returns the listener (`None`
/// when the kernel cannot notify: then only the network rules apply, as errors).
pub fn install(network: bool, notify: bool) -> Result<Option<OwnedFd>, HelperError> {
    if notify {
        let mut rules = file_change_rules()?;
        if !network {
            network_rules(&mut rules)?;
        }
        let mut program = compile(rules, SeccompAction::Trace(0))?;
        for ins in program.iter_mut() {
            if ins.code == BPF_RET_K && ins.k == PLACEHOLDER {
                ins.k = libc::SECCOMP_RET_USER_NOTIF;
            }
        }
        if let Some(fd) = install_listener(&program) {
            return Ok(Some(fd));
        }
    }
    if !network {
        let mut rules = BTreeMap::new();
        network_rules(&mut rules)?;
        let program = compile(rules, SeccompAction::Errno(libc::EACCES as u32))?;
        seccompiler::apply_filter(&program)?;
    }
    Ok(None)
}

fn install_listener(program: &BpfProgram) -> Option<OwnedFd> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).ok()?,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl and seccomp get valid arguments; `prog` points into `program`, which
    // outlives the call (the kernel copies the filter).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return None;
        }
        let fd = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        );
        if fd < 0 {
            return None;
        }
        Some(OwnedFd::from_raw_fd(fd as libc::c_int))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notify_filter_compiles_and_is_rewritten() {
        let mut rules = file_change_rules().unwrap();
        network_rules(&mut rules).unwrap();
        let program = compile(rules, SeccompAction::Trace(0)).unwrap();
        assert!(
            program
                .iter()
                .any(|i| i.code == BPF_RET_K && i.k == PLACEHOLDER)
        );
    }
}
