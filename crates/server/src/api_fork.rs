//! `POST /api/sessions/{id}/fork`: a new session holding the conversation up to and
//! including one of the session's user messages (`Engine::fork_session`).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::api_sessions::session_info;
use crate::dto::SessionInfo;
use crate::error::{ApiResult, ErrorBody};
use crate::state::AppState;

/// `POST /api/sessions/{id}/fork`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ForkRequest {
    /// The user message to fork at (a transcript `user` item's `message_id`): the fork holds
    /// the conversation up to and including it.
    #[serde(rename = "messageId", alias = "message_id")]
    pub message_id: String,
}

#[utoipa::path(post, path = "/api/sessions/{id}/fork", tag = "sessions",
    params(("id" = String, Path, description = "Session id")), request_body = ForkRequest,
    responses((status = 201, description = "The new session, titled `<title> (fork)`: the messages up to and including `messageId` (parts and tool calls copied as history, under new ids), in the same directory with the same agent and model. The original is untouched. The change journal is not copied: the fork works on the files as they are now, and its Changes list starts empty", body = SessionInfo),
        (status = 400, description = "The message belongs to another session, or is not a user message", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "No such session or message", body = ErrorBody),
        (status = 409, description = "The session belongs to another project", body = ErrorBody)))]
pub async fn fork_session(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<ForkRequest>,
) -> ApiResult<(StatusCode, Json<SessionInfo>)> {
    state.ensure_ours(&id)?;
    let row = state.engine.fork_session(&id, body.message_id.trim())?;
    let info = session_info(&state, &row.id).await?;
    Ok((StatusCode::CREATED, Json(info)))
}
