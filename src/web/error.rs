//! Every way a dashboard request fails, and the one place where it becomes a response: an HTML
//! page saying what happened and what to do. Service errors map here as the API maps them in
//! `api::error` (bad input is a 4xx that changed nothing, storage trouble a 503).

use askama::Template;
use warp::http::StatusCode;
use warp::http::header::{HeaderValue, RETRY_AFTER};
use warp::reply::Response;

use crate::service::ServiceError;
use crate::web::response;

/// A failed dashboard request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WebError {
    /// 400: the form or query was not acceptable; the message says why.
    BadRequest(String),
    /// 403: the session's key for this project is read-only, or the form's CSRF token or
    /// origin is wrong.
    Forbidden(&'static str),
    /// 404: no such page, or a project or check the session has no key for.
    NotFound,
    /// 405.
    MethodNotAllowed,
    /// 413.
    TooLarge,
    /// 429: too many wrong keys from this address.
    RateLimited { retry_after: u64 },
    /// 503: shutting down, overloaded, or the data file does not take writes.
    Unavailable {
        message: String,
        retry_after: Option<u64>,
    },
    /// 500: never caused by input.
    Internal(String),
}

impl From<ServiceError> for WebError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound | ServiceError::Forbidden => WebError::NotFound,
            ServiceError::NotPaused
            | ServiceError::AmbiguousSlug
            | ServiceError::InvalidUrl
            | ServiceError::Invalid(_)
            | ServiceError::BadRequest(_)
            | ServiceError::Admin(_) => WebError::BadRequest(e.to_string()),
            ServiceError::Busy => WebError::Unavailable {
                message: e.to_string(),
                retry_after: Some(1),
            },
            ServiceError::StorageUnavailable(_) => WebError::Unavailable {
                message: e.to_string(),
                retry_after: Some(5),
            },
            ServiceError::ShuttingDown => WebError::Unavailable {
                message: e.to_string(),
                retry_after: None,
            },
            ServiceError::Storage(_) | ServiceError::Random(_) => WebError::Internal(e.to_string()),
        }
    }
}

impl From<askama::Error> for WebError {
    fn from(e: askama::Error) -> Self {
        WebError::Internal(format!("rendering a page failed: {e}"))
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    base: &'a str,
    asset_version: &'a str,
    status: u16,
    title: &'static str,
    message: String,
}

impl WebError {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Forbidden(_) => StatusCode::FORBIDDEN,
            WebError::NotFound => StatusCode::NOT_FOUND,
            WebError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            WebError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            WebError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            WebError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn words(&self) -> (&'static str, String) {
        match self {
            WebError::BadRequest(m) => ("That did not work", m.clone()),
            WebError::Forbidden(m) => ("Not allowed", (*m).to_string()),
            WebError::NotFound => (
                "Not found",
                "There is no such page, or you are not signed in to its project.".into(),
            ),
            WebError::MethodNotAllowed => (
                "Not allowed",
                "This page does not take that kind of request.".into(),
            ),
            WebError::TooLarge => ("Too large", "The form sent was too large.".into()),
            WebError::RateLimited { retry_after } => (
                "Too many attempts",
                format!("Too many wrong keys from your address; try again in {retry_after} s."),
            ),
            WebError::Unavailable { message, .. } => {
                ("Unavailable", format!("{message}. Try again in a moment."))
            }
            WebError::Internal(_) => (
                "Something went wrong",
                "The server could not answer; its log says why.".into(),
            ),
        }
    }

    /// The error page.
    pub(crate) fn into_response(self, base: &str, gzip: bool) -> Response {
        if let WebError::Internal(m) = &self {
            tracing::error!("dashboard: {m}");
        }
        let (title, message) = self.words();
        let page = ErrorPage {
            base,
            asset_version: crate::web::assets::version(),
            status: self.status().as_u16(),
            title,
            message,
        };
        let text = page
            .render()
            .unwrap_or_else(|_| format!("{} {title}", self.status().as_u16()));
        let mut resp = response::html(self.status(), text, gzip);
        let retry = match &self {
            WebError::RateLimited { retry_after } => Some(*retry_after),
            WebError::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        };
        if let Some(secs) = retry
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            resp.headers_mut().insert(RETRY_AFTER, v);
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_keep_their_meaning() {
        assert_eq!(
            WebError::from(ServiceError::NotFound).status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            WebError::from(ServiceError::BadRequest("timeout too small".into())).status(),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            WebError::from(ServiceError::Busy).status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[test]
    fn the_page_escapes_the_message_and_sets_retry_after() {
        let resp = WebError::BadRequest("<b>x</b>".into()).into_response("", false);
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let resp = WebError::RateLimited { retry_after: 7 }.into_response("", false);
        assert_eq!(resp.headers()[RETRY_AFTER], "7");
        let page = ErrorPage {
            base: "",
            asset_version: "v",
            status: 400,
            title: "t",
            message: "<b>x</b>".into(),
        }
        .render()
        .expect("render");
        assert!(page.contains("&#60;b&#62;x&#60;/b&#62;") || page.contains("&lt;b&gt;"));
        assert!(!page.contains("<b>x</b>"));
    }
}
