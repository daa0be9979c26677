//! The data half of opencode's `PluginInput`, built once per host: `directory`, `worktree`,
//! `project` and `serverUrl` (the sidecar adds `client`, `$` and `experimental_workspace`).
//! `project` has the keys opencode 1.18 gives (`id`, `worktree`, `vcs`, `sandboxes`,
//! `time: {created, updated}`), and its id is found as opencode finds it: a hash of the
//! `origin` remote (`sha1("git-remote:<host>/<path>")`), else the id opencode stored in the
//! git dir (`.git/opencode`), else the repository's first root commit, else `"global"`
//! (not a git repository: `vcs` is then `null`, which the sidecar turns into undefined).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use sha1::{Digest, Sha1};

/// `serverUrl`: Podcode serves no opencode HTTP API (the `client` is answered over the
/// sidecar's pipe), so plugins get what opencode gives when its own server is not
/// listening (as in `opencode run`).
pub const SERVER_URL: &str = "http://localhost:4096";

/// `PluginInput`'s data for a session in `directory` inside `worktree`.
pub fn plugin_input(directory: &Path, worktree: &Path) -> Value {
    json!({
        "directory": directory,
        "worktree": worktree,
        "project": project(worktree),
        "serverUrl": SERVER_URL,
    })
}

/// opencode's `Project` for the workspace at `worktree`.
pub fn project(worktree: &Path) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let git_dir = git(worktree, &["rev-parse", "--git-common-dir"]).map(|d| worktree.join(d));
    let (id, vcs) = match &git_dir {
        None => ("global".to_string(), Value::Null),
        Some(dir) => {
            let id = remote_id(worktree)
                .or_else(|| stored_id(dir))
                .or_else(|| root_commit(worktree))
                .unwrap_or_else(|| "global".into());
            (id, json!("git"))
        }
    };
    json!({
        "id": id,
        "worktree": worktree,
        "vcs": vcs,
        "sandboxes": [],
        "time": {"created": now, "updated": now},
    })
}

/// One line of `git <args>` run in `dir`, when it succeeds and says something.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn remote_id(worktree: &Path) -> Option<String> {
    let url = git(worktree, &["remote", "get-url", "origin"])?;
    let key = remote_key(&url)?;
    let digest = Sha1::digest(format!("git-remote:{key}").as_bytes());
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

/// `host/path` of a remote URL (`https://Host/a/b.git`, `git@host:a/b`), lower-case host,
/// no `.git`, no slashes at either end; `None` for a local (`file:`) remote.
fn remote_key(url: &str) -> Option<String> {
    let url = url.trim();
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme == "file" {
            return None;
        }
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        // opencode keys on `URL.hostname`, which has no port.
        (host.split(':').next().unwrap_or(host), path)
    } else {
        let rest = url.split_once('@').map_or(url, |(_, r)| r);
        rest.split_once(':')?
    };
    let path = path.trim_start_matches('/');
    let path = path.strip_suffix('/').unwrap_or(path);
    let path = path.strip_suffix(".git").unwrap_or(path);
    let path = path.trim_end_matches('/');
    (!host.is_empty() && !path.is_empty()).then(|| format!("{}/{path}", host.to_lowercase()))
}

fn stored_id(git_dir: &Path) -> Option<String> {
    let id = std::fs::read_to_string(git_dir.join("opencode")).ok()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

fn root_commit(worktree: &Path) -> Option<String> {
    let all = git(worktree, &["rev-list", "--max-parents=0", "HEAD"])?;
    let mut roots: Vec<&str> = all
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    roots.sort_unstable();
    roots.first().map(|r| r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_keys_are_normalised_as_opencode_does() {
        assert_eq!(
            remote_key("https://GitHub.com/sst/opencode.git").as_deref(),
            Some("github.com/sst/opencode")
        );
        assert_eq!(
            remote_key("git@github.com:sst/opencode.git").as_deref(),
            Some("github.com/sst/opencode")
        );
        assert_eq!(
            remote_key("ssh://git@host:2222/a/b/").as_deref(),
            Some("host/a/b")
        );
        assert_eq!(remote_key("file:///tmp/repo"), None);
        assert_eq!(remote_key("/srv/git/repo.git"), None);
    }

    fn git_in(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn the_project_id_falls_back_from_the_stored_id_to_the_root_commit_to_global() {
        let dir = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        assert_eq!((&p["id"], &p["vcs"]), (&json!("global"), &Value::Null));
        let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 5, "{p}");

        git_in(dir.path(), &["init", "-q"]);
        git_in(dir.path(), &["commit", "-q", "--allow-empty", "-m", "one"]);
        let root = git(dir.path(), &["rev-parse", "HEAD"]).unwrap();
        let p = project(dir.path());
        assert_eq!((&p["id"], &p["vcs"]), (&json!(root), &json!("git")));

        std::fs::write(dir.path().join(".git/opencode"), "stored-id\n").unwrap();
        assert_eq!(project(dir.path())["id"], "stored-id");
    }
}
