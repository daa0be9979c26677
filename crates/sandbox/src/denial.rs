//! Did the sandbox stop a command? Wherever the spawn has a denial log (bash, `podcode
//! sandbox run`, executable tools, the plugin host, MCP servers) the sandbox itself says
//! so: its supervisor appends each refusal to the log (`read_log`; see `notify`), and
//! `denial_for` picks the one a failure is about. Without a log (no temp root) it is read
//! from the output after the command failed (`detect`): a line saying
//! "Permission denied", "Read-only file system" or "Operation not permitted" that names a
//! path outside the writable roots (one the user could write without the sandbox), or,
//! with the network off, a line saying a socket or connection was refused or a host name
//! could not be resolved. Tools print these in many shapes; this reads the common ones
//! (coreutils, shells, Python, Node, curl, git) and errs on the side of not asking.

use std::path::{Path, PathBuf};

use crate::policy::Policy;

/// What the sandbox denied, as the escalation ask shows it. Serialized as one line of
/// the denial log: `{"write":"/path"}`, `{"protected":"/path"}`, `{"network":"…"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Denial {
    /// A write to this path (outside the writable roots).
    Write(PathBuf),
    /// A write beneath `.git`, `.podcode` or `.opencode` (read-only in the sandbox).
    Protected(PathBuf),
    /// A network connection; the line that said so.
    Network(String),
}

impl Denial {
    /// Short text for the permission prompt and the model: "writing /etc/x".
    pub fn describe(&self) -> String {
        match self {
            Denial::Write(path) | Denial::Protected(path) => {
                format!("writing {}", path.display())
            }
            Denial::Network(line) => format!("a network connection ({})", line.trim()),
        }
    }
}

/// Added to a tool's error when its process failed because the sandbox refused
/// something: what was refused and which setting allows it. `plugin` selects the plugin
/// host's network setting.
pub fn denied_note(mode: crate::Mode, denial: &Denial, plugin: bool) -> String {
    let fix = match denial {
        Denial::Protected(_) => {
            return format!(
                "The sandbox ({mode}) stopped {}: .git, .podcode and .opencode stay read-only to sandboxed commands, because git and Podcode run code from there outside the sandbox. To allow this write, approve running the command outside the sandbox when asked, or run it yourself.",
                denial.describe()
            );
        }
        Denial::Write(_) => {
            "add the directory to `writable` under `[sandbox]` in the config, or set `mode = \"full\"` there"
        }
        Denial::Network(_) if plugin => {
            "set `plugin_network = true` under `[sandbox]` in the config"
        }
        Denial::Network(_) => "set `network = true` under `[sandbox]` in the config",
    };
    format!(
        "The sandbox ({mode}) stopped {}. To allow it, {fix}.",
        denial.describe()
    )
}

const WRITE_MARKERS: &[&str] = &[
    "permission denied",
    "read-only file system",
    "operation not permitted",
    "eacces",
    "erofs",
    "eperm",
];

const NETWORK_WORDS: &[&str] = &[
    "socket", "connect", "/dev/tcp", "/dev/udp", "network", "http", "tcp", "udp", "urlopen",
];

const RESOLVE_FAILURES: &[&str] = &[
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "getaddrinfo",
    "eai_again",
    "enotfound",
];

/// The first denial `output` shows, for a command that ran in `cwd` under `policy`.
pub fn detect(output: &str, policy: &Policy, cwd: &Path) -> Option<Denial> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for line in output.lines() {
        let lower = line.to_ascii_lowercase();
        if !policy.network {
            let refused = WRITE_MARKERS.iter().any(|m| lower.contains(m))
                && NETWORK_WORDS.iter().any(|w| lower.contains(w));
            if refused || RESOLVE_FAILURES.iter().any(|f| lower.contains(f)) {
                return Some(Denial::Network(clip(line)));
            }
        }
        if !WRITE_MARKERS.iter().any(|m| lower.contains(m)) {
            continue;
        }
        for candidate in path_candidates(line) {
            let path = resolve(&candidate, cwd, home.as_deref());
            if !policy.allows_write(&path) && user_could_write(&path) {
                return Some(Denial::Write(path));
            }
        }
    }
    None
}

/// The denials the helper logged at `log` (in order, without repeats). A missing or
/// unreadable log means none.
pub fn read_log(log: &Path) -> Vec<Denial> {
    read_log_from(log, 0)
}

/// What the sandbox denied to a process run under `policy` whose failure printed
/// `output`: from its denial log when it has one (only what was logged after the first
/// `skip` lines, for a long-lived process whose earlier denials belong to earlier calls),
/// else read from `output` (`detect`). Of several logged denials, the one `output` names
/// wins (a program reports the write that made it fail); else the first. With nothing
/// new, an earlier one `output` names (the supervisor does not repeat the last line).
pub fn denial_for(policy: &Policy, output: &str, cwd: &Path, skip: usize) -> Option<Denial> {
    match &policy.denial_log {
        Some(log) => logged_denial(log, output, skip),
        None => detect(output, policy, cwd),
    }
}

/// `denial_for` for a spawn known only by its denial log.
pub fn logged_denial(log: &Path, output: &str, skip: usize) -> Option<Denial> {
    let named_in = |all: &[Denial]| {
        all.iter()
            .find(|d| match d {
                Denial::Write(p) | Denial::Protected(p) => output.contains(&*p.to_string_lossy()),
                Denial::Network(_) => false,
            })
            .cloned()
    };
    let new = read_log_from(log, skip);
    if new.is_empty() {
        return named_in(&read_log_from(log, 0));
    }
    named_in(&new).or_else(|| new.first().cloned())
}

/// How many lines the log at `log` holds now (where the next call's denials will start).
pub fn log_len(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

fn read_log_from(log: &Path, skip: usize) -> Vec<Denial> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut out: Vec<Denial> = Vec::new();
    for d in text
        .lines()
        .skip(skip)
        .filter_map(|l| serde_json::from_str::<Denial>(l).ok())
    {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

fn clip(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Quoted strings and bare words that look like paths (`/x`, `~/x`, `./x`, `a/b`).
fn path_candidates(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [
        ('\'', '\''),
        ('‘', '’'),
        ('"', '"'),
        ('`', '\''),
        ('`', '`'),
    ] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = &after[..end];
            if !inner.is_empty() && !inner.contains('\n') {
                out.push(inner.to_string());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    for word in line.split(|c: char| c.is_whitespace()) {
        let word = word.trim_matches(|c: char| {
            matches!(
                c,
                ':' | ',' | ';' | '(' | ')' | '[' | ']' | '\'' | '"' | '`' | '‘' | '’'
            )
        });
        if word.starts_with('/') || word.starts_with("~/") || word.starts_with("./") {
            out.push(word.to_string());
        }
    }
    out
}

fn resolve(candidate: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (candidate.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    cwd.join(candidate)
}

/// Whether the user (without the sandbox) may write `path`: the path, or for one that does
/// not exist the nearest existing parent, passes `access(W_OK)`. A command denied by the
/// system's own permissions gains nothing from running outside the sandbox.
pub(crate) fn user_could_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut cur = Some(path);
    while let Some(p) = cur {
        if p.symlink_metadata().is_ok() {
            let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
                return false;
            };
            // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
            return unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0;
        }
        cur = p.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Mode;

    fn policy(root: &Path, network: bool) -> Policy {
        Policy {
            mode: Mode::WorkspaceWrite,
            network,
            writable: vec![root.to_path_buf()],
            protect: Vec::new(),
            hide: Vec::new(),
            denial_log: None,
            home_layer: None,
        }
    }

    #[test]
    fn write_denials_outside_the_roots_are_found_in_common_shapes() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("x");
        let t = target.display();
        let p = policy(ws.path(), true);
        for text in [
            format!("touch: cannot touch '{t}': Permission denied"),
            format!("mkdir: cannot create directory ‘{t}’: Permission denied"),
            format!("bash: line 1: {t}: Permission denied"),
            format!("PermissionError: [Errno 13] Permission denied: '{t}'"),
            format!("Error: EACCES: permission denied, open '{t}'"),
        ] {
            assert_eq!(
                detect(&text, &p, ws.path()),
                Some(Denial::Write(target.clone())),
                "{text}"
            );
        }
        let inside = ws.path().join("y");
        let text = format!(
            "touch: cannot touch '{}': Permission denied",
            inside.display()
        );
        assert_eq!(detect(&text, &p, ws.path()), None);
        assert_eq!(detect("all good", &p, ws.path()), None);
        assert_eq!(
            Denial::Write(PathBuf::from("/etc/x")).describe(),
            "writing /etc/x"
        );
        assert_eq!(
            denied_note(
                Mode::WorkspaceWrite,
                &Denial::Write(PathBuf::from("/etc/x")),
                true
            ),
            "The sandbox (workspace-write) stopped writing /etc/x. To allow it, add the directory to `writable` under `[sandbox]` in the config, or set `mode = \"full\"` there."
        );
        assert_eq!(
            denied_note(Mode::ReadOnly, &Denial::Network("x".into()), false),
            "The sandbox (read-only) stopped a network connection (x). To allow it, set `network = true` under `[sandbox]` in the config."
        );
    }

    #[test]
    fn protected_denials_say_why_and_how_to_allow_them() {
        let d = Denial::Protected(PathBuf::from("/w/.git/hooks/pre-commit"));
        assert_eq!(
            denied_note(Mode::WorkspaceWrite, &d, false),
            "The sandbox (workspace-write) stopped writing /w/.git/hooks/pre-commit: .git, .podcode and .opencode stay read-only to sandboxed commands, because git and Podcode run code from there outside the sandbox. To allow this write, approve running the command outside the sandbox when asked, or run it yourself."
        );
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        std::fs::write(
            &log,
            "{\"write\":\"/etc/x\"}\n{\"network\":\"curl opened an IPv4 socket\"}\n{\"write\":\"/etc/x\"}\nnot json\n",
        )
        .unwrap();
        assert_eq!(
            read_log(&log),
            vec![
                Denial::Write(PathBuf::from("/etc/x")),
                Denial::Network("curl opened an IPv4 socket".into())
            ]
        );
        assert!(read_log(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn a_failure_is_matched_to_the_denial_it_names_and_only_to_newer_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        std::fs::write(
            &log,
            "{\"write\":\"/a/one\"}\n{\"write\":\"/b/two\"}\n{\"network\":\"node opened an IPv4 socket\"}\n",
        )
        .unwrap();
        let mut p = policy(dir.path(), false);
        p.denial_log = Some(log.clone());
        let cwd = dir.path();
        // The one the message names, else the first (of the lines after `skip`).
        assert_eq!(
            denial_for(&p, "sh: 1: cannot create /b/two: Permission denied", cwd, 0),
            Some(Denial::Write("/b/two".into()))
        );
        assert_eq!(
            denial_for(&p, "failed", cwd, 0),
            Some(Denial::Write("/a/one".into()))
        );
        assert_eq!(
            denial_for(&p, "failed", cwd, 2),
            Some(Denial::Network("node opened an IPv4 socket".into()))
        );
        // Nothing new: an earlier line only when the message names it (a repeat is not
        // logged twice in a row).
        assert_eq!(denial_for(&p, "failed", cwd, 3), None);
        assert_eq!(
            denial_for(&p, "EACCES: permission denied, open '/a/one'", cwd, 3),
            Some(Denial::Write("/a/one".into()))
        );
        assert_eq!(log_len(&log), 3);
    }

    #[test]
    fn network_denials_count_only_with_the_network_off() {
        let ws = tempfile::tempdir().unwrap();
        for text in [
            "bash: socket: Permission denied",
            "curl: (6) Could not resolve host: example.com",
            "bash: connect: Permission denied",
        ] {
            assert!(
                matches!(
                    detect(text, &policy(ws.path(), false), ws.path()),
                    Some(Denial::Network(_))
                ),
                "{text}"
            );
            assert_eq!(
                detect(text, &policy(ws.path(), true), ws.path()),
                None,
                "{text}"
            );
        }
        assert_eq!(
            Denial::Network("bash: socket: Permission denied".into()).describe(),
            "a network connection (bash: socket: Permission denied)"
        );
    }
}
