//! The UI's whole state, updated by runtime events (`apply_event`) and by the event loop
//! (`tick`, modal and view changes). Rendering reads it and nothing else, so every view
//! can be drawn into a test backend from a hand-built state.

use podcode_protocol::{Event, PermissionRequest, RecordedChange, StepUsage, TurnEnd};

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    User(String),
    Assistant {
        message_id: String,
        text: String,
    },
    Reasoning {
        message_id: String,
        text: String,
    },
    Tool(ToolCard),
    /// Warnings, turn endings and other lines from Podcode itself.
    Notice(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Running,
    Done,
    Failed,
    Denied,
    Interrupted,
    TimedOut,
}

impl ToolStatus {
    pub fn label(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Denied => "denied",
            Self::Interrupted => "interrupted",
            Self::TimedOut => "timed out",
        }
    }
}

/// A tool call as the transcript shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    pub call_id: String,
    pub tool: String,
    pub title: String,
    pub status: ToolStatus,
    /// Milliseconds since start while running (advanced by `tick`), the duration after.
    pub elapsed_ms: u64,
    /// The output when done, the error when it failed.
    pub output: String,
    pub attachments: usize,
    pub spill_path: Option<String>,
    pub expanded: bool,
    /// The unified diff of a finished file change (`metadata.diff` of edit/write/apply_patch).
    pub diff: Option<String>,
}

/// A permission ask waiting for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionModal {
    pub tool: String,
    pub call_id: String,
    pub request: PermissionRequest,
    /// `Some` while the user types the feedback of a rejection.
    pub feedback: Option<String>,
}

/// The Changes view: the session's journal, and what the last revert said.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChangesView {
    pub changes: Vec<ChangeItem>,
    pub selected: usize,
    /// A refused revert: what was asked and the refusal with its diff; `f` forces it.
    pub conflict: Option<(crate::changes_view::RevertScope, String)>,
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangeItem {
    pub change: RecordedChange,
    /// The prompt (user message id and first line) of the turn that made the change.
    pub turn: Option<(String, String)>,
    /// The tool call that made it, as the list shows it (`write — notes.txt`).
    pub call_label: String,
    pub reverted: bool,
    /// The file path relative to the working directory when it is inside it.
    pub display: String,
    pub diff: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    #[default]
    Transcript,
    Changes,
}

/// Everything the screen shows.
#[derive(Debug, Clone, Default)]
pub struct AppState {
    pub entries: Vec<Entry>,
    pub input: crate::input::InputBuffer,
    pub history: Vec<String>,
    pub history_pos: Option<usize>,
    pub model: String,
    pub agent: String,
    pub title: String,
    pub cwd: String,
    pub session_id: String,
    pub usage: StepUsage,
    pub busy: bool,
    pub modal: Option<PermissionModal>,
    pub screen: Screen,
    pub changes: ChangesView,
    /// Lines scrolled up from the bottom of the transcript (0 = follow the end).
    pub scroll: u16,
    /// Advances with every tick; drives the spinner.
    pub frame: u64,
    /// Set after the first Ctrl-C; a second one quits.
    pub quit_armed: bool,
    pub show_help: bool,
    pub no_color: bool,
    /// What `/tools` shows: the merged tool set with sources, then load problems.
    pub tools_info: Vec<String>,
    /// The open `/sessions`, `/model` or `/agent` picker.
    pub picker: Option<crate::picker::Picker>,
    /// Prompts sent while a turn ran, with their attached files: each goes when the
    /// previous turn ends.
    pub queued: Vec<(String, Vec<String>)>,
    /// Rendered transcript entries, reused across frames (see `transcript_cache`).
    pub render_cache: std::cell::RefCell<crate::transcript_cache::TranscriptCache>,
    /// The open `@path` completion popup (see `mentions`).
    pub completion: Option<crate::mentions::Completion>,
    /// The workspace file index for `@path` completion, built on first use.
    pub file_index: Option<std::sync::Arc<crate::mentions::FileIndex>>,
}

impl AppState {
    pub fn new(model: &str, agent: &str, cwd: &str, session_id: &str) -> Self {
        Self {
            model: model.into(),
            agent: agent.into(),
            cwd: cwd.into(),
            session_id: session_id.into(),
            ..Default::default()
        }
    }

    /// Running tool calls, for the status line.
    pub fn running_tools(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Tool(c) if c.status == ToolStatus::Running => Some(c.tool.as_str()),
                _ => None,
            })
            .collect()
    }

    fn card(&mut self, call_id: &str) -> Option<&mut ToolCard> {
        self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Tool(c) if c.call_id == call_id => Some(c),
            _ => None,
        })
    }

    /// Advances spinners and the elapsed time of running calls by `ms`.
    pub fn tick(&mut self, ms: u64) {
        self.frame = self.frame.wrapping_add(1);
        for e in &mut self.entries {
            if let Entry::Tool(c) = e
                && c.status == ToolStatus::Running
            {
                c.elapsed_ms += ms;
            }
        }
    }

    /// The user sent `text`.
    pub fn push_user(&mut self, text: &str) {
        self.entries.push(Entry::User(text.to_string()));
        if self.title.is_empty() {
            self.title = text.lines().next().unwrap_or("").chars().take(60).collect();
        }
        self.busy = true;
        self.scroll = 0;
    }

    pub fn apply_event(&mut self, event: &Event) {
        match event {
            Event::TurnStarted { agent, model, .. } => {
                self.agent = agent.clone();
                self.model = model.clone();
                self.busy = true;
            }
            Event::TextDelta { message_id, text } => self.append(message_id, text, false),
            Event::ReasoningDelta { message_id, text } => self.append(message_id, text, true),
            Event::ToolStarted { call_id, tool, .. } if self.card(call_id).is_none() => {
                self.entries.push(Entry::Tool(ToolCard {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    title: String::new(),
                    status: ToolStatus::Running,
                    elapsed_ms: 0,
                    output: String::new(),
                    attachments: 0,
                    spill_path: None,
                    expanded: false,
                    diff: None,
                }));
            }
            Event::ToolMetadata {
                call_id,
                title: Some(t),
                ..
            } => {
                if let Some(c) = self.card(call_id) {
                    c.title = t.clone();
                }
            }
            Event::ToolFinished {
                call_id,
                result,
                spill_path,
                duration_ms,
                ..
            } => {
                if let Some(c) = self.card(call_id) {
                    c.status = ToolStatus::Done;
                    if !result.title.is_empty() {
                        c.title = result.title.clone();
                    }
                    c.output = result.output.clone();
                    c.attachments = result.attachments.len();
                    c.spill_path = spill_path.clone();
                    c.elapsed_ms = *duration_ms;
                    c.diff = result
                        .metadata
                        .get("diff")
                        .and_then(|d| d.as_str())
                        .filter(|d| !d.is_empty())
                        .map(str::to_string);
                }
            }
            Event::ToolFailed {
                call_id,
                tool,
                error,
                duration_ms,
            } => {
                if self.card(call_id).is_none() {
                    self.apply_event(&Event::ToolStarted {
                        session_id: String::new(),
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        args: serde_json::Value::Null,
                    });
                }
                if let Some(c) = self.card(call_id) {
                    c.status = failure_kind(error);
                    c.output = error.clone();
                    c.elapsed_ms = *duration_ms;
                }
            }
            Event::Warning { message } => self.entries.push(Entry::Notice(format!("⚠ {message}"))),
            Event::Configured { agent, model } => {
                self.agent = agent.clone();
                self.model = model.clone();
                self.entries.push(Entry::Notice(format!(
                    "next turns use agent {agent} with {model}"
                )));
            }
            Event::ToolsReloaded { tools } => {
                self.tools_info = tools.clone();
                self.entries.push(Entry::Notice(format!(
                    "tools reloaded: {} tool(s) offered (/tools lists them)",
                    tools.iter().filter(|t| !t.starts_with('⚠')).count()
                )));
            }
            Event::StepRetry { attempt, error, .. } => self.entries.push(Entry::Notice(format!(
                "↻ the response was cut off ({error}); retrying (attempt {attempt})"
            ))),
            Event::StepFinished { usage, .. } => self.usage.add(usage),
            Event::TurnFinished { summary, .. } => {
                self.busy = false;
                let end = match summary.end {
                    TurnEnd::Answered => "done".to_string(),
                    TurnEnd::MaxSteps => "stopped at the step limit".to_string(),
                    TurnEnd::Aborted => "aborted".to_string(),
                    TurnEnd::Error => format!(
                        "failed: {}",
                        summary
                            .error
                            .clone()
                            .unwrap_or_else(|| "unknown error".into())
                    ),
                };
                let files = if summary.files.is_empty() {
                    String::new()
                } else {
                    format!(
                        " · {} file(s) changed (ctrl-g: Changes)",
                        summary.files.len()
                    )
                };
                self.entries.push(Entry::Notice(format!(
                    "── {end} · {} step(s) · {} tool call(s){files}",
                    summary.steps, summary.tool_calls
                )));
            }
            _ => {}
        }
    }

    fn append(&mut self, message_id: &str, text: &str, reasoning: bool) {
        if let Some(last) = self.entries.last_mut() {
            match last {
                Entry::Assistant {
                    message_id: m,
                    text: t,
                } if !reasoning && m == message_id => {
                    t.push_str(text);
                    return;
                }
                Entry::Reasoning {
                    message_id: m,
                    text: t,
                } if reasoning && m == message_id => {
                    t.push_str(text);
                    return;
                }
                _ => {}
            }
        }
        let (message_id, text) = (message_id.to_string(), text.to_string());
        self.entries.push(if reasoning {
            Entry::Reasoning { message_id, text }
        } else {
            Entry::Assistant { message_id, text }
        });
    }

    /// Marks the card of a call whose permission the user rejected.
    pub fn mark_denied(&mut self, call_id: &str) {
        if let Some(c) = self.card(call_id) {
            c.status = ToolStatus::Denied;
        }
    }

    /// Expands or collapses the newest finished tool card's output.
    pub fn toggle_last_output(&mut self) {
        if let Some(c) = self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Tool(c) if c.status != ToolStatus::Running => Some(c),
            _ => None,
        }) {
            c.expanded = !c.expanded;
        }
    }
}

/// Denied, interrupted and timed-out calls end as `ToolFailed` too; their model-facing text
/// says which.
fn failure_kind(error: &str) -> ToolStatus {
    if error.starts_with("Permission denied") || error.starts_with("The user rejected") {
        ToolStatus::Denied
    } else if error.contains("aborted by the user") {
        ToolStatus::Interrupted
    } else if error.contains(" tool timed out: ") {
        ToolStatus::TimedOut
    } else {
        ToolStatus::Failed
    }
}
