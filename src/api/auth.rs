//! Who is calling: request bodies parsed before authentication (as the reference does), the
//! key taken from `X-Api-Key` or the body's `api_key`, and the 401 messages (reference §1.1).

use serde_json::{Map, Value};
use warp::http::Method;

use crate::api::error::ApiError;
use crate::api::{App, Request};
use crate::service::auth::{Grant, Verdict};

/// The JSON object of a POST body; an empty body (or any other method) counts as `{}`.
pub(crate) fn body_object(req: &Request) -> Result<Map<String, Value>, ApiError> {
    if req.method != Method::POST || req.body.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::BadRequest(
            "json validation error: value is not an object".into(),
        )),
        Err(_) => Err(ApiError::BadRequest("could not parse request body".into())),
    }
}

/// The `api_key` member as the reference converts it to a string.
fn body_key(body: &Map<String, Value>) -> Option<String> {
    body.get("api_key").map(|v| match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    })
}

async fn grant(
    app: &App,
    req: &Request,
    key: &str,
    allow_read_only: bool,
) -> Result<Grant, ApiError> {
    let client = req.client_addr(app.config.trust_proxy);
    match app
        .service
        .authenticate(key, allow_read_only, client.as_deref())
        .await
    {
        Verdict::Missing => Err(ApiError::Unauthorized("missing api key")),
        Verdict::Wrong => Err(ApiError::Unauthorized("wrong api key")),
        Verdict::Throttled { retry_after } => Err(ApiError::RateLimited {
            retry_after: retry_after.as_secs().max(1),
        }),
        Verdict::Granted(g) => {
            app.limiter.check(&g.key_id)?;
            Ok(g)
        }
    }
}

/// Read-write endpoints: the header wins, else the body's `api_key`.
pub(crate) async fn authorize(
    app: &App,
    req: &Request,
    body: &Map<String, Value>,
) -> Result<Grant, ApiError> {
    let key = req
        .header("x-api-key")
        .or_else(|| body_key(body))
        .unwrap_or_default();
    grant(app, req, &key, false).await
}

/// Read endpoints: the header only; read-only keys welcome.
pub(crate) async fn authorize_read(app: &App, req: &Request) -> Result<Grant, ApiError> {
    let key = req.header("x-api-key").unwrap_or_default();
    grant(app, req, &key, true).await
}
