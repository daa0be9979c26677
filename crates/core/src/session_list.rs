//! `podcode sessions` as text and JSON: each stored session (newest first) with the tokens
//! and cost of its tree (its own figures beside them when sub-agents spent some) and, for a
//! worktree session, its worktree and unsynced changes; or the sessions as a tree (each
//! sub-agent under the session whose `task` call started it). The front end prints what
//! this returns; every value from the store passes the terminal sanitiser here.

use std::collections::{HashMap, HashSet};

use podcode_protocol::{StepUsage, sanitize_for_terminal as clean, tokens};
use podcode_store::SessionRow;
use serde_json::Value;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::history::format_time;
use crate::worktree::WorktreeInfo;

impl Engine {
    /// The listing's lines: one per session (with a worktree line under a worktree
    /// session), or, with `tree`, top sessions newest first each followed by its
    /// sub-agents (oldest first), indented one step per level.
    pub fn session_lines(&self, all: bool, tree: bool) -> Result<Vec<String>, EngineError> {
        let sessions = self.sessions(all)?;
        let worktrees = self.worktree_map()?;
        let mut spent = HashMap::new();
        for s in &sessions {
            spent.insert(s.id.clone(), self.spent_text(&s.id)?);
        }
        if tree {
            return Ok(tree_lines(&sessions, &spent));
        }
        let mut out = Vec::new();
        for s in &sessions {
            out.push(line(s, spent.get(&s.id).map_or("", String::as_str), ""));
            if let Some(w) = worktrees.get(&s.id) {
                out.push(clean(&worktree_line(w)).into_owned());
            }
        }
        Ok(out)
    }

    /// The listing as JSON: each session row with its own token and cost totals under
    /// `usage`, its tree's under `tree_usage`, and its worktree.
    pub fn sessions_json(&self, all: bool) -> Result<Value, EngineError> {
        let worktrees = self.worktree_map()?;
        let json = |e: serde_json::Error| EngineError::Io(e.to_string());
        let mut rows = Vec::new();
        for s in &self.sessions(all)? {
            let mut row = serde_json::to_value(s).map_err(json)?;
            let totals = self.totals(&s.id)?;
            row["usage"] = serde_json::to_value(totals.own).map_err(json)?;
            row["tree_usage"] = serde_json::to_value(totals.tree).map_err(json)?;
            if let (Some(w), Some(obj)) = (worktrees.get(&s.id), row.as_object_mut()) {
                obj.insert("worktree".into(), serde_json::to_value(w).map_err(json)?);
            }
            rows.push(row);
        }
        Ok(Value::Array(rows))
    }

    /// `podcode sessions prune`: `prune_worktrees`, as one line per session, and the note to
    /// show when there was none. Keeping a worktree with unsynced work is no failure.
    pub fn prune_lines(
        &self,
        ids: &[String],
        force: bool,
    ) -> Result<(Vec<String>, Option<String>), EngineError> {
        let notes = self.prune_worktrees(ids, force)?;
        let none = notes.is_empty().then(|| {
            format!(
                "no worktree sessions in {}",
                clean(&self.project().to_string_lossy())
            )
        });
        let lines = notes
            .iter()
            .map(|n| format!("{}  {}", n.session_id, clean(&n.note)))
            .collect();
        Ok((lines, none))
    }

    fn worktree_map(&self) -> Result<HashMap<String, WorktreeInfo>, EngineError> {
        Ok(self
            .worktrees()?
            .into_iter()
            .map(|w| (w.session_id.clone(), w))
            .collect())
    }

    /// Tokens in and out, and the cost when a price is known, of the session with its
    /// sub-agents: `12.3k↑ 1.2k↓ $0.04`; when sub-agents spent some, the session's own
    /// figures follow: `15.1k↑ 1.5k↓ $0.10 (own 12.3k↑ 1.2k↓ $0.04)`.
    fn spent_text(&self, id: &str) -> Result<String, EngineError> {
        let totals = self.totals(id)?;
        let mut spent = usage_text(&totals.tree);
        if totals.has_sub_agents() {
            spent.push_str(&format!(" (own {})", usage_text(&totals.own)));
        }
        Ok(spent)
    }
}

/// One line about a session's worktree.
fn worktree_line(w: &WorktreeInfo) -> String {
    let why = crate::worktree_state::reverted_text(&w.reverted)
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let state = match (w.unsynced, &w.problem) {
        (Some(0), _) => "nothing unsynced".to_string(),
        (Some(1), _) => format!("1 unsynced change{why}"),
        (Some(n), _) => format!("{n} unsynced changes{why}"),
        (None, Some(p)) => format!("{p} (`podcode sessions prune {}` forgets it)", w.session_id),
        (None, None) => "state unknown".to_string(),
    };
    format!("  worktree {} (branch {}): {state}", w.path, w.branch)
}

fn usage_text(usage: &StepUsage) -> String {
    let mut spent = format!(
        "{}↑ {}↓",
        tokens(usage.input_tokens),
        tokens(usage.output_tokens)
    );
    if let Some(c) = usage.cost {
        spent.push_str(&format!(" ${c:.2}"));
    }
    spent
}

fn line(s: &SessionRow, spent: &str, indent: &str) -> String {
    format!(
        "{indent}{}  {}  {:<7}  {:<28}  {:<20}  {}",
        s.id,
        format_time(s.updated_at),
        clean(&s.agent),
        clean(s.model.as_deref().unwrap_or("-")),
        spent,
        clean(&s.title)
    )
}

/// Top sessions newest first, each followed by its sub-agents (oldest first, as they were
/// started), indented one step per level. A child whose parent is not listed is a top.
fn tree_lines(sessions: &[SessionRow], spent: &HashMap<String, String>) -> Vec<String> {
    let ids: HashSet<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let is_top = |s: &SessionRow| s.parent_id.as_deref().is_none_or(|p| !ids.contains(p));
    fn walk(
        all: &[SessionRow],
        spent: &HashMap<String, String>,
        s: &SessionRow,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        let indent = if depth == 0 {
            String::new()
        } else {
            format!("{}└─ ", "   ".repeat(depth - 1))
        };
        out.push(line(
            s,
            spent.get(&s.id).map_or("", String::as_str),
            &indent,
        ));
        let mut kids: Vec<&SessionRow> = all
            .iter()
            .filter(|c| c.parent_id.as_deref() == Some(s.id.as_str()))
            .collect();
        kids.sort_by_key(|c| c.created_at);
        for k in kids {
            walk(all, spent, k, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    for s in sessions.iter().filter(|s| is_top(s)) {
        walk(sessions, spent, s, 0, &mut out);
    }
    out
}
