//! opencode's `opencode.json(c)` files as layers of a workspace's config: precedence
//! (Podcode's own file wins where both speak), lists that add up, and what an untrusted
//! project's opencode file may not do.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use podcode_config::{OpencodeDirs, ProjectAccess, load_workspace, opencode_files};
use podcode_protocol::{PermissionAction, PermissionRule};

struct Ws {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn ws(files: &[(&str, &str)]) -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    for (rel, text) in files {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    Ws {
        _tmp: tmp,
        root,
        home,
    }
}

fn load(w: &Ws, trusted: bool) -> podcode_config::LoadedConfig {
    let home = w.home.display().to_string();
    let oc = OpencodeDirs::from_vars(|k| (k == "HOME").then(|| home.clone()));
    let found = opencode_files(&oc, &w.root, &w.root);
    load_workspace(
        &w.home.join(".config/podcode/config.toml"),
        Some(&w.root.join(".podcode/config.toml")),
        &found,
        ProjectAccess {
            root: &w.root,
            trusted,
            secrets: false,
        },
    )
    .unwrap()
}

const GLOBAL_OC: &str = r#"{
  // the user's own opencode setup
  "plugin": ["opencode-wakatime"],
  "tools": {"webfetch": false},
}"#;

const PROJECT_OC: &str = r#"{
  "$schema": "https://opencode.ai/config.json",
  "plugin": ["@acme/opencode-deploy@1.2.3"],
  "mcp": {"docs": {"type": "local", "command": ["node", "docs-server.js"]}},
  "tools": {"github_*": false},
  "permission": {"bash": {"git push*": "deny", "npm test": "allow"}, "edit": "ask"},
  "model": "anthropic/claude-sonnet-4",
}"#;

#[test]
fn opencode_files_are_layers_under_podcodes_own() {
    let w = ws(&[
        ("home/.config/opencode/opencode.jsonc", GLOBAL_OC),
        ("repo/opencode.json", PROJECT_OC),
        (
            "repo/.podcode/config.toml",
            "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"deny\"\n[mcp.docs]\ncommand = \"podcode-docs\"\n",
        ),
    ]);
    let loaded = load(&w, true);
    let c = &loaded.config;
    assert_eq!(
        c.plugins,
        ["opencode-wakatime", "@acme/opencode-deploy@1.2.3"]
    );
    assert_eq!(c.tools.disable, ["webfetch", "github_*"]);
    // Podcode's project file speaks about the same server: it wins, field by field.
    assert_eq!(c.mcp["docs"].command.as_deref(), Some("podcode-docs"));
    assert_eq!(c.mcp["docs"].args, ["docs-server.js"]);
    // Rules in order: opencode's, then Podcode's (the last match wins).
    assert_eq!(
        c.permission,
        [
            PermissionRule::new("bash", "git push*", PermissionAction::Deny),
            PermissionRule::new("bash", "npm test", PermissionAction::Allow),
            PermissionRule::new("edit", "*", PermissionAction::Ask),
            PermissionRule::new("edit", "*", PermissionAction::Deny),
        ]
    );
    assert_eq!(c.model, None, "opencode's model names are not Podcode's");
    let reports: Vec<(&Path, &[String], &[String])> = loaded
        .opencode
        .iter()
        .map(|r| (r.file.as_path(), r.taken.as_slice(), r.not_used.as_slice()))
        .collect();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[1].0, w.root.join("opencode.json"));
    assert_eq!(
        reports[1].1,
        [
            "plugin @acme/opencode-deploy@1.2.3",
            "mcp docs",
            "tools off: github_*",
            "permission (3 rules)"
        ]
    );
    assert_eq!(reports[1].2, ["model"]);
}

#[test]
fn an_untrusted_projects_opencode_file_may_only_narrow() {
    let w = ws(&[
        ("home/.config/opencode/opencode.json", GLOBAL_OC),
        ("repo/opencode.json", PROJECT_OC),
    ]);
    let loaded = load(&w, false);
    let c = &loaded.config;
    assert_eq!(
        c.plugins,
        ["opencode-wakatime"],
        "the project's npm plugin waits for trust"
    );
    assert!(
        c.mcp.is_empty(),
        "no server of the repository's choosing starts"
    );
    assert_eq!(
        c.tools.disable,
        ["webfetch", "github_*"],
        "switching off narrows"
    );
    assert_eq!(
        c.permission,
        [
            PermissionRule::new("bash", "git push*", PermissionAction::Deny),
            PermissionRule::new("edit", "*", PermissionAction::Ask),
        ]
    );
    let file = w.root.join("opencode.json");
    assert_eq!(
        loaded.warnings,
        [format!(
            "{}: this workspace is not trusted, so its config may only ask or deny, not allow; ignored: allow bash npm test, plugins @acme/opencode-deploy@1.2.3, mcp docs (run `podcode trust` to trust it)",
            file.display()
        )]
    );
}

#[test]
fn a_broken_opencode_file_names_itself() {
    let w = ws(&[(
        "repo/opencode.jsonc",
        "{\n  \"plugin\": [\"a\",\n  \"mcp\": 3\n}",
    )]);
    let home = w.home.display().to_string();
    let oc = OpencodeDirs::from_vars(|k| (k == "HOME").then(|| home.clone()));
    let found = opencode_files(&oc, &w.root, &w.root);
    let access = ProjectAccess {
        root: &w.root,
        trusted: true,
        secrets: false,
    };
    let err = load_workspace(&w.home.join("c.toml"), None, &found, access).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:3:", w.root.join("opencode.jsonc").display())),
        "{err}"
    );
}
