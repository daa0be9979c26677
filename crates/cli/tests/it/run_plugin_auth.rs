//! opencode's `auth` hook through the installed binary: `podcode auth login` runs a plugin's
//! login (a prompt the plugin checks, an OAuth URL, a pasted code, the callback) and stores
//! the tokens in opencode's shape; `podcode run` then sends every model request through the
//! plugin's `fetch` (its loader ran with the stored tokens: the scripted server sees the
//! plugin's bearer token and header, the streamed answer arrives whole), and a token the
//! plugin refreshes with `client.auth.set` is stored. Without a plugin, `podcode auth login`
//! stores an API key that a provider without its variable then uses; `auth list` and
//! `auth logout` show and forget what is stored.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use std::io::Write;
use std::process::Stdio;

use podcode_providers::testing::Reply;
use serde_json::{Value, json};

/// Written the way published auth plugins are: an OAuth method with a prompt, a loader that
/// returns a `fetch` signing each request with the stored access token (refreshed when
/// expired, saved back through `client.auth.set`), and a manual API-key method.
pub(crate) const SIGNER: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const ScriptedAuth: Plugin = async ({ client, directory }) => ({
  auth: {
    provider: "scripted",
    async loader(getAuth, provider) {
      const auth = await getAuth()
      appendFileSync(`${directory}/loader.jsonl`, JSON.stringify({ auth, provider: provider.id, models: Object.keys(provider.models) }) + "\n")
      if (auth.type !== "oauth") return {}
      return {
        apiKey: "",
        async fetch(input, init) {
          let current = await getAuth()
          if (current.expires < Date.now()) {
            current = { type: "oauth", refresh: current.refresh, access: "access-2", expires: Date.now() + 3600000 }
            await client.auth.set({ path: { id: "scripted" }, body: current })
          }
          const headers = new Headers(init?.headers)
          headers.set("authorization", `Bearer ${current.access}`)
          headers.set("x-signed-by", "scripted-auth")
          return fetch(input, { ...init, headers })
        },
      }
    },
    methods: [
      {
        type: "oauth",
        label: "Scripted account",
        prompts: [{ type: "text", key: "workspace", message: "Workspace name", validate: (v) => (v.trim() ? undefined : "a workspace is required") }],
        async authorize(inputs) {
          return {
            url: `https://login.example.invalid/authorize?workspace=${inputs.workspace}`,
            instructions: "Sign in, then paste the code shown",
            method: "code",
            async callback(code) {
              if (code !== "code-42") return { type: "failed" }
              return { type: "success", refresh: "refresh-1", access: "access-1", expires: 0, accountId: inputs.workspace }
            },
          }
        },
      },
      { type: "api", label: "Manually enter API key" },
    ],
  },
})
"#;

fn login(env: &Env, args: &[&str], answers: &str) -> std::process::Output {
    let mut cmd = env.cmd(args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stored(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.root.path().join("data/auth.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_plugin_login_stores_tokens_and_its_fetch_signs_every_model_request() {
    let env = Env::new(vec![Reply::new().text("Signed answer.")]);
    env.write(".opencode/plugins/scripted-auth.ts", SIGNER);
    assert!(env.run(&["trust"]).status.success());

    // An empty answer is refused by the plugin's validate and asked again; a wrong code fails.
    let out = login(
        &env,
        &["auth", "login", "scripted", "--method", "scripted account"],
        "\nteam-a\nwrong\n",
    );
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("Workspace name: a workspace is required"),
        "{err}"
    );
    assert!(
        err.contains("Go to: https://login.example.invalid/authorize?workspace=team-a"),
        "{err}"
    );
    assert!(err.contains("Sign in, then paste the code shown"), "{err}");
    assert!(
        err.contains("the plugin says the scripted login failed; nothing was stored"),
        "{err}"
    );
    assert!(!env.root.path().join("data/auth.json").exists());

    let out = login(
        &env,
        &["auth", "login", "scripted", "--method", "Scripted account"],
        "team-a\ncode-42\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("signed in to scripted (OAuth tokens stored in"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        stored(&env)["scripted"],
        json!({"type": "oauth", "refresh": "refresh-1", "access": "access-1", "expires": 0, "accountId": "team-a"})
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(env.root.path().join("data/auth.json")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }

    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Signed answer."));
    let sent = env.server.recorded();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].headers.get("authorization").map(String::as_str),
        Some("Bearer access-2")
    );
    assert_eq!(
        sent[0].headers.get("x-signed-by").map(String::as_str),
        Some("scripted-auth")
    );
    let loader = env.jsonl("loader.jsonl");
    assert_eq!(loader.len(), 1, "{loader:?}");
    assert_eq!(loader[0]["provider"], "scripted");
    assert_eq!(loader[0]["models"], json!(["test"]));
    assert_eq!(loader[0]["auth"]["access"], "access-1");
    // The refreshed token the plugin saved is what is stored now.
    assert_eq!(stored(&env)["scripted"]["access"], "access-2");

    let out = env.run(&["auth", "list"]);
    let listing = text(&out.stdout);
    assert!(
        listing.contains("scripted")
            && listing.contains("signed in (OAuth tokens stored); signed in by"),
        "{listing}"
    );
}

#[test]
fn without_a_plugin_login_stores_an_api_key_the_provider_then_sends() {
    let env = Env::new(vec![Reply::new().text("Keyed answer.")]);
    // The provider names a key variable that is not set: the stored key stands in for it.
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\napi_key_env = \"SCRIPTED_KEY\"\n",
        env.server.base_url()
    ));
    let out = env.run(&["run", "hello"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("or store one with `podcode auth login scripted`"),
        "{}",
        text(&out.stderr)
    );

    let out = login(&env, &["auth", "login", "--method", "x", "scripted"], "");
    assert!(
        text(&out.stderr).contains("no plugin signs in for scripted, so it has no login methods"),
        "{}",
        text(&out.stderr)
    );
    let out = login(&env, &["auth", "login", "scripted"], "sk-stored-1\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("API key for scripted: "));
    assert_eq!(
        stored(&env)["scripted"],
        json!({"type": "api", "key": "sk-stored-1"})
    );

    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = env.server.recorded();
    assert_eq!(
        sent[0].headers.get("authorization").map(String::as_str),
        Some("Bearer sk-stored-1")
    );

    let out = env.run(&["auth", "logout", "scripted"]);
    assert_eq!(
        text(&out.stdout).trim(),
        "removed the credentials stored for scripted"
    );
    let out = env.run(&["auth", "logout", "scripted"]);
    assert!(
        text(&out.stdout).contains("nothing is stored for scripted"),
        "{}",
        text(&out.stdout)
    );
    let out = env.run(&["auth", "list"]);
    assert_eq!(
        text(&out.stdout).trim(),
        "No credentials are stored and no plugin signs in to a provider. `podcode auth login PROVIDER` signs in (or stores an API key)."
    );
    // A login cancelled at end of input stores nothing.
    let out = login(&env, &["auth", "login", "scripted"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("login cancelled; nothing was stored"));
}
