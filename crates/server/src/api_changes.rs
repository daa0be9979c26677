//! The Changes panel's routes: a session's changes grouped by prompt and tool call, one
//! change with its diff, and reverting a change, a call, everything since a prompt or the
//! whole session — a conflict (a file changed since Podcode wrote it) is reported in the
//! answer, with nothing written, for the client to offer `force`.

use std::path::Path as FsPath;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use podcode_protocol::RevertTarget;

use crate::dto::{ChangeDetail, ChangeList, RevertOutcome, RevertRequest, group_changes};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

#[utoipa::path(get, path = "/api/sessions/{id}/changes", tag = "changes",
    params(("id" = String, Path, description = "Session id")),
    responses((status = 200, description = "Grouped by prompt, then tool call, in the order made", body = ChangeList),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_changes(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> ApiResult<Json<ChangeList>> {
    state.engine.session(&id)?;
    let mut list = group_changes(state.engine.change_entries(&id)?);
    for change in list
        .prompts
        .iter_mut()
        .flat_map(|p| p.calls.iter_mut())
        .flat_map(|c| c.changes.iter_mut())
    {
        let (reverted, toggle) = toggle_of(&state, &change.id)?;
        change.reverted = reverted;
        change.toggle = toggle;
    }
    Ok(Json(list))
}

/// Whether change `id` is undone now, and what to revert to toggle it. Each revert is a
/// change that can itself be reverted (a redo), so the state is the parity of the chain of
/// newest reverts hanging off it, and its last link is what a redo reverts: reverting `id`
/// again once it was reverted would only report it "already reverted".
fn toggle_of(state: &AppState, id: &str) -> ApiResult<(bool, String)> {
    let mut chain = vec![id.to_string()];
    // Bounded: a chain never loops, but a damaged journal must not hang the request.
    while chain.len() < 10_000 {
        let last = chain.last().map(String::as_str).unwrap_or(id);
        match state.engine.reverted_by(last)? {
            Some(next) if !chain.contains(&next) => chain.push(next),
            _ => break,
        }
    }
    let reverted = chain.len() % 2 == 0;
    let toggle = chain.pop().unwrap_or_else(|| id.to_string());
    Ok((reverted, toggle))
}

#[utoipa::path(get, path = "/api/sessions/{id}/changes/{change_id}", tag = "changes",
    params(("id" = String, Path, description = "Session id"),
        ("change_id" = String, Path, description = "Change id")),
    responses((status = 200, body = ChangeDetail),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_change(
    State(state): State<Arc<AppState>>,
    Path((id, change_id)): Path<(String, String)>,
) -> ApiResult<Json<ChangeDetail>> {
    let change = match state.engine.change(&change_id)? {
        Some(c) if state.engine.session_within(&c.session_id, &id)? => c,
        _ => {
            return Err(ApiError::NotFound(format!(
                "no change {change_id} in session {id}"
            )));
        }
    };
    let display = FsPath::new(&change.file)
        .strip_prefix(state.engine.cwd())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| change.file.clone());
    let diff = podcode_core::unified_diff(
        &display,
        &podcode_protocol::display_text(change.old_content.as_deref()),
        &podcode_protocol::display_text(change.new_content.as_deref()),
    );
    let (reverted, _) = toggle_of(&state, &change.id)?;
    Ok(Json(ChangeDetail {
        id: change.id,
        session_id: change.session_id,
        call_id: change.call_id,
        file: change.file,
        display,
        op: change.op.as_str().to_string(),
        time: change.time,
        reverted,
        reverts: change.reverts,
        old_content: change.old_content,
        new_content: change.new_content,
        diff,
    }))
}

#[utoipa::path(post, path = "/api/sessions/{id}/revert", tag = "changes",
    params(("id" = String, Path, description = "Session id")), request_body = RevertRequest,
    responses((status = 200, description = "Reverted, or refused with `conflict` set (nothing written)", body = RevertOutcome),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "No such change, call, message or session here", body = ErrorBody),
        (status = 409, description = "The session belongs to another project", body = ErrorBody)))]
pub async fn revert(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Json(body): Json<RevertRequest>,
) -> ApiResult<Json<RevertOutcome>> {
    // Reverting writes files: only in this server's project.
    state.ensure_ours(&id)?;
    let t = body.target;
    let target = match t.kind.as_str() {
        "change" => RevertTarget::Change(t.id),
        "call" => RevertTarget::Call(t.id),
        "since_message" => RevertTarget::SinceMessage(t.id),
        "session" => RevertTarget::Session(t.id),
        other => {
            return Err(ApiError::BadRequest(format!(
                "unknown revert target {other:?}: use change, call, since_message or session"
            )));
        }
    };
    let owned = match state.engine.session_of(&target) {
        Ok(owner) => state.engine.session_within(&owner, &id)?,
        Err(_) => false,
    };
    if !owned {
        return Err(ApiError::NotFound(format!(
            "nothing to revert: no such {} in session {id}",
            t.kind.replace('_', " ")
        )));
    }
    let report = match state.live(&id).await {
        Some(live) => state.engine.revert_in(&live.session, &target, body.force),
        None => state.engine.revert(&id, &target, body.force),
    };
    Ok(Json(report.into()))
}
