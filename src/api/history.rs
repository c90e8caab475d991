//! A check's history: its pings, a ping's body, and its flips (reference §2.12-2.14).

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::api::auth::{authorize, authorize_read};
use crate::api::checks::with_check;
use crate::api::error::ApiError;
use crate::api::response::{json_response, text_response};
use crate::api::router::CheckRef;
use crate::api::{App, Request};
use crate::model::ApiVersion;
use crate::model::json::{Urls, durations, flip_json, ping_json};
use crate::model::limits::MAX_PERIOD_SECS;

/// Largest `start`/`end` accepted by list flips.
const MAX_FLIP_TIMESTAMP: i64 = 10_000_000_000;
/// Extra older pings read so the oldest listed completion can still find its start.
const DURATION_LOOKBACK: usize = 64;

/// GET checks/<uuid>/pings/: newest first, at most the ping log size.
pub(crate) async fn pings(
    app: &App,
    req: &Request,
    version: ApiVersion,
    uuid: Uuid,
) -> Result<Response, ApiError> {
    let grant = authorize(app, req, &serde_json::Map::new()).await?;
    with_check(app, &grant, &CheckRef::Uuid(uuid), |_| ())?;
    let limit = app.service.config().ping_log as usize;
    let all = app.service.pings(uuid, limit + DURATION_LOOKBACK).await?;
    let durations = durations(&all);
    let urls = Urls {
        site_root: app.service.site_root(),
        version,
    };
    let listed: Vec<Value> = all
        .iter()
        .zip(durations)
        .take(limit)
        .map(|(p, d)| ping_json(p, d, urls))
        .collect();
    Ok(json_response(StatusCode::OK, &json!({ "pings": listed })))
}

/// GET checks/<uuid>/pings/<n>/body: the raw bytes as `text/plain`.
pub(crate) async fn ping_body(
    app: &App,
    req: &Request,
    uuid: Uuid,
    n: u64,
) -> Result<Response, ApiError> {
    let grant = authorize(app, req, &serde_json::Map::new()).await?;
    let n_pings = with_check(app, &grant, &CheckRef::Uuid(uuid), |c| c.n_pings)?;
    if n == 0 || n + u64::from(app.service.config().ping_log) <= n_pings {
        return Err(ApiError::NotFound);
    }
    match app.service.ping_body(uuid, n).await? {
        Some(body) => Ok(text_response(StatusCode::OK, "text/plain", body)),
        None => Err(ApiError::NotFound),
    }
}

/// Django's `IntegerField` for `seconds`: whitespace allowed, `10.0` is 10; empty = absent.
fn parse_seconds(raw: &str) -> Result<Option<i64>, ()> {
    let t = raw.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let v = if let Ok(v) = t.parse::<i64>() {
        v
    } else {
        let f: f64 = t.parse().map_err(|_| ())?;
        if !f.is_finite() || f.fract() != 0.0 || f.abs() > 1e15 {
            return Err(());
        }
        f as i64
    };
    if !(0..=MAX_PERIOD_SECS).contains(&v) {
        return Err(());
    }
    Ok(Some(v))
}

/// Python's `int()` for `start`/`end`: whitespace, a sign and `_` between digits allowed.
fn parse_unix(raw: &str) -> Result<i64, ()> {
    let t = raw.trim();
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'+') => (false, &t[1..]),
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    let b = digits.as_bytes();
    let well_formed = !b.is_empty()
        && b.first().is_some_and(u8::is_ascii_digit)
        && b.last().is_some_and(u8::is_ascii_digit)
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'_')
        && !digits.contains("__");
    if !well_formed || negative {
        // Negative values are out of range anyway (except -0, which Python accepts).
        if well_formed && digits.bytes().all(|c| c == b'0' || c == b'_') {
            return Ok(0);
        }
        return Err(());
    }
    let v: i64 = digits.replace('_', "").parse().map_err(|_| ())?;
    if v > MAX_FLIP_TIMESTAMP {
        return Err(());
    }
    Ok(v)
}

/// `GET checks/<uuid|unique_key>/flips/`: a bare array, newest first (decision 2).
pub(crate) async fn flips(app: &App, req: &Request, ident: CheckRef) -> Result<Response, ApiError> {
    let grant = authorize_read(app, req).await?;
    let uuid = with_check(app, &grant, &ident, |c| c.uuid)?;
    let mut since: Option<Timestamp> = None;
    let mut until: Option<Timestamp> = None;
    let now = app.service.now();
    let bad = |name: &str| ApiError::BadRequest(format!("invalid value for {name}"));
    let unix = |name: &str, v: &str| {
        let seconds = parse_unix(v).map_err(|()| bad(name))?;
        Timestamp::from_second(seconds).map_err(|_| bad(name))
    };
    for (k, v) in req.query_pairs() {
        match k.as_str() {
            "seconds" => match parse_seconds(&v).map_err(|()| bad("seconds"))? {
                Some(s) if s > 0 => {
                    let t = now
                        .checked_sub(SignedDuration::from_secs(s))
                        .unwrap_or(Timestamp::MIN);
                    since = Some(since.map_or(t, |x| x.max(t)));
                }
                _ => {}
            },
            "start" => {
                let t = unix("start", &v)?;
                since = Some(since.map_or(t, |x| x.max(t)));
            }
            "end" => {
                let t = unix("end", &v)?;
                until = Some(until.map_or(t, |x| x.min(t)));
            }
            _ => {}
        }
    }
    let flips = app.service.flips(uuid)?;
    let listed: Vec<Value> = flips
        .iter()
        .filter(|f| since.is_none_or(|s| f.created >= s) && until.is_none_or(|u| f.created < u))
        .map(flip_json)
        .collect();
    Ok(json_response(StatusCode::OK, &Value::Array(listed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_like_django() {
        assert_eq!(parse_seconds(" 10 "), Ok(Some(10)));
        assert_eq!(parse_seconds("10.0"), Ok(Some(10)));
        assert_eq!(parse_seconds(""), Ok(None));
        assert!(parse_seconds("10.5").is_err());
        assert!(parse_seconds("abc").is_err());
        assert!(parse_seconds("-123").is_err());
        assert!(parse_seconds("12345678901234567890").is_err());
        assert!(parse_seconds("31536001").is_err());
    }

    #[test]
    fn unix_like_python_int() {
        assert_eq!(parse_unix(" +1_000 "), Ok(1000));
        assert_eq!(parse_unix("0"), Ok(0));
        assert!(parse_unix("").is_err());
        assert!(parse_unix("abc").is_err());
        assert!(parse_unix("-123").is_err());
        assert!(parse_unix("1__0").is_err());
        assert!(parse_unix("_10").is_err());
        assert!(parse_unix("12345678901234567890").is_err());
        assert!(parse_unix("10000000001").is_err());
    }
}
