//! `podcode tool call <id> '<json>' [--yes] [--json]`: one call through the whole pipeline
//! in the current directory, as a model would make it. Live metadata and warnings go to
//! stderr while it runs; the model-facing output goes to stdout; title, truncation and
//! metadata follow on stderr. Exit status 0 on success, 1 with the model's error text.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use podcode_core::CallStatus;
use podcode_protocol::{Event, sanitize_for_terminal as clean};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::asker::{Answerer, answer_asks};
use crate::start::{tokio_runtime, trusted_engine};

#[derive(Subcommand)]
pub enum ToolCommand {
    /// Call a tool: `podcode tool call read '{"filePath":"README.md"}'`.
    Call {
        /// The tool id (as listed by `podcode tools`).
        id: String,
        /// Arguments as one JSON object; `-` reads them from stdin.
        #[arg(default_value = "{}")]
        args: String,
        /// Allow every permission ask (deny rules still hold).
        #[arg(long, short = 'y')]
        yes: bool,
        /// Print the whole outcome as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cwd: Option<PathBuf>, cmd: ToolCommand) -> Result<ExitCode> {
    let ToolCommand::Call {
        id,
        args,
        yes,
        json: json_out,
    } = cmd;
    let args = if args == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        args
    };
    let engine = trusted_engine(cwd)?;
    tokio_runtime()?.block_on(async move {
        // Load problems are startup warnings: the call still runs with what did load.
        for (message, source) in engine.tool_errors().await {
            eprintln!("warning: {}", clean(&format!("{message} ({source})")));
        }
        let tools = engine
            .open_tool_session("cli", &format!("podcode tool call {id}"), &[])
            .await?;
        let session = tools.id().to_string();
        answer_asks(tools.port(), Answerer::pick(yes));
        let mut events = tools.subscribe();
        let printer = tokio::spawn(async move {
            while let Ok(event) = events.recv().await {
                match event {
                    Event::ToolMetadata { title, metadata, .. } => {
                        let mut line = String::from("…");
                        if let Some(t) = title {
                            line.push_str(&format!(" {t}"));
                        }
                        if let Some(m) = metadata {
                            line.push_str(&format!(" {m}"));
                        }
                        eprintln!("{}", clean(&line));
                    }
                    Event::Warning { message } => eprintln!("warning: {}", clean(&message)),
                    Event::ToolFinished { .. } | Event::ToolFailed { .. } => break,
                    _ => {}
                }
            }
        });
        let abort = CancellationToken::new();
        let on_ctrl_c = abort.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\naborting…");
                on_ctrl_c.cancel();
            }
        });
        let outcome = tools.call(&id, args, abort).await;
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), printer).await;
        engine.shutdown().await;

        if json_out {
            let value = json!({
                "call_id": outcome.call_id,
                "session_id": session,
                "tool": outcome.tool,
                "status": outcome.status,
                "output": outcome.model_text,
                "title": outcome.result.title,
                "metadata": outcome.result.metadata,
                "attachments": outcome.result.attachments,
                "truncated": outcome.truncated.as_ref().map(|t| json!({
                    "spill_path": t.spill_error.is_none().then_some(&t.spill_path), "total_lines": t.total_lines, "total_bytes": t.total_bytes,
                    "cut_lines": t.cut_lines, "cut_bytes": t.cut_bytes, "spill_error": t.spill_error,
                })),
                "changes": outcome.changes,
                "duration_ms": outcome.duration.as_millis() as u64,
            });
            println!("{}", podcode_protocol::sanitize_json(&serde_json::to_string_pretty(&value)?));
        } else if outcome.status == CallStatus::Completed {
            if !outcome.result.title.is_empty() {
                eprintln!("● {} — {}", outcome.tool, clean(&outcome.result.title));
            }
            // The output is shown as the model reads it, without adding a blank line.
            let text = clean(&outcome.model_text);
            if text.ends_with('\n') {
                print!("{text}");
            } else {
                println!("{text}");
            }
            if let Some(t) = &outcome.truncated
                && let Some(why) = &t.spill_error
            {
                eprintln!(
                    "truncated: {} of {} lines cut; the full output could not be saved: {why}",
                    t.cut_lines, t.total_lines
                );
            } else if let Some(t) = &outcome.truncated {
                eprintln!(
                    "truncated: {} of {} lines cut; full output in {}",
                    t.cut_lines,
                    t.total_lines,
                    t.spill_path.display()
                );
            }
            for a in &outcome.result.attachments {
                eprintln!("attachment: {} ({} bytes of URL)", a.mime, a.url.len());
            }
            if !outcome.result.metadata.is_null() {
                eprintln!("metadata: {}", podcode_protocol::sanitize_json(&outcome.result.metadata.to_string()));
            }
            if !outcome.changes.is_empty() {
                eprintln!("changes: {} (see `podcode changes --session {session}`)", clean(&outcome.changes.join(", ")));
            }
        } else {
            eprintln!("{}", clean(&outcome.model_text));
        }
        let code = match outcome.status {
            CallStatus::Completed => ExitCode::SUCCESS,
            _ => ExitCode::FAILURE,
        };
        Ok(code)
    })
}
