//! The check page's ping log (newest first, 50 a page, each row with its kind, source, run
//! duration and a preview of its body that expands) and a ping's whole body as plain text.
//! The rows are plain functions of the pings, their bodies and `now`; [`load`] reads them.

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::model::{Ping, PingKind};
use crate::service::{Service, ServiceError};
use crate::web::error::WebError;
use crate::web::pages::Ctx;
use crate::web::pages::check::when::{Stamp, duration_words, wall};
use crate::web::response;
use crate::web::router::CheckId;

/// Pings on one page of the log.
pub(crate) const PAGE_SIZE: usize = 50;
/// Characters of a body shown before it is expanded.
pub(crate) const SUMMARY_CHARS: usize = 80;
/// Bytes of a body shown expanded; the link gives the whole body.
pub(crate) const PREVIEW_BYTES: usize = 1024;

/// One line of the ping log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PingRow {
    pub n: u64,
    pub at: Stamp,
    /// The time in UTC, as the table shows it.
    pub utc: String,
    /// `success`, `start`, `fail`, `log`, `ign`: the CSS class `k-<kind>`.
    pub kind: &'static str,
    pub kind_word: String,
    pub source: String,
    pub method: String,
    pub ua: String,
    pub duration: Option<String>,
    pub body_len: u32,
    pub preview: Option<Preview>,
}

/// The start of a body: a one-line summary and up to [`PREVIEW_BYTES`] of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Preview {
    pub summary: String,
    pub text: String,
    /// The body is longer than `text`.
    pub cut: bool,
}

/// Which page of the log is shown and its neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paging {
    pub page: usize,
    pub prev: Option<usize>,
    pub next: Option<usize>,
}

/// The page asked for (`?page=N`, from 1), bounded by the pages the log can hold.
pub(crate) fn page_number(asked: &str, ping_log: u32) -> usize {
    let last = (ping_log as usize).div_ceil(PAGE_SIZE).max(1);
    asked.parse::<usize>().unwrap_or(1).clamp(1, last)
}

/// What a ping was, in words.
pub(crate) fn kind_word(p: &Ping) -> String {
    match (p.kind, p.exit_status) {
        (PingKind::Fail, Some(code)) => format!("exit status {code}"),
        (PingKind::Success, Some(0)) => "exit status 0".into(),
        (PingKind::Success, _) => "success".into(),
        (PingKind::Start, _) => "start".into(),
        (PingKind::Fail, None) => "failure".into(),
        (PingKind::Log, _) => "log".into(),
        (PingKind::Ignored, _) => "ignored".into(),
    }
}

/// Where a ping came from: `HTTPS from 10.0.0.7`, `email from 10.0.0.7`.
pub(crate) fn source(p: &Ping) -> String {
    let scheme = if p.scheme == "email" {
        "email".to_string()
    } else {
        p.scheme.to_uppercase()
    };
    match &p.remote_addr {
        Some(addr) if !addr.is_empty() => format!("{scheme} from {addr}"),
        _ => scheme,
    }
}

/// The preview of a body (text, with invalid UTF-8 replaced).
pub(crate) fn preview(body: &[u8]) -> Preview {
    let mut end = body.len().min(PREVIEW_BYTES);
    // Cut on a character boundary: drop up to 3 bytes of a split UTF-8 sequence.
    while end < body.len() && end > 0 && (body[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let text = String::from_utf8_lossy(&body[..end]).into_owned();
    let mut summary: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(SUMMARY_CHARS)
        .collect();
    if text.chars().count() > SUMMARY_CHARS || end < body.len() {
        summary.push('…');
    }
    Preview {
        summary,
        text,
        cut: end < body.len(),
    }
}

/// The rows of page `page` from `pings` (newest first, starting at the log's newest) and
/// their run durations (`model::json::durations` of the same list), with the bodies read for
/// them (by ping number).
pub(crate) fn rows(
    pings: &[Ping],
    durations: &[Option<SignedDuration>],
    page: usize,
    bodies: &[(u64, Vec<u8>)],
    now: Timestamp,
) -> (Vec<PingRow>, Paging) {
    let from = (page - 1) * PAGE_SIZE;
    let to = (page * PAGE_SIZE).min(pings.len());
    let rows = pings
        .iter()
        .zip(durations.iter().copied())
        .skip(from)
        .take(to.saturating_sub(from))
        .map(|(p, d)| PingRow {
            n: p.n,
            at: Stamp::new(p.created, now),
            utc: wall(p.created, &jiff::tz::TimeZone::UTC),
            kind: p.kind.as_str(),
            kind_word: kind_word(p),
            source: source(p),
            method: p.method.clone(),
            ua: p.ua.clone(),
            duration: d.map(duration_words),
            body_len: p.body_len,
            preview: bodies
                .iter()
                .find(|(n, _)| *n == p.n)
                .map(|(_, b)| preview(b)),
        })
        .collect();
    let paging = Paging {
        page,
        prev: (page > 1).then(|| page - 1),
        next: (pings.len() > page * PAGE_SIZE).then_some(page + 1),
    };
    (rows, paging)
}

/// Rows of page `page` of `pings` (the log, newest first), with the bodies of its rows read.
pub(crate) async fn load(
    service: &Service,
    uuid: Uuid,
    pings: &[Ping],
    durations: &[Option<SignedDuration>],
    page: usize,
    now: Timestamp,
) -> Result<(Vec<PingRow>, Paging), ServiceError> {
    let with_body: Vec<u64> = pings
        .iter()
        .skip((page - 1) * PAGE_SIZE)
        .take(PAGE_SIZE)
        .filter(|p| p.body_len > 0)
        .map(|p| p.n)
        .collect();
    let bodies = service.ping_bodies(uuid, &with_body).await?;
    Ok(rows(pings, durations, page, &bodies, now))
}

/// GET a ping's whole body, as plain text (never rendered as HTML).
pub(crate) async fn body(ctx: &Ctx<'_>, id: CheckId, n: u64) -> Result<Response, WebError> {
    let (uuid, _) = ctx.check(&id)?;
    let body = ctx
        .site
        .app
        .service
        .ping_body(uuid, n)
        .await?
        .ok_or(WebError::NotFound)?;
    let mut resp = response::body(StatusCode::OK, "text/plain; charset=utf-8", body, ctx.gzip);
    resp.headers_mut().insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("no-store"),
    );
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::json::durations;

    fn ping(n: u64, kind: PingKind, secs: i64) -> Ping {
        Ping {
            check: Uuid::nil(),
            n,
            created: Timestamp::from_second(1_700_000_000 + secs).expect("ts"),
            kind,
            scheme: "https".into(),
            remote_addr: Some("10.0.0.7".into()),
            method: "POST".into(),
            ua: "curl/8".into(),
            rid: None,
            exit_status: None,
            body_len: 0,
        }
    }

    #[test]
    fn pages_are_bounded_by_the_log() {
        assert_eq!(page_number("", 1000), 1);
        assert_eq!(page_number("x", 1000), 1);
        assert_eq!(page_number("0", 1000), 1);
        assert_eq!(page_number("3", 1000), 3);
        assert_eq!(page_number("999999999", 1000), 20);
        assert_eq!(page_number("2", 10), 1);
    }

    #[test]
    fn rows_of_a_page_with_durations_and_paging() {
        // 120 pings, newest first: even n start, odd n success 30 s later.
        let pings: Vec<Ping> = (1..=120u64)
            .rev()
            .map(|n| {
                let kind = if n % 2 == 1 {
                    PingKind::Start
                } else {
                    PingKind::Success
                };
                ping(n, kind, n as i64 * 30)
            })
            .collect();
        let now = pings[0].created;
        let d = durations(&pings);
        let (rows, paging) = rows(&pings, &d, 1, &[(120, b"<b>hi</b>".to_vec())], now);
        assert_eq!(rows.len(), PAGE_SIZE);
        assert_eq!(rows[0].n, 120);
        assert_eq!(rows[0].duration.as_deref(), Some("30 s"));
        assert_eq!(rows[0].source, "HTTPS from 10.0.0.7");
        assert_eq!(
            rows[0].preview.as_ref().map(|p| p.text.as_str()),
            Some("<b>hi</b>")
        );
        assert_eq!(rows[1].preview, None);
        assert_eq!(rows[1].kind, "start");
        assert_eq!(
            paging,
            Paging {
                page: 1,
                prev: None,
                next: Some(2)
            }
        );
        let (rows3, paging3) = super::rows(&pings, &d, 3, &[], now);
        assert_eq!(rows3.len(), 20);
        assert_eq!(rows3[0].n, 20);
        assert_eq!(paging3.next, None);
        assert_eq!(paging3.prev, Some(2));
        let (empty, _) = super::rows(&pings, &d, 4, &[], now);
        assert!(empty.is_empty());
    }

    #[test]
    fn kinds_and_sources_in_words() {
        let mut p = ping(1, PingKind::Fail, 0);
        assert_eq!(kind_word(&p), "failure");
        p.exit_status = Some(3);
        assert_eq!(kind_word(&p), "exit status 3");
        p.kind = PingKind::Ignored;
        assert_eq!(kind_word(&p), "ignored");
        p.scheme = "email".into();
        assert_eq!(source(&p), "email from 10.0.0.7");
        p.remote_addr = None;
        assert_eq!(source(&p), "email");
    }

    #[test]
    fn previews_cut_on_characters() {
        let short = preview(b"ok\nall good");
        assert_eq!(short.summary, "ok all good");
        assert_eq!(short.text, "ok\nall good");
        assert!(!short.cut);
        let long = "é".repeat(600);
        let p = preview(long.as_bytes());
        assert!(p.cut);
        assert_eq!(p.text.len(), 1024);
        assert!(p.text.chars().all(|c| c == 'é'));
        assert_eq!(p.summary.chars().count(), SUMMARY_CHARS + 1);
        assert!(p.summary.ends_with('…'));
        let bad = preview(&[0xff, b'a']);
        assert_eq!(bad.text, "\u{fffd}a");
    }
}
