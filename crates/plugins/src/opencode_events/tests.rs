//! The translator fed a whole turn, compared with the events opencode sends for one.
use super::*;
use podcode_protocol::{ToolResult, TurnSummary};

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_turn_with_text_and_an_edit_reads_as_opencode_tells_it() {
    // The engine's journal, as the lookup sees it: ids in, one file per id out.
    let lookup: DiffLookup = Arc::new(|ids: &[String]| {
        ids.iter()
            .map(|id| json!({"file": id, "additions": 1, "deletions": 0}))
            .collect()
    });
    let mut t = OpencodeEvents::with_diffs(Some(lookup));
    let s = "ses_1".to_string();
    let mut all = Vec::new();
    let mut feed = |e: Event| all.extend(t.translate(&e));
    feed(Event::UserMessage {
        session_id: s.clone(),
        message_id: "msg_u".into(),
        text: "fix it".into(),
        files: vec![],
    });
    feed(Event::TurnStarted {
        session_id: s.clone(),
        agent: "build".into(),
        model: "openai/gpt-5".into(),
    });
    feed(Event::StepStarted {
        session_id: s.clone(),
        message_id: "msg_a".into(),
        step: 1,
    });
    for d in ["Fix", "ing."] {
        feed(Event::TextDelta {
            message_id: "msg_a".into(),
            text: d.into(),
        });
    }
    feed(Event::ToolRequested {
        message_id: "msg_a".into(),
        call_id: "call_1".into(),
        tool: "edit".into(),
    });
    feed(Event::StepFinished {
        session_id: s.clone(),
        message_id: "msg_a".into(),
        step: 1,
        status: "completed".into(),
        finish_reason: Some("stop".into()),
        usage: StepUsage::default(),
    });
    feed(Event::ToolStarted {
        session_id: s.clone(),
        call_id: "call_1".into(),
        tool: "edit".into(),
        args: json!({"filePath": "a.rs"}),
    });
    feed(Event::ChangeRecorded {
        change_id: "chg".into(),
        call_id: Some("call_1".into()),
        file: "/p/a.rs".into(),
    });
    feed(Event::ToolFinished {
        call_id: "call_1".into(),
        tool: "edit".into(),
        result: ToolResult {
            title: "a.rs".into(),
            output: "Edited a.rs".into(),
            metadata: Value::Null,
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 3,
    });
    feed(Event::TurnFinished {
        session_id: s.clone(),
        summary: TurnSummary {
            session_id: s.clone(),
            end: TurnEnd::Answered,
            steps: 1,
            tool_calls: 1,
            usage: StepUsage::default(),
            changes: vec![],
            files: vec![],
            error: None,
        },
    });
    // The engine ends the step when the model stops and then runs its call; opencode ends
    // the step after its calls, which is what plugins see.
    assert_eq!(
        types(&all),
        [
            "message.updated",
            "message.part.updated",
            "session.status",
            "message.updated",
            "session.diff",
            "message.part.updated",
            "message.part.updated",
            "message.part.delta",
            "message.part.delta",
            "message.part.updated",
            "message.part.updated",
            "file.edited",
            "file.watcher.updated",
            "message.part.updated",
            "message.part.updated",
            "message.part.updated",
            "message.updated",
            "session.diff",
            "session.status",
            "session.idle",
        ]
    );
    assert!(
        all.iter()
            .all(|e| e["id"].as_str().is_some_and(|i| i.starts_with("evt_")))
    );
    let user = &all[0]["properties"]["info"];
    assert_eq!(
        (&user["id"], &user["role"], &user["model"]["modelID"]),
        (&json!("msg_u"), &json!("user"), &json!("gpt-5"))
    );
    assert_eq!(all[0]["properties"]["sessionID"], "ses_1");
    assert_eq!(all[1]["properties"]["part"]["text"], "fix it");
    assert_eq!(all[1]["properties"]["part"]["messageID"], "msg_u");
    let assistant = &all[3]["properties"]["info"];
    assert_eq!(assistant["parentID"], "msg_u");
    assert_eq!(assistant["providerID"], "openai");
    // The turn's diff when its first step starts (nothing changed yet) and after its step.
    assert_eq!(
        all[4]["properties"],
        json!({"sessionID": "ses_1", "diff": []})
    );
    assert_eq!(all[6]["properties"]["part"]["text"], "");
    assert_eq!(all[8]["properties"]["delta"], "ing.");
    let part = |i: usize| &all[i]["properties"]["part"];
    assert_eq!(part(9)["state"]["status"], "pending");
    assert_eq!(part(10)["state"]["status"], "running");
    let done = part(13);
    assert_eq!(done["state"]["status"], "completed");
    assert_eq!(done["state"]["input"]["filePath"], "a.rs");
    assert_eq!(done["state"]["metadata"], json!({}));
    assert_eq!(part(14)["text"], "Fixing.");
    assert_eq!(part(15)["type"], "step-finish");
    assert_eq!(all[11]["properties"]["file"], "/p/a.rs");
    assert_eq!(
        all[17]["properties"],
        json!({"sessionID": "ses_1", "diff": [{"file": "chg", "additions": 1, "deletions": 0}]})
    );
    // Every part event carries the session and a time beside the part, as opencode's do.
    for e in all.iter().filter(|e| e["type"] == "message.part.updated") {
        assert_eq!(e["properties"]["sessionID"], "ses_1", "{e}");
        assert!(e["properties"]["time"].as_u64().is_some(), "{e}");
    }
    assert_eq!(all[19]["properties"]["sessionID"], "ses_1");
    assert_eq!(all[18]["properties"]["status"]["type"], "idle");
}

#[test]
fn a_new_session_is_created_then_updated_as_in_opencode() {
    let mut t = OpencodeEvents::new();
    let out = t.translate(&Event::SessionCreated {
        session_id: "ses_c".into(),
        parent_id: Some("ses_p".into()),
        title: "Child".into(),
        directory: "/p".into(),
        agent: "general".into(),
        created_at: 5,
    });
    assert_eq!(types(&out), ["session.created", "session.updated"]);
    let props = &out[0]["properties"];
    assert_eq!(props["sessionID"], "ses_c");
    assert_eq!(props["info"]["parentID"], "ses_p");
    assert_eq!(props["info"]["title"], "Child");
    assert_eq!(props["info"]["time"]["created"], 5);
}
