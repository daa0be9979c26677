//! The model-facing texts the loop itself writes (the pipeline owns the tool-call ones).
//! Each is read by a model deciding what to do next; tests pin them verbatim.

/// The user message added after `max_steps` steps, before the last request (sent without tools).
pub fn max_steps_text(max_steps: u32) -> String {
    format!(
        "You have used all {max_steps} steps allowed for this turn, so tools are no longer available. Do not call any tool. Reply to the user with a summary of what you did, what is finished, and what remains to be done (with the next concrete steps), so they can continue from here."
    )
}

/// The result of a tool call the user's abort stopped before it could start.
pub fn not_run_text(tool: &str) -> String {
    format!(
        "The {tool} tool call was not run: the user interrupted the turn before it started. Do not run it again unless the user asks you to."
    )
}

/// The result of a call whose outcome was never recorded (the process was killed while it ran).
pub fn lost_result_text(tool: &str) -> String {
    format!(
        "The {tool} tool call was interrupted and its result was lost (Podcode stopped while it ran). Check its effects before you run it again."
    )
}

/// The result of a call made in the final summary request, where no tools are offered.
pub fn no_tools_text(tool: &str) -> String {
    format!(
        "The {tool} tool call was not run: the step limit was reached and no tools are available. Reply with your summary instead."
    )
}

/// What the `doom_loop` ask shows the user (its patterns are the tool id).
pub fn doom_loop_description(tool: &str) -> String {
    format!(
        "The model is calling {tool} with the same arguments for the third time in a row; it may be stuck in a loop."
    )
}

/// The turn's error when the model's stream kept breaking.
pub fn stream_failed_text(attempts: u32, error: &str) -> String {
    format!("the model's response was cut off {attempts} times in a row; giving up ({error})")
}

/// An attached file as the model reads it: the `read` call Podcode made for the user.
pub fn attached_file_text(path: &str, args: &str, output: &str) -> String {
    format!("The user attached {path}. Called the read tool with {args}:\n{output}")
}

/// An attached file that could not be read (denied, missing, binary).
pub fn attached_file_failed_text(path: &str, error: &str) -> String {
    format!("The user attached {path}, but it could not be read: {error}")
}

/// The system prompt of the request that summarises the older conversation.
pub const COMPACTION_PROMPT: &str = "You are compacting a long coding session so the work can continue within the model's context window. Write a summary that lets another instance of you continue the work without the original messages. Keep: the user's task and every requirement or preference they stated; the decisions made and why; every file read, created or changed (with its path) and what changed; commands run and the results that matter; errors not yet resolved; and the open work, with the exact next step. Keep concrete names, paths, values and identifiers. Do not call tools and do not continue the work: answer with the summary only.";

/// The last user message of the summarising request.
pub const COMPACTION_REQUEST: &str = "Summarise the conversation above as instructed, so the work can continue from your summary alone.";

/// The message that stands for the summarised conversation in later requests.
pub fn summary_text(summary: &str) -> String {
    format!(
        "[The earlier part of this session was compacted to fit the context window. Summary of it:]\n\n{summary}"
    )
}

/// What follows a summary when the part it replaced loaded skills: their results, as the
/// model read them (empty when none).
pub fn kept_skills_text(outputs: &[&str]) -> String {
    if outputs.is_empty() {
        return String::new();
    }
    format!(
        "\n\n[Skills loaded earlier in this session; their instructions still apply:]\n\n{}",
        outputs.join("\n\n")
    )
}

/// The `bash` call's description for a custom command's ``!`cmd` `` snippet (shown in the
/// permission ask).
pub fn command_shell_description(command: &str) -> String {
    format!("Fills in the /{command} command")
}

/// What replaces an old tool output when it is pruned.
pub fn pruned_output_text(tool: &str, arguments: &str) -> String {
    let args: String = arguments.chars().take(120).collect();
    let more = if arguments.chars().count() > 120 {
        "…"
    } else {
        ""
    };
    format!(
        "[Output of {tool} {args}{more} pruned to save context. Call the tool again if you need it.]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_texts_are_pinned() {
        assert_eq!(
            COMPACTION_PROMPT,
            "You are compacting a long coding session so the work can continue within the model's context window. Write a summary that lets another instance of you continue the work without the original messages. Keep: the user's task and every requirement or preference they stated; the decisions made and why; every file read, created or changed (with its path) and what changed; commands run and the results that matter; errors not yet resolved; and the open work, with the exact next step. Keep concrete names, paths, values and identifiers. Do not call tools and do not continue the work: answer with the summary only."
        );
        assert_eq!(
            COMPACTION_REQUEST,
            "Summarise the conversation above as instructed, so the work can continue from your summary alone."
        );
        assert_eq!(
            summary_text("S"),
            "[The earlier part of this session was compacted to fit the context window. Summary of it:]\n\nS"
        );
        assert_eq!(kept_skills_text(&[]), "");
        assert_eq!(
            kept_skills_text(&["<skill_content name=\"a\">A</skill_content>", "B"]),
            "\n\n[Skills loaded earlier in this session; their instructions still apply:]\n\n<skill_content name=\"a\">A</skill_content>\n\nB"
        );
        assert_eq!(
            pruned_output_text("read", r#"{"filePath":"a.rs"}"#),
            "[Output of read {\"filePath\":\"a.rs\"} pruned to save context. Call the tool again if you need it.]"
        );
        assert!(
            pruned_output_text("bash", &"x".repeat(500))
                .contains(&format!("{}… pruned", "x".repeat(120)))
        );
    }

    #[test]
    fn texts_are_pinned() {
        assert_eq!(
            max_steps_text(3),
            "You have used all 3 steps allowed for this turn, so tools are no longer available. Do not call any tool. Reply to the user with a summary of what you did, what is finished, and what remains to be done (with the next concrete steps), so they can continue from here."
        );
        assert_eq!(
            not_run_text("bash"),
            "The bash tool call was not run: the user interrupted the turn before it started. Do not run it again unless the user asks you to."
        );
        assert_eq!(
            lost_result_text("edit"),
            "The edit tool call was interrupted and its result was lost (Podcode stopped while it ran). Check its effects before you run it again."
        );
        assert_eq!(
            no_tools_text("read"),
            "The read tool call was not run: the step limit was reached and no tools are available. Reply with your summary instead."
        );
        assert_eq!(
            stream_failed_text(3, "reset"),
            "the model's response was cut off 3 times in a row; giving up (reset)"
        );
        assert_eq!(
            attached_file_text("/w/a.rs", r#"{"filePath":"/w/a.rs"}"#, "1\tfn a() {}"),
            "The user attached /w/a.rs. Called the read tool with {\"filePath\":\"/w/a.rs\"}:\n1\tfn a() {}"
        );
        assert_eq!(
            attached_file_failed_text("/w/.env", "Permission denied"),
            "The user attached /w/.env, but it could not be read: Permission denied"
        );
    }
}
