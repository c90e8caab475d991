//! Every Management API error, and the one place where errors become HTTP responses
//! (decisions 3-5): JSON `{"error": ...}` with the reference's status codes and CORS headers.

use warp::http::StatusCode;
use warp::reply::Response;

use crate::api::response::{json_response, with_cors};
use crate::service::ServiceError;

/// A failed Management API request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 400 with the message as given (e.g. `could not parse request body`).
    BadRequest(String),
    /// 401 `missing api key` or `wrong api key`.
    Unauthorized(&'static str),
    /// 403: the check belongs to another project.
    Forbidden,
    NotFound,
    MethodNotAllowed,
    /// 409 with a message.
    Conflict(String),
    PayloadTooLarge,
    /// 408: the body did not arrive within the body timeout.
    BodyTimeout,
    /// 429 with `Retry-After` seconds.
    RateLimited {
        retry_after: u64,
    },
    /// 503: overloaded, shutting down or storage unavailable; the client may retry.
    Unavailable(String),
    /// 500: a storage failure. Never caused by client input.
    Internal(String),
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound => ApiError::NotFound,
            ServiceError::Forbidden => ApiError::Forbidden,
            ServiceError::NotPaused | ServiceError::AmbiguousSlug => {
                ApiError::Conflict(e.to_string())
            }
            ServiceError::InvalidUrl => ApiError::BadRequest(e.to_string()),
            ServiceError::Invalid(_) | ServiceError::BadRequest(_) => {
                ApiError::BadRequest(e.to_string())
            }
            ServiceError::Busy
            | ServiceError::Unavailable
            | ServiceError::StorageUnavailable(_) => ApiError::Unavailable(e.to_string()),
            ServiceError::NoSuchProject(_)
            | ServiceError::ProjectExists(_)
            | ServiceError::NoSuchKey { .. }
            | ServiceError::NoSuchChannel { .. }
            | ServiceError::ChannelExists { .. }
            | ServiceError::NoSuchCheck { .. }
            | ServiceError::ProjectNeeded(_)
            | ServiceError::Usage(_) => ApiError::BadRequest(e.to_string()),
            ServiceError::Storage(_) | ServiceError::Random(_) => ApiError::Internal(e.to_string()),
        }
    }
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden => StatusCode::FORBIDDEN,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApiError::BadRequest(m) | ApiError::Conflict(m) | ApiError::Unavailable(m) => m.clone(),
            ApiError::Unauthorized(m) => (*m).to_string(),
            ApiError::Forbidden => "forbidden".into(),
            ApiError::NotFound => "not found".into(),
            ApiError::MethodNotAllowed => "method not allowed".into(),
            ApiError::PayloadTooLarge => "request body too large".into(),
            ApiError::BodyTimeout => "request body timeout".into(),
            ApiError::RateLimited { .. } => "rate limit exceeded".into(),
            ApiError::Internal(m) => {
                tracing::error!("internal error: {m}");
                "internal error".into()
            }
        }
    }

    /// The JSON error response with CORS headers for a route allowing `methods`.
    pub fn into_response(self, methods: &str) -> Response {
        let mut resp = json_response(
            self.status(),
            &serde_json::json!({ "error": self.message() }),
        );
        if let ApiError::RateLimited { retry_after } = self
            && let Ok(v) = retry_after.to_string().parse()
        {
            resp.headers_mut().insert("Retry-After", v);
        }
        with_cors(resp, methods)
    }
}
