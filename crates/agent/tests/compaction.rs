//! Long sessions against the scripted model server (real HTTP + SSE), a real store and a
//! real tool runtime: a 300-step session in an 8k window that compacts itself (pruning
//! first, then summaries the later requests carry), providers' overflow errors answered by
//! compaction and one retry, exact token and cost totals, and prompt-cache breakpoints.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use podcode_agent::{
    AgentProfile, COMPACTION_PROMPT, COMPACTION_REQUEST, estimate_messages, load_history,
    pruned_output_text, summary_text,
};
use podcode_config::CostOverride;
use podcode_protocol::{Event, StepUsage, ToolResult, ToolSpec, TurnEnd};
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::{ModelInfo, Part, Prices};
use podcode_tools::Tool;
use podcode_tools::testing::FnTool;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const WINDOW: u64 = 8_000;
const STEPS: usize = 300;

/// `look {n}`: about 2,000 characters of output naming `n`.
fn look() -> Arc<dyn Tool> {
    let params = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    FnTool::new(
        ToolSpec::new("look", "Looks at part n of the project.", params).idempotent(true),
        |args, _| async move {
            Ok(ToolResult::text(look_output(
                args["n"].as_u64().unwrap_or(0),
            )))
        },
    )
    .self_gated()
    .arc()
}

fn look_output(n: u64) -> String {
    format!(
        "part {n}:\n{}",
        format!("line of part {n} with some content\n").repeat(55)
    )
}

fn small_model() -> ModelInfo {
    ModelInfo {
        context: WINDOW,
        output: 1_000,
        cost: None,
        tools: true,
        images: false,
        reasoning: false,
        known: true,
    }
}

/// What the scripted server reports as a request's prompt size: its body's length / 4.
fn reported_tokens(body: &Value) -> u64 {
    body.to_string().len() as u64 / 4
}

fn is_compaction(body: &Value) -> bool {
    body["messages"][0]["content"] == COMPACTION_PROMPT
}

/// Whether any message of a chat completions body has `needle` in its text.
fn carries(body: &Value, needle: &str) -> bool {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| m["content"].as_str().is_some_and(|c| c.contains(needle)))
}

fn collect(events: &mut tokio::sync::broadcast::Receiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(e) = events.try_recv() {
        out.push(e);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_300_step_session_in_an_8k_window_compacts_and_completes() {
    let steps = Arc::new(AtomicUsize::new(0));
    let summaries = Arc::new(AtomicUsize::new(0));
    let scripted = Arc::new(Mutex::new(StepUsage::default()));
    let (s, n, u) = (steps.clone(), summaries.clone(), scripted.clone());
    let server = ScriptedModel::responding(
        vec![],
        Arc::new(move |body: &Value| {
            let input = reported_tokens(body);
            let reply = if is_compaction(body) {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                Reply::new().text(format!("SUMMARY-{k}: task is to look at every part."))
            } else {
                let step = s.fetch_add(1, Ordering::SeqCst) + 1;
                if step <= STEPS {
                    Reply::new().tool_call(
                        format!("call_{step}"),
                        "look",
                        format!("{{\"n\":{step}}}"),
                    )
                } else {
                    Reply::new().text("Looked at every part.")
                }
            };
            let mut total = u.lock().unwrap();
            total.add(&StepUsage {
                input_tokens: input,
                output_tokens: 20,
                ..Default::default()
            });
            reply.usage(input, 20)
        }),
    );
    let w = world_on(
        server,
        Opts {
            tools: vec![look()],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| {
        o.max_steps = 1_000;
        o.model_info = small_model();
    });
    // A long turn emits more events than the channel keeps: collect them as they come.
    let mut events = w.runtime.subscribe();
    let watcher = tokio::spawn(async move {
        let mut seen = Vec::new();
        loop {
            match events.recv().await {
                Ok(Event::TurnFinished { .. }) => return seen,
                Ok(e @ Event::Compacted { .. }) => seen.push(e),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return seen,
            }
        }
    });
    let summary = agent
        .run_turn(&w.session, "Look at every part.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.end, TurnEnd::Answered, "{:?}", summary.error);
    assert_eq!(summary.steps as usize, STEPS + 1);
    assert_eq!(summary.tool_calls as usize, STEPS);

    let bodies = w.requests();
    let compactions: Vec<usize> = (0..bodies.len())
        .filter(|&i| is_compaction(&bodies[i]))
        .collect();
    assert!(compactions.len() >= 2, "{} summaries", compactions.len());
    assert_eq!(bodies.len(), STEPS + 1 + compactions.len());

    // Every request fits the window (as the server counts tokens, not as Podcode estimates).
    for (i, b) in bodies.iter().enumerate() {
        assert!(
            reported_tokens(b) < WINDOW,
            "request {i}: {} tokens",
            reported_tokens(b)
        );
    }

    // Pruning came first: a request carried a pruned marker before any summary was asked for.
    let marker = pruned_output_text("look", "{\"n\":1}");
    let first_pruned = bodies.iter().position(|b| carries(b, &marker)).unwrap();
    assert!(
        first_pruned < compactions[0],
        "{first_pruned} vs {}",
        compactions[0]
    );

    // Each compaction request is well-formed and its summary is what later requests carry.
    for (k, &i) in compactions.iter().enumerate() {
        let b = &bodies[i];
        assert!(b.get("tools").is_none(), "no tools in a summary request");
        assert_valid_openai_request(b);
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "system");
        let last = msgs.last().unwrap();
        assert_eq!(last["role"], "user");
        assert!(
            last["content"]
                .as_str()
                .unwrap()
                .ends_with(COMPACTION_REQUEST)
        );
        assert!(
            msgs.iter().all(|m| m["role"] != "tool"),
            "tool blocks flattened"
        );
        let next = &bodies[i + 1];
        assert!(!is_compaction(next));
        let carried = summary_text(&format!(
            "SUMMARY-{}: task is to look at every part.",
            k + 1
        ));
        assert_eq!(next["messages"][1]["role"], "user");
        assert!(
            next["messages"][1]["content"]
                .as_str()
                .unwrap()
                .starts_with(&carried),
            "{}",
            next["messages"][1]
        );
        if k > 0 {
            // The earlier summary went into the later one's request.
            let prev = format!("SUMMARY-{}", k);
            assert!(b.to_string().contains(&prev));
        }
    }
    for b in &bodies {
        assert_valid_openai_request(b);
    }

    let events = watcher.await.unwrap();
    let compacted: Vec<(u32, u32, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Compacted {
                pruned,
                summarized,
                reason,
                ..
            } => Some((*pruned, *summarized, reason.clone())),
            _ => None,
        })
        .collect();
    assert!(compacted[0].0 > 0 && compacted[0].1 == 0, "{compacted:?}");
    assert!(compacted.iter().all(|c| c.2 == "auto"));
    assert_eq!(
        compacted.iter().filter(|c| c.1 > 0).count(),
        compactions.len()
    );

    // The store still holds every original message and output.
    let calls = w.store.tool_calls(&w.session).unwrap();
    assert_eq!(calls.len(), STEPS);
    for c in &calls {
        assert_eq!(c.output, look_output(c.args["n"].as_u64().unwrap()));
    }
    let messages = w.store.messages(&w.session).unwrap();
    let assistants = messages.iter().filter(|m| m.role == "assistant").count();
    assert_eq!(assistants, STEPS + 1);
    assert_eq!(
        messages.iter().filter(|m| m.role == "system").count(),
        compacted.len()
    );

    // A resumed session sends what the running one did: the last summary, then the tail.
    let resumed = load_history(&w.store, &w.session).unwrap();
    let last_summary = format!("SUMMARY-{}", compactions.len());
    assert!(matches!(&resumed[0].parts[0], Part::Text { text } if text.contains(&last_summary)));
    assert!(estimate_messages(&resumed) < WINDOW);
    assert_valid(&resumed);

    // Token totals are exactly what the server reported.
    let stored = w.store.session_usage(&w.session).unwrap().unwrap();
    assert_eq!(stored, *scripted.lock().unwrap());
    assert_eq!(summary.usage.input_tokens, stored.input_tokens);
    assert_eq!(summary.usage.output_tokens, stored.output_tokens);
}

const OPENAI_OVERFLOW: &str = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130382 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
const ANTHROPIC_OVERFLOW: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;

async fn overflow_then_retry(anthropic: bool, body: &str) {
    let w = world(
        vec![
            Reply::new().tool_call("call_1", "look", "{\"n\":1}"),
            Reply::new().text("Part 1 looked at."),
            Reply::raw(400, "application/json", body),
            Reply::new().text("SUMMARY: looked at part 1."),
            Reply::new().text("Continuing from the summary."),
        ],
        Opts {
            tools: vec![look()],
            anthropic,
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| {
        o.model_info = ModelInfo {
            context: 200_000,
            ..small_model()
        };
    });
    let first = agent
        .run_turn(&w.session, "Look at part 1.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(first.end, TurnEnd::Answered);
    let mut events = w.runtime.subscribe();
    let second = agent
        .run_turn(&w.session, "Now the rest.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(second.end, TurnEnd::Answered, "{:?}", second.error);
    assert_eq!(second.error, None);
    let bodies = w.requests();
    assert_eq!(bodies.len(), 5);
    let system_of = |b: &Value| {
        if anthropic {
            b["system"][0]["text"].clone()
        } else {
            b["messages"][0]["content"].clone()
        }
    };
    assert_eq!(system_of(&bodies[3]), COMPACTION_PROMPT);
    assert!(bodies[3].get("tools").is_none());
    let retried = bodies[4].to_string();
    assert!(retried.contains("SUMMARY: looked at part 1."), "{retried}");
    assert!(retried.contains("Now the rest."));
    let reasons: Vec<String> = collect(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::Compacted {
                reason, summarized, ..
            } if summarized > 0 => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, vec!["overflow".to_string()]);
    // The refused step is recorded as an error and left out of what is sent again.
    let history = load_history(&w.store, &w.session).unwrap();
    assert_valid(&history);
    assert!(matches!(&history[0].parts[0], Part::Text { text } if text.contains("SUMMARY")));
}

#[tokio::test]
async fn an_openai_overflow_error_compacts_and_retries_once() {
    overflow_then_retry(false, OPENAI_OVERFLOW).await;
}

#[tokio::test]
async fn an_anthropic_prompt_too_long_error_compacts_and_retries_once() {
    overflow_then_retry(true, ANTHROPIC_OVERFLOW).await;
}

#[tokio::test]
async fn a_second_overflow_ends_the_turn_with_the_providers_error() {
    let w = world(
        vec![
            Reply::new().tool_call("call_1", "look", "{\"n\":1}"),
            Reply::new().text("Part 1 looked at."),
            Reply::raw(400, "application/json", OPENAI_OVERFLOW),
            Reply::new().text("SUMMARY: part 1."),
            Reply::raw(400, "application/json", OPENAI_OVERFLOW),
        ],
        Opts {
            tools: vec![look()],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| o.model_info = small_model());
    agent
        .run_turn(&w.session, "Look at part 1.", CancellationToken::new())
        .await
        .unwrap();
    let second = agent
        .run_turn(&w.session, "Again.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(second.end, TurnEnd::Error);
    let error = second.error.unwrap();
    assert!(error.contains("maximum context length"), "{error}");
    assert_eq!(w.requests().len(), 5, "one retry, not more");
}

#[tokio::test]
async fn token_and_cost_totals_match_the_scripted_usage_exactly() {
    let w = world(
        vec![
            Reply::new()
                .tool_call("call_1", "look", "{\"n\":1}")
                .usage(1_000, 50)
                .cache(400, 0)
                .reasoning_tokens(10),
            Reply::new().text("Done.").usage(1_500, 30).cache(1_000, 0),
        ],
        Opts {
            tools: vec![look()],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| {
        o.model_info = ModelInfo {
            context: 100_000,
            cost: Some(Prices {
                input: 2.0,
                output: 8.0,
                cache_read: Some(0.5),
                cache_write: None,
            }),
            ..small_model()
        };
    });
    let mut events = w.runtime.subscribe();
    let summary = agent
        .run_turn(&w.session, "Look.", CancellationToken::new())
        .await
        .unwrap();
    // (600 × 2 + 400 × 0.5 + 50 × 8) + (500 × 2 + 1000 × 0.5 + 30 × 8), per million.
    let cost = (1_800.0 + 1_740.0) / 1_000_000.0;
    let expected = StepUsage {
        input_tokens: 2_500,
        output_tokens: 80,
        cache_read_tokens: 1_400,
        cache_write_tokens: 0,
        reasoning_tokens: 10,
        cost: Some(cost),
    };
    let stored = w.store.session_usage(&w.session).unwrap().unwrap();
    let close = |a: Option<f64>| (a.unwrap() - cost).abs() < 1e-12;
    assert!(close(stored.cost), "{stored:?}");
    assert_eq!(
        StepUsage {
            cost: None,
            ..stored
        },
        StepUsage {
            cost: None,
            ..expected
        }
    );
    assert!(close(summary.usage.cost));
    assert_eq!(
        StepUsage {
            cost: None,
            ..summary.usage
        },
        StepUsage {
            cost: None,
            ..expected
        }
    );
    let usage_events: Vec<(StepUsage, u64, u64)> = collect(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::Usage {
                total,
                context_tokens,
                context_window,
                ..
            } => Some((total, context_tokens, context_window)),
            _ => None,
        })
        .collect();
    assert_eq!(usage_events.len(), 2);
    assert_eq!(usage_events[0].0.input_tokens, 1_000);
    assert_eq!((usage_events[1].1, usage_events[1].2), (1_500, 100_000));
    assert!(close(usage_events[1].0.cost));
    // Each step part keeps its own message's usage.
    let first_cost = (1_800.0) / 1_000_000.0;
    let step_costs: Vec<f64> = w
        .store
        .messages(&w.session)
        .unwrap()
        .iter()
        .flat_map(|m| w.store.parts(&m.id).unwrap())
        .filter(|p| p.kind == "step")
        .filter_map(|p| p.data["usage"]["cost"].as_f64())
        .collect();
    assert_eq!(step_costs.len(), 2);
    assert!((step_costs[0] - first_cost).abs() < 1e-12);
}

#[tokio::test]
async fn config_prices_reach_the_agent_through_model_info() {
    // The same override path the engine uses: `[provider.x.models."id"]`.
    let mut config = podcode_config::Config::default();
    let mut provider = podcode_config::ProviderConfig::default();
    provider.models.insert(
        "test".into(),
        podcode_config::ModelOverride {
            context: Some(8_000),
            output: Some(1_000),
            cost: Some(CostOverride {
                input: Some(1.0),
                output: Some(2.0),
                ..Default::default()
            }),
        },
    );
    config.provider.insert("scripted".into(), provider);
    let info = podcode_providers::model_info(
        &config,
        &podcode_providers::ModelRef::parse("scripted/test").unwrap(),
    );
    assert!(info.known);
    let w = world(
        vec![Reply::new().text("Hi.").usage(1_000_000, 1_000_000)],
        Opts::default(),
    );
    let agent = w.agent(AgentProfile::build(), |o| o.model_info = info);
    agent
        .run_turn(&w.session, "Hi.", CancellationToken::new())
        .await
        .unwrap();
    let stored = w.store.session_usage(&w.session).unwrap().unwrap();
    assert_eq!(stored.cost, Some(3.0));
}

#[tokio::test]
async fn an_unknown_model_is_warned_about_once() {
    let w = world(
        vec![Reply::new().text("One."), Reply::new().text("Two.")],
        Opts::default(),
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let mut events = w.runtime.subscribe();
    for prompt in ["a", "b"] {
        agent
            .run_turn(&w.session, prompt, CancellationToken::new())
            .await
            .unwrap();
    }
    let warnings: Vec<String> = collect(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            Event::Warning { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("scripted/test is not in Podcode's model catalog"));
}

#[tokio::test]
async fn anthropic_requests_carry_cache_breakpoints() {
    let w = world(
        vec![
            Reply::new().tool_call("toolu_1", "look", "{\"n\":1}"),
            Reply::new().text("Done."),
        ],
        Opts {
            tools: vec![look()],
            anthropic: true,
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| o.model_info = small_model());
    agent
        .run_turn(&w.session, "Look.", CancellationToken::new())
        .await
        .unwrap();
    let eph = json!({"type": "ephemeral"});
    for b in w.requests() {
        assert_eq!(b["system"][0]["cache_control"], eph);
        let tools = b["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], eph);
        let msgs = b["messages"].as_array().unwrap();
        let last = msgs.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(last.last().unwrap()["cache_control"], eph);
        assert!(b.to_string().matches("cache_control").count() <= 4);
    }
    // The second request's breakpoints sit on the tool call and its result.
    let second = &w.requests()[1];
    let msgs = second["messages"].as_array().unwrap();
    let n = msgs.len();
    assert_eq!(msgs[n - 2]["content"][0]["type"], "tool_use");
    assert_eq!(msgs[n - 2]["content"][0]["cache_control"], eph);
    assert_eq!(msgs[n - 1]["content"][0]["type"], "tool_result");
}

#[tokio::test]
async fn manual_compaction_summarises_and_a_resumed_session_sends_the_summary() {
    let w = world(
        vec![
            Reply::new().tool_call("call_1", "look", "{\"n\":1}"),
            Reply::new().tool_call("call_2", "look", "{\"n\":2}"),
            Reply::new().tool_call("call_3", "look", "{\"n\":3}"),
            Reply::new().text("Three parts looked at."),
            Reply::new().text("SUMMARY: parts 1-3 looked at."),
            Reply::new().text("Next."),
        ],
        Opts {
            tools: vec![look()],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| {
        o.model_info = ModelInfo {
            context: 100_000,
            ..small_model()
        }
    });
    agent
        .run_turn(
            &w.session,
            "Look at parts 1 to 3.",
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let mut events = w.runtime.subscribe();
    assert!(
        agent
            .compact(&w.session, CancellationToken::new())
            .await
            .unwrap()
    );
    let compacted = collect(&mut events).into_iter().find_map(|e| match e {
        Event::Compacted { reason, .. } => Some(reason),
        _ => None,
    });
    assert_eq!(compacted.as_deref(), Some("manual"));
    agent
        .run_turn(&w.session, "Go on.", CancellationToken::new())
        .await
        .unwrap();
    let last = w.requests().last().unwrap().clone();
    assert!(
        last["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("SUMMARY: parts 1-3 looked at.")
    );
    // Nothing lost: the three original outputs are still stored.
    assert_eq!(w.store.tool_calls(&w.session).unwrap().len(), 3);
}
