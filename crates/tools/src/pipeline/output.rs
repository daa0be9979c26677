//! Stages 6 and 7, after-hooks and truncate+spill. The output the tool streamed and the
//! output it returned go through the call's sink, which keeps the tool's end (`head` or
//! `tail`) and spills the whole to a file; the model's text is the kept output with a note
//! on how to read the rest using the tools this session has, after the error text when
//! there is one. When a hook looks at results, the sink is closed first and the hooks get
//! that text (so a redaction hook changes what the model reads, as in opencode), with the
//! metadata as an object that says whether the output was cut.

use podcode_protocol::{Truncation, clip_title};
use serde_json::{Value, json};

use super::execute::Ran;
use super::state::CallState;
use super::{CallOutcome, CallStatus, ToolRuntime};
use crate::texts;
use crate::truncate::Truncated;

impl ToolRuntime {
    /// A failing hook is a warning for the user and leaves the result as it was.
    /// Appends what `RuntimeOptions::after_edit` says about the files a completed call
    /// changed.
    pub(super) async fn after_edit(&self, s: &CallState, mut ran: Ran) -> Ran {
        let Some(watcher) = self.opts.after_edit.as_ref() else {
            return ran;
        };
        if ran.status != CallStatus::Completed {
            return ran;
        }
        let files = s.ctx.changed_files();
        if files.is_empty() {
            return ran;
        }
        if let Some(text) = watcher.edited(&files, &s.ctx).await {
            let out = &mut ran.result.output;
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&text);
        }
        ran
    }

    pub(super) async fn after_hooks(&self, s: &CallState, args: &Value, mut ran: Ran) -> Ran {
        if ran.status == CallStatus::Completed && s.hooks.iter().any(|h| h.sees_results()) {
            let (kept, truncated) = self.spill(s, std::mem::take(&mut ran.result.output));
            ran.result.output = self.with_note(s, kept, truncated.as_ref());
            tag_truncation(&mut ran.result.metadata, truncated.as_ref());
            ran.shaped = Some(truncated);
            for hook in s.hooks.iter() {
                if let Err(e) = hook.after(&s.hook_call, args, &mut ran.result).await {
                    self.shared.warn(format!(
                        "tool.execute.after hook {} failed: {e}",
                        hook.name()
                    ));
                }
            }
        }
        ran.result.title = clip_title(&ran.result.title);
        ran
    }

    /// Truncates and spills the output (unless after-hooks did) and builds the outcome the
    /// model reads.
    pub(super) fn shape_output(&self, s: CallState, mut ran: Ran) -> CallOutcome {
        let output = std::mem::take(&mut ran.result.output);
        let (kept, body, truncated) = match ran.shaped.take() {
            // The hooks had the model's text, note included; what they left is final.
            Some(truncated) => (output.clone(), output, truncated),
            None => {
                let (kept, truncated) = self.spill(&s, output);
                let body = self.with_note(&s, kept.clone(), truncated.as_ref());
                (kept, body, truncated)
            }
        };
        let model_text = match ran.error {
            None => body,
            Some(err) if body.trim().is_empty() => err,
            Some(err) => format!("{err}\n\nOutput before it stopped:\n{body}"),
        };
        // API keys never reach the model, whatever the tool printed.
        let model_text =
            podcode_sandbox::mask_secrets(&model_text, &self.opts.secrets).into_owned();
        ran.result.output = podcode_sandbox::mask_secrets(&kept, &self.opts.secrets).into_owned();
        CallOutcome {
            call_id: s.ctx.call_id().to_string(),
            tool: s.id().to_string(),
            status: ran.status,
            model_text,
            result: ran.result,
            truncated,
            attempts: ran.attempts,
            duration: s.run_time(),
            changes: s.ctx.recorded_changes(),
        }
    }

    /// The kept output with the note on where the rest went, when anything was cut.
    fn with_note(&self, s: &CallState, kept: String, truncated: Option<&Truncated>) -> String {
        let Some(t) = truncated else {
            return kept;
        };
        let head = s.spec().truncation == Truncation::Head;
        let note = texts::truncation_note(
            t,
            head,
            s.tool.registry_has("read"),
            s.tool.registry_has("grep"),
        );
        if head {
            format!("{kept}\n\n{note}")
        } else {
            format!("{note}\n\n{kept}")
        }
    }

    /// Appends the returned output to what the tool streamed and closes the sink: the kept
    /// text, and where the rest went when anything was cut.
    fn spill(&self, s: &CallState, output: String) -> (String, Option<Truncated>) {
        let Some(mut sink) = s.sink.lock().ok().and_then(|mut sink| sink.take()) else {
            return (output, None);
        };
        if !output.is_empty() {
            if !sink.is_empty() {
                sink.write(b"\n");
            }
            sink.write(output.as_bytes());
        }
        let (kept, truncated) = sink.finish();
        if let Some(err) = truncated.as_ref().and_then(|t| t.spill_error.as_ref()) {
            self.shared.warn(format!("{}: {err}", s.id()));
        }
        (kept, truncated)
    }
}

/// Hooks always get metadata as an object (opencode's tools never give `null`) with
/// opencode's `truncated` flag and, when cut, `outputPath`; a tool's own keys win.
fn tag_truncation(metadata: &mut Value, truncated: Option<&Truncated>) {
    if !metadata.is_object() {
        *metadata = match std::mem::take(metadata) {
            Value::Null => json!({}),
            other => json!({ "value": other }),
        };
    }
    if let Some(map) = metadata.as_object_mut() {
        map.entry("truncated").or_insert(json!(truncated.is_some()));
        if let Some(t) = truncated.filter(|t| t.spill_error.is_none()) {
            map.entry("outputPath")
                .or_insert(json!(t.spill_path.to_string_lossy()));
        }
    }
}
