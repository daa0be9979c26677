//! How Podcode's tool calls look to an ACP client: the tool kind (the editor's icon and
//! grouping), the title and the locations (the editor's "follow along"), all derived from
//! the tool id and its arguments; the plan a `todowrite` becomes; and the stop reason a
//! finished turn reports. Pure
//! functions, so every text and mapping here is pinned by the tests below.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    StopReason, ToolCallLocation, ToolKind, UnstructuredCommandInput,
};
use podcode_protocol::{PatchOp, TurnEnd, patch_files, str_arg, tool_title};
use serde_json::Value;

/// The ACP kind of a tool. Podcode's built-ins map one to one; `apply_patch` is an edit
/// unless the patch only deletes (`delete`) or renames (`move`) files; a sub-agent (`task`)
/// is the agent thinking; plugin, executable and MCP tools are `other`.
pub fn tool_kind(tool: &str, args: &Value) -> ToolKind {
    match tool {
        "read" | "list" => ToolKind::Read,
        "write" | "edit" | "sync_to_main" => ToolKind::Edit,
        "apply_patch" => patch_kind(str_arg(args, "patch").unwrap_or("")),
        "glob" | "grep" | "symbols" => ToolKind::Search,
        "bash" => ToolKind::Execute,
        "webfetch" | "browser_navigate" => ToolKind::Fetch,
        "task" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

fn patch_kind(patch: &str) -> ToolKind {
    let mut ops = patch_files(patch).into_iter().map(|(op, _)| op).peekable();
    if ops.peek().is_none() {
        return ToolKind::Edit;
    }
    let ops: Vec<PatchOp> = ops.collect();
    if ops.iter().all(|o| *o == PatchOp::Delete) {
        ToolKind::Delete
    } else if ops.iter().all(|o| *o == PatchOp::Move) {
        ToolKind::Move
    } else {
        ToolKind::Edit
    }
}

/// A call's title as the editor shows it: what it does, as every front end names it
/// (`Write src/app.py`, `Search "x" in src`); a command says it runs (`Run `ls -la``),
/// as a bare command reads like output on an editor's card and in its permission ask.
pub fn call_title(tool: &str, args: &Value, dir: &Path) -> String {
    let title = tool_title(tool, args, dir);
    match (tool, str_arg(args, "command")) {
        ("bash", Some(_)) => format!("Run {title}"),
        _ => title,
    }
}

/// The files a call touches, absolute (relative arguments resolved against `dir`), with
/// the line a `read` starts at.
pub fn tool_locations(tool: &str, args: &Value, dir: &Path) -> Vec<ToolCallLocation> {
    let abs = |p: &str| -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        }
    };
    match tool {
        "read" => str_arg(args, "filePath")
            .map(|p| {
                let line = args
                    .get("offset")
                    .and_then(Value::as_u64)
                    .and_then(|l| u32::try_from(l).ok());
                vec![ToolCallLocation::new(abs(p)).line(line)]
            })
            .unwrap_or_default(),
        "write" | "edit" => str_arg(args, "filePath")
            .map(|p| vec![ToolCallLocation::new(abs(p))])
            .unwrap_or_default(),
        "list" | "glob" | "grep" | "symbols" => str_arg(args, "path")
            .map(|p| vec![ToolCallLocation::new(abs(p))])
            .unwrap_or_default(),
        "apply_patch" => patch_files(str_arg(args, "patch").unwrap_or(""))
            .into_iter()
            .map(|(_, f)| ToolCallLocation::new(abs(&f)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The custom commands as ACP's `available_commands` (the repository's marked in the
/// description; the argument hint as the unstructured input's hint).
pub fn available_commands(infos: Vec<podcode_protocol::CommandInfo>) -> Vec<AvailableCommand> {
    infos
        .into_iter()
        .map(|c| {
            let description = match (c.description.is_empty(), c.from_repository) {
                (true, true) => "from the repository".to_string(),
                (false, true) => format!("{} (from the repository)", c.description),
                _ => c.description,
            };
            let command = AvailableCommand::new(c.name, description);
            match c.argument_hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                )),
                None => command,
            }
        })
        .collect()
}

/// An ACP plan from a `todowrite` result's `{todos}` metadata: each item's content,
/// priority and status; cancelled items are no longer part of the plan.
pub fn plan_of(metadata: &Value) -> Plan {
    let entries = metadata["todos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let status = match t["status"].as_str()? {
                "pending" => PlanEntryStatus::Pending,
                "in_progress" => PlanEntryStatus::InProgress,
                "completed" => PlanEntryStatus::Completed,
                _ => return None,
            };
            let priority = match t["priority"].as_str() {
                Some("high") => PlanEntryPriority::High,
                Some("low") => PlanEntryPriority::Low,
                _ => PlanEntryPriority::Medium,
            };
            Some(PlanEntry::new(
                t["content"].as_str().unwrap_or_default(),
                priority,
                status,
            ))
        })
        .collect();
    Plan::new(entries)
}

/// The stop reason of a finished turn. `finish_reason` is the last model request's: a
/// reply cut at the token limit is `max_tokens`, one the provider's filter stopped is a
/// `refusal`.
pub fn stop_reason(end: TurnEnd, finish_reason: Option<&str>) -> StopReason {
    match end {
        TurnEnd::Aborted => StopReason::Cancelled,
        TurnEnd::MaxSteps => StopReason::MaxTurnRequests,
        TurnEnd::Answered | TurnEnd::Error => match finish_reason {
            Some("length" | "max_tokens") => StopReason::MaxTokens,
            Some("content_filter" | "refusal") => StopReason::Refusal,
            _ => StopReason::EndTurn,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(tool: &str, args: Value) -> String {
        serde_json::to_value(tool_kind(tool, &args))
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn every_builtin_has_its_kind() {
        let table = [
            ("read", "read"),
            ("list", "read"),
            ("write", "edit"),
            ("edit", "edit"),
            ("apply_patch", "edit"),
            ("sync_to_main", "edit"),
            ("glob", "search"),
            ("grep", "search"),
            ("symbols", "search"),
            ("bash", "execute"),
            ("webfetch", "fetch"),
            ("browser_navigate", "fetch"),
            ("browser_click", "other"),
            ("task", "think"),
            ("my_plugin_tool", "other"),
        ];
        for (tool, want) in table {
            assert_eq!(kind(tool, json!({})), want, "{tool}");
        }
    }

    #[test]
    fn titles_say_what_a_call_does() {
        let dir = Path::new("/w");
        let t = |tool: &str, args: Value| call_title(tool, &args, dir);
        assert_eq!(t("bash", json!({"command": "ls -la"})), "Run `ls -la`");
        assert_eq!(t("bash", Value::Null), "bash");
        assert_eq!(
            t("write", json!({"filePath": "src/app.py"})),
            "Write src/app.py"
        );
        assert_eq!(
            t("webfetch", json!({"url": "https://example.org"})),
            "Fetch https://example.org"
        );
    }

    #[test]
    fn a_patch_that_only_deletes_or_moves_says_so() {
        let delete = "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch";
        assert_eq!(kind("apply_patch", json!({"patch": delete})), "delete");
        let mv =
            "*** Begin Patch\n*** Update File: a.rs\n*** Move to: b.rs\n@@\n-x\n+y\n*** End Patch";
        assert_eq!(kind("apply_patch", json!({"patch": mv})), "move");
        let mixed = format!("{delete}\n*** Add File: new.txt\n+hi");
        assert_eq!(kind("apply_patch", json!({"patch": mixed})), "edit");
    }

    #[test]
    fn locations_are_absolute_with_the_read_line() {
        let dir = Path::new("/w");
        let loc = |tool: &str, args: Value| {
            serde_json::to_value(tool_locations(tool, &args, dir)).unwrap()
        };
        assert_eq!(
            loc("read", json!({"filePath": "a.rs", "offset": 7})),
            json!([{"path": "/w/a.rs", "line": 7}])
        );
        assert_eq!(
            loc("edit", json!({"filePath": "/x/b.rs"})),
            json!([{"path": "/x/b.rs"}])
        );
        assert_eq!(
            loc(
                "apply_patch",
                json!({"patch": "*** Update File: a.rs\n*** Move to: c/b.rs"})
            ),
            json!([{"path": "/w/a.rs"}, {"path": "/w/c/b.rs"}])
        );
        assert_eq!(loc("bash", json!({"command": "ls"})), json!([]));
    }

    #[test]
    fn stop_reasons() {
        let s = |end, fin| serde_json::to_value(stop_reason(end, fin)).unwrap();
        assert_eq!(s(TurnEnd::Answered, Some("stop")), json!("end_turn"));
        assert_eq!(s(TurnEnd::Answered, Some("length")), json!("max_tokens"));
        assert_eq!(
            s(TurnEnd::Answered, Some("content_filter")),
            json!("refusal")
        );
        assert_eq!(s(TurnEnd::MaxSteps, None), json!("max_turn_requests"));
        assert_eq!(s(TurnEnd::Aborted, Some("stop")), json!("cancelled"));
    }

    #[test]
    fn a_todo_list_becomes_the_plan_without_cancelled_items() {
        let plan = plan_of(&json!({"todos": [
            {"content": "Write the test", "status": "completed", "priority": "high"},
            {"content": "Fix the bug", "status": "in_progress", "priority": "medium"},
            {"content": "Old idea", "status": "cancelled", "priority": "low"},
        ]}));
        assert_eq!(
            serde_json::to_value(&plan).unwrap(),
            json!({"entries": [
                {"content": "Write the test", "priority": "high", "status": "completed"},
                {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
            ]})
        );
    }
}
