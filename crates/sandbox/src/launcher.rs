//! `Sandbox`: what the engine hands to the code that spawns commands (the bash tool,
//! executable tools, the plugin sidecar), so library crates never need to know they run
//! inside the `podcode` binary. It holds the helper's path (the `podcode` binary, or
//! `podcode-sandbox-exec` in tests), the mode and network setting for one kind of tool,
//! extra writable roots (the spill directory, configured ones), where per-session temp
//! dirs live, and which environment variables (API keys) spawned processes must not see.
//!
//! A spawner asks for a `Policy` with the call's own directories (`policy`), then starts
//! `wrap(...)`'s program and arguments instead of its own: the helper applies the policy
//! and `exec`s the real command. In `full` mode `wrap` returns the command unchanged.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use crate::helper::HELPER_SUBCOMMAND;
use crate::policy::{Mode, Policy, protected_paths};

/// The mode and network setting one kind of tool runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// What the process may write.
    pub mode: Mode,
    /// Whether it may open IPv4/IPv6 sockets.
    pub network: bool,
}

/// How to launch processes sandboxed: the helper binary, the mode and network setting, the extra
/// writable roots and the variables to hide. Built once per engine; `wrap` turns a command into a
/// helper invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    helper: PathBuf,
    settings: Settings,
    writable: Vec<PathBuf>,
    temp_root: Option<PathBuf>,
    hidden_env: Vec<String>,
    hidden_files: Vec<PathBuf>,
    home_layer: Option<crate::HomeLayer>,
}

impl Sandbox {
    /// A sandbox whose helper is `helper` (run as `helper __sandbox-exec --policy … -- …`).
    pub fn new(helper: PathBuf, settings: Settings) -> Self {
        Self {
            helper,
            settings,
            writable: Vec::new(),
            temp_root: None,
            hidden_env: Vec::new(),
            hidden_files: Vec::new(),
            home_layer: None,
        }
    }

    /// Directories every spawn may write (besides its own call's directories).
    pub fn with_writable(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        self.writable.extend(roots);
        self
    }

    /// Where per-session temp dirs are made (`<root>/<session id>`).
    pub fn with_temp_root(mut self, root: PathBuf) -> Self {
        self.temp_root = Some(root);
        self
    }

    /// Environment variables removed from every spawned process.
    pub fn with_hidden_env(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.hidden_env.extend(names);
        self
    }

    /// Files no spawn may read (credential stores): they read as empty in the sandbox.
    pub fn with_hidden_files(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        self.hidden_files.extend(files);
        self
    }

    /// Spawns write into a layer over `home` kept in `dir` instead of the home itself (see
    /// `HomeLayer`; in workspace-write mode, where the kernel allows the overlay).
    pub fn with_home_layer(mut self, home: PathBuf, dir: PathBuf) -> Self {
        self.home_layer = Some(crate::HomeLayer { home, dir });
        self
    }

    /// The same sandbox with another network setting (the plugin host's).
    pub fn with_network(mut self, network: bool) -> Self {
        self.settings.network = network;
        self
    }

    /// The mode and network setting spawns get.
    pub fn settings(&self) -> Settings {
        self.settings
    }
    /// The mode spawns get (`full`: no sandbox).
    pub fn mode(&self) -> Mode {
        self.settings.mode
    }
    /// The helper binary commands are run through.
    pub fn helper(&self) -> &Path {
        &self.helper
    }
    /// Names of the environment variables removed from spawned processes.
    pub fn hidden_env(&self) -> &[String] {
        &self.hidden_env
    }
    /// False in `full` mode: commands run as they are.
    pub fn is_active(&self) -> bool {
        self.settings.mode != Mode::Full
    }

    /// The session's temp dir, created (owner-only) on first use; `None` without a temp
    /// root. Commands get it as `TMPDIR`.
    pub fn session_temp(&self, session_id: &str) -> io::Result<Option<PathBuf>> {
        let Some(root) = &self.temp_root else {
            return Ok(None);
        };
        let name: String = session_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = root.join(if name.is_empty() {
            "default".into()
        } else {
            name
        });
        std::fs::create_dir_all(&dir)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        Ok(Some(dir))
    }

    /// A fresh path for one spawn's denial log: beside the session temp dirs (not in
    /// them, where the command could write it), `None` without a temp root. The caller
    /// removes it when done.
    pub fn denial_log(&self, session_id: &str) -> Option<PathBuf> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let root = self.temp_root.as_ref()?;
        std::fs::create_dir_all(root).ok()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name: String = session_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        Some(root.join(format!("{name}.{}-{n}.denials", std::process::id())))
    }

    /// The policy for one spawn: `roots` (the call's workspace, session directory, temp
    /// dir…) plus this sandbox's own writable roots.
    pub fn policy<'a>(&self, roots: impl IntoIterator<Item = &'a Path>) -> Policy {
        let mut writable: Vec<PathBuf> = Vec::new();
        for root in roots
            .into_iter()
            .map(Path::to_path_buf)
            .chain(self.writable.iter().cloned())
        {
            if !root.as_os_str().is_empty() && !writable.contains(&root) {
                writable.push(root);
            }
        }
        let protect = if self.settings.mode == Mode::WorkspaceWrite {
            protected_paths(writable.iter().map(PathBuf::as_path))
        } else {
            Vec::new()
        };
        Policy {
            mode: self.settings.mode,
            network: self.settings.network,
            writable,
            protect,
            hide: self.hidden_files.clone(),
            denial_log: None,
            home_layer: self
                .home_layer
                .clone()
                .filter(|_| self.settings.mode == Mode::WorkspaceWrite),
        }
    }

    /// The program and arguments that run `program args…` under `policy`.
    pub fn wrap(
        &self,
        policy: &Policy,
        program: &OsStr,
        args: &[OsString],
    ) -> (OsString, Vec<OsString>) {
        if policy.mode == Mode::Full {
            return (program.to_os_string(), args.to_vec());
        }
        let mut argv: Vec<OsString> = vec![
            HELPER_SUBCOMMAND.into(),
            "--policy".into(),
            policy.to_json().into(),
            "--".into(),
            program.to_os_string(),
        ];
        argv.extend(args.iter().cloned());
        (self.helper.clone().into_os_string(), argv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_join_the_call_roots_and_wrap_prefixes_the_helper() {
        let sb = Sandbox::new(
            "/bin/podcode".into(),
            Settings {
                mode: Mode::WorkspaceWrite,
                network: false,
            },
        )
        .with_writable([PathBuf::from("/data/spill")]);
        let p = sb.policy([Path::new("/w"), Path::new("/w"), Path::new("")]);
        assert_eq!(
            p.writable,
            vec![PathBuf::from("/w"), PathBuf::from("/data/spill")]
        );
        let (prog, args) = sb.wrap(&p, OsStr::new("/bin/sh"), &["-c".into(), "ls".into()]);
        assert_eq!(prog, "/bin/podcode");
        assert_eq!(args[0], HELPER_SUBCOMMAND);
        assert_eq!(&args[4..], &["/bin/sh", "-c", "ls"]);

        let full = Sandbox::new(
            "/bin/podcode".into(),
            Settings {
                mode: Mode::Full,
                network: true,
            },
        );
        let (prog, args) = full.wrap(&full.policy([]), OsStr::new("/bin/sh"), &["-c".into()]);
        assert_eq!((prog.as_os_str(), args.len()), (OsStr::new("/bin/sh"), 1));
    }

    #[test]
    fn session_temp_dirs_are_private_and_named_safely() {
        let root = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(
            "/x".into(),
            Settings {
                mode: Mode::WorkspaceWrite,
                network: false,
            },
        )
        .with_temp_root(root.path().join("tmp"));
        let dir = sb.session_temp("ses_1/../x").unwrap().unwrap();
        assert_eq!(dir, root.path().join("tmp/ses_1____x"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
}
