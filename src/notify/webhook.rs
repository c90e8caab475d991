//! Webhooks (reference-behavior §8.2): per direction a method, URL, body and headers, with
//! `$NAME`-style placeholders. Substitution splits the template at each `$` and replaces the
//! first placeholder (in the reference's order) that starts the segment, so values that
//! contain `$...` are never expanded again. URL values are percent-encoded, header values
//! turn non-Latin-1 characters into `&#N;`, body values are raw.

use crate::model::channel::{HookSpec, WebhookConfig};
use crate::model::url::quote;
use crate::notify::message::{Event, Message, Notice};
use crate::notify::{HttpRequest, Notifier, NotifyError, Outgoing, check_http_url};

/// Statuses that count as delivered (§8.2).
pub(crate) const ACCEPTED: &[u16] = &[200, 201, 202, 204];
/// Longest URL and body template (§8.2).
pub(crate) const TEMPLATE_MAX: usize = 1000;

pub(crate) struct Webhook {
    config: WebhookConfig,
}

impl Webhook {
    pub(crate) fn new(config: &WebhookConfig) -> Result<Webhook, NotifyError> {
        if config.down.is_none() && config.up.is_none() {
            return Err(NotifyError::config(
                "webhook",
                "needs --url, --url-down or --url-up",
            ));
        }
        for spec in [&config.down, &config.up].into_iter().flatten() {
            check_http_url("webhook", &spec.url)?;
            if !matches!(spec.method.as_str(), "GET" | "POST" | "PUT") {
                return Err(NotifyError::config(
                    "webhook",
                    format!("method {:?} is not GET, POST or PUT", spec.method),
                ));
            }
            if spec.url.chars().count() > TEMPLATE_MAX || spec.body.chars().count() > TEMPLATE_MAX {
                return Err(NotifyError::config(
                    "webhook",
                    format!("URL and body are limited to {TEMPLATE_MAX} characters"),
                ));
            }
        }
        Ok(Webhook {
            config: config.clone(),
        })
    }
}

impl Notifier for Webhook {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        let spec: &HookSpec = match msg.notice {
            Notice::Alert(Event::Up) => self.config.up.as_ref(),
            Notice::Alert(Event::Down | Event::Late | Event::Failure) => self.config.down.as_ref(),
            Notice::Test => self.config.down.as_ref().or(self.config.up.as_ref()),
        }
        .ok_or(NotifyError::Skip)?;
        let mut headers: Vec<(String, String)> = spec
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), expand(v, msg, Encoding::Header)))
            .collect();
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
        {
            headers.push(("User-Agent".into(), "overdue".into()));
        }
        let body = matches!(spec.method.as_str(), "POST" | "PUT")
            .then(|| expand(&spec.body, msg, Encoding::Body).into_bytes());
        Ok(Outgoing::Http(HttpRequest {
            method: spec.method.clone(),
            url: expand(&spec.url, msg, Encoding::Url),
            headers,
            body,
            accept: Some(ACCEPTED),
        }))
    }
}

/// Where a template is used; decides how values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Url,
    Header,
    Body,
}

/// Fills the placeholders of `template` (§8.2).
pub(crate) fn expand(template: &str, msg: &Message, enc: Encoding) -> String {
    let safe = |v: &str| match enc {
        // Python's `quote` default: `/` stays.
        Encoding::Url => quote(v, b"/"),
        Encoding::Header => latin1_refs(v),
        Encoding::Body => v.to_string(),
    };
    let mut ctx: Vec<(String, String)> = vec![
        ("$CODE".into(), msg.check.to_string()),
        ("$STATUS".into(), msg.status().to_string()),
        (
            "$NOW".into(),
            safe(&crate::model::time::iso_seconds(msg.at)),
        ),
        (
            "$NAME_JSON".into(),
            safe(&serde_json::Value::String(msg.name.clone()).to_string()),
        ),
        ("$NAME".into(), safe(&msg.name)),
        ("$SLUG".into(), msg.slug.clone()),
        ("$TAGS".into(), safe(&msg.tags)),
        ("$JSON".into(), safe(&msg.check_json)),
    ];
    let body = msg.last_ping.as_ref().map_or("", |p| p.body.as_str());
    if enc == Encoding::Body && template.contains("$BODY") {
        ctx.push((
            "$BODY_JSON".into(),
            serde_json::Value::String(body.to_string()).to_string(),
        ));
        ctx.push(("$BODY".into(), body.to_string()));
    }
    if template.contains("$EXITSTATUS") {
        let code = msg
            .last_ping
            .as_ref()
            .and_then(|p| p.exit_status)
            .map_or(-1, i32::from);
        ctx.push(("$EXITSTATUS".into(), code.to_string()));
    }
    for (i, tag) in msg.tags.split_whitespace().enumerate() {
        ctx.push((format!("$TAG{}", i + 1), safe(tag)));
    }
    let mut parts = template.split('$');
    let mut out = parts.next().unwrap_or("").to_string();
    for part in parts {
        let segment = format!("${part}");
        match ctx.iter().find(|(p, _)| segment.starts_with(p.as_str())) {
            Some((p, v)) => {
                out.push_str(v);
                out.push_str(&segment[p.len()..]);
            }
            None => out.push_str(&segment),
        }
    }
    out
}

/// Characters outside Latin-1 as XML character references (header values must be Latin-1).
pub(crate) fn latin1_refs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if u32::from(c) <= 0xff {
            out.push(c);
        } else {
            out.push_str(&format!("&#{};", u32::from(c)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::tests::sample;

    #[test]
    fn url_values_are_percent_encoded_and_code_is_raw() {
        let mut m = sample(Event::Down);
        m.name = "Hello World".into();
        assert_eq!(
            expand("http://x/$CODE/$NAME?s=$STATUS", &m, Encoding::Url),
            "http://x/0193a3b4-0000-4000-8000-000000000001/Hello%20World?s=down"
        );
        m.name = "$TAG1".into();
        assert_eq!(expand("/$NAME", &m, Encoding::Url), "/%24TAG1");
        assert_eq!(
            expand("$NAME", &m, Encoding::Body),
            "$TAG1",
            "never re-expanded"
        );
    }

    #[test]
    fn placeholders_in_order_with_prefix_matching() {
        let mut m = sample(Event::Down);
        assert_eq!(
            expand("$NAME_JSON|$NAME|$NOW|$SLUG", &m, Encoding::Body),
            "\"Backups\"|Backups|2026-03-31T00:32:00+00:00|backups"
        );
        assert_eq!(
            expand("$$NAME $TAG2 $TAG1", &m, Encoding::Body),
            "$Backups db prod"
        );
        assert_eq!(
            expand("$EXITSTATUS $BODY_JSON $BODY", &m, Encoding::Body),
            "3 \"disk full\" disk full"
        );
        assert_eq!(
            expand("$BODY", &m, Encoding::Url),
            "$BODY",
            "body only in the body"
        );
        m.tags = "a b c d e f g h i j".into();
        assert_eq!(
            expand("$TAG10", &m, Encoding::Body),
            "a0",
            "the reference's quirk"
        );
        m.last_ping = None;
        assert_eq!(expand("$EXITSTATUS", &m, Encoding::Body), "-1");
        assert_eq!(expand("$UNKNOWN $", &m, Encoding::Body), "$UNKNOWN $");
    }

    #[test]
    fn headers_get_char_refs_and_a_user_agent() {
        let mut m = sample(Event::Up);
        m.name = "Résumé ✓".into();
        let hook = Webhook::new(&WebhookConfig {
            down: None,
            up: Some(HookSpec {
                method: "PUT".into(),
                url: "http://h/$STATUS".into(),
                body: "{\"n\": $NAME_JSON}".into(),
                headers: vec![("X-Name".into(), "$NAME".into())],
            }),
        })
        .expect("valid");
        let Outgoing::Http(req) = hook.prepare(&m).expect("up") else {
            panic!("http")
        };
        assert_eq!(req.method, "PUT");
        assert_eq!(req.url, "http://h/up");
        assert_eq!(
            req.body.as_deref(),
            Some("{\"n\": \"Résumé ✓\"}".as_bytes())
        );
        assert!(
            req.headers
                .contains(&("X-Name".into(), "Résumé &#10003;".into()))
        );
        assert!(
            req.headers
                .contains(&("User-Agent".into(), "overdue".into()))
        );
        assert_eq!(hook.prepare(&sample(Event::Down)), Err(NotifyError::Skip));
    }

    #[test]
    fn get_sends_no_body_and_bad_settings_are_refused() {
        let hook = Webhook::new(&WebhookConfig {
            down: Some(HookSpec::new("http://h/", "")),
            up: None,
        })
        .expect("valid");
        let Outgoing::Http(req) = hook.prepare(&sample(Event::Down)).expect("down") else {
            panic!("http")
        };
        assert_eq!((req.method.as_str(), req.body), ("GET", None));
        assert!(Webhook::new(&WebhookConfig::default()).is_err());
        let mut bad = HookSpec::new("ftp://h/", "");
        assert!(
            Webhook::new(&WebhookConfig {
                down: Some(bad.clone()),
                up: None
            })
            .is_err()
        );
        bad.url = "http://h".into();
        bad.method = "DELETE".into();
        assert!(
            Webhook::new(&WebhookConfig {
                down: Some(bad),
                up: None
            })
            .is_err()
        );
    }
}
