//! Compaction's pruning and summary edits on built conversations.

use super::*;

fn text(role: Role, t: &str) -> Message {
    Message {
        role,
        parts: vec![Part::Text { text: t.into() }],
    }
}

fn step(id: &str, output: &str) -> [Message; 2] {
    [
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall {
                id: id.into(),
                name: "read".into(),
                arguments: format!("{{\"filePath\":\"{id}\"}}"),
            }],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: id.into(),
                output: output.into(),
                is_error: false,
                attachments: vec![],
            }],
        },
    ]
}

fn conversation(steps: usize, output: &str) -> Vec<Message> {
    let mut m = vec![text(Role::User, "task")];
    for i in 0..steps {
        m.extend(step(&format!("c{i}"), output));
    }
    m
}

fn output(m: &Message) -> &str {
    match &m.parts[0] {
        Part::ToolResult { output, .. } => output,
        _ => "",
    }
}

#[test]
fn pruning_names_the_call_and_spares_short_and_recent_outputs() {
    let long = "x".repeat(1_000);
    let mut m = conversation(4, &long);
    m[2].parts[0] = match &m[2].parts[0] {
        Part::ToolResult { call_id, .. } => Part::ToolResult {
            call_id: call_id.clone(),
            output: "short".into(),
            is_error: false,
            attachments: vec![],
        },
        p => p.clone(),
    };
    let through = m.len() - PROTECTED_MESSAGES;
    assert_eq!(prune(&mut m, through), 1);
    assert_eq!(output(&m[2]), "short");
    assert_eq!(
        output(&m[4]),
        pruned_output_text("read", "{\"filePath\":\"c1\"}")
    );
    assert_eq!(output(&m[6]), long, "the newest steps stay intact");
    assert_eq!(output(&m[8]), long);
    assert_eq!(prune(&mut m, through), 0, "markers are not pruned again");
}

fn skill_step(id: &str, name: &str, output: &str) -> [Message; 2] {
    let [mut call, result] = step(id, output);
    call.parts[0] = Part::ToolCall {
        id: id.into(),
        name: "skill".into(),
        arguments: format!("{{\"name\":\"{name}\"}}"),
    };
    [call, result]
}

#[test]
fn loaded_skills_are_never_pruned_and_a_summary_carries_them() {
    let long = "x".repeat(1_000);
    let body_a = format!("<skill_content name=\"a\">{long}</skill_content>");
    let mut m = vec![text(Role::User, "task")];
    m.extend(skill_step("s1", "a", "old a"));
    m.extend(skill_step("s2", "b", "B"));
    m.extend(skill_step("s3", "a", &body_a));
    m.extend(conversation(4, &long).into_iter().skip(1));
    let through = m.len() - PROTECTED_MESSAGES;
    assert_eq!(prune(&mut m, through), 2, "two reads pruned, no skill");
    assert_eq!(output(&m[6]), body_a);
    let kept = 4;
    let names = apply_summary(&mut m, "S", kept);
    assert_eq!(names, ["b", "a"], "each skill once, newest load");
    assert_eq!(
        m[0].parts[0],
        Part::Text {
            text: format!("{}{}", summary_text("S"), kept_skills_text(&["B", &body_a]))
        }
    );
    assert_eq!(m.len(), kept + 1);
}

#[test]
fn a_summary_keeps_a_tail_that_starts_with_an_assistant_message() {
    let mut m = conversation(6, "out");
    let cut = cut_point(&m, 40).unwrap();
    assert_eq!(m[cut].role, Role::Assistant);
    let kept = m.len() - cut;
    apply_summary(&mut m, "S", kept);
    assert_eq!(m.len(), kept + 1);
    assert_eq!(
        m[0].parts[0],
        Part::Text {
            text: summary_text("S")
        }
    );
    assert_eq!(m[1].role, Role::Assistant);
    assert!(cut_point(&conversation(0, ""), 100).is_none());
}

#[test]
fn shrinking_fits_the_limit_and_says_what_it_omitted() {
    let mut m = vec![
        text(Role::User, &"a".repeat(40_000)),
        text(Role::Assistant, "b"),
    ];
    shrink_to(&mut m, 2_000);
    assert!(estimate_messages(&m) <= 2_000, "{}", estimate_messages(&m));
    let Part::Text { text } = &m[0].parts[0] else {
        unreachable!()
    };
    assert!(text.starts_with('a') && text.ends_with('a'));
    assert!(text.contains("characters omitted"), "{text:.200}");
}
