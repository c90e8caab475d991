//! What a ping means (reference-behavior §4.3 steps 6-9): the URL's signal, overridden by a
//! POST-only check's method rule, then by keyword filtering of the body. Email pings (§4.6)
//! use the same keyword rules on the subject and body text.

use crate::model::signal::Signal;
use crate::model::{Check, PingKind};

/// Whether any comma-separated, trimmed, non-empty keyword occurs in `text` (case-sensitive).
pub(crate) fn matches_keywords(keywords: &str, text: &str) -> bool {
    keywords
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .any(|k| text.contains(k))
}

/// Keyword classification: failure, then success, then start keywords; no match gives a
/// failure with `filter_default_fail`, else an ignored ping.
pub(crate) fn classify_text(check: &Check, text: &str) -> PingKind {
    if matches_keywords(&check.failure_kw, text) {
        PingKind::Fail
    } else if matches_keywords(&check.success_kw, text) {
        PingKind::Success
    } else if matches_keywords(&check.start_kw, text) {
        PingKind::Start
    } else if check.filter_default_fail {
        PingKind::Fail
    } else {
        PingKind::Ignored
    }
}

/// The kind of an HTTP ping. Bodies that are not UTF-8 are classified on a lossy decoding.
pub(crate) fn classify_http(check: &Check, signal: Signal, method: &str, body: &[u8]) -> PingKind {
    let from_url = match signal {
        Signal::Success | Signal::Exit(Some(0)) => PingKind::Success,
        Signal::Start => PingKind::Start,
        Signal::Fail | Signal::Exit(_) => PingKind::Fail,
        Signal::Log => PingKind::Log,
    };
    if &*check.methods == "POST" && method != "POST" {
        return PingKind::Ignored;
    }
    if check.filter_http_body {
        return classify_text(check, &String::from_utf8_lossy(body));
    }
    from_url
}

/// What keyword filters read from an email ping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EmailText {
    pub(crate) subject: String,
    /// The text/plain part and the HTML part as text, joined by a newline.
    pub body: String,
}

/// The kind of an email ping: success unless `filter_subject` or `filter_body` is on; then
/// the keywords decide over the chosen texts joined by a newline.
pub(crate) fn classify_email(check: &Check, email: &EmailText) -> PingKind {
    let mut texts = Vec::new();
    if check.filter_subject {
        texts.push(email.subject.as_str());
    }
    if check.filter_body {
        texts.push(email.body.as_str());
    }
    if texts.is_empty() {
        return PingKind::Success;
    }
    classify_text(check, &texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;
    use uuid::Uuid;

    fn check() -> Check {
        Check::new(
            Uuid::nil(),
            Uuid::nil(),
            1,
            Timestamp::UNIX_EPOCH,
            Uuid::nil(),
        )
    }

    #[test]
    fn url_signals() {
        let c = check();
        assert_eq!(
            classify_http(&c, Signal::Success, "GET", b""),
            PingKind::Success
        );
        assert_eq!(
            classify_http(&c, Signal::Exit(Some(0)), "GET", b""),
            PingKind::Success
        );
        assert_eq!(
            classify_http(&c, Signal::Exit(Some(123)), "GET", b""),
            PingKind::Fail
        );
        assert_eq!(classify_http(&c, Signal::Log, "HEAD", b""), PingKind::Log);
    }

    #[test]
    fn post_only_checks_ignore_other_methods_even_with_filters() {
        let mut c = check();
        c.methods = "POST".into();
        c.filter_http_body = true;
        c.filter_default_fail = true;
        assert_eq!(
            classify_http(&c, Signal::Success, "GET", b""),
            PingKind::Ignored
        );
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"nothing"),
            PingKind::Fail
        );
    }

    #[test]
    fn keywords_override_the_url_in_priority_order() {
        let mut c = check();
        c.filter_http_body = true;
        c.success_kw = "SUCCESS".into();
        c.failure_kw = "FAIL, ERROR".into();
        c.start_kw = "START".into();
        assert_eq!(
            classify_http(&c, Signal::Fail, "POST", b"SUCCESS!"),
            PingKind::Success
        );
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"SUCCESS but ERROR"),
            PingKind::Fail
        );
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"STARTING"),
            PingKind::Start
        );
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"hello"),
            PingKind::Ignored
        );
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"success"),
            PingKind::Ignored
        );
        c.filter_default_fail = true;
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"hello"),
            PingKind::Fail
        );
        assert_eq!(
            classify_http(&c, Signal::Success, "POST", b"Hello \xe9 SUCCESS"),
            PingKind::Success
        );
    }

    #[test]
    fn empty_keyword_lists_never_match() {
        assert!(!matches_keywords("", "anything"));
        assert!(!matches_keywords(" , ,", "anything"));
        assert!(matches_keywords("a,,b", "xbx"));
    }

    #[test]
    fn email_filters_choose_the_texts() {
        let mut c = check();
        c.failure_kw = "FAIL".into();
        c.success_kw = "OK".into();
        let mail = EmailText {
            subject: "Backup OK".into(),
            body: "1 file FAILed".into(),
        };
        // No filter: every email is a success, whatever it says.
        assert_eq!(classify_email(&c, &mail), PingKind::Success);
        c.filter_subject = true;
        assert_eq!(classify_email(&c, &mail), PingKind::Success);
        c.filter_body = true;
        assert_eq!(classify_email(&c, &mail), PingKind::Fail);
        c.filter_subject = false;
        assert_eq!(classify_email(&c, &mail), PingKind::Fail);
        let quiet = EmailText::default();
        assert_eq!(classify_email(&c, &quiet), PingKind::Ignored);
        c.filter_default_fail = true;
        assert_eq!(classify_email(&c, &quiet), PingKind::Fail);
        // filter_http_body plays no part in email.
        c.filter_body = false;
        c.filter_http_body = true;
        assert_eq!(classify_email(&c, &quiet), PingKind::Success);
    }
}
