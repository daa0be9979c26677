//! opencode's `{env:VAR}` and `{file:path}` in the strings of an `opencode.json(c)`, and
//! what a project's file may read with them.
//!
//! The user's own files (global, `$OPENCODE_CONFIG`, `$OPENCODE_CONFIG_DIR`) substitute
//! anything, as opencode does. A project's file is written by whoever wrote the repository,
//! and what it substitutes can reach the model (an agent's prompt) or a server (an MCP
//! header), so:
//!
//! | workspace | `{file:}` inside the project | `{file:}` outside | `{env:}` |
//! |---|---|---|---|
//! | not trusted | read | empty | empty |
//! | trusted | read | empty until allowed | secret-looking names empty until allowed |
//! | trusted, secrets allowed (`podcode trust --allow-secrets`) | read | read | read |
//!
//! "Inside" is decided on the canonical path, so a symlink out of the project counts as
//! outside. Each refused reference is left empty and named (key and reference) in one
//! warning per file, which says what would allow it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// What a project's config file may read, by the user's decisions about the workspace.
#[derive(Debug, Clone, Copy)]
pub struct ProjectAccess<'a> {
    /// The project root (the git root): `{file:}` under it is always read.
    pub root: &'a Path,
    /// The user trusts the workspace (`podcode trust`).
    pub trusted: bool,
    /// The user let the project's config read secrets (`podcode trust --allow-secrets`).
    pub secrets: bool,
}

/// How one file's references are answered.
pub(crate) struct Policy<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// `Some` for a project's file; `None` for the user's own.
    pub project: Option<ProjectAccess<'a>>,
}

/// A reference left empty: the dotted key it was in and the reference as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    pub key: String,
    pub reference: String,
}

/// Substitutes every string of `value`; `file` is the config file (relative `{file:}`
/// paths start at its folder). Refused references are pushed to `refused`.
pub(crate) fn substitute(
    value: Value,
    file: &Path,
    policy: &Policy<'_>,
    refused: &mut Vec<Refused>,
) -> Value {
    walk(value, "", file, policy, refused)
}

fn walk(
    value: Value,
    key: &str,
    file: &Path,
    policy: &Policy<'_>,
    refused: &mut Vec<Refused>,
) -> Value {
    let child = |k: &str| {
        if key.is_empty() {
            k.to_string()
        } else {
            format!("{key}.{k}")
        }
    };
    match value {
        Value::String(s) => Value::String(substitute_str(&s, key, file, policy, refused)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| walk(v, &format!("{key}[{i}]"), file, policy, refused))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = walk(v, &child(&k), file, policy, refused);
                    (k, v)
                })
                .collect::<Map<_, _>>(),
        ),
        other => other,
    }
}

fn substitute_str(
    s: &str,
    key: &str,
    file: &Path,
    policy: &Policy<'_>,
    refused: &mut Vec<Refused>,
) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let Some(end) = tail.find('}') else {
            out.push_str(tail);
            return out;
        };
        let reference = &tail[..=end];
        let inner = &tail[1..end];
        let mut refuse = || {
            refused.push(Refused {
                key: key.to_string(),
                reference: reference.to_string(),
            })
        };
        if let Some(var) = inner.strip_prefix("env:") {
            let var = var.trim();
            let value = (policy.env)(var).unwrap_or_default();
            if env_allowed(policy.project, var, &value) {
                out.push_str(&value);
            } else {
                refuse();
            }
        } else if let Some(path) = inner.strip_prefix("file:") {
            let full = file_path(path.trim(), file, policy.env);
            match std::fs::read_to_string(&full) {
                Ok(_) if !file_allowed(policy.project, &full) => refuse(),
                Ok(text) => out.push_str(text.trim()),
                Err(_) => out.push_str(reference),
            }
        } else {
            out.push_str(reference);
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `~/x` is in the home folder; anything else is relative to the config file's folder.
fn file_path(path: &str, file: &Path, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(p) => env("HOME").map_or_else(|| PathBuf::from(path), |h| Path::new(&h).join(p)),
        None => file.parent().unwrap_or(Path::new(".")).join(path),
    }
}

fn env_allowed(project: Option<ProjectAccess<'_>>, name: &str, value: &str) -> bool {
    match project {
        None => true,
        Some(p) if !p.trusted => false,
        Some(p) => p.secrets || !(is_secret_name(name) || has_credentials(value)),
    }
}

fn file_allowed(project: Option<ProjectAccess<'_>>, full: &Path) -> bool {
    let Some(p) = project else {
        return true;
    };
    if p.trusted && p.secrets {
        return true;
    }
    match (full.canonicalize(), p.root.canonicalize()) {
        (Ok(file), Ok(root)) => file.starts_with(root),
        _ => false,
    }
}

/// Whether an environment variable's name says it holds a secret: API keys, tokens,
/// passwords, credentials, private keys, session cookies, and every cloud provider's
/// variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`, `GCP_*`, …).
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const PARTS: &[&str] = &[
        "KEY",
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "PASS",
        "PWD",
        "CREDENTIAL",
        "CREDS",
        "AUTH",
        "COOKIE",
        "SESSION",
        "PRIVATE",
        "CERT",
        "DSN",
        "PAT",
        "SIGNING",
        "SALT",
    ];
    const CONTAINS: &[&str] = &[
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "APIKEY",
        "CREDENTIAL",
        "PRIVATE",
    ];
    const PREFIXES: &[&str] = &[
        "AWS_",
        "AZURE_",
        "GOOGLE_",
        "GCP_",
        "GCLOUD_",
        "DO_",
        "HEROKU_",
        "VAULT_",
        "NPM_",
        "GH_",
        "GITHUB_",
        "GITLAB_",
        "OPENAI_",
        "ANTHROPIC_",
        "STRIPE_",
        "SSH_",
    ];
    // The working directory's variable is named like a password's short form.
    if n == "PWD" || n == "OLDPWD" {
        return false;
    }
    n.split(['_', '-', '.'])
        .any(|part| PARTS.contains(&part) || part.ends_with("KEY") || part.ends_with("TOKEN"))
        || CONTAINS.iter().any(|c| n.contains(c))
        || PREFIXES.iter().any(|p| n.starts_with(p))
}

/// A value that carries credentials whatever its variable's name: a URL with a password
/// (`postgres://user:pw@host/db`).
fn has_credentials(value: &str) -> bool {
    value.split_whitespace().any(|word| {
        let Some((_, after_scheme)) = word.split_once("://") else {
            return false;
        };
        let authority = after_scheme.split('/').next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// The one warning for a project file whose references were left empty.
pub(crate) fn warning(file: &Path, access: ProjectAccess<'_>, refused: &[Refused]) -> String {
    let list = refused
        .iter()
        .map(|r| format!("{} ({})", r.key, r.reference))
        .collect::<Vec<_>>()
        .join(", ");
    if access.trusted {
        format!(
            "{}: a project's config may read files outside the project and secret environment variables only once you allow it; left empty: {list} (run `podcode trust --allow-secrets` to allow this project's config to read them)",
            file.display()
        )
    } else {
        format!(
            "{}: this workspace is not trusted, so its config may not read environment variables or files outside the project; left empty: {list} (run `podcode trust` to trust it, and `podcode trust --allow-secrets` to let its config read secrets)",
            file.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised_and_plain_ones_are_not() {
        for n in [
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "DB_PASSWORD",
            "MYSQL_PWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SENTRY_DSN",
            "SESSION_COOKIE",
            "GH_PAT",
            "deploy_key",
            "TRACKER_TOKEN",
            "STRIPE_SK",
            "SSH_AUTH_SOCK",
            "MY_APIKEY",
            "SECRETS",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "HOME",
            "USER",
            "PWD",
            "LANG",
            "EDITOR",
            "MODEL_NAME",
            "PORT",
            "CI",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
        assert!(has_credentials("postgres://me:hunter2@db.internal/app"));
        assert!(!has_credentials("https://example.invalid/x@y"));
    }
}
