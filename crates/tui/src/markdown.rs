//! Assistant text as Markdown. `render` parses with pulldown-cmark and returns
//! width-independent `LogicalLine`s (wrapped later by `transcript_cache::wrap`): headings
//! bold with their `#` marks dimmed, strong/emphasis/strikethrough, `inline code`, bullet and
//! numbered lists with hanging indents, block quotes behind a `│ ` gutter, links as
//! `text (url)`, rules, tables in aligned columns (`table`), and code blocks behind a `┆ `
//! gutter, highlighted by `highlight`.
//! Text still streaming (an unclosed fence, a half-written `**`) parses like any other
//! Markdown: an open fence runs to the end, a lone `**` stays literal.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

mod table;

use crate::highlight;
use crate::transcript_cache::{LogicalLine, WrapMode};
use table::TableBuilder;

/// What a nesting level adds to the gutter.
enum Container {
    Quote,
    /// A list item: its marker (`• `, `3. `) is shown on its first line only.
    Item {
        marker: String,
        shown: bool,
    },
}

/// A list: the next number of an ordered one.
struct List {
    next: Option<u64>,
}

struct Renderer {
    no_color: bool,
    out: Vec<LogicalLine>,
    containers: Vec<Container>,
    lists: Vec<List>,
    /// Inline style modifiers in force (strong, emphasis, link…).
    styles: Vec<Style>,
    line: Vec<Span<'static>>,
    /// A blank line goes before the next block.
    gap: bool,
    /// Inside a code block: its language and the text so far.
    code: Option<(Option<highlight::Lang>, String)>,
    /// Inside a link: its url and its text so far.
    links: Vec<(String, String)>,
    /// Inside a table: its rows so far.
    table: Option<TableBuilder>,
}

impl Renderer {
    fn color(&self, color: Color) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(color)
        }
    }

    fn dim(&self) -> Style {
        self.color(Color::DarkGray)
    }

    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::default(), |acc, s| acc.patch(*s))
    }

    /// The gutters for the next line; marks the innermost unshown item marker as shown.
    fn gutters(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let dim = self.dim();
        let marker_style = self.color(Color::Cyan);
        let (mut first, mut cont) = (String::new(), String::new());
        let mut first_spans = Vec::new();
        let mut cont_spans = Vec::new();
        let flush = |s: &mut String, spans: &mut Vec<Span<'static>>, style: Style| {
            if !s.is_empty() {
                spans.push(Span::styled(std::mem::take(s), style));
            }
        };
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    flush(&mut first, &mut first_spans, Style::default());
                    flush(&mut cont, &mut cont_spans, Style::default());
                    first_spans.push(Span::styled("│ ", dim));
                    cont_spans.push(Span::styled("│ ", dim));
                }
                Container::Item { marker, shown } => {
                    let pad = " ".repeat(marker.chars().count());
                    if *shown {
                        first.push_str(&pad);
                    } else {
                        flush(&mut first, &mut first_spans, Style::default());
                        first_spans.push(Span::styled(marker.clone(), marker_style));
                        *shown = true;
                    }
                    cont.push_str(&pad);
                }
            }
        }
        flush(&mut first, &mut first_spans, Style::default());
        flush(&mut cont, &mut cont_spans, Style::default());
        (first_spans, cont_spans)
    }

    /// Ends the current line of prose, if any.
    fn flush(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.line);
        let (first, cont) = self.gutters();
        self.out.push(LogicalLine::new(spans).gutter(first, cont));
    }

    /// Starts a block: a blank line (keeping quote gutters) when one is due.
    fn block(&mut self) {
        self.flush();
        if self.gap && !self.out.is_empty() {
            let quotes = self
                .containers
                .iter()
                .filter(|c| matches!(c, Container::Quote))
                .count();
            let dim = self.dim();
            let gutter = (0..quotes).map(|_| Span::styled("│", dim)).collect();
            self.out
                .push(LogicalLine::new(Vec::new()).gutter(gutter, Vec::new()));
        }
        self.gap = false;
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        if let Some((_, link_text)) = self.links.last_mut() {
            link_text.push_str(text);
        }
        let style = self.style();
        self.line.push(Span::styled(text.to_string(), style));
    }

    fn code_block(&mut self, lang: Option<highlight::Lang>, code: &str) {
        let gutter = [Span::styled("┆ ", self.dim())];
        let highlighted = highlight::highlight(code, lang, self.no_color);
        for spans in highlighted {
            let (mut first, mut cont) = self.gutters();
            first.extend(gutter.iter().cloned());
            cont.extend(gutter.iter().cloned());
            self.out.push(
                LogicalLine::new(spans)
                    .gutter(first, cont)
                    .mode(WrapMode::Chars),
            );
        }
        self.gap = true;
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block(),
            Tag::Heading { level, .. } => {
                self.block();
                let hashes = "#".repeat(level as usize);
                self.line
                    .push(Span::styled(format!("{hashes} "), self.dim()));
                let style = Style::default().add_modifier(Modifier::BOLD);
                let style = if self.no_color {
                    style
                } else {
                    style.fg(Color::Cyan)
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => highlight::lang_for(&info),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.block();
                } else {
                    self.flush();
                }
                self.lists.push(List { next: start });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(List { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.containers.push(Container::Item {
                    marker,
                    shown: false,
                });
                self.gap = false;
            }
            Tag::Table(aligns) => {
                self.block();
                self.table = Some(TableBuilder::new(aligns));
            }
            Tag::TableCell => self.line.clear(),
            Tag::Emphasis => self
                .styles
                .push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self
                .styles
                .push(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.to_string(), String::new()));
                let style = self.color(Color::Blue).add_modifier(Modifier::UNDERLINED);
                self.styles.push(style);
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(lang, &code);
                }
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.gap = true;
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
                self.gap = false;
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.line);
                if let Some(t) = &mut self.table {
                    t.cell(cell);
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.end_row(tag == TagEnd::TableHead);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    let (gutter, _) = self.gutters();
                    let dim = self.dim();
                    self.out.extend(t.lines(&gutter, dim));
                }
                self.gap = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((url, text)) = self.links.pop()
                    && !url.is_empty()
                    && url != text
                    && url.strip_prefix("mailto:").is_none_or(|u| u != text)
                {
                    let dim = self.dim();
                    self.line.push(Span::styled(format!(" ({url})"), dim));
                }
            }
            _ => {}
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                if let Some((_, link_text)) = self.links.last_mut() {
                    link_text.push_str(&t);
                }
                let style = self.style();
                if self.no_color {
                    self.line.push(Span::styled(format!("`{t}`"), style));
                } else {
                    self.line.push(Span::styled(
                        t.to_string(),
                        style.fg(Color::Yellow).bg(Color::Black),
                    ));
                }
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                // Shown as written; a raw HTML block is line-oriented.
                for (i, l) in t.lines().enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.text(l);
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.block();
                let (first, cont) = self.gutters();
                let dim = self.dim();
                self.out.push(
                    LogicalLine::new(vec![Span::styled("", dim)])
                        .gutter(first, cont)
                        .mode(WrapMode::Rule),
                );
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " });
            }
            Event::FootnoteReference(t) => self.text(&format!("[^{t}]")),
            _ => {}
        }
    }
}

/// `text` as Markdown lines; see the module docs.
pub(crate) fn render(text: &str, no_color: bool) -> Vec<LogicalLine> {
    let mut r = Renderer {
        no_color,
        out: Vec::new(),
        containers: Vec::new(),
        lists: Vec::new(),
        styles: Vec::new(),
        line: Vec::new(),
        gap: false,
        code: None,
        links: Vec::new(),
        table: None,
    };
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_TABLES;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    // A code block still streaming has no end event when the input just stops.
    if let Some((lang, code)) = r.code.take() {
        r.code_block(lang, &code);
    }
    if let Some(t) = r.table.take() {
        let (gutter, _) = r.gutters();
        let dim = r.dim();
        r.out.extend(t.lines(&gutter, dim));
    }
    r.flush();
    r.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript_cache::wrap;

    fn screen(text: &str, width: usize) -> Vec<String> {
        render(text, true)
            .iter()
            .flat_map(|l| wrap(l, width))
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn blocks_lists_quotes_and_links() {
        let md = "# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n  1. sub\n  2. sub two\n\n> quoted\n> text\n\nSee [docs](https://x.dev) or <https://y.dev>.\n\n---\nend";
        assert_eq!(
            screen(md, 50),
            [
                "# Title",
                "",
                "Some bold and `code`.",
                "",
                "• one",
                "• two",
                "  1. sub",
                "  2. sub two",
                "",
                "│ quoted text",
                "",
                "See docs (https://x.dev) or https://y.dev.",
                "",
                "──────────────────────────────────────────────────",
                "",
                "end",
            ]
        );
    }

    #[test]
    fn list_items_wrap_under_their_text() {
        assert_eq!(
            screen("1. alpha beta gamma delta", 14),
            ["1. alpha beta", "   gamma delta"]
        );
    }

    #[test]
    fn code_blocks_sit_in_a_gutter_and_hard_wrap() {
        assert_eq!(
            screen("text\n\n```rust\nfn main() { let x = 1; }\n```\n", 14),
            ["text", "", "┆ fn main() { ", "┆ let x = 1; }"]
        );
        assert_eq!(screen("    indented\n", 20), ["┆ indented"]);
    }

    #[test]
    fn tables_are_laid_out_in_aligned_columns() {
        let md = "Sizes:\n\n| file | lines | note |\n|:-----|------:|:----:|\n| `a.rs` | 12 | parser |\n| b.rs | 1200 | **big** |\n\nafter";
        assert_eq!(
            screen(md, 60),
            [
                "Sizes:",
                "",
                "file   │ lines │  note",
                "───────┼───────┼───────",
                "`a.rs` │    12 │ parser",
                "b.rs   │  1200 │  big",
                "",
                "after",
            ]
        );
        // Half-streamed: the rows so far show.
        assert_eq!(
            screen("| a | b |\n|---|---|\n| 1 |", 20),
            ["a │ b", "──┼──", "1 │ "]
        );
    }

    #[test]
    fn styles_are_applied() {
        let lines = render("# H\n\n**b** *i* `c`", false);
        let heading = &lines[0].spans[1];
        assert!(heading.style.add_modifier.contains(Modifier::BOLD));
        let para = &lines[2].spans;
        assert!(para[0].style.add_modifier.contains(Modifier::BOLD));
        assert!(para[2].style.add_modifier.contains(Modifier::ITALIC));
        assert_eq!(para[4].style.fg, Some(Color::Yellow));
    }

    #[test]
    fn half_streamed_markdown_renders_sensibly() {
        assert_eq!(screen("an **unfinished", 40), ["an **unfinished"]);
        assert_eq!(
            screen("look:\n\n```py\ndef f():\n    ret", 40),
            ["look:", "", "┆ def f():", "┆     ret"]
        );
        for cut in 0.."# a\n\n- `x` **y**\n\n```rs\nfn\n```\n> q".len() {
            let text = &"# a\n\n- `x` **y**\n\n```rs\nfn\n```\n> q"[..cut];
            let _ = screen(text, 3);
        }
        assert!(screen("", 10).is_empty());
    }
}
