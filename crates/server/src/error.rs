//! Errors as the API answers them: a status and `{"error": "<text a user can act on>"}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use podcode_core::EngineError;
use serde::Serialize;
use utoipa::ToSchema;

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for the user.
    pub error: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Internal(String),
    /// A request body over its limit (413).
    #[error("{0}")]
    TooLarge(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::UnknownSession(_) | EngineError::UnknownMessage(_) => {
                Self::NotFound(e.to_string())
            }
            EngineError::Busy(_)
            | EngineError::OtherProject { .. }
            | EngineError::DirectoryGone { .. } => Self::Conflict(e.to_string()),
            EngineError::NoModel(_)
            | EngineError::Agent(_)
            | EngineError::Model(_)
            | EngineError::Worktree(_)
            | EngineError::NotForkable(_)
            | EngineError::NothingToContinue(_) => Self::BadRequest(e.to_string()),
            _ => Self::Internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        (
            status,
            Json(ErrorBody {
                error: self.to_string(),
            }),
        )
            .into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
