//! `session/load`: a stored conversation replayed to the client as the updates it would
//! have seen live — the user's prompts, the answers and reasoning, and every tool call
//! with its final status, its arguments, its output and the diffs of the changes it
//! journaled — the engine's conversation items — and Podcode's notes (a compaction, what the
//! model was told after a revert) as thoughts. A call's card is titled, kinded and located
//! by the functions the live turn uses (`translate`), so a loaded thread reads as it did
//! live (`Run \`ls\``, not the tool's own stored title).

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, Diff, ResourceLink, SessionUpdate, ToolCall, ToolCallContent,
    ToolCallStatus,
};
use podcode_core::{Engine, ToolCallState};
use podcode_protocol::{Item, compacted_text};

use crate::rpc::{Connection, RpcError};
use crate::translate::{call_title, tool_kind, tool_locations};
use crate::turn::send_update;

/// Sends the stored conversation of `session_id` as `session/update` notifications; `dir`
/// is the session's directory, against which relative paths in arguments resolve.
pub fn replay(
    engine: &Engine,
    conn: &Connection,
    session_id: &str,
    dir: &Path,
) -> Result<(), RpcError> {
    let (items, _) = engine
        .transcript(session_id)
        .map_err(|e| RpcError::internal(e.to_string()))?;
    for item in items {
        for update in updates(engine, item, dir) {
            send_update(conn, session_id, update);
        }
    }
    Ok(())
}

fn updates(engine: &Engine, item: Item, dir: &Path) -> Vec<SessionUpdate> {
    match item {
        Item::User { text, files, .. } => {
            let mut out = Vec::new();
            if !text.is_empty() {
                out.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                    text.into(),
                )));
            }
            for f in files {
                let name = std::path::Path::new(&f)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| f.clone());
                let link = ResourceLink::new(name, format!("file://{f}"));
                out.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                    ContentBlock::ResourceLink(link),
                )));
            }
            out
        }
        Item::Assistant { text, .. } => {
            vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(
                text.into(),
            ))]
        }
        Item::Reasoning { text, .. } => {
            vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                text.into(),
            ))]
        }
        Item::Tool(view) => {
            let mut content: Vec<ToolCallContent> = engine
                .changes(None, Some(&view.call_id))
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c.reverts.is_none())
                .map(|c| {
                    ToolCallContent::from(
                        Diff::new(PathBuf::from(c.file), c.new_content.unwrap_or_default())
                            .old_text(c.old_content),
                    )
                })
                .collect();
            if !view.output.is_empty() {
                content.push(ToolCallContent::from(view.output));
            }
            let status = match view.state {
                ToolCallState::Completed => ToolCallStatus::Completed,
                _ => ToolCallStatus::Failed,
            };
            vec![SessionUpdate::ToolCall(
                ToolCall::new(view.call_id, call_title(&view.tool, &view.args, dir))
                    .kind(tool_kind(&view.tool, &view.args))
                    .locations(tool_locations(&view.tool, &view.args, dir))
                    .raw_input((!view.args.is_null()).then_some(view.args))
                    .status(status)
                    .content(content),
            )]
        }
        // Podcode's own notes: shown as the agent's thoughts, as they are not its answer.
        Item::Compaction {
            reason,
            pruned,
            summarized,
            tokens_before,
            tokens_after,
        } => vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(
            compacted_text(&reason, pruned, summarized, tokens_before, tokens_after).into(),
        ))],
        Item::RevertNote { text } => vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(
            text.into(),
        ))],
    }
}
