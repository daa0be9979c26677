//! opencode's `auth` hook, run from Rust: which provider each plugin signs in for and with
//! which login methods (`AuthHook`, from the load result, so the manifest cache knows it
//! without starting the host), and the calls the engine makes on it — `auth_load` (the
//! loader's options, once per client), `auth_fetch` (a model request sent through the
//! loader's `fetch`: the head comes back as the request's answer, the body as `auth.body`
//! notifications the sidecar routes into the returned channel), `auth_step` and
//! `auth_callback` (a login, one prompt at a time). Wire details: docs/plugin-host-protocol.md.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{HookedFile, PluginHooks, Sidecar};

/// One plugin's `auth` object as its load reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthHook {
    /// The provider it signs in for (`anthropic`, `github-copilot`, …).
    pub provider: String,
    /// Whether it has a `loader` (options for the provider's requests).
    #[serde(default)]
    pub loader: bool,
    /// Its login methods, in the plugin's order.
    #[serde(default)]
    pub methods: Vec<AuthMethod>,
}

/// One login method of an `auth` hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthMethod {
    /// `oauth` or `api`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What the user picks it by.
    pub label: String,
    /// What it asks before authorizing.
    #[serde(default)]
    pub prompts: Vec<AuthPrompt>,
}

/// One question of a login method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthPrompt {
    /// `text` or `select`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The input's name in `authorize(inputs)`.
    pub key: String,
    /// The question.
    pub message: String,
    /// An example answer.
    #[serde(default)]
    pub placeholder: Option<String>,
    /// The choices of a `select`.
    #[serde(default)]
    pub options: Vec<AuthChoice>,
}

/// One choice of a `select` prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthChoice {
    /// What the user reads.
    pub label: String,
    /// What `authorize` gets.
    pub value: String,
    /// A short explanation.
    #[serde(default)]
    pub hint: Option<String>,
}

/// What a plugin's loader returned for its provider's requests.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AuthOptions {
    /// The plugin file whose loader ran.
    pub file: std::path::PathBuf,
    /// The options' JSON part (`apiKey`, `baseURL`, `headers`, …).
    pub options: Value,
    /// Whether the requests go through the plugin's own `fetch`.
    pub fetch: bool,
}

/// The next thing a login needs.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthStep {
    /// Ask this (again, with the plugin's reason, when `error` is set).
    Prompt {
        /// The question.
        prompt: AuthPrompt,
        /// Why the last answer was refused.
        error: Option<String>,
    },
    /// The method is done: opencode's result (`{type: "success", key}`, `{type: "failed"}`,
    /// or `{type: "key"}` when Podcode must ask for the key itself).
    Result(Value),
    /// An OAuth login: show `url` and `instructions`, then call back (with the pasted code
    /// when `method` is `code`).
    OAuth {
        /// The pending callback's id.
        id: String,
        /// Where the user signs in.
        url: String,
        /// What to do there.
        instructions: String,
        /// `auto` (the plugin waits itself) or `code` (the user pastes a code).
        method: String,
    },
}

/// A model response coming through a plugin's `fetch`.
pub struct FetchResponse {
    /// Its HTTP status.
    pub status: u16,
    /// Its headers, in order.
    pub headers: Vec<(String, String)>,
    /// Its body as it arrives: pieces, then the channel closes (or an error).
    pub body: mpsc::UnboundedReceiver<Result<Vec<u8>, String>>,
    /// Cancels the plugin's request when dropped before the body ended.
    pub guard: FetchGuard,
}

/// Aborts the plugin's request (`abort {callId}`) when the body is dropped unfinished.
pub struct FetchGuard {
    sidecar: Sidecar,
    id: String,
}

impl Drop for FetchGuard {
    fn drop(&mut self) {
        if self.sidecar.close_fetch(&self.id)
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let sidecar = self.sidecar.clone();
            let id = self.id.clone();
            handle.spawn(async move { sidecar.notify("abort", json!({"callId": id})).await });
        }
    }
}

static NEXT_FETCH: AtomicU64 = AtomicU64::new(1);

impl PluginHooks {
    /// The plugins' `auth` hooks, in load order, with the file each belongs to.
    pub fn auth_hooks(&self) -> Vec<(&HookedFile, &AuthHook)> {
        self.files
            .iter()
            .flat_map(|f| f.auth.iter().map(move |a| (f, a)))
            .collect()
    }

    fn auth_file(&self, provider: &str) -> Option<&HookedFile> {
        self.auth_hooks()
            .into_iter()
            .find(|(_, a)| a.provider == provider)
            .map(|(f, _)| f)
    }

    async fn auth_sidecar(&self, f: &HookedFile) -> Result<Sidecar, String> {
        self.host
            .load(&f.file)
            .await
            .map(|(sc, _)| sc)
            .map_err(|e| e.message)
    }

    /// Runs the loader of the first plugin signing in for `provider` with `info` (opencode's
    /// Provider object); `None` when no plugin signs in for it.
    pub async fn auth_load(
        &self,
        provider: &str,
        info: Value,
    ) -> Option<Result<AuthOptions, String>> {
        let f = self.auth_file(provider)?;
        let run = async {
            let sc = self.auth_sidecar(f).await?;
            let reply = sc
                .request(
                    "auth.load",
                    json!({"path": f.file.path, "provider": provider, "info": info}),
                )
                .await
                .map_err(|e| format!("{} ({})", e.message, f.file.path.display()))?;
            Ok(AuthOptions {
                file: f.file.path.clone(),
                options: reply.get("options").cloned().unwrap_or_else(|| json!({})),
                fetch: reply.get("fetch").and_then(Value::as_bool).unwrap_or(false),
            })
        };
        Some(run.await)
    }

    /// Sends one model request through the `fetch` the loader of `provider`'s plugin gave
    /// (a host started since runs the loader again first, with `info`).
    pub async fn auth_fetch(
        &self,
        provider: &str,
        info: &Value,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<FetchResponse, String> {
        let f = self
            .auth_file(provider)
            .ok_or_else(|| format!("no plugin signs in for {provider} any more"))?;
        let sc = self.auth_sidecar(f).await?;
        let id = format!("fetch-{}", NEXT_FETCH.fetch_add(1, Ordering::Relaxed));
        let rx = sc.open_fetch(&id);
        let guard = FetchGuard {
            sidecar: sc.clone(),
            id: id.clone(),
        };
        let headers_json: serde_json::Map<String, Value> = headers
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let params = json!({
            "path": f.file.path, "provider": provider, "info": info, "fetchId": id, "url": url,
            "method": "POST", "headers": headers_json,
            "body": String::from_utf8_lossy(body),
        });
        let head = sc
            .request("auth.fetch", params)
            .await
            .map_err(|e| format!("{} ({})", e.message, f.file.path.display()))?;
        let status = head
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .ok_or_else(|| "the plugin's fetch answered without a status".to_string())?;
        let headers = head
            .get("headers")
            .and_then(Value::as_array)
            .map(|pairs| {
                pairs
                    .iter()
                    .filter_map(|p| Some((p.get(0)?.as_str()?.into(), p.get(1)?.as_str()?.into())))
                    .collect()
            })
            .unwrap_or_default();
        Ok(FetchResponse {
            status,
            headers,
            body: rx,
            guard,
        })
    }

    /// The next step of logging in to `provider` with method `method` (its index), given the
    /// answers so far.
    pub async fn auth_step(
        &self,
        provider: &str,
        method: usize,
        inputs: &serde_json::Map<String, Value>,
    ) -> Result<AuthStep, String> {
        let f = self
            .auth_file(provider)
            .ok_or_else(|| format!("no plugin signs in for {provider}"))?;
        let sc = self.auth_sidecar(f).await?;
        let reply = sc
            .request(
                "auth.step",
                json!({"path": f.file.path, "provider": provider, "method": method, "inputs": inputs}),
            )
            .await
            .map_err(|e| e.message)?;
        if let Some(p) = reply.get("prompt") {
            let prompt = serde_json::from_value(p.clone()).map_err(|e| e.to_string())?;
            let error = reply
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_string);
            return Ok(AuthStep::Prompt { prompt, error });
        }
        if let Some(o) = reply.get("oauth") {
            let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            return Ok(AuthStep::OAuth {
                id: text("id"),
                url: text("url"),
                instructions: text("instructions"),
                method: text("method"),
            });
        }
        Ok(AuthStep::Result(
            reply.get("result").cloned().unwrap_or(Value::Null),
        ))
    }

    /// Finishes an OAuth login: the plugin's callback, with the pasted code when it asked one.
    pub async fn auth_callback(
        &self,
        provider: &str,
        id: &str,
        code: Option<&str>,
    ) -> Result<Value, String> {
        let f = self
            .auth_file(provider)
            .ok_or_else(|| format!("no plugin signs in for {provider}"))?;
        let sc = self.auth_sidecar(f).await?;
        let reply = sc
            .request("auth.callback", json!({"id": id, "code": code}))
            .await
            .map_err(|e| e.message)?;
        Ok(reply.get("result").cloned().unwrap_or(Value::Null))
    }
}
