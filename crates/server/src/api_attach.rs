//! Attachments: `POST /api/sessions/{id}/attachments` stores an uploaded file (the page's
//! paperclip, drop or paste) for the session's next prompt, which names the returned path in
//! its `files`; `GET …/attachments/{file}` gives a stored one back (the transcript's
//! thumbnails), and `GET …/calls/{call_id}/attachments/{index}` an image a tool call's result
//! carried. Files come back as images only when they are png, jpeg, gif or webp; anything
//! else is a download, never a page.

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures_util::StreamExt;
use podcode_core::{MAX_ATTACHMENT_BYTES, attachment_name};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;

/// The text of an upload over the limit (user-facing).
pub const TOO_LARGE_TEXT: &str = "the file is larger than 10 MB, the most an attachment may be";

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// The file's name (`shot.png`); made safe (its last component, odd characters as `_`).
    #[serde(default)]
    pub name: String,
}

/// A stored attachment.
#[derive(Debug, Serialize, ToSchema)]
pub struct Uploaded {
    /// The absolute path to send in a prompt's `files`.
    pub path: String,
    /// The stored file's name (`GET /api/sessions/{id}/attachments/{name}` gives it back).
    pub name: String,
    /// Its size in bytes.
    pub size: usize,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` for an image; null otherwise.
    pub image: Option<String>,
}

#[utoipa::path(post, path = "/api/sessions/{id}/attachments", tag = "drive",
    params(("id" = String, Path, description = "Session id"), UploadQuery),
    request_body(content = String, content_type = "application/octet-stream", description = "The file's bytes, at most 10 MB"),
    responses((status = 201, description = "Stored; send `path` in the next prompt's `files`: it is read as an attached file (an image goes to a model that takes images as an image)", body = Uploaded),
        (status = 400, description = "An empty file", body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "The session belongs to another project", body = ErrorBody),
        (status = 413, description = "Over 10 MB", body = ErrorBody)))]
pub async fn upload(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<UploadQuery>,
    body: Body,
) -> ApiResult<(StatusCode, Json<Uploaded>)> {
    state.ensure_ours(&id)?;
    let bytes = read_bounded(body).await?;
    if bytes.is_empty() {
        return Err(ApiError::BadRequest("the file is empty".into()));
    }
    let path = state.engine.save_attachment(&id, &q.name, &bytes)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((
        StatusCode::CREATED,
        Json(Uploaded {
            path: path.display().to_string(),
            name,
            size: bytes.len(),
            image: image_mime(&bytes).map(str::to_string),
        }),
    ))
}

#[utoipa::path(get, path = "/api/sessions/{id}/attachments/{file}", tag = "drive",
    params(("id" = String, Path, description = "Session id"),
        ("file" = String, Path, description = "The `name` the upload answered")),
    responses((status = 200, description = "The file: an image as itself, anything else as a download", content_type = "application/octet-stream"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_attachment(
    State(state): State<Arc<AppState>>,
    Path((id, file)): Path<(String, String)>,
) -> ApiResult<Response> {
    let path = state
        .engine
        .attachment_path(&id, &file)
        .ok_or_else(|| ApiError::NotFound(format!("no attachment {file} in session {id}")))?;
    let bytes = std::fs::read(&path).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(file_response(Bytes::from(bytes), &attachment_name(&file)))
}

#[utoipa::path(get, path = "/api/sessions/{id}/calls/{call_id}/attachments/{index}", tag = "drive",
    params(("id" = String, Path, description = "Session id"),
        ("call_id" = String, Path, description = "A tool call of the session"),
        ("index" = usize, Path, description = "Which of the result's attachments, from 0")),
    responses((status = 200, description = "The attachment's bytes: an image as itself, anything else as a download", content_type = "application/octet-stream"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn call_attachment(
    State(state): State<Arc<AppState>>,
    Path((id, call_id, index)): Path<(String, String, usize)>,
) -> ApiResult<Response> {
    let missing = || ApiError::NotFound(format!("no attachment {index} of call {call_id}"));
    let store = state.engine.store()?;
    let call = store
        .tool_call(&call_id)
        .map_err(podcode_core::EngineError::from)?
        .filter(|c| c.session_id == id)
        .ok_or_else(missing)?;
    let attachment = call.attachments.get(index).ok_or_else(missing)?;
    let url = attachment["url"].as_str().unwrap_or_default();
    let data = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
        .and_then(|(_, b64)| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .ok_or_else(missing)?;
    let name = attachment["filename"].as_str().unwrap_or("attachment");
    Ok(file_response(Bytes::from(data), &attachment_name(name)))
}

/// How much of an upload over the limit is still read (and dropped) so that the client,
/// still sending, gets the 413 instead of a broken connection.
const DRAIN_BYTES: usize = 4 * MAX_ATTACHMENT_BYTES;

/// The body, when it is at most `MAX_ATTACHMENT_BYTES`; `TooLarge` otherwise, after reading
/// (and dropping) the rest of it up to `DRAIN_BYTES`.
async fn read_bounded(body: Body) -> ApiResult<Vec<u8>> {
    let mut stream = body.into_data_stream();
    let mut kept = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::BadRequest(format!("the upload broke off: {e}")))?;
        total += chunk.len();
        if total <= MAX_ATTACHMENT_BYTES {
            kept.extend_from_slice(&chunk);
        } else if total > DRAIN_BYTES {
            break;
        }
    }
    if total > MAX_ATTACHMENT_BYTES {
        return Err(ApiError::TooLarge(TOO_LARGE_TEXT.into()));
    }
    Ok(kept)
}

/// A file as an answer: an image (by its bytes) as itself, anything else as a download.
fn file_response(bytes: Bytes, name: &str) -> Response {
    let image = image_mime(&bytes);
    let mut res = bytes.into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(image.unwrap_or("application/octet-stream")),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    if image.is_none()
        && let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
    {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    res
}

/// The image type of `bytes` by their magic numbers (what the `read` tool attaches).
fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}
