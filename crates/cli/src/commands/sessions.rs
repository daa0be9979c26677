//! `podcode sessions`: list stored sessions (newest first), `show ID` prints a session's
//! transcript, `export ID` writes it as JSON (session, messages with their parts, tool
//! calls, changes) to stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use podcode_agent::{StepStatus, StoredPart};
use podcode_store::{SessionRow, Store};
use serde_json::json;

use crate::app::App;

#[derive(Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
    /// Also list sessions of single `podcode tool call`s.
    #[arg(long)]
    pub all: bool,
    /// Machine-readable list.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// Print a session's transcript.
    Show {
        /// The session id (ses_…, see `podcode sessions`).
        id: String,
    },
    /// Write a session as JSON to stdout.
    Export {
        /// The session id (ses_…, see `podcode sessions`).
        id: String,
    },
}

pub fn run(cwd: Option<PathBuf>, args: SessionsArgs) -> Result<ExitCode> {
    let app = App::load(cwd)?;
    let store = app.open_store()?;
    match args.command {
        None => list(&store, args.all, args.json),
        Some(SessionsCommand::Show { id }) => {
            let session = find(&store, &id)?;
            print!("{}", transcript(&store, &session)?);
            Ok(ExitCode::SUCCESS)
        }
        Some(SessionsCommand::Export { id }) => {
            let session = find(&store, &id)?;
            println!(
                "{}",
                serde_json::to_string_pretty(&export(&store, &session)?)?
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn find(store: &Store, id: &str) -> Result<SessionRow> {
    match store.session(id)? {
        Some(s) => Ok(s),
        None => bail!("no session with id {id} (see `podcode sessions`)"),
    }
}

fn time(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.replace('T', " ").trim_end_matches('Z').to_string()
}

fn list(store: &Store, all: bool, json_out: bool) -> Result<ExitCode> {
    let sessions: Vec<SessionRow> = store
        .list_sessions()?
        .into_iter()
        .filter(|s| all || s.agent != "cli")
        .collect();
    if json_out {
        println!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        eprintln!("no sessions yet; start one with `podcode run \"…\"`");
        return Ok(ExitCode::SUCCESS);
    }
    for s in sessions {
        println!(
            "{}  {}  {:<6}  {:<28}  {}",
            s.id,
            time(s.updated_at),
            s.agent,
            s.model.as_deref().unwrap_or("-"),
            s.title
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}\n"))
        .collect::<String>()
}

/// The conversation as a person reads it.
pub fn transcript(store: &Store, s: &SessionRow) -> Result<String> {
    let mut out = format!(
        "session {} · {} · agent {} · model {}\n{}\n",
        s.id,
        time(s.created_at),
        s.agent,
        s.model.as_deref().unwrap_or("-"),
        s.cwd
    );
    for m in store.messages(&s.id)? {
        let synthetic = m.content.get("synthetic").and_then(|v| v.as_bool()) == Some(true);
        let who = match (m.role.as_str(), synthetic) {
            ("user", true) => "podcode (to the model)",
            ("user", false) => "user",
            ("assistant", _) => "assistant",
            (other, _) => other,
        };
        out.push_str(&format!("\n── {who} · {} · {}\n", time(m.created_at), m.id));
        for part in store.parts(&m.id)? {
            match StoredPart::parse(&part) {
                StoredPart::Text(t) => {
                    out.push_str(&indent(&t.text, "  "));
                    if t.interrupted {
                        out.push_str("  [interrupted]\n");
                    }
                }
                StoredPart::Reasoning(r) => out.push_str(&indent(&r.text, "  · ")),
                StoredPart::File(f) => {
                    let state = if f.failed { "not read" } else { "read" };
                    out.push_str(&format!("  📎 {} [{state}]\n", f.path));
                }
                StoredPart::Tool(t) => {
                    let call = store.tool_call(&t.call_id)?;
                    let (state, title, output) = match &call {
                        Some(c) => (c.state.to_string(), c.title.clone(), c.output.clone()),
                        None => ("not run".into(), String::new(), String::new()),
                    };
                    out.push_str(&format!(
                        "  ▸ {} {} [{state}] {title}\n",
                        t.name, t.arguments
                    ));
                    let lines: Vec<&str> = output.lines().collect();
                    for l in lines.iter().take(12) {
                        out.push_str(&format!("    │ {l}\n"));
                    }
                    if lines.len() > 12 {
                        out.push_str(&format!("    │ … {} more lines\n", lines.len() - 12));
                    }
                }
                StoredPart::Step(st) => {
                    let u = st.usage;
                    let mut line = format!(
                        "  (step {} {} · {} in / {} out tokens",
                        st.step,
                        st.status.as_str(),
                        u.input_tokens,
                        u.output_tokens
                    );
                    if let Some(c) = u.cost {
                        line.push_str(&format!(" · ${c:.4}"));
                    }
                    line.push(')');
                    if st.status != StepStatus::Completed
                        && let Some(e) = &st.error
                    {
                        line.push_str(&format!(": {e}"));
                    }
                    out.push_str(&line);
                    out.push('\n');
                }
                StoredPart::Other(kind, _) => out.push_str(&format!("  ({kind} part)\n")),
            }
        }
    }
    Ok(out)
}

/// Everything stored about a session, as one JSON document.
pub fn export(store: &Store, s: &SessionRow) -> Result<serde_json::Value> {
    let mut messages = Vec::new();
    for m in store.messages(&s.id)? {
        let parts = store.parts(&m.id)?;
        let mut v = serde_json::to_value(&m)?;
        v["parts"] = serde_json::to_value(parts)?;
        messages.push(v);
    }
    Ok(json!({
        "session": s,
        "messages": messages,
        "tool_calls": store.tool_calls(&s.id)?,
        "changes": store.changes(Some(&s.id), None)?,
    }))
}
