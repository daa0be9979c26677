//! What this kernel can enforce, found by trying: Landlock by restricting a throwaway
//! thread (the landlock crate reports the kernel's ABI; the thread ends at once, so
//! nothing else is restricted), seccomp from `/proc/self/status`. Front ends show the
//! result once at start (`missing_protection`) and in `podcode sandbox status`.

use landlock::{ABI, Access, AccessFs, LandlockStatus, Ruleset, RulesetAttr};

/// Kernel support for the sandbox's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSupport {
    /// Whether Landlock (the file rules) works, and which ABI.
    pub landlock: LandlockSupport,
    /// seccomp filters (`Seccomp:` in `/proc/self/status`).
    pub seccomp: bool,
    /// The mount and PID namespaces (`.git` read-only, other processes hidden).
    pub namespaces: NamespaceSupport,
}

/// Whether sandboxed commands get their own mount and PID namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceSupport {
    /// Both namespaces work and a fresh `/proc` can be mounted.
    Available,
    /// Neither directly (not root) nor through a user namespace (disabled here).
    Unavailable,
    /// The namespaces work but a fresh `/proc` cannot be mounted (some containers).
    NoProc,
    /// Not probed (no helper to probe with).
    Unknown,
}

impl NamespaceSupport {
    /// The probe's answer as one word for the cache; `None` for `Unknown` (never cached).
    fn word(self) -> Option<&'static str> {
        match self {
            NamespaceSupport::Available => Some("available"),
            NamespaceSupport::Unavailable => Some("unavailable"),
            NamespaceSupport::NoProc => Some("no-proc"),
            NamespaceSupport::Unknown => None,
        }
    }

    fn from_word(word: &str) -> Option<Self> {
        [Self::Available, Self::Unavailable, Self::NoProc]
            .into_iter()
            .find(|n| n.word() == Some(word))
    }
}

/// What the namespace probe's answer depends on: the boot, the helper binary, and the
/// settings that switch unprivileged user namespaces on and off. `None` when the boot id
/// cannot be read (then nothing is cached).
fn probe_key(helper: &std::path::Path) -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let meta = std::fs::metadata(helper).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let mut key = format!(
        "{} {} {} {mtime}",
        boot.trim(),
        helper.display(),
        meta.len()
    );
    for setting in [
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ] {
        let value = std::fs::read_to_string(setting).unwrap_or_default();
        key.push_str(&format!(" {}", value.trim()));
    }
    Some(key.replace('\n', " "))
}

impl std::fmt::Display for NamespaceSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NamespaceSupport::Available => "available",
            NamespaceSupport::Unavailable => {
                "not available (not root, and user namespaces are disabled)"
            }
            NamespaceSupport::NoProc => "available, but /proc cannot be mounted in them",
            NamespaceSupport::Unknown => "not probed",
        })
    }
}

/// Whether the kernel enforces Landlock file rules, and if not why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LandlockSupport {
    /// The kernel's Landlock ABI version.
    Available(i32),
    /// Built in but not enabled at boot (`lsm=` does not list it).
    NotEnabled,
    /// Not in this kernel (Linux before 5.13, or built without it).
    NotImplemented,
    /// The probe itself failed (the reason).
    Unknown(&'static str),
}

impl KernelSupport {
    /// Probes the running kernel (a few microseconds; no process is started).
    pub fn detect() -> Self {
        let landlock = std::thread::spawn(probe_landlock)
            .join()
            .unwrap_or(LandlockSupport::Unknown("the probe thread panicked"));
        let seccomp = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")));
        KernelSupport {
            landlock,
            seccomp,
            namespaces: NamespaceSupport::Unknown,
        }
    }

    /// `detect`, plus whether the namespaces work, found by running `helper --probe` (the
    /// helper must be single-threaded to create a user namespace; this process is not).
    pub fn detect_with(helper: &std::path::Path) -> Self {
        let mut support = Self::detect();
        let status = std::process::Command::new(helper)
            .args([crate::HELPER_SUBCOMMAND, crate::helper::PROBE_FLAG])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        support.namespaces = match status.map(|s| s.code()) {
            Ok(Some(0)) => NamespaceSupport::Available,
            Ok(Some(crate::helper::PROBE_NO_PROC)) => NamespaceSupport::NoProc,
            Ok(Some(crate::helper::PROBE_NO_NAMESPACES)) => NamespaceSupport::Unavailable,
            _ => NamespaceSupport::Unknown,
        };
        support
    }

    /// `detect_with`, the namespaces' answer kept in the file `cache` for this boot, this
    /// helper and these kernel settings: the probe starts a process (2–6 ms) on every
    /// command's way to its work, and its answer changes only with them. `fresh` probes
    /// anyway (and keeps the new answer).
    pub fn detect_cached(helper: &std::path::Path, cache: &std::path::Path, fresh: bool) -> Self {
        let key = probe_key(helper);
        let cached = key.as_ref().filter(|_| !fresh).and_then(|key| {
            let text = std::fs::read_to_string(cache).ok()?;
            let (stored_key, word) = text.rsplit_once('\n')?;
            (stored_key == key).then(|| NamespaceSupport::from_word(word))?
        });
        if let Some(namespaces) = cached {
            return KernelSupport {
                namespaces,
                ..Self::detect()
            };
        }
        let support = Self::detect_with(helper);
        if let (Some(key), Some(word)) = (key, support.namespaces.word()) {
            let tmp = cache.with_extension("tmp");
            let _ = cache.parent().map(std::fs::create_dir_all);
            if std::fs::write(&tmp, format!("{key}\n{word}")).is_ok() {
                let _ = std::fs::rename(&tmp, cache);
            }
        }
        support
    }

    /// Whether Landlock file rules are enforced (without them the sandbox cannot restrict writes).
    pub fn has_landlock(&self) -> bool {
        matches!(self.landlock, LandlockSupport::Available(_))
    }

    /// One line per missing part: what is not protected and why. Empty when the kernel
    /// supports everything.
    pub fn missing_protection(&self) -> Vec<String> {
        let mut out = Vec::new();
        let why = match self.landlock {
            LandlockSupport::Available(_) => None,
            LandlockSupport::NotEnabled => Some(
                "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)",
            ),
            LandlockSupport::NotImplemented => {
                Some("this kernel has no Landlock (it needs Linux 5.13 or later built with it)")
            }
            LandlockSupport::Unknown(reason) => Some(reason),
        };
        if let Some(why) = why {
            out.push(format!(
                "sandbox: {why}, so commands, executable tools and plugins can write anywhere you can; only the network filter and the removal of API keys from their environment apply"
            ));
        }
        if matches!(
            self.namespaces,
            NamespaceSupport::Unavailable | NamespaceSupport::NoProc
        ) {
            out.push(format!(
                "sandbox: namespaces are {}, so sandboxed commands can see your other processes (and read the environment of those they may trace) and can write .git, .podcode and .opencode in the workspace; Landlock and seccomp still apply",
                self.namespaces
            ));
        }
        if !self.seccomp {
            out.push(
                "sandbox: this kernel has no seccomp filters, so `network = false` cannot stop commands from opening connections"
                    .to_string(),
            );
        }
        out
    }
}

impl std::fmt::Display for LandlockSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LandlockSupport::Available(abi) => write!(f, "available (ABI {abi})"),
            LandlockSupport::NotEnabled => f.write_str("built in but not enabled at boot"),
            LandlockSupport::NotImplemented => f.write_str("not in this kernel"),
            LandlockSupport::Unknown(why) => write!(f, "unknown ({why})"),
        }
    }
}

fn probe_landlock() -> LandlockSupport {
    let ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|r| r.create());
    let status = match ruleset.and_then(|r| r.restrict_self()) {
        Ok(s) => s.landlock,
        Err(_) => return LandlockSupport::Unknown("creating a Landlock ruleset failed"),
    };
    match status {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => LandlockSupport::Available(kernel_abi.unwrap_or(effective_abi as i32)),
        LandlockStatus::NotEnabled => LandlockSupport::NotEnabled,
        LandlockStatus::NotImplemented => LandlockSupport::NotImplemented,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_probe_is_kept_for_this_boot_and_helper() {
        let dir = tempfile::tempdir().unwrap();
        // A helper that cannot run: probing it answers Unknown, which is never kept.
        let helper = dir.path().join("helper");
        std::fs::write(&helper, "not a program").unwrap();
        let cache = dir.path().join("cache/sandbox-probe");
        let probed = KernelSupport::detect_cached(&helper, &cache, false);
        assert_eq!(probed.namespaces, NamespaceSupport::Unknown);
        assert!(!cache.exists());
        // An answer kept for this key is used without starting the helper.
        let key = probe_key(&helper).unwrap();
        std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
        std::fs::write(&cache, format!("{key}\nunavailable")).unwrap();
        let kept = KernelSupport::detect_cached(&helper, &cache, false);
        assert_eq!(kept.namespaces, NamespaceSupport::Unavailable);
        // `fresh` probes again; another helper binary is another key.
        let fresh = KernelSupport::detect_cached(&helper, &cache, true);
        assert_eq!(fresh.namespaces, NamespaceSupport::Unknown);
        std::fs::write(&helper, "another, longer build").unwrap();
        let rebuilt = KernelSupport::detect_cached(&helper, &cache, false);
        assert_eq!(rebuilt.namespaces, NamespaceSupport::Unknown);
    }

    #[test]
    fn missing_protection_names_what_is_lost() {
        let none = KernelSupport {
            landlock: LandlockSupport::NotImplemented,
            seccomp: false,
            namespaces: NamespaceSupport::Unavailable,
        };
        assert_eq!(
            none.missing_protection(),
            vec![
                "sandbox: this kernel has no Landlock (it needs Linux 5.13 or later built with it), so commands, executable tools and plugins can write anywhere you can; only the network filter and the removal of API keys from their environment apply".to_string(),
                "sandbox: namespaces are not available (not root, and user namespaces are disabled), so sandboxed commands can see your other processes (and read the environment of those they may trace) and can write .git, .podcode and .opencode in the workspace; Landlock and seccomp still apply".to_string(),
                "sandbox: this kernel has no seccomp filters, so `network = false` cannot stop commands from opening connections".to_string(),
            ]
        );
        let all = KernelSupport {
            landlock: LandlockSupport::Available(7),
            seccomp: true,
            namespaces: NamespaceSupport::Available,
        };
        assert!(all.missing_protection().is_empty());
        assert_eq!(
            LandlockSupport::Available(7).to_string(),
            "available (ABI 7)"
        );
    }

    #[test]
    fn this_kernel_is_probed_without_restricting_the_caller() {
        let support = KernelSupport::detect();
        // Whatever the kernel says, the calling thread can still write a temp file.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), "still writable").unwrap();
        if let LandlockSupport::Available(abi) = support.landlock {
            assert!(abi >= 1);
        }
    }
}
