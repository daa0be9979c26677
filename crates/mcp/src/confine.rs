//! Stdio MCP servers in the sandbox. A server is a program the user installed, often from a
//! package registry, that runs for the whole session: like the plugin host it runs through
//! the sandbox helper with the network on (servers fetch) and write access to the
//! workspace, its own temp dir and the sandbox's writable roots; the provider API keys are
//! removed from the environment it inherits (keys it needs go in its `env`). `sandbox =
//! false` under `[mcp.<name>]` starts it as it is.
//!
//! Data flow: the engine builds a `StdioSandbox` → `McpSource::new_sandboxed` hands it to
//! every server → `command` turns the configured command into the helper's when the
//! sandbox is active and the server did not opt out.

use std::path::PathBuf;
use std::sync::Arc;

use podcode_config::McpServerConfig;
use podcode_sandbox::Sandbox;

/// The sandbox stdio servers run in, and the directories they may write (the workspace).
#[derive(Clone)]
pub struct StdioSandbox {
    /// The engine's sandbox (mode, helper, hidden variables).
    pub sandbox: Arc<Sandbox>,
    /// Directories the server may write besides its own temp dir.
    pub writable: Vec<PathBuf>,
}

/// The command that starts server `name` (through the sandbox helper when confined), and
/// the denial log the sandbox fills for it (the caller removes it when done).
pub(crate) fn command(
    sandbox: Option<&StdioSandbox>,
    name: &str,
    config: &McpServerConfig,
    program: &str,
) -> std::io::Result<(tokio::process::Command, Option<PathBuf>)> {
    let args: Vec<std::ffi::OsString> = config.args.iter().map(Into::into).collect();
    let confined = sandbox.filter(|s| config.sandbox && s.sandbox.is_active());
    let mut log = None;
    let mut cmd = match confined {
        Some(s) => {
            // The helper would start and then fail to exec it: say "not found" as an
            // unconfined start would.
            if !on_path(program) {
                const ENOENT: i32 = 2;
                return Err(std::io::Error::from_raw_os_error(ENOENT));
            }
            let temp = s.sandbox.session_temp(&format!("mcp-{name}"))?;
            let mut policy = s.sandbox.policy(
                s.writable
                    .iter()
                    .map(PathBuf::as_path)
                    .chain(config.cwd.as_deref().map(std::path::Path::new))
                    .chain(temp.as_deref()),
            );
            policy.denial_log = s.sandbox.denial_log(&format!("mcp-{name}"));
            log = policy.denial_log.clone();
            let (helper, argv) = s.sandbox.wrap(&policy, program.as_ref(), &args);
            let mut cmd = tokio::process::Command::new(helper);
            cmd.args(argv);
            if let Some(temp) = temp {
                cmd.env("TMPDIR", temp);
            }
            cmd
        }
        None => {
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(&args);
            cmd
        }
    };
    if let Some(s) = sandbox.filter(|_| config.sandbox) {
        for key in s.sandbox.hidden_env() {
            cmd.env_remove(key);
        }
    }
    // After the removals: a key the user passes to this server on purpose is kept.
    cmd.envs(&config.env);
    Ok((cmd, log))
}

/// Whether `program` names a file (with a `/`) or is found on `PATH`.
fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
}

/// What a failure adds when the sandbox caused it: what it refused, from the server's
/// denial log `log` (written by the sandbox itself), and the settings that allow it; or,
/// without a log entry, a refusal in the server's stderr, which may be the sandbox's.
pub(crate) fn denied_note(
    sandbox: Option<&StdioSandbox>,
    name: &str,
    config: &McpServerConfig,
    stderr: &str,
    log: Option<&std::path::Path>,
) -> Option<String> {
    sandbox.filter(|s| config.command.is_some() && config.sandbox && s.sandbox.is_active())?;
    if let Some(denial) = log.and_then(|l| podcode_sandbox::logged_denial(l, stderr, 0)) {
        return Some(stopped_note(name, &denial));
    }
    let lower = stderr.to_ascii_lowercase();
    let refused = [
        "permission denied",
        "operation not permitted",
        "eacces",
        "eperm",
    ]
    .iter()
    .any(|m| lower.contains(m));
    refused.then(|| sandbox_note(name))
}

/// The note for a refusal the sandbox logged.
pub(crate) fn stopped_note(name: &str, denial: &podcode_sandbox::Denial) -> String {
    let setting = match denial {
        podcode_sandbox::Denial::Network(_) => {
            "set `plugin_network = true` under [sandbox] (MCP servers share the plugin host's network setting)"
        }
        podcode_sandbox::Denial::Protected(_) => {
            ".git, .podcode and .opencode stay read-only to sandboxed programs; run the server outside the sandbox"
        }
        podcode_sandbox::Denial::Write(_) => "add the directory to `writable` under [sandbox]",
    };
    format!(
        "Podcode's sandbox stopped {}: {setting}, or set `sandbox = false` under [mcp.{name}]",
        denial.describe()
    )
}

pub(crate) fn sandbox_note(name: &str) -> String {
    format!(
        "it runs in Podcode's sandbox, which may have refused this: add the directory to `writable` under [sandbox], or set `sandbox = false` under [mcp.{name}]"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_note_names_both_settings() {
        assert_eq!(
            super::sandbox_note("files"),
            "it runs in Podcode's sandbox, which may have refused this: add the directory to `writable` under [sandbox], or set `sandbox = false` under [mcp.files]"
        );
        assert_eq!(
            super::stopped_note("files", &podcode_sandbox::Denial::Write("/etc/x".into())),
            "Podcode's sandbox stopped writing /etc/x: add the directory to `writable` under [sandbox], or set `sandbox = false` under [mcp.files]"
        );
    }
}
