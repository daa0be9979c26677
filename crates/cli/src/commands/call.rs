//! `podcode tool call <id> '<json>' [--yes] [--json]`: one call through the whole pipeline
//! in the current directory, as a model would make it. Live metadata and warnings go to
//! stderr while it runs; the model-facing output goes to stdout; title, truncation and
//! metadata follow on stderr. Exit status 0 on success, 1 with the model's error text.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use podcode_core::CallStatus;
use podcode_core::call_text::{Progress, outcome_json, outcome_notes, progress};
use podcode_protocol::sanitize_for_terminal as clean;
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
        crate::start::warn_tool_errors(&engine).await;
        let tools = engine
            .open_tool_session("cli", &format!("podcode tool call {id}"), &[])
            .await?;
        let session = tools.id().to_string();
        answer_asks(tools.port(), Answerer::pick(yes));
        let mut events = tools.subscribe();
        let printer = tokio::spawn(async move {
            while let Ok(event) = events.recv().await {
                match progress(&event) {
                    Progress::Line(line) => eprintln!("{line}"),
                    Progress::Done => break,
                    Progress::Nothing => {}
                }
            }
        });
        let abort = CancellationToken::new();
        podcode_core::one_turn::cancel_on_ctrl_c(&abort);
        let outcome = tools.call(&id, args, abort).await;
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), printer).await;
        engine.shutdown().await;

        if json_out {
            let value = outcome_json(&outcome, &session);
            crate::print::json(&value)?;
        } else if outcome.status == CallStatus::Completed {
            if !outcome.result.title.is_empty() {
                eprintln!("● {} — {}", outcome.tool, clean(&outcome.result.title));
            }
            // The output is shown as the model reads it, without adding a blank line.
            let text = clean(&outcome.model_text);
            print!("{text}{}", if text.ends_with('\n') { "" } else { "\n" });
            for note in outcome_notes(&outcome, &session) {
                eprintln!("{note}");
            }
        } else {
            eprintln!("{}", clean(&outcome.model_text));
        }
        Ok(ExitCode::from(u8::from(
            outcome.status != CallStatus::Completed,
        )))
    })
}
