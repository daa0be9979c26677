//! Frame times of the transcript at 120x40 (ratatui's `TestBackend`), against an empty
//! session's frame measured in the same run: (a) a 10k-line transcript at rest, (b) the same
//! while the last answer streams (a delta per frame), (c) scrolling (a new `scroll` per
//! frame), (d) the first frame of a fresh state (cold render cache). Median and p90 per
//! frame. Run: `cargo bench -p podcode-tui --bench transcript`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use podcode_protocol::{Event, ToolResult};
use podcode_tui::{AppState, Entry, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const FRAMES: usize = 200;

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, 40)).expect("test backend")
}

fn answer(i: usize) -> String {
    format!(
        "## Step {i}\n\nThe function **`parse_{i}`** reads the tokens and builds the tree; \
         it is *small* and keeps no state between calls, which makes it easy to test.\n\n\
         - one thing\n- another thing\n\n```rust\nfn parse_{i}(src: &str) -> Tree {{\n    \
         let tokens = lex(src); // one pass\n    Tree::new(tokens)\n}}\n```\n\nDone.\n"
    )
}

/// About 10,000 rows: answers with code blocks and finished tool cards.
fn session() -> AppState {
    let mut s = AppState::new("scripted/test", "build", "/work/repo", "ses_1");
    let mut i = 0;
    while s.transcript.entries.len() < 1300 {
        s.transcript
            .entries
            .push(Entry::User(format!("question {i}")));
        s.apply_event(&Event::TextDelta {
            message_id: format!("m{i}"),
            text: answer(i),
        });
        let call = format!("c{i}");
        s.apply_event(&Event::ToolRequested {
            message_id: format!("m{i}"),
            call_id: call.clone(),
            tool: "edit".into(),
        });
        s.apply_event(&Event::ToolStarted {
            session_id: "ses_1".into(),
            call_id: call.clone(),
            tool: "edit".into(),
            args: serde_json::json!({}),
        });
        let diff = format!(
            "--- a/src/f{i}.rs\n+++ b/src/f{i}.rs\n@@ -1,2 +1,2 @@\n-let a = {i};\n+let a = {};\n",
            i + 1
        );
        s.apply_event(&Event::ToolFinished {
            call_id: call,
            tool: "edit".into(),
            result: ToolResult {
                title: format!("src/f{i}.rs"),
                output: "Edit applied successfully.".into(),
                metadata: serde_json::json!({ "diff": diff }),
                ..Default::default()
            },
            spill_path: None,
            duration_ms: 3,
        });
        i += 1;
    }
    s.apply_event(&Event::TextDelta {
        message_id: "last".into(),
        text: answer(i),
    });
    s.status.busy = false;
    s
}

fn frame(term: &mut Terminal<TestBackend>, s: &AppState) -> Duration {
    let t = Instant::now();
    term.draw(|f| draw(f, s)).expect("draw");
    t.elapsed()
}

fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() * 9 / 10])
}

fn report(name: &str, times: Vec<Duration>, base: Duration) {
    let (median, p90) = stats(times);
    println!(
        "{name:<34} median {:>9.1?}  p90 {:>9.1?}  ×{:.1} baseline",
        median,
        p90,
        median.as_secs_f64() / base.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let mut term = terminal();
    let empty = AppState::new("scripted/test", "build", "/work/repo", "ses_1");
    let base: Vec<Duration> = (0..FRAMES).map(|_| frame(&mut term, &empty)).collect();
    let (base_median, base_p90) = stats(base.clone());
    let mut s = session();
    let rows: usize = s
        .transcript
        .entries
        .iter()
        .map(|e| match e {
            Entry::Assistant { text, .. } => text.lines().count() + 1,
            Entry::Tool(_) => 8,
            _ => 2,
        })
        .sum();
    println!(
        "transcript: {} entries, ~{rows} rows; 120x40; {FRAMES} frames each",
        s.transcript.entries.len()
    );
    println!(
        "{:<34} median {:>9.1?}  p90 {:>9.1?}",
        "baseline (empty session)", base_median, base_p90
    );

    // (d) cold: a fresh state each time (clone before timing; the cache starts empty).
    let cold: Vec<Duration> = (0..20)
        .map(|_| {
            let fresh = s.clone();
            fresh.transcript.render_cache.take();
            frame(&mut terminal(), &fresh)
        })
        .collect();

    frame(&mut term, &s);
    let steady: Vec<Duration> = (0..FRAMES).map(|_| frame(&mut term, &s)).collect();
    report("(a) 10k lines, steady", steady, base_median);

    let streaming: Vec<Duration> = (0..FRAMES)
        .map(|k| {
            s.apply_event(&Event::TextDelta {
                message_id: "last".into(),
                text: format!("more words {k} "),
            });
            frame(&mut term, &s)
        })
        .collect();
    report("(b) 10k lines, streaming a delta", streaming, base_median);

    let scrolling: Vec<Duration> = (0..FRAMES)
        .map(|k| {
            s.transcript.scroll = ((k * 37) % 9000) as u16;
            frame(&mut term, &s)
        })
        .collect();
    report("(c) 10k lines, scrolling", scrolling, base_median);
    report("(d) first frame (cold cache)", cold, base_median);
}
