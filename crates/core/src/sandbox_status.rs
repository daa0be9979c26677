//! `podcode sandbox status` as text and JSON: what this kernel enforces and what each kind
//! of spawned process gets under the current `[sandbox]` settings (what it may write and
//! read, `/proc`, the protected paths, the network, the hidden variables). The front end
//! prints what this returns. Also the warnings front ends print at start (what this kernel
//! cannot enforce), which may wait for the namespace probe.

use std::path::{Path, PathBuf};

use serde_json::Value;

use podcode_config::SandboxMode;

use crate::engine::Engine;
use crate::sandbox::{
    KernelSupport, LandlockSupport, NamespaceSupport, PROTECTED_NAMES, SandboxReport,
};

/// How much less CPU the start-up probe's thread and processes ask for (`nice` 10).
const PROBE_NICENESS: libc::c_int = 10;

/// The start-up warning of an engine no sandbox helper was given.
const NO_HELPER_TEXT: &str =
    "sandbox: no sandbox helper is set for this engine, so commands and plugins run unsandboxed";

impl Engine {
    /// Said once at start: the protection this kernel cannot give (nothing in `full`).
    pub fn sandbox_warnings(&self) -> Vec<String> {
        self.sandbox_warnings_job()()
    }

    /// `sandbox_warnings` worked out on another thread: the namespace probe starts a
    /// process (a few ms once per boot), which `podcode run` keeps off its way to the
    /// first model request.
    pub fn sandbox_warnings_later(&self) -> PendingWarnings {
        let job = self.sandbox_warnings_job();
        PendingWarnings(Some(std::thread::spawn(move || {
            // Behind the session's own threads (the probe's processes inherit it): on two
            // cores its processes took CPU the way to the first model request needed.
            // SAFETY: setpriority only changes this thread's scheduling weight (Linux
            // applies PRIO_PROCESS with `who` 0 to the calling thread); nothing is shared.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, 0, PROBE_NICENESS);
            }
            job()
        })))
    }

    fn sandbox_warnings_job(&self) -> impl FnOnce() -> Vec<String> + Send + 'static {
        let full = self.sandbox_config().mode == SandboxMode::Full;
        let helper = self.sandbox_helper.clone();
        let cache = self.probe_cache();
        move || match helper {
            _ if full => Vec::new(),
            None => vec![NO_HELPER_TEXT.to_string()],
            Some(helper) => {
                KernelSupport::detect_cached(&helper, &cache, false).missing_protection()
            }
        }
    }

    pub(crate) fn probe_cache(&self) -> PathBuf {
        self.dirs().data_dir.join("cache/sandbox-probe")
    }
}

/// The sandbox's start-up warnings while its probe runs (`Engine::sandbox_warnings_later`).
pub struct PendingWarnings(Option<std::thread::JoinHandle<Vec<String>>>);

impl PendingWarnings {
    /// The warnings, waiting for the probe; empty after the first call.
    pub fn take(&mut self) -> Vec<String> {
        self.0
            .take()
            .and_then(|job| job.join().ok())
            .unwrap_or_default()
    }
}

/// What the report says in words, shared by the text and the JSON.
struct Rules {
    confined: bool,
    write_rule: String,
    proc_rule: &'static str,
    protected_rule: Option<&'static str>,
}

impl SandboxReport {
    fn rules(&self) -> Rules {
        let r = self;
        let confined = r.mode != "full";
        let write_rule = match r.mode.as_str() {
            "read-only" => "writes nothing (only /dev/null and the terminal)".to_string(),
            "workspace-write" => {
                "writes only the workspace, the session directory, its temp dir and the roots below"
                    .to_string()
            }
            _ => "writes anywhere you can (mode full: no sandbox)".to_string(),
        };
        let isolated = r.kernel.namespaces == NamespaceSupport::Available;
        let proc_rule = if !confined {
            "every process you can see, and the environment and memory of yours (mode full)"
        } else if isolated {
            "only the sandbox's own processes (own PID namespace and /proc): not Podcode's nor any other of yours"
        } else {
            "every process you can see, and the environment of those of yours it may trace (no PID namespace here)"
        };
        let protected_rule = if r.mode != "workspace-write" {
            None
        } else if isolated {
            Some(
                "read-only (own mount namespace); a write there asks to run the command outside the sandbox",
            )
        } else {
            Some("WRITABLE like the rest of the workspace: no mount namespace here")
        };
        Rules {
            confined,
            write_rule,
            proc_rule,
            protected_rule,
        }
    }

    /// `podcode sandbox status --json`.
    pub fn status_json(&self) -> Value {
        let r = self;
        let Rules {
            confined,
            proc_rule,
            protected_rule,
            ..
        } = self.rules();
        let landlock = match r.kernel.landlock {
            LandlockSupport::Available(abi) => serde_json::json!({"available": true, "abi": abi}),
            other => serde_json::json!({"available": false, "reason": other.to_string()}),
        };
        serde_json::json!({
            "landlock": landlock,
            "seccomp": r.kernel.seccomp,
            "mode": r.mode,
            "bash": {"sandboxed": confined, "network": !confined || r.command_network},
            "executables": {"sandboxed": confined, "network": !confined || r.command_network},
            "plugins": {"sandboxed": confined, "network": !confined || r.plugin_network},
            "mcp_servers": {"sandboxed": confined, "network": !confined || r.plugin_network},
            "writable": r.writable,
            "temp_root": r.temp_root,
            "hidden_env": r.hidden_env,
            "namespaces": r.kernel.namespaces.to_string(),
            "reads": if !confined { "everything you can" } else if self.hides_files() { "every file you can read, except the hidden files (read as empty)" } else { "every file you can read" },
            "hidden_files": if confined && self.hides_files() { r.hidden_files.clone() } else { Vec::new() },
            "proc": proc_rule,
            "protected": {"names": PROTECTED_NAMES, "found": r.protected, "rule": protected_rule},
            "missing": r.kernel.missing_protection(),
        })
    }

    /// Whether credential stores are hidden: it takes a mount namespace.
    fn hides_files(&self) -> bool {
        matches!(
            self.kernel.namespaces,
            podcode_sandbox::NamespaceSupport::Available
                | podcode_sandbox::NamespaceSupport::NoProc
        )
    }

    /// `podcode sandbox status`: the report's lines; `project` is the workspace.
    pub fn status_lines(&self, project: &Path) -> Vec<String> {
        let r = self;
        let Rules {
            confined,
            write_rule,
            proc_rule,
            protected_rule,
        } = self.rules();
        let net = |on: bool| {
            if !confined || on {
                "network on"
            } else {
                "network off"
            }
        };
        let mut out = Vec::new();
        out.push("Kernel".into());
        out.push(format!("  Landlock  {}", r.kernel.landlock));
        out.push(format!(
            "  seccomp   {}",
            if r.kernel.seccomp {
                "available"
            } else {
                "not available"
            }
        ));
        out.push(format!("  namespaces {}", r.kernel.namespaces));
        out.push(String::new());
        out.push(format!(
            "Mode {} (set `[sandbox] mode` in the config: read-only, workspace-write, full)",
            r.mode
        ));
        out.push(format!(
            "  bash               {write_rule}; {}",
            net(r.command_network)
        ));
        out.push(format!(
            "  executable tools   {write_rule}; {}",
            net(r.command_network)
        ));
        out.push(format!(
            "  plugin host        {write_rule}; {}",
            net(r.plugin_network)
        ));
        out.push(
            "  MCP servers        stdio ones as the plugin host, and may write ~/.npm, ~/.cache (package caches); `sandbox = false` under [mcp.NAME] opts one out"
                .to_string(),
        );
        if confined && r.mode == "workspace-write" {
            out.push(String::new());
            out.push("Always writable".into());
            out.push(format!("  {}  (the workspace)", project.display()));
            for w in &r.writable {
                out.push(format!("  {}", w.display()));
            }
            out.push(format!(
                "  {}/<session>  (each session's TMPDIR)",
                r.temp_root.display()
            ));
        }
        out.push(String::new());
        out.push("What a sandboxed command can read".into());
        out.push(
            "  files      every file you can read (the `sensitive` ask guards key files)".into(),
        );
        if confined && self.hides_files() {
            let files: Vec<String> = r
                .hidden_files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
            out.push(format!(
                "  except     {} (credential stores: read as empty)",
                files.join(", ")
            ));
        }
        out.push(format!("  /proc      {proc_rule}"));
        if let Some(rule) = protected_rule {
            out.push(String::new());
            out.push(format!(
                ".git, .podcode and .opencode in the workspace: {rule}"
            ));
            out.push("  (in a linked worktree also the git dirs its .git file names)".into());
            for p in &r.protected {
                out.push(format!("  {}", p.display()));
            }
            out.push(
                "  In a --worktree session only the worktree is writable, not your checkout."
                    .into(),
            );
        }
        if !r.hidden_env.is_empty() {
            out.push(String::new());
            out.push(format!(
                "Hidden from commands and plugins (and masked in tool output): {}",
                r.hidden_env.join(", ")
            ));
        }
        let missing = r.kernel.missing_protection();
        if confined && !missing.is_empty() {
            out.push(String::new());
            for m in missing {
                out.push(format!("warning: {m}"));
            }
        }
        out
    }
}
