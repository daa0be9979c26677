//! Session routes: list, create, get (with the transcript and open asks), delete, export,
//! and driving one: prompt, custom command, abort, model and agent, permission replies.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use podcode_protocol::{Op, PermissionReply};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;

use crate::dto::{
    Accepted, AgentRequest, AskReply, CommandRequest, CreateSession, ModelRequest, PromptRequest,
    RenameSession, Resolved, SessionDetail, SessionInfo,
};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::{AppState, Live, NewSession};

/// The text of a second prompt while a turn runs (user-facing): the engine's, which every
/// front end gives (ACP as a JSON-RPC error).
pub use podcode_core::BUSY_TEXT;
/// The text of a late permission reply (user-facing).
pub const RESOLVED_TEXT: &str = "already resolved";

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Also list `podcode tool call` sessions and sub-agent sessions.
    #[serde(default)]
    pub all: bool,
}

async fn info_of(live: &Live) -> SessionInfo {
    let s = &live.session;
    SessionInfo {
        id: s.id().to_string(),
        title: s.title().to_string(),
        agent: s.agent().await,
        model: Some(s.model().await),
        directory: s.directory().display().to_string(),
        worktree: s.worktree().map(|p| p.display().to_string()),
        parent_id: None,
        created_at: 0,
        updated_at: 0,
        open: true,
        busy: live.busy(),
        other_project: None,
    }
}

/// A stored session's info, with the live state when the server drives it.
pub(crate) async fn session_info(state: &AppState, id: &str) -> ApiResult<SessionInfo> {
    let row = state.engine.session(id)?;
    let mut info = SessionInfo::from_row(&row);
    info.other_project = state.foreign(&row).map(|p| p.display().to_string());
    if let Some(live) = state.live(id).await {
        let now = info_of(&live).await;
        info = SessionInfo {
            parent_id: info.parent_id,
            created_at: info.created_at,
            updated_at: info.updated_at,
            // The title the first prompt gave it is in the store.
            title: info.title,
            other_project: info.other_project,
            ..now
        };
    }
    Ok(info)
}

#[utoipa::path(get, path = "/api/sessions", tag = "sessions", params(ListQuery),
    responses((status = 200, description = "Newest first", body = Vec<SessionInfo>),
        (status = 401, body = ErrorBody)))]
pub async fn list_sessions(
    State(state): State<Arc<AppState>>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<Vec<SessionInfo>>> {
    let rows = state.engine.sessions(q.all)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows.iter().filter(|r| q.all || r.parent_id.is_none()) {
        let mut info = SessionInfo::from_row(row);
        info.other_project = state.foreign(row).map(|p| p.display().to_string());
        if let Some(live) = state.live(&row.id).await {
            info.open = true;
            info.busy = live.busy();
            info.agent = live.session.agent().await;
            info.model = Some(live.session.model().await);
        }
        out.push(info);
    }
    Ok(Json(out))
}

#[utoipa::path(post, path = "/api/sessions", tag = "sessions", request_body = CreateSession,
    responses((status = 201, body = SessionInfo),
        (status = 400, description = "Unknown agent, no usable model, or not a git repository for `worktree`", body = ErrorBody),
        (status = 401, body = ErrorBody)))]
pub async fn create_session(
    State(state): State<Arc<AppState>>,
    body: Option<Json<CreateSession>>,
) -> ApiResult<(StatusCode, Json<SessionInfo>)> {
    let spec = body.map(|Json(b)| b).unwrap_or_default();
    let live = state
        .create(NewSession {
            title: spec.title.unwrap_or_default(),
            agent: spec.agent,
            model: spec.model,
            worktree: spec.worktree,
        })
        .await?;
    let info = session_info(&state, live.session.id()).await?;
    Ok((StatusCode::CREATED, Json(info)))
}

#[utoipa::path(get, path = "/api/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "Session id")),
    responses((status = 200, body = SessionDetail),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_session(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<Json<SessionDetail>> {
    let session = session_info(&state, &id).await?;
    // Where the log stands first, then the store: whatever is stored after this read is
    // either cut off here (the running turn) or streamed after `resume_after`.
    let resume = state.log.resume_point(&id);
    let (items, _) = state
        .engine
        .transcript_before(&id, resume.before.as_deref())?;
    let totals = state.engine.totals(&id)?;
    let asks = match state.live(&id).await {
        Some(live) => open_asks(&live),
        None => Vec::new(),
    };
    Ok(Json(SessionDetail {
        session,
        usage: totals.own.into(),
        tree_usage: totals.tree.into(),
        transcript: items.into_iter().map(Into::into).collect(),
        resume_after: resume.after,
        asks,
    }))
}

fn open_asks(live: &Live) -> Vec<Value> {
    live.session
        .port()
        .open_asks()
        .iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .collect()
}

#[utoipa::path(delete, path = "/api/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "Session id")),
    responses((status = 204, description = "Deleted (files on disk are left as they are)"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_session(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    state.engine.session(&id)?;
    state.close(&id).await;
    state.engine.delete_session(&id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Why a new title was refused (user-facing).
pub const TITLE_TEXT: &str = "a session title is one line of 1 to 100 characters";

#[utoipa::path(patch, path = "/api/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "Session id")), request_body = RenameSession,
    responses((status = 200, description = "Renamed", body = SessionInfo),
        (status = 400, description = "An empty title, or one of several lines or over 100 characters", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "The session belongs to another project", body = ErrorBody)))]
pub async fn rename_session(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<RenameSession>,
) -> ApiResult<Json<SessionInfo>> {
    state.ensure_ours(&id)?;
    let title = body.title.trim();
    // Bounded as a title the first prompt gives is: lists and headers show it on one line.
    if title.is_empty() || title.chars().count() > 100 || title.contains(['\n', '\r']) {
        return Err(ApiError::BadRequest(TITLE_TEXT.into()));
    }
    state
        .engine
        .store()?
        .retitle_session(&id, title)
        .map_err(podcode_core::EngineError::from)?;
    Ok(Json(session_info(&state, &id).await?))
}

#[utoipa::path(get, path = "/api/sessions/{id}/export", tag = "sessions",
    params(("id" = String, Path, description = "Session id")),
    responses((status = 200, description = "Every stored row: session, usage, messages with parts, tool_calls, changes", body = Object),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn export_session(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(state.engine.session_export(&id)?))
}

#[utoipa::path(post, path = "/api/sessions/{id}/prompt", tag = "drive",
    params(("id" = String, Path, description = "Session id")), request_body = PromptRequest,
    responses((status = 202, description = "The turn runs; events report it", body = Accepted),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, description = "A turn is running, or the session belongs to another project", body = ErrorBody)))]
pub async fn prompt(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<PromptRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    if body.text.trim().is_empty() {
        return Err(ApiError::BadRequest("the prompt is empty".into()));
    }
    let live = state.open(&id).await?;
    if live.busy() {
        return Err(ApiError::Conflict(BUSY_TEXT.into()));
    }
    live.engine.name_session(&id, &body.text)?;
    let mut files = body.files;
    if body.mentions {
        for file in podcode_core::mentioned_files(&body.text, live.session.directory()) {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    match live.port().prompt(body.text, files) {
        Ok(()) => Ok(accepted(id)),
        Err(podcode_core::EngineError::Busy(_)) => Err(ApiError::Conflict(BUSY_TEXT.into())),
        Err(e) => Err(e.into()),
    }
}

/// The text of a command request without a name (user-facing).
pub const NO_COMMAND_NAME_TEXT: &str =
    "the command name is empty: send the name of a custom command (GET /api/commands lists them)";

#[utoipa::path(post, path = "/api/sessions/{id}/command", tag = "drive",
    params(("id" = String, Path, description = "Session id")), request_body = CommandRequest,
    responses((status = 202, description = "The command runs as a turn; events report it (an unknown name ends the turn with an error naming the commands there are)", body = Accepted),
        (status = 400, description = "The name is empty", body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, description = "A turn is running, or the session's directory is gone", body = ErrorBody)))]
pub async fn command(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<CommandRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    let name = body.name.trim().trim_start_matches('/').to_string();
    if name.is_empty() {
        return Err(ApiError::BadRequest(NO_COMMAND_NAME_TEXT.into()));
    }
    let arguments = body.arguments.trim().to_string();
    let live = state.open(&id).await?;
    if live.busy() {
        return Err(ApiError::Conflict(BUSY_TEXT.into()));
    }
    // Titled as typed (`/review src/a.rs`), as `podcode run --command` titles it.
    let title = format!("/{name} {arguments}");
    live.engine.name_session(&id, title.trim_end())?;
    match live.port().command(name, arguments) {
        Ok(()) => Ok(accepted(id)),
        Err(podcode_core::EngineError::Busy(_)) => Err(ApiError::Conflict(BUSY_TEXT.into())),
        Err(e) => Err(e.into()),
    }
}

fn accepted(session_id: String) -> (StatusCode, Json<Accepted>) {
    (StatusCode::ACCEPTED, Json(Accepted { session_id }))
}

#[utoipa::path(post, path = "/api/sessions/{id}/abort", tag = "drive",
    params(("id" = String, Path, description = "Session id")),
    responses((status = 202, description = "Aborting (also when nothing runs)", body = Accepted),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn abort(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    match state.live(&id).await {
        Some(live) => {
            live.session.send(Op::Abort {
                session_id: id.clone(),
            });
            // Before answering: a reply sent after the stop must not be taken.
            live.session.port().close_asks_for_stop();
        }
        None => {
            state.engine.session(&id)?;
        }
    }
    Ok(accepted(id))
}

#[utoipa::path(post, path = "/api/sessions/{id}/model", tag = "drive",
    params(("id" = String, Path, description = "Session id")), request_body = ModelRequest,
    responses((status = 202, description = "A `configured` event follows", body = Accepted),
        (status = 400, description = "The model is not usable", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "The session belongs to another project", body = ErrorBody)))]
pub async fn set_model(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<ModelRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    state.engine.session(&id)?;
    state.engine.check_model(Some(&body.model))?;
    let live = state.open(&id).await?;
    live.session.send(Op::SetModel {
        session_id: id.clone(),
        model: body.model,
    });
    Ok(accepted(id))
}

#[utoipa::path(post, path = "/api/sessions/{id}/agent", tag = "drive",
    params(("id" = String, Path, description = "Session id")), request_body = AgentRequest,
    responses((status = 202, description = "A `configured` event follows", body = Accepted),
        (status = 400, description = "Unknown agent, or a sub-agent", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "The session belongs to another project", body = ErrorBody)))]
pub async fn set_agent(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<AgentRequest>,
) -> ApiResult<(StatusCode, Json<Accepted>)> {
    state.engine.session(&id)?;
    state
        .engine
        .agents()
        // A sub-agent only runs under a `task` call: refused here, as the TUI refuses it.
        .resolve_primary(&body.agent)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let live = state.open(&id).await?;
    live.session.send(Op::SetAgent {
        session_id: id.clone(),
        agent: body.agent,
    });
    Ok(accepted(id))
}

#[utoipa::path(get, path = "/api/sessions/{id}/asks", tag = "drive",
    params(("id" = String, Path, description = "Session id")),
    responses((status = 200, description = "Open permission asks (`permission_asked` events), oldest first", body = Vec<Object>),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_asks(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<Value>>> {
    match state.live(&id).await {
        Some(live) => Ok(Json(open_asks(&live))),
        None => {
            state.engine.session(&id)?;
            Ok(Json(Vec::new()))
        }
    }
}

/// `once`, `always` or `reject` (+ feedback) as the engine's reply.
fn parse_reply(body: AskReply) -> ApiResult<PermissionReply> {
    let feedback = body.feedback.filter(|f| !f.trim().is_empty());
    match body.reply.as_str() {
        "once" => Ok(PermissionReply::Once),
        "always" => Ok(PermissionReply::Always),
        "reject" => Ok(PermissionReply::Reject { feedback }),
        other => Err(ApiError::BadRequest(format!(
            "unknown reply {other:?}: use once, always or reject"
        ))),
    }
}

#[utoipa::path(post, path = "/api/sessions/{id}/asks/{request_id}", tag = "drive",
    params(("id" = String, Path, description = "Session id"),
        ("request_id" = String, Path, description = "The ask's request_id")),
    request_body = AskReply,
    responses((status = 200, description = "This reply settled the ask", body = Resolved),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "Already resolved (another reply was first), or no such ask", body = ErrorBody)))]
pub async fn reply_ask(
    State(state): State<Arc<AppState>>,
    Path((id, request_id)): Path<(String, String)>,
    Json(body): Json<AskReply>,
) -> ApiResult<Json<Resolved>> {
    let reply = parse_reply(body)?;
    let Some(live) = state.live(&id).await else {
        state.engine.session(&id)?;
        return Err(ApiError::Conflict(RESOLVED_TEXT.into()));
    };
    if live.session.port().reply(&request_id, reply) {
        Ok(Json(Resolved { resolved: true }))
    } else {
        Err(ApiError::Conflict(RESOLVED_TEXT.into()))
    }
}
