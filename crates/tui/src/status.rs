//! The status line component: which model and agent the session runs with, its title, the
//! tokens (and cost) used so far — the session's with its sub-agents', its own beside them
//! when sub-agents spent any — and how full the context window is, the working directory, whether a turn is running, and the
//! "press ctrl-c again" warning. Turn events update it (`apply_event`); it draws the bottom
//! row, with the running tools the transcript reports.

use podcode_protocol::{Event, StepUsage};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Paragraph;

use crate::style::Theme;

/// The status line's content.
#[derive(Debug, Clone, Default)]
pub struct StatusLine {
    /// The model in use.
    pub model: String,
    /// The agent profile in use.
    pub agent: String,
    /// The session's title.
    pub title: String,
    /// The working directory.
    pub cwd: String,
    /// The session's own totals.
    pub usage: StepUsage,
    /// What its sub-agents (at any depth) spent: added to `usage` for the shown total.
    pub sub_agents: StepUsage,
    /// Prompt tokens of the last request and the model's context window (0: unknown).
    pub context: (u64, u64),
    /// A turn is running.
    pub busy: bool,
    /// Set after the first Ctrl-C; a second one quits.
    pub quit_armed: bool,
}

impl StatusLine {
    /// A status line for a fresh session.
    pub fn new(model: &str, agent: &str, cwd: &str) -> Self {
        Self {
            model: model.into(),
            agent: agent.into(),
            cwd: cwd.into(),
            ..Default::default()
        }
    }

    /// The user sent `text`: a turn runs, and an untitled session takes its first line.
    pub fn prompted(&mut self, text: &str) {
        if self.title.is_empty() {
            self.title = text.lines().next().unwrap_or("").chars().take(60).collect();
        }
        self.busy = true;
    }

    /// The stored totals of a session (resumed or opened): its own, and with its
    /// sub-agents' (`tree`).
    pub fn set_totals(&mut self, own: StepUsage, tree: StepUsage) {
        self.usage = own;
        self.sub_agents = StepUsage {
            input_tokens: tree.input_tokens.saturating_sub(own.input_tokens),
            output_tokens: tree.output_tokens.saturating_sub(own.output_tokens),
            cache_read_tokens: tree.cache_read_tokens.saturating_sub(own.cache_read_tokens),
            cache_write_tokens: tree
                .cache_write_tokens
                .saturating_sub(own.cache_write_tokens),
            reasoning_tokens: tree.reasoning_tokens.saturating_sub(own.reasoning_tokens),
            cost: match (tree.cost, own.cost) {
                (Some(t), o) => Some((t - o.unwrap_or(0.0)).max(0.0)).filter(|c| *c > 0.0),
                (None, _) => None,
            },
        };
    }

    /// The status line's part of a runtime event (the transcript takes the rest).
    pub fn apply_event(&mut self, event: &Event) {
        match event {
            // A sub-agent's request (at any depth) counts towards the session's total.
            Event::Subagent { event, .. } => {
                let mut inner = event.as_ref();
                while let Event::Subagent { event, .. } = inner {
                    inner = event.as_ref();
                }
                if let Event::StepFinished { usage, .. } = inner {
                    self.sub_agents.add(usage);
                }
            }
            Event::TurnStarted { agent, model, .. } => {
                self.agent = agent.clone();
                self.model = model.clone();
                self.busy = true;
            }
            Event::Configured { agent, model } => {
                self.agent = agent.clone();
                self.model = model.clone();
            }
            Event::StepFinished { usage, .. } => self.usage.add(usage),
            // The session's stored totals (summaries and earlier turns included) win.
            Event::Usage {
                total,
                context_tokens,
                context_window,
                ..
            } => {
                self.usage = *total;
                self.context = (*context_tokens, *context_window);
            }
            Event::TurnFinished { .. } => self.busy = false,
            _ => {}
        }
    }

    /// Draws the line; `running` are the tools whose calls are running.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme, running: &[&str]) {
        let mut u = self.usage;
        u.add(&self.sub_agents);
        // (priority, text): when the line is too narrow the least important parts go
        // whole — a part is never cut mid-number.
        let mut parts: Vec<(u8, String)> = vec![(3, self.model.clone()), (4, self.agent.clone())];
        if !self.title.is_empty() {
            parts.push((5, short_title(&self.title, 30)));
        }
        let mut tokens = format!("{}↑ {}↓", u.input_tokens, u.output_tokens);
        if let Some(c) = u.cost {
            tokens.push_str(&format!(" ${c:.4}"));
        }
        if self.sub_agents != StepUsage::default() {
            match self.usage.cost {
                Some(c) => tokens.push_str(&format!(" (own ${c:.4})")),
                None => tokens.push_str(&format!(
                    " (own {}↑ {}↓)",
                    self.usage.input_tokens, self.usage.output_tokens
                )),
            }
        }
        if let (used @ 1.., window @ 1..) = self.context {
            // Rounded as the web page rounds, so both show the same figure.
            tokens.push_str(&format!(" ctx {}%", (used * 100 + window / 2) / window));
        }
        parts.push((2, tokens));
        parts.push((6, self.cwd.clone()));
        if !running.is_empty() {
            parts.push((1, format!("running: {}", running.join(", "))));
        }
        if self.quit_armed {
            parts.insert(0, (0, "ctrl-c again to quit".into()));
        }
        let text = fit(parts, area.width as usize);
        let style = if theme.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().bg(Color::DarkGray).fg(Color::White)
        };
        frame.render_widget(Paragraph::new(text).style(style), area);
    }
}

/// `title` in at most `max` characters, cut between words with `…`.
fn short_title(title: &str, max: usize) -> String {
    if title.chars().count() <= max {
        return title.to_string();
    }
    let head: String = title.chars().take(max.saturating_sub(1)).collect();
    let cut = match head.rfind(' ') {
        Some(space) if space > 0 => head[..space].trim_end(),
        _ => head.as_str(),
    };
    format!("{cut}…")
}

/// The parts joined with ` · ` after a space, dropping the least important (highest
/// priority number) whole until the line fits `width`; the last one left is cut with `…`.
fn fit(mut parts: Vec<(u8, String)>, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let line = |parts: &[(u8, String)]| {
        let texts: Vec<&str> = parts.iter().map(|(_, t)| t.as_str()).collect();
        format!(" {}", texts.join(" · "))
    };
    while parts.len() > 1 && line(&parts).width() > width {
        if let Some(worst) = (0..parts.len()).max_by_key(|i| parts[*i].0) {
            parts.remove(worst);
        }
    }
    let text = line(&parts);
    if text.width() <= width {
        return text;
    }
    // Even then, cut between words.
    let mut cut = String::new();
    for c in text.chars() {
        if (cut.width() + c.to_string().width()) >= width {
            break;
        }
        cut.push(c);
    }
    if let Some(space) = cut.trim_end().rfind(' ')
        && space > 0
    {
        cut.truncate(space + 1);
    }
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn line(status: &StatusLine, running: &[&str]) -> String {
        let mut terminal = Terminal::new(TestBackend::new(100, 1)).expect("terminal");
        terminal
            .draw(|f| status.draw(f, f.area(), Theme::default(), running))
            .expect("draw");
        let buf = terminal.backend().buffer();
        (0..100).map(|x| buf[(x, 0)].symbol()).collect::<String>()
    }

    #[test]
    fn a_prompt_titles_the_session_and_the_line_shows_what_runs() {
        let mut s = StatusLine::new("openai/gpt-4.1", "build", "/work/repo");
        s.prompted("fix the parser\nand the tests");
        s.prompted("second prompt");
        assert!(s.busy);
        assert_eq!(s.title, "fix the parser");
        s.quit_armed = true;
        let text = line(&s, &["bash"]);
        assert!(
            text.starts_with(" ctrl-c again to quit · openai/gpt-4.1 · build · fix the parser · 0↑ 0↓ · /work/repo · running: bash"),
            "{text}"
        );
        s.apply_event(&Event::TurnFinished {
            session_id: "ses_1".into(),
            summary: podcode_protocol::TurnSummary {
                session_id: "ses_1".into(),
                end: podcode_protocol::TurnEnd::Answered,
                steps: 1,
                tool_calls: 0,
                usage: StepUsage::default(),
                changes: vec![],
                files: vec![],
                error: None,
            },
        });
        assert!(!s.busy);
    }

    #[test]
    fn session_totals_and_context_fill_come_from_usage_events() {
        let mut s = StatusLine::new("anthropic/claude-sonnet-4-5", "build", "/w");
        s.apply_event(&Event::Usage {
            session_id: "ses_1".into(),
            total: StepUsage {
                input_tokens: 12_000,
                output_tokens: 300,
                cost: Some(0.0405),
                ..Default::default()
            },
            context_tokens: 50_000,
            context_window: 200_000,
        });
        let text = line(&s, &[]);
        assert!(
            text.contains(" · 12000↑ 300↓ $0.0405 ctx 25% · /w"),
            "{text}"
        );
    }

    #[test]
    fn sub_agent_steps_add_to_the_total_and_the_own_figures_stay_beside_it() {
        let mut s = StatusLine::new("m", "build", "/w");
        let step = |input, output, cost| Event::StepFinished {
            session_id: "ses_child".into(),
            message_id: "msg_1".into(),
            step: 1,
            status: "completed".into(),
            finish_reason: None,
            usage: StepUsage {
                input_tokens: input,
                output_tokens: output,
                cost: Some(cost),
                ..Default::default()
            },
        };
        let wrap = |event: Event| Event::Subagent {
            session_id: "ses_child".into(),
            parent_id: "ses_1".into(),
            call_id: "call_1".into(),
            agent: "general".into(),
            description: "d".into(),
            event: Box::new(event),
        };
        s.apply_event(&step(1000, 100, 0.012));
        s.apply_event(&wrap(step(2000, 100, 0.022)));
        // A sub-agent of the sub-agent counts too.
        s.apply_event(&wrap(wrap(step(2000, 50, 0.021))));
        let text = line(&s, &[]);
        assert!(
            text.contains(" · 5000↑ 250↓ $0.0550 (own $0.0120) · /w"),
            "{text}"
        );
        // Resumed: the stored totals, own and with the sub-agents'.
        let mut r = StatusLine::new("m", "build", "/w");
        let own = StepUsage {
            input_tokens: 2500,
            output_tokens: 150,
            cost: Some(0.028),
            ..Default::default()
        };
        let tree = StepUsage {
            input_tokens: 6500,
            output_tokens: 300,
            cost: Some(0.071),
            ..Default::default()
        };
        r.set_totals(own, tree);
        let text = line(&r, &[]);
        assert!(
            text.contains(" · 6500↑ 300↓ $0.0710 (own $0.0280) · /w"),
            "{text}"
        );
    }

    #[test]
    fn a_long_title_is_cut_between_words() {
        assert_eq!(
            short_title("Add a --shout flag to src/greet.py and tests", 30),
            "Add a --shout flag to…"
        );
        assert_eq!(short_title("short", 30), "short");
    }

    #[test]
    fn a_narrow_line_drops_whole_parts_never_half_a_number() {
        let parts = || {
            vec![
                (3, "scripted/test".to_string()),
                (4, "build".to_string()),
                (2, "12000↑ 300↓ $0.0405".to_string()),
                (6, "/work/repo".to_string()),
            ]
        };
        assert_eq!(
            fit(parts(), 100),
            " scripted/test · build · 12000↑ 300↓ $0.0405 · /work/repo"
        );
        assert_eq!(fit(parts(), 40), " scripted/test · 12000↑ 300↓ $0.0405");
        assert_eq!(fit(parts(), 24), " 12000↑ 300↓ $0.0405");
        assert_eq!(fit(parts(), 10), " 12000↑ …");
    }
}
