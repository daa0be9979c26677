//! The system prompt: Podcode's base prompt (written for the model), the profile's extra
//! instructions, facts about the environment (working directory, platform, date, a git
//! status summary) and every `AGENTS.md` that applies: the user's global one, then those
//! from the workspace root down to the working directory, each headed by its path.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The base prompt every profile starts from.
pub const BASE_PROMPT: &str = "You are Podcode, a coding agent working in the user's terminal, on the user's workspace. You act through the tools you are given: read and search before you change anything, make focused edits, and run commands when they help you check your work.

Guidelines:
- Keep going until the user's request is fully handled, then stop and answer. Do not ask for confirmation you do not need.
- Use paths relative to the working directory, or absolute paths inside it.
- Read a file before you edit it; prefer small, precise edits over rewriting whole files.
- For work of three or more steps, keep a todo list with todowrite: write it first, mark an item in_progress when you start it and completed as soon as it is done.
- If a tool call fails, read the error: it says what went wrong and how to fix the call.
- If the user rejects a permission, do not retry the same call; follow their feedback or ask how to proceed.
- Never invent file contents or command output. If you are unsure, look.
- Follow the conventions of the code around you and the instructions in AGENTS.md files below.
- Be concise: your final answer says what you did, what you found, and anything left for the user to do.";

/// Where the turn runs, for the environment section and the `AGENTS.md` search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemContext {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The workspace (project) root: `AGENTS.md` files are read from here down to `cwd`.
    pub project_root: PathBuf,
    /// The global config directory (`~/.config/podcode`), for the user's own `AGENTS.md`.
    pub config_dir: Option<PathBuf>,
}

/// Everything before the conversation: base prompt, profile prompt, environment, AGENTS.md.
/// The git status is `prefetch`'s when it has a fresh one for this directory.
pub async fn system_prompt(
    ctx: &SystemContext,
    profile_prompt: Option<&str>,
    prefetch: Option<&GitPrefetch>,
) -> String {
    let mut out = String::from(BASE_PROMPT);
    if let Some(p) = profile_prompt.filter(|p| !p.trim().is_empty()) {
        out.push_str("\n\n");
        out.push_str(p.trim());
    }
    let prefetched = match prefetch {
        Some(p) => p.take(&ctx.cwd).await,
        None => None,
    };
    let git = match prefetched {
        Some(git) => git,
        None => git_summary(&ctx.cwd).await,
    };
    out.push_str("\n\n");
    out.push_str(&environment_facts(&ctx.cwd, &git, SystemTime::now()));
    for (path, text) in agents_files(ctx) {
        out.push_str(&format!(
            "\n\nInstructions from {}:\n{}",
            path.display(),
            text.trim_end()
        ));
    }
    out
}

/// The `<env>` section: working directory, platform, date and git summary.
pub fn environment_facts(cwd: &Path, git: &str, now: SystemTime) -> String {
    let date = humantime::format_rfc3339_seconds(now).to_string();
    let date = date.get(..10).unwrap_or(&date);
    format!(
        "<env>\nWorking directory: {}\nPlatform: {} ({})\nToday's date: {date}\nGit status:\n{}\n</env>",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        indent(git.trim_end())
    )
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `git_summary` started before the turn that needs it: a session's opening starts one
/// beside its tool set's load (the git process costs more than a millisecond on the way to
/// the first model request), and the turn's system prompt takes it if it is for the same
/// directory and at most `PREFETCH_FRESH` old; otherwise the turn reads the status itself.
#[derive(Clone, Default)]
pub struct GitPrefetch(Arc<Mutex<Option<Prefetched>>>);

struct Prefetched {
    cwd: PathBuf,
    started: Instant,
    summary: tokio::task::JoinHandle<String>,
}

/// How old a prefetched status may be when a turn takes it.
const PREFETCH_FRESH: Duration = Duration::from_secs(1);

impl GitPrefetch {
    /// Starts reading `cwd`'s status on the current Tokio runtime (replacing an earlier one).
    pub fn start(&self, cwd: PathBuf) {
        let dir = cwd.clone();
        let summary = tokio::spawn(async move { git_summary(&dir).await });
        let started = Instant::now();
        let old = self.slot().replace(Prefetched {
            cwd,
            started,
            summary,
        });
        if let Some(old) = old {
            old.summary.abort();
        }
    }

    /// The status started for `cwd`, if fresh; taken (a second turn reads its own).
    async fn take(&self, cwd: &Path) -> Option<String> {
        let p = self.slot().take()?;
        if p.cwd != cwd || p.started.elapsed() > PREFETCH_FRESH {
            p.summary.abort();
            return None;
        }
        p.summary.await.ok()
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Prefetched>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for GitPrefetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cwd = self.slot().as_ref().map(|p| p.cwd.clone());
        f.debug_tuple("GitPrefetch").field(&cwd).finish()
    }
}

/// At most this many changed paths are listed; the rest are counted.
const GIT_MAX_FILES: usize = 20;

/// `git status --porcelain -b`, shortened: the branch line, then up to 20 changed paths.
/// "not a git repository" when git fails, is missing, or takes more than a second.
/// `--no-optional-locks`: reading the status never rewrites the index (nor takes its lock,
/// which would fail a `git commit` the user runs at that moment).
pub async fn git_summary(cwd: &Path) -> String {
    let run = tokio::process::Command::new("git")
        .args(["--no-optional-locks", "status", "--porcelain", "-b"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = match tokio::time::timeout(Duration::from_secs(1), run).await {
        Ok(Ok(out)) if out.status.success() => out,
        _ => return "not a git repository".into(),
    };
    summarize_porcelain(&String::from_utf8_lossy(&out.stdout))
}

fn summarize_porcelain(text: &str) -> String {
    let mut lines = text.lines();
    let branch = lines
        .next()
        .and_then(|l| l.strip_prefix("## "))
        .unwrap_or("unknown branch");
    let files: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let mut out = format!("branch: {branch}");
    if files.is_empty() {
        out.push_str("\nworking tree clean");
        return out;
    }
    for f in files.iter().take(GIT_MAX_FILES) {
        out.push('\n');
        out.push_str(f);
    }
    if files.len() > GIT_MAX_FILES {
        out.push_str(&format!(
            "\n… and {} more changed paths",
            files.len() - GIT_MAX_FILES
        ));
    }
    out
}

/// The `AGENTS.md` files that apply, in order: global, then workspace root down to cwd.
fn agents_files(ctx: &SystemContext) -> Vec<(PathBuf, String)> {
    let mut paths = Vec::new();
    if let Some(dir) = &ctx.config_dir {
        paths.push(dir.join("AGENTS.md"));
    }
    let mut chain: Vec<&Path> = ctx
        .cwd
        .ancestors()
        .take_while(|d| d.starts_with(&ctx.project_root))
        .collect();
    if chain.is_empty() {
        chain.push(&ctx.cwd);
    }
    chain.reverse();
    paths.extend(chain.into_iter().map(|d| d.join("AGENTS.md")));
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            (!text.trim().is_empty()).then_some((p, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefetched(cwd: &Path, age: Duration, text: &'static str) -> GitPrefetch {
        let p = GitPrefetch::default();
        *p.slot() = Some(Prefetched {
            cwd: cwd.to_path_buf(),
            started: Instant::now().checked_sub(age).unwrap(),
            summary: tokio::spawn(async move { text.to_string() }),
        });
        p
    }

    #[tokio::test]
    async fn a_fresh_prefetched_status_for_the_directory_is_used_once_a_stale_or_other_one_never() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = SystemContext {
            cwd: dir.path().to_path_buf(),
            project_root: dir.path().to_path_buf(),
            config_dir: None,
        };
        let own = git_summary(dir.path()).await;
        let fresh = prefetched(dir.path(), Duration::ZERO, "branch: prefetched");
        let prompt = system_prompt(&ctx, None, Some(&fresh)).await;
        assert!(
            prompt.contains("Git status:\n  branch: prefetched\n"),
            "{prompt}"
        );
        let again = system_prompt(&ctx, None, Some(&fresh)).await;
        assert!(
            again.contains(&format!("Git status:\n  {own}\n")),
            "{again}"
        );
        let stale = prefetched(dir.path(), PREFETCH_FRESH * 2, "branch: stale");
        let prompt = system_prompt(&ctx, None, Some(&stale)).await;
        assert!(!prompt.contains("branch: stale"), "{prompt}");
        let other = prefetched(Path::new("/elsewhere"), Duration::ZERO, "branch: other");
        let prompt = system_prompt(&ctx, None, Some(&other)).await;
        assert!(!prompt.contains("branch: other"), "{prompt}");
    }

    #[test]
    fn porcelain_is_summarized() {
        assert_eq!(
            summarize_porcelain("## main...origin/main\n M src/a.rs\n?? new.txt\n"),
            "branch: main...origin/main\n M src/a.rs\n?? new.txt"
        );
        assert_eq!(
            summarize_porcelain("## No commits yet on main\n"),
            "branch: No commits yet on main\nworking tree clean"
        );
        let many: String = (0..25).map(|i| format!("?? f{i}\n")).collect();
        let s = summarize_porcelain(&format!("## dev\n{many}"));
        assert!(s.ends_with("?? f19\n… and 5 more changed paths"), "{s}");
    }

    #[test]
    fn environment_facts_name_cwd_platform_date_and_git() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 * 365);
        let env = environment_facts(Path::new("/w"), "branch: main\nworking tree clean", t);
        assert_eq!(
            env,
            format!(
                "<env>\nWorking directory: /w\nPlatform: {} ({})\nToday's date: 1971-01-01\nGit status:\n  branch: main\n  working tree clean\n</env>",
                std::env::consts::OS,
                std::env::consts::ARCH
            )
        );
    }

    #[tokio::test]
    async fn agents_files_run_from_global_then_root_down_to_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let sub = root.join("crates/a");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(dir.path().join("cfg")).unwrap();
        std::fs::write(dir.path().join("cfg/AGENTS.md"), "global rule").unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rule").unwrap();
        std::fs::write(sub.join("AGENTS.md"), "crate rule").unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "outside, ignored").unwrap();
        let ctx = SystemContext {
            cwd: sub.clone(),
            project_root: root.clone(),
            config_dir: Some(dir.path().join("cfg")),
        };
        let prompt = system_prompt(&ctx, Some("Profile says hi."), None).await;
        assert!(prompt.starts_with(BASE_PROMPT));
        let g = prompt.find("global rule").unwrap();
        let r = prompt.find("root rule").unwrap();
        let c = prompt.find("crate rule").unwrap();
        assert!(g < r && r < c, "{prompt}");
        assert!(!prompt.contains("outside, ignored"));
        assert!(prompt.contains(&format!(
            "Instructions from {}:\nroot rule",
            root.join("AGENTS.md").display()
        )));
        assert!(prompt.contains("\n\nProfile says hi.\n\n<env>"));
        assert!(
            prompt.contains("Git status:\n  not a git repository") || prompt.contains("branch:")
        );
    }

    #[tokio::test]
    async fn reading_the_git_status_leaves_the_index_alone() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "-q", "-m", "one"]);
        // Same content, new time stamp: a plain `git status` refreshes the index and writes
        // it back (taking `index.lock` meanwhile).
        let file = std::fs::File::options()
            .write(true)
            .open(dir.path().join("a.txt"))
            .unwrap();
        file.set_modified(SystemTime::now() + Duration::from_secs(5))
            .unwrap();
        let index = dir.path().join(".git/index");
        let before = std::fs::read(&index).unwrap();
        assert_eq!(
            git_summary(dir.path()).await,
            "branch: main\nworking tree clean"
        );
        assert_eq!(std::fs::read(&index).unwrap(), before);
    }

    #[test]
    fn base_prompt_is_pinned() {
        let expected = [
            "You are Podcode, a coding agent working in the user's terminal, on the user's workspace. You act through the tools you are given: read and search before you change anything, make focused edits, and run commands when they help you check your work.",
            "",
            "Guidelines:",
            "- Keep going until the user's request is fully handled, then stop and answer. Do not ask for confirmation you do not need.",
            "- Use paths relative to the working directory, or absolute paths inside it.",
            "- Read a file before you edit it; prefer small, precise edits over rewriting whole files.",
            "- For work of three or more steps, keep a todo list with todowrite: write it first, mark an item in_progress when you start it and completed as soon as it is done.",
            "- If a tool call fails, read the error: it says what went wrong and how to fix the call.",
            "- If the user rejects a permission, do not retry the same call; follow their feedback or ask how to proceed.",
            "- Never invent file contents or command output. If you are unsure, look.",
            "- Follow the conventions of the code around you and the instructions in AGENTS.md files below.",
            "- Be concise: your final answer says what you did, what you found, and anything left for the user to do.",
        ];
        assert_eq!(BASE_PROMPT, expected.join("\n"));
    }
}
