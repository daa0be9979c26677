//! One `Dirs` value per process, handed to every engine: two engines in one process (as
//! `podcode acp` and `podcode serve` run one engine per directory), each given its own home
//! and config places, see their own opencode folders — agent files, tool files,
//! `OPENCODE_CONFIG_DIR` — and nobody else's, and each notices its own plugins' helper edits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use podcode_core::testing::ScratchWorkspace;
use podcode_core::{Dirs, Engine, ToolSource};

/// An opencode tool file whose answer names its workspace, through a helper it imports.
fn tool_file(name: &str) -> String {
    format!(
        "import {{ tool }} from \"@opencode-ai/plugin\"\nimport {{ label }} from \"./lib/label.mjs\"\nexport default tool({{\n  description: \"{name} tool\",\n  args: {{}},\n  async execute() {{ return label(\"{name}\") }},\n}})\n"
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace whose opencode global dir (under its own home) holds `<name>_tool` and the
/// agent `<name>`.
fn workspace(name: &str) -> (ScratchWorkspace, Dirs) {
    // No model is asked in this test; the URL is never dialled.
    let ws = ScratchWorkspace::new("http://127.0.0.1:9", "").unwrap();
    let dirs = ws.dirs();
    let oc = &dirs.opencode.config_dir;
    write(&oc.join(format!("tools/{name}_tool.ts")), &tool_file(name));
    write(
        &oc.join("tools/lib/label.mjs"),
        "export const label = (s) => `label ${s}`\n",
    );
    write(
        &oc.join(format!("agents/{name}.md")),
        &format!("---\ndescription: the {name} agent\nmode: subagent\n---\nYou are {name}.\n"),
    );
    (ws, dirs)
}

async fn ids(engine: &Engine) -> Vec<String> {
    let set = engine.tool_sets().await.latest();
    let mut ids: Vec<String> = set
        .registry
        .tools()
        .iter()
        .map(|t| t.tool.spec().id.clone())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_in_one_process_each_see_their_own_config_places() {
    let (a, a_dirs) = workspace("alpha");
    let (b, mut b_dirs) = workspace("beta");
    // B's user also has an `OPENCODE_CONFIG_DIR` kit.
    let kit = b.root().join("kit");
    write(&kit.join("tools/kit_tool.ts"), &tool_file("kit"));
    write(
        &kit.join("tools/lib/label.mjs"),
        "export const label = (s) => `kit ${s}`\n",
    );
    b_dirs.opencode.custom_dir = Some(kit);

    let ea = Arc::new(Engine::load_in(Some(a.repo()), a_dirs.clone()).unwrap());
    let eb = Arc::new(Engine::load_in(Some(b.repo()), b_dirs).unwrap());

    let agents = |e: &Engine| e.agents().names(|_| true);
    assert!(
        agents(&ea).contains(&"alpha".to_string()),
        "{:?}",
        agents(&ea)
    );
    assert!(
        !agents(&ea).contains(&"beta".to_string()),
        "{:?}",
        agents(&ea)
    );
    assert!(
        agents(&eb).contains(&"beta".to_string()),
        "{:?}",
        agents(&eb)
    );
    assert!(
        !agents(&eb).contains(&"alpha".to_string()),
        "{:?}",
        agents(&eb)
    );

    let a_ids = ids(&ea).await;
    let b_ids = ids(&eb).await;
    assert!(a_ids.contains(&"alpha_tool".to_string()), "{a_ids:?}");
    assert!(
        !a_ids.iter().any(|i| i == "beta_tool" || i == "kit_tool"),
        "{a_ids:?}"
    );
    assert!(b_ids.contains(&"beta_tool".to_string()), "{b_ids:?}");
    assert!(b_ids.contains(&"kit_tool".to_string()), "{b_ids:?}");
    assert!(!b_ids.contains(&"alpha_tool".to_string()), "{b_ids:?}");

    // B loaded last; A still watches its own plugin's helper, so editing it reloads A.
    let a_plugins = ea.tool_sets().await.plugins().unwrap().clone();
    let before = a_plugins.stamp();
    write(
        &a_dirs.opencode.config_dir.join("tools/lib/label.mjs"),
        "export const label = (s) => `tag ${s}`\n",
    );
    assert_ne!(
        a_plugins.stamp(),
        before,
        "an edit of A's helper is seen by A's engine"
    );

    ea.shutdown().await;
    eb.shutdown().await;
}
