//! `ToolSet::build` merges tool sources the way the engine does: built-ins first, later
//! sources win a collision (reported), protected ids are refused (reported) while the
//! source's other tools load, and each source's problems and hooks are kept.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use async_trait::async_trait;
use podcode_core::{Builtins, ProblemLevel, SourceLoad, ToolSet, ToolSource};
use podcode_protocol::{ToolResult, ToolSpec, Truncation};
use podcode_tools::{SourceKind, Tool, ToolContext, ToolError, ToolOrigin};

struct Named(ToolSpec);

#[async_trait]
impl Tool for Named {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn execute(
        &self,
        _args: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::default())
    }
}

fn tool(id: &str) -> Arc<dyn Tool> {
    Arc::new(Named(ToolSpec {
        id: id.into(),
        description: format!("the {id} tool"),
        parameters: serde_json::json!({"type": "object", "properties": {}}),
        truncation: Truncation::Head,
        idempotent: false,
        timeout_ms: None,
        offered_after: None,
    }))
}

/// A source offering fixed tools under one label.
struct Fixed {
    label: &'static str,
    ids: Vec<&'static str>,
}

#[async_trait]
impl ToolSource for Fixed {
    fn name(&self) -> &'static str {
        self.label
    }
    async fn load(&self) -> SourceLoad {
        let mut load = SourceLoad {
            groups: vec![(
                ToolOrigin::new(SourceKind::Plugin, self.label),
                self.ids.iter().map(|id| tool(id)).collect(),
            )],
            ..SourceLoad::default()
        };
        load.problem(
            self.label,
            ProblemLevel::Warning,
            format!("{} loaded", self.label),
        );
        load
    }
}

#[tokio::test]
async fn sources_merge_in_order_with_every_replacement_and_refusal_reported() {
    let sources: Vec<Arc<dyn ToolSource>> = vec![
        Arc::new(Builtins::default()),
        Arc::new(Fixed {
            label: "first.ts",
            ids: vec!["deploy", "read", "webfetch_lite"],
        }),
        Arc::new(Fixed {
            label: "second.ts",
            ids: vec!["deploy"],
        }),
    ];
    let set = ToolSet::build(&sources).await;
    let registry = &set.registry;

    // Built-ins are there, protected.
    let read = registry.get("read").expect("built-in read");
    assert!(read.protected);
    assert_eq!(read.source.kind, SourceKind::Builtin);
    // The later source wins a collision between two custom tools.
    assert_eq!(registry.get("deploy").unwrap().source.name, "second.ts");
    assert_eq!(
        registry.get("deploy").unwrap().replaced.as_deref(),
        Some("first.ts")
    );
    // The refused protected id did not stop the source's other tool.
    assert!(registry.get("webfetch_lite").is_some());

    let problems: Vec<String> = registry
        .problems()
        .iter()
        .map(|p| p.message.clone())
        .collect();
    assert!(
        problems.contains(&"plugin: refusing to override protected built-in tool read".into()),
        "{problems:?}"
    );
    assert!(
        problems.contains(&"tool deploy from second.ts shadows the one from first.ts".into()),
        "{problems:?}"
    );
    assert!(problems.contains(&"first.ts loaded".into()));
    assert!(problems.contains(&"second.ts loaded".into()));
}

/// A plugin whose tool imports a helper module of its own.
const GREETER: &str = r#"import { word } from "./lib/word.mjs";
export const Greeter = async () => ({
  tool: { greet: { description: "Says the word", args: {}, async execute() { return word } } },
});
"#;

/// The first refresh after the first load keeps the set: the load's stamp covers the
/// helpers its plugins imported (the set's builder, stamping before the load, could not
/// know them, so every plugin was loaded again and the sidecar restarted before the first
/// model request). An edit to the helper still rebuilds the set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_refresh_keeps_plugins_that_import_helpers_and_an_edit_to_one_rebuilds() {
    let ws = podcode_core::testing::ScratchWorkspace::new("http://127.0.0.1:9", "").unwrap();
    let dir = ws.root().join("config/plugins");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/word.mjs"), "export const word = \"one\";\n").unwrap();
    std::fs::write(dir.join("greeter.mjs"), GREETER).unwrap();
    let engine = ws.engine().unwrap();
    let sets = engine.tool_sets().await;
    assert!(
        sets.latest().registry.get("greet").is_some(),
        "the plugin tool loaded"
    );
    assert_eq!(
        sets.refresh().await.generation,
        0,
        "nothing changed: no second load"
    );
    std::fs::write(dir.join("lib/word.mjs"), "export const word = \"three\";\n").unwrap();
    assert_eq!(sets.refresh().await.generation, 1, "the helper changed");
    engine.shutdown().await;
}
