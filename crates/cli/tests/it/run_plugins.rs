//! Plugins inside the agent loop: a model driving `podcode run` calls an opencode tool file
//! (the seed's `math` example, unchanged) through the Bun/Node sidecar, and a Podcode
//! plugin's `chat.message` / `chat.params` hooks shape what is sent to the model.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;

const MATH: &str = r#"import { tool } from "@opencode-ai/plugin"

export const add = tool({
  description: "Add two numbers",
  args: {
    a: tool.schema.number().describe("First number"),
    b: tool.schema.number().describe("Second number"),
  },
  async execute(args) {
    return args.a + args.b
  },
})
"#;

const CHAT_HOOKS: &str = r#"export default {
  id: "chat-hooks",
  server() {
    return {
      "chat.message": async (_input, output) => {
        output.parts[0].text = output.parts[0].text + " (seen by chat.message)"
      },
      "chat.params": async (_input, output) => {
        output.temperature = 0.25
      },
      tool: () => [],
    }
  },
}
"#;

#[test]
fn the_model_calls_a_plugin_tool_and_chat_hooks_shape_the_requests() {
    let env = Env::new(vec![
        Reply::new().tool_call("call_1", "math_add", r#"{"a": 2, "b": 3}"#),
        Reply::new().text("2 + 3 = 5."),
    ]);
    env.write(".opencode/tools/math.ts", MATH);
    env.write(".podcode/plugins/chat-hooks.mjs", CHAT_HOOKS);
    assert!(env.run(&["trust"]).status.success());

    let out = env.run(&["run", "add 2 and 3", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2 + 3 = 5."),
        "{}",
        text(&out.stdout)
    );

    let requests = env.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"math_add"), "{tools:?}");
    let schema = &first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "math_add")
        .unwrap()["function"]["parameters"];
    assert_eq!(schema["properties"]["a"]["description"], "First number");
    let user = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    let content = match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    assert!(
        content.contains("add 2 and 3 (seen by chat.message)"),
        "{content}"
    );
    assert_eq!(first["temperature"], 0.25);
    assert_eq!(
        tool_messages(&requests[1]),
        vec![("call_1".to_string(), "5".to_string())]
    );
}

#[test]
fn an_untrusted_workspace_keeps_its_plugins_out_of_the_model_request() {
    let env = Env::new(vec![Reply::new().text("ok")]);
    env.write(".opencode/tools/math.ts", MATH);
    let out = env.run(&["run", "hello", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Vec<String> = env.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!tools.contains(&"math_add".to_string()), "{tools:?}");
    assert!(tools.contains(&"read".to_string()));
}

const MARK_HOOK: &str = r#"export default {
  id: "mark",
  server() {
    return {
      "tool.execute.after": async (_input, output) => {
        output.output = output.output + " [mark v1]"
      },
      tool: () => [],
    }
  },
}
"#;

#[test]
fn a_plugin_added_during_a_run_hooks_the_calls_after_it() {
    let install = "mkdir -p .podcode/plugins && cp mark.txt .podcode/plugins/mark.mjs";
    let env = Env::new(vec![
        bash_call("c1", install, "Add a plugin"),
        bash_call("c2", "echo hi", "Say hi"),
        Reply::new().text("Done."),
    ]);
    env.write("mark.txt", MARK_HOOK);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "add the plugin, then say hi", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 3);
    let (_, first) = &tool_messages(&reqs[1])[0];
    assert!(!first.contains("[mark"), "no plugin yet: {first}");
    let (_, second) = &tool_messages(&reqs[2])[1];
    assert!(
        second.starts_with("hi") && second.ends_with(" [mark v1]"),
        "the new plugin's hook runs: {second}"
    );
}

const BEFORE_HOOK: &str = r#"export default {
  id: "watch",
  server() {
    return {
      "tool.execute.before": async () => {},
      tool: () => [],
    }
  },
}
"#;

#[test]
fn a_reload_replaces_the_plugin_sidecar_instead_of_adding_one() {
    let install = "mkdir -p .podcode/plugins && cp mark.txt .podcode/plugins/mark.mjs";
    let count = "ps -eo args | grep -F \"$PODCODE_DATA_DIR/plugin-host\" | grep -v grep | wc -l";
    let env = Env::new(vec![
        bash_call("c1", install, "Add a plugin"),
        bash_call("c2", count, "Count sidecars"),
        Reply::new().text("Done."),
    ]);
    env.write(".podcode/plugins/watch.mjs", BEFORE_HOOK);
    env.write("mark.txt", MARK_HOOK);
    // Unsandboxed: a sandboxed bash sees no process outside its own PID namespace (and may
    // not write `.podcode`), and this test counts the sidecars from inside a bash call.
    env.write(
        ".podcode/config.toml",
        "model = \"scripted/test\"\n[sandbox]\nmode = \"full\"\n",
    );
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "add a plugin, then count", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    let (_, counted) = &tool_messages(&reqs[2])[1];
    assert_eq!(
        counted.trim_end_matches(" [mark v1]").trim(),
        "1",
        "one sidecar after the reload: {counted}"
    );
}

const LABELLED: &str = r#"import { tool } from "@opencode-ai/plugin"
import { label } from "./lib/label.mjs"
export default tool({ description: label, args: {}, async execute() { return label } })
"#;

#[test]
fn an_edited_helper_reaches_the_next_request_and_tools_json_without_touching_the_tool_file() {
    let edit = "echo 'export const label = \"second label\"' > .opencode/tools/lib/label.mjs";
    let env = Env::new(vec![
        bash_call("c1", edit, "Edit the helper"),
        Reply::new().text("Done."),
    ]);
    env.write(".opencode/tools/labelled.mjs", LABELLED);
    env.write(
        ".opencode/tools/lib/label.mjs",
        "export const label = \"first label\"\n",
    );
    assert!(env.run(&["trust"]).status.success());
    let listed = text(&env.run(&["tools", "--json"]).stdout);
    assert!(listed.contains("first label"), "{listed}");

    let out = env.run(&["run", "edit the label helper", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].to_string().contains("first label"));
    assert!(
        reqs[1].to_string().contains("second label"),
        "the running session reloaded the tool"
    );
    let listed = text(&env.run(&["tools", "--json"]).stdout);
    assert!(listed.contains("second label"), "{listed}");
}

#[test]
fn plugins_shows_load_times_and_the_cache_and_refresh_drops_it() {
    let env = Env::new(vec![]);
    env.write(".opencode/tools/labelled.mjs", LABELLED);
    env.write(
        ".opencode/tools/lib/label.mjs",
        "export const label = \"first label\"\n",
    );
    assert!(env.run(&["trust"]).status.success());
    let line = |args: &[&str]| -> String {
        let out = text(&env.run(args).stdout);
        out.lines()
            .find(|l| l.starts_with("loaded   ") && l.contains("labelled.mjs"))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string()
    };
    let first = line(&["plugins"]);
    assert!(
        first.contains("(opencode-tools, ") && first.ends_with(" ms)"),
        "{first}"
    );
    let second = line(&["plugins"]);
    assert!(second.ends_with(" ms, from cache)"), "{second}");
    let refreshed = line(&["plugins", "--refresh"]);
    assert!(refreshed.ends_with(" ms)"), "{refreshed}");
}

#[test]
fn a_process_a_plugin_spawned_does_not_outlive_tool_call() {
    let env = Env::new(vec![]);
    env.write(
        ".opencode/tools/sleeper.mjs",
        "import { tool } from \"@opencode-ai/plugin\"\nimport { spawn } from \"node:child_process\"\nexport default tool({ description: \"spawns a long sleep\", args: {}, async execute() { return String(spawn(\"sleep\", [\"986\"], { stdio: \"ignore\" }).pid) } })\n",
    );
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["tool", "call", "sleeper", "{}", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The plugin host runs in its own PID namespace, so the pid the plugin returns means
    // nothing here: the sleep is found by its arguments instead.
    assert!(
        text(&out.stdout)
            .lines()
            .any(|l| l.trim().parse::<u32>().is_ok()),
        "{}",
        text(&out.stdout)
    );
    let running = || {
        std::fs::read_dir("/proc").is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\0986\0")
            })
        })
    };
    // Bounded far above how long a busy machine takes to reap a killed process.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if !running() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!running(), "sleep 986 outlived podcode tool call");
}

const TOASTER: &str = r#"export const Toaster = async ({ client }) => ({
  tool: {
    deploy: {
      description: "Pretends to deploy and says so with a toast",
      args: {},
      async execute() {
        await client.tui.showToast({ body: { title: "Deploy", message: "api is live", variant: "success" } })
        return "deployed"
      },
    },
  },
})
"#;

#[test]
fn a_plugin_toast_is_printed_on_stderr_and_is_an_event_in_json() {
    let script = || {
        vec![
            Reply::new().tool_call("call_1", "deploy", "{}"),
            Reply::new().text("Deployed."),
        ]
    };
    let env = Env::new(script());
    env.write(".opencode/plugins/toaster.mjs", TOASTER);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "deploy it", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("✓ Deploy: api is live\n"),
        "{}",
        text(&out.stderr)
    );

    for reply in script() {
        env.server.push(reply);
    }
    let out = env.run(&["run", "deploy again", "--yes", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let toasts: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "toast")
        .collect();
    assert_eq!(
        toasts,
        [
            serde_json::json!({"type": "toast", "title": "Deploy", "message": "api is live", "variant": "success"})
        ]
    );
}
