//! Read-only routes about the workspace: server info, tools, plugins, MCP servers, the
//! merged config (secrets masked), the model catalog, agent profiles and custom commands.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde_json::Value;

use crate::dto::{
    AgentEntry, CommandEntry, McpServer, ModelEntry, ModelList, ModelPrices, ServerInfo,
};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::{AppState, DEFAULT_AGENT};

/// What a masked secret reads as.
pub const MASK: &str = "********";

#[utoipa::path(get, path = "/api/info", tag = "workspace",
    responses((status = 200, body = ServerInfo), (status = 401, body = ErrorBody)))]
pub async fn info(State(state): State<Arc<AppState>>) -> Json<ServerInfo> {
    let e = &state.engine;
    Json(ServerInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        cwd: e.cwd().display().to_string(),
        project: e.project().display().to_string(),
        trusted: e.is_trusted(),
        model: e.check_model(None).ok(),
        agent: DEFAULT_AGENT.to_string(),
    })
}

#[utoipa::path(get, path = "/api/tools", tag = "workspace",
    responses((status = 200, description = "The tools offered now with their sources, load problems, tools switched off (`podcode tools --json`)", body = Object),
        (status = 401, body = ErrorBody)))]
pub async fn tools(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let listing = state.engine.tool_listing().await;
    serde_json::to_value(listing)
        .map(Json)
        .map_err(|e| ApiError::Internal(e.to_string()))
}

#[utoipa::path(get, path = "/api/plugins", tag = "workspace",
    responses((status = 200, description = "The `podcode plugins --json` report", body = Object),
        (status = 401, body = ErrorBody)))]
pub async fn plugins(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(state.engine.plugin_report_json().await)
}

#[utoipa::path(get, path = "/api/mcp", tag = "workspace",
    responses((status = 200, description = "Each configured MCP server (started and waited for)", body = Vec<McpServer>),
        (status = 401, body = ErrorBody)))]
pub async fn mcp(State(state): State<Arc<AppState>>) -> Json<Vec<McpServer>> {
    let servers = state.engine.mcp_status().await;
    Json(
        servers
            .into_iter()
            .map(|s| McpServer {
                name: s.name,
                transport: s.transport,
                state: serde_json::to_value(s.state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                tools: s.tools,
                last_error: s.last_error,
            })
            .collect(),
    )
}

#[utoipa::path(get, path = "/api/config", tag = "workspace",
    responses((status = 200, description = "The merged config; API keys, tokens, secrets, passwords and env/header values masked", body = Object),
        (status = 401, body = ErrorBody)))]
pub async fn config(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let mut v = serde_json::to_value(state.engine.config())
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    mask(&mut v);
    Ok(Json(v))
}

/// A key whose value is a secret itself (not the name of a variable holding one).
fn secret_key(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    if k.ends_with("env") {
        return false;
    }
    k == "key"
        || ["apikey", "token", "secret", "password", "authorization"]
            .iter()
            .any(|s| k.contains(s))
}

/// Maps whose every value may be a secret (environment variables, HTTP headers).
fn secret_map(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "env" | "environment" | "headers"
    )
}

/// Masks every secret string in a config value, in place.
pub fn mask(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if secret_map(k) {
                    if let Value::Object(inner) = val {
                        for x in inner.values_mut() {
                            *x = Value::String(MASK.into());
                        }
                    }
                } else if secret_key(k) && val.is_string() {
                    *val = Value::String(MASK.into());
                } else {
                    mask(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask),
        _ => {}
    }
}

#[utoipa::path(get, path = "/api/models", tag = "workspace",
    responses((status = 200, body = ModelList), (status = 401, body = ErrorBody)))]
pub async fn models(State(state): State<Arc<AppState>>) -> Json<ModelList> {
    let models = state
        .engine
        .known_models()
        .into_iter()
        .map(|(id, m)| {
            let (provider, model) = id.split_once('/').unwrap_or((&id, ""));
            ModelEntry {
                provider: provider.to_string(),
                model: model.to_string(),
                context: m.context,
                output: m.output,
                cost: m.cost.map(|c| ModelPrices {
                    input: c.input,
                    output: c.output,
                    cache_read: c.cache_read,
                    cache_write: c.cache_write,
                }),
                tools: m.tools,
                images: m.images,
                reasoning: m.reasoning,
                // The same check a switch to it makes, so the picker marks what would fail.
                unusable: state
                    .engine
                    .check_model(Some(&id))
                    .err()
                    .map(|e| e.to_string()),
                id: id.clone(),
            }
        })
        .collect();
    Json(ModelList {
        default: state.engine.check_model(None).ok(),
        models,
    })
}

#[utoipa::path(get, path = "/api/agents", tag = "workspace",
    responses((status = 200, body = Vec<AgentEntry>), (status = 401, body = ErrorBody)))]
pub async fn agents(State(state): State<Arc<AppState>>) -> Json<Vec<AgentEntry>> {
    let catalog = state.engine.agents();
    Json(
        catalog
            .entries()
            .iter()
            .map(|e| AgentEntry {
                name: e.profile.name.clone(),
                description: e.profile.description.clone(),
                mode: e.profile.mode.as_str().to_string(),
                model: e.profile.model.clone(),
                source: e.source.clone(),
                hidden: e.profile.hidden,
                disabled: e.disabled,
            })
            .collect(),
    )
}

#[utoipa::path(get, path = "/api/commands", tag = "workspace",
    responses((status = 200, description = "The custom commands of this server's project, by name (read from disk on every request)", body = Vec<CommandEntry>),
        (status = 401, body = ErrorBody)))]
pub async fn commands(State(state): State<Arc<AppState>>) -> ApiResult<Json<Vec<CommandEntry>>> {
    let engine = state.engine.clone();
    // Reads the commands folders: off the async workers.
    let infos = tokio::task::spawn_blocking(move || engine.command_infos())
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(infos.into_iter().map(Into::into).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_masked_and_names_of_variables_are_not() {
        let mut v = json!({
            "provider": {"openai": {"api_key": "sk-1", "api_key_env": "OPENAI_API_KEY",
                "headers": {"X-Org": "o"}, "base_url": "http://x"}},
            "mcp": {"gh": {"command": ["gh"], "environment": {"GH_TOKEN": "t"},
                "oauth": {"clientSecret": "s"}}},
            "model": "openai/gpt-4.1"
        });
        mask(&mut v);
        assert_eq!(v["provider"]["openai"]["api_key"], MASK);
        assert_eq!(v["provider"]["openai"]["api_key_env"], "OPENAI_API_KEY");
        assert_eq!(v["provider"]["openai"]["headers"]["X-Org"], MASK);
        assert_eq!(v["provider"]["openai"]["base_url"], "http://x");
        assert_eq!(v["mcp"]["gh"]["environment"]["GH_TOKEN"], MASK);
        assert_eq!(v["mcp"]["gh"]["oauth"]["clientSecret"], MASK);
        assert_eq!(v["model"], "openai/gpt-4.1");
    }
}
