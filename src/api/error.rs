//! Every HTTP error, and the one place where service errors become HTTP statuses (decisions
//! 3-5): the Management API answers them as JSON `{"error": ...}` with CORS headers, the
//! Pinging API as plain text (`api::ping`), both with the status and `Retry-After` set here.

use warp::http::StatusCode;
use warp::http::header::{HeaderValue, RETRY_AFTER};
use warp::reply::Response;

use crate::api::response::{json_response, with_cors};
use crate::service::ServiceError;

/// A failed Management API request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
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
    /// 503: overloaded, shutting down or storage unavailable; the client may retry, after
    /// `retry_after` seconds when given.
    Unavailable {
        message: String,
        retry_after: Option<u64>,
    },
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
            // The queue drains in milliseconds; the writer retries the file every few seconds.
            ServiceError::Busy => ApiError::unavailable(&e, Some(1)),
            ServiceError::StorageUnavailable(_) => ApiError::unavailable(&e, Some(5)),
            ServiceError::ShuttingDown => ApiError::unavailable(&e, None),
            // Admin commands do not come through HTTP; should one, it is the caller's input.
            ServiceError::Admin(_) => ApiError::BadRequest(e.to_string()),
            ServiceError::Storage(_) | ServiceError::Random(_) => ApiError::Internal(e.to_string()),
        }
    }
}

impl ApiError {
    fn unavailable(e: &ServiceError, retry_after: Option<u64>) -> ApiError {
        ApiError::Unavailable {
            message: e.to_string(),
            retry_after,
        }
    }

    /// Seconds after which a retry may succeed (`Retry-After`).
    pub(crate) fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited { retry_after } => Some(*retry_after),
            ApiError::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    pub(crate) fn status(&self) -> StatusCode {
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
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub(crate) fn message(&self) -> String {
        match self {
            ApiError::BadRequest(m) | ApiError::Conflict(m) => m.clone(),
            ApiError::Unavailable { message, .. } => message.clone(),
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
    pub(crate) fn into_response(self, methods: &str) -> Response {
        let mut resp = json_response(
            self.status(),
            &serde_json::json!({ "error": self.message() }),
        );
        if let Some(seconds) = self.retry_after() {
            resp.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        with_cors(resp, methods)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::StoreError;

    #[test]
    fn one_mapping_gives_status_and_retry_after_for_every_service_error() {
        let io = ServiceError::from(StoreError::Closed);
        let cases = [
            (ServiceError::Busy, 503, Some(1)),
            (io, 503, Some(5)),
            (ServiceError::ShuttingDown, 503, None),
            (ServiceError::NotFound, 404, None),
            (ServiceError::AmbiguousSlug, 409, None),
            (ServiceError::InvalidUrl, 400, None),
            (
                ServiceError::Admin(crate::service::AdminError::Usage("x".into())),
                400,
                None,
            ),
        ];
        for (e, status, retry) in cases {
            let text = e.to_string();
            let api = ApiError::from(e);
            assert_eq!(api.status().as_u16(), status, "{text}");
            assert_eq!(api.retry_after(), retry, "{text}");
            let resp = api.into_response("GET");
            let header = resp
                .headers()
                .get(RETRY_AFTER)
                .map(|v| v.to_str().unwrap_or_default().to_string());
            assert_eq!(header, retry.map(|s| s.to_string()), "{text}");
        }
    }
}
