//! `@path` file mentions. While the user types, `refresh` looks at the word under the
//! cursor: when it starts with `@` (at a line start or after whitespace) it opens or updates
//! `Input::completion` with the best fuzzy matches from the workspace `FileIndex`
//! (`index.rs`, built on a background thread the first time a mention starts). While the
//! popup (`popup.rs`) is open, `completion_key` takes Up/Down/Ctrl-P/Ctrl-N, Tab/Enter and
//! Esc; accepting replaces `@query` with `@path ` (`@"path with spaces" `). When a prompt is
//! submitted, `attached_files` turns its mentions of existing files into absolute paths.

mod index;
mod popup;

use std::ops::Range;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent};

pub use index::{FileIndex, best_matches};
pub use popup::draw_completion;

use super::Input;

/// How many matches the popup lists.
pub const MAX_MATCHES: usize = 10;

/// The open completion popup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// Bytes of the input that accepting replaces: the whole `@…` word.
    pub range: Range<usize>,
    /// The text typed after `@` (without an opening quote), up to the cursor.
    pub query: String,
    /// Matching relative paths, best first; directories end with `/`.
    pub matches: Vec<String>,
    pub selected: usize,
    /// The index is still being built.
    pub indexing: bool,
}

/// The mention being typed at `cursor`: the bytes of its word and the query before the
/// cursor. `@"…` opens a quoted mention that may contain spaces.
pub fn mention_at(text: &str, cursor: usize) -> Option<(Range<usize>, String)> {
    let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[cursor..].find('\n').map_or(text.len(), |i| cursor + i);
    let before = &text[line_start..cursor];
    for (i, _) in before.rmatch_indices('@') {
        let starts_word = before[..i]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let typed = &before[i + 1..];
        let at = line_start + i;
        if let Some(inner) = typed.strip_prefix('"') {
            if inner.contains('"') {
                return None;
            }
            if starts_word {
                let end = text[cursor..line_end]
                    .find('"')
                    .map_or(cursor, |q| cursor + q + 1);
                return Some((at..end, inner.to_string()));
            }
        } else if !typed.contains(char::is_whitespace) {
            if !starts_word {
                return None;
            }
            let end = text[cursor..line_end]
                .find(char::is_whitespace)
                .map_or(line_end, |w| cursor + w);
            return Some((at..end, typed.to_string()));
        }
    }
    None
}

/// Opens, updates or closes the popup for the word under the cursor; the index covers
/// `cwd`. Call it after every edit of the input.
pub fn refresh(state: &mut Input, cwd: &str) {
    let Some((range, query)) = mention_at(state.buffer.text(), state.buffer.cursor()) else {
        state.completion = None;
        return;
    };
    let index = state
        .file_index
        .get_or_insert_with(|| FileIndex::spawn(cwd))
        .clone();
    let (matches, indexing) = match index.entries() {
        Some(entries) => (best_matches(entries, &query, MAX_MATCHES), false),
        None => (Vec::new(), true),
    };
    let selected = match &state.completion {
        Some(old) if old.query == query => old.selected.min(matches.len().saturating_sub(1)),
        _ => 0,
    };
    state.completion = Some(Completion {
        range,
        query,
        matches,
        selected,
        indexing,
    });
}

/// Recomputes an open popup that is still waiting for the index, once the index is ready.
/// Cheap when there is nothing to do; the event loop may call it on every tick.
pub fn poll(state: &mut Input, cwd: &str) {
    let ready = state
        .file_index
        .as_ref()
        .is_some_and(|i| i.entries().is_some());
    if ready && state.completion.as_ref().is_some_and(|c| c.indexing) {
        refresh(state, cwd);
    }
}

/// Handles a key while the popup is open; `false` lets the normal key handling run.
pub fn completion_key(state: &mut Input, key: KeyEvent, cwd: &str) -> bool {
    // An edit that skipped `refresh` (a newline, a paste) may have moved the mention.
    let current = mention_at(state.buffer.text(), state.buffer.cursor());
    let stale = state.completion.as_ref().is_some_and(|c| {
        current
            .as_ref()
            .is_none_or(|(range, query)| *range != c.range || *query != c.query)
    });
    if stale {
        refresh(state, cwd);
    } else {
        poll(state, cwd);
    }
    let Some(completion) = state.completion.as_mut() else {
        return false;
    };
    let len = completion.matches.len();
    if super::move_selection(&key, &mut completion.selected, len) {
        return true;
    }
    match key.code {
        KeyCode::Esc => state.completion = None,
        KeyCode::Tab if key.modifiers.is_empty() => accept(state, cwd),
        KeyCode::Enter if key.modifiers.is_empty() => {
            if len == 0 {
                // Nothing to pick: Enter submits the prompt as usual.
                state.completion = None;
                return false;
            }
            accept(state, cwd);
        }
        _ => return false,
    }
    true
}

/// Replaces the mention with the selected path and refreshes (a directory keeps the popup
/// open on its contents).
fn accept(state: &mut Input, cwd: &str) {
    let Some(c) = state.completion.take() else {
        return;
    };
    let Some(path) = c.matches.get(c.selected) else {
        state.completion = Some(c);
        return;
    };
    let dir = path.ends_with('/');
    let mut with = if path.contains(' ') {
        format!("@\"{path}{}", if dir { "" } else { "\"" })
    } else {
        format!("@{path}")
    };
    let text = state.buffer.text();
    let next_is_space = text[c.range.end.min(text.len())..]
        .chars()
        .next()
        .is_some_and(char::is_whitespace);
    if !dir && !next_is_space {
        with.push(' ');
    }
    state.buffer.replace_range(c.range, &with);
    if !dir && next_is_space {
        let after = state.buffer.cursor() + 1;
        state.buffer.set_cursor(after);
    }
    refresh(state, cwd);
}

/// The mentions in a prompt that name existing files, as absolute paths, each once and in
/// order (`podcode_core::mentioned_files`, relative to `cwd`).
pub fn attached_files(text: &str, cwd: &str) -> Vec<String> {
    podcode_core::mentioned_files(text, Path::new(cwd))
}

#[cfg(test)]
mod tests;
