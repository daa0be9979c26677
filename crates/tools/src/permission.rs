//! The permission engine. A request `{permission, patterns}` is checked pattern by pattern
//! against the rules (defaults, then global config, project config, agent profile; the last
//! matching rule wins) and the "always" approvals remembered for this project. `deny` ends
//! the call; patterns that still need an `ask` go to the front end's `Asker` in one prompt.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use globset::{Glob, GlobMatcher};
use podcode_protocol::{
    PermissionAction, PermissionReply, PermissionRequest, PermissionRule, new_id,
};
use podcode_records::Approvals;

use crate::texts::{denied_text, rejected_text, rejected_with_feedback_text};

/// What a front end is shown when a call needs the user's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct AskRequest {
    /// Id to answer with (`Op::PermissionReply`).
    pub request_id: String,
    /// The session whose call asks.
    pub session_id: String,
    /// The call waiting for the answer.
    pub call_id: String,
    /// The tool asking.
    pub tool: String,
    /// What it asks for.
    pub request: PermissionRequest,
}

/// The front end side of an ask: a terminal prompt, a TUI modal, a policy.
#[async_trait]
pub trait Asker: Send + Sync {
    /// Shows the ask and waits for the answer (a rejection when the front end cannot ask).
    async fn ask(&self, request: &AskRequest) -> PermissionReply;
}

/// Why a permission check did not allow a call; the text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermissionError {
    /// A rule denies it.
    #[error("{}", denied_text(.permission, .patterns))]
    Denied {
        /// The permission asked for.
        permission: String,
        /// The patterns asked for.
        patterns: Vec<String>,
    },
    #[error("{}", match .feedback {
        Some(f) => rejected_with_feedback_text(.permission, .patterns, f),
        None => rejected_text(.permission, .patterns),
    })]
    /// The user said no.
    Rejected {
        /// The permission asked for.
        permission: String,
        /// The patterns asked for.
        patterns: Vec<String>,
        /// What the user wants instead, passed to the model.
        feedback: Option<String>,
    },
    /// Remembered approvals could not be read or saved.
    #[error("could not read or save approvals: {0}")]
    Store(String),
}

struct CompiledRule {
    rule: PermissionRule,
    permission: Matcher,
    pattern: PatternMatcher,
}

/// `*`, `?` and `**` wildcards; `*` crosses `/` too, so `git *` matches `git log src/a.rs`.
/// A pattern without glob syntax is compared as text, and a glob is compiled (to a regex)
/// at its first use: the rules of a session are many, most never reach a match, and
/// compiling them all sat on the path to the first model request.
enum Matcher {
    Any,
    Glob {
        pattern: String,
        /// `None` when the pattern is no valid glob: then it is compared as text.
        compiled: OnceLock<Option<GlobMatcher>>,
    },
    Exact(String),
}

impl Matcher {
    fn new(pattern: &str) -> Self {
        if pattern == "*" || pattern == "**" {
            return Self::Any;
        }
        if !pattern.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            return Self::Exact(pattern.to_string());
        }
        Self::Glob {
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        }
    }

    fn is_match(&self, s: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Glob { pattern, compiled } => {
                match compiled.get_or_init(|| Glob::new(pattern).ok().map(|g| g.compile_matcher()))
                {
                    Some(g) => g.is_match(s),
                    None => pattern == s,
                }
            }
            Self::Exact(p) => p == s,
        }
    }
}

/// A compiled rule pattern; see `wildcard_match` for the family rule.
struct PatternMatcher {
    glob: Matcher,
    bare: Option<String>,
}

impl PatternMatcher {
    fn new(pattern: &str) -> Self {
        Self {
            glob: Matcher::new(pattern),
            bare: pattern.strip_suffix(" *").map(str::to_string),
        }
    }

    fn is_match(&self, s: &str) -> bool {
        self.glob.is_match(s) || self.bare.as_deref() == Some(s)
    }
}

/// Matches `text` against a permission wildcard pattern. A family pattern `git status *`
/// also covers the bare `git status`.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    Matcher::new(pattern).is_match(text)
        || pattern.strip_suffix(" *").is_some_and(|bare| bare == text)
}

/// The permission that switches a tool off, as opencode names them: the file-editing tools
/// share `edit`, the browser tools `browser`; every other tool is named by its id.
pub fn tool_permission(tool_id: &str) -> &str {
    match tool_id {
        "write" | "edit" | "apply_patch" | "multiedit" | "patch" => "edit",
        id if id.starts_with("browser_") => "browser",
        // MCP resources are context to read, as opencode treats them.
        "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource" => "read",
        id => id,
    }
}

/// Decides each permission request: rules (last match wins), then remembered "always" approvals,
/// then the asker.
pub struct PermissionEngine {
    rules: Vec<CompiledRule>,
    approvals: Arc<dyn Approvals>,
    project: String,
    asker: Arc<dyn Asker>,
}

impl PermissionEngine {
    /// `rules` in increasing precedence; `project` keys the remembered approvals.
    pub fn new(
        rules: Vec<PermissionRule>,
        approvals: Arc<dyn Approvals>,
        project: String,
        asker: Arc<dyn Asker>,
    ) -> Self {
        let mut all = vec![PermissionRule::new("*", "*", PermissionAction::Ask)];
        all.extend(rules);
        let rules = all
            .into_iter()
            .map(|rule| CompiledRule {
                permission: Matcher::new(&rule.permission),
                pattern: PatternMatcher::new(&rule.pattern),
                rule,
            })
            .collect();
        Self {
            rules,
            approvals,
            project,
            asker,
        }
    }

    /// The project key approvals are remembered under.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The action the rules alone give one pattern (no remembered approvals).
    pub fn evaluate(&self, permission: &str, pattern: &str) -> PermissionAction {
        self.rules
            .iter()
            .rev()
            .find(|r| r.permission.is_match(permission) && r.pattern.is_match(pattern))
            .map(|r| r.rule.action)
            .unwrap_or(PermissionAction::Ask)
    }

    /// Whether the rules refuse `permission` for every pattern: the last rule naming it is
    /// a deny of `*` (a narrower rule after it, say an allow of `git *`, leaves it usable).
    pub fn denies_outright(&self, permission: &str) -> bool {
        self.rules
            .iter()
            .rev()
            .find(|r| r.permission.is_match(permission))
            .is_some_and(|r| r.rule.action == PermissionAction::Deny && r.rule.pattern == "*")
    }

    /// Decides a request; asks the user for what rules and approvals leave open.
    /// `hook` is the `permission.ask` hook's verdict, consulted before the user is prompted.
    pub async fn check(
        &self,
        ask: AskRequest,
        hook: Option<PermissionAction>,
    ) -> Result<(), PermissionError> {
        let req = &ask.request;
        let patterns: Vec<String> = if req.patterns.is_empty() {
            vec!["*".into()]
        } else {
            req.patterns.clone()
        };
        let mut pending = Vec::new();
        let mut approvals = None;
        for pattern in &patterns {
            match self.evaluate(&req.permission, pattern) {
                PermissionAction::Deny => {
                    return Err(PermissionError::Denied {
                        permission: req.permission.clone(),
                        patterns: vec![pattern.clone()],
                    });
                }
                PermissionAction::Allow => {}
                PermissionAction::Ask => {
                    if approvals.is_none() {
                        approvals = Some(
                            self.approvals
                                .approvals_of(&self.project)
                                .map_err(|e| PermissionError::Store(e.to_string()))?,
                        );
                    }
                    let remembered = approvals.iter().flatten().any(|a| {
                        wildcard_match(&a.permission, &req.permission)
                            && wildcard_match(&a.pattern, pattern)
                    });
                    if !remembered {
                        pending.push(pattern.clone());
                    }
                }
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        match hook {
            Some(PermissionAction::Allow) => return Ok(()),
            Some(PermissionAction::Deny) => {
                return Err(PermissionError::Denied {
                    permission: req.permission.clone(),
                    patterns: pending,
                });
            }
            _ => {}
        }
        let mut shown = ask.clone();
        shown.request.patterns = pending.clone();
        if shown.request.always.is_empty() {
            shown.request.always = pending.clone();
        }
        match self.asker.ask(&shown).await {
            PermissionReply::Once => Ok(()),
            PermissionReply::Always => {
                for pattern in &shown.request.always {
                    self.approvals
                        .remember(&self.project, &req.permission, pattern)
                        .map_err(|e| PermissionError::Store(e.to_string()))?;
                }
                Ok(())
            }
            PermissionReply::Reject { feedback } => Err(PermissionError::Rejected {
                permission: req.permission.clone(),
                patterns: pending,
                feedback: feedback.filter(|f| !f.trim().is_empty()),
            }),
        }
    }

    /// A fresh id for an ask.
    pub fn new_request_id() -> String {
        new_id("per")
    }
}

/// Answers every ask the same way: `--yes` (once), or reject when nobody can be asked.
pub struct FixedAsker(pub PermissionReply);

#[async_trait]
impl Asker for FixedAsker {
    async fn ask(&self, _request: &AskRequest) -> PermissionReply {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cover_star_question_and_double_star() {
        assert!(wildcard_match("git *", "git log src/a.rs"));
        assert!(wildcard_match("src/**", "src/a/b.rs"));
        assert!(wildcard_match("file?.txt", "file1.txt"));
        assert!(!wildcard_match("file?.txt", "file10.txt"));
        assert!(wildcard_match("*", "anything at all"));
        assert!(wildcard_match("echo [unclosed", "echo [unclosed"));
        assert!(!wildcard_match("rm *", "git rm x"));
        // Text without glob syntax is compared as is; an escape is glob syntax.
        assert!(wildcard_match("webfetch", "webfetch"));
        assert!(!wildcard_match("webfetch", "webfetch_private"));
        assert!(wildcard_match(r"a\*b", "a*b"));
        assert!(!wildcard_match(r"a\*b", "axb"));
        assert!(wildcard_match("git status *", "git status"));
        assert!(!wildcard_match("git status *", "git statusx"));
    }
}
