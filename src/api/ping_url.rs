//! Ping URLs (reference-behavior §4.1): `/ping/<uuid>[/]`, `/ping/<uuid>/<signal>`,
//! `/ping/<ping-key>/<slug>[/<signal>]`, parsed into what to ping and with which signal.

use crate::api::router::canonical_uuid;
use crate::model::signal::{Signal, Target};

/// A parsed ping URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PingRoute {
    pub target: Target,
    pub signal: Signal,
}

fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn signal(s: &str) -> Option<Signal> {
    match s {
        "start" => Some(Signal::Start),
        "fail" => Some(Signal::Fail),
        "log" => Some(Signal::Log),
        _ if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            Some(Signal::Exit(s.parse().ok()))
        }
        _ => None,
    }
}

/// Parses the path after `/ping/`. None when no ping route matches (404).
pub(crate) fn parse(rest: &str) -> Option<PingRoute> {
    let parts: Vec<&str> = rest.split('/').collect();
    let by_uuid = |id: &str, signal: Signal| {
        canonical_uuid(id).map(|u| PingRoute {
            target: Target::Uuid(u),
            signal,
        })
    };
    let by_slug = |key: &str, slug: &str, signal: Signal| {
        (is_word(key) && is_word(slug)).then(|| PingRoute {
            target: Target::Slug {
                ping_key: key.to_string(),
                slug: slug.to_string(),
            },
            signal,
        })
    };
    match parts.as_slice() {
        [id] | [id, ""] => by_uuid(id, Signal::Success),
        [a, b] => match signal(b) {
            // The UUID routes are tried first; `/ping/<uuid>/foo` falls through to the slug
            // route, where the UUID is taken as a ping key and (almost surely) not found.
            Some(s) if canonical_uuid(a).is_some() => by_uuid(a, s),
            _ => by_slug(a, b, Signal::Success),
        },
        [key, slug, s] => by_slug(key, slug, signal(s)?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "cf204185-012a-4bc0-8efb-5dc6ccf91181";

    fn uuid() -> Target {
        Target::Uuid(U.parse().expect("uuid"))
    }

    #[test]
    fn uuid_forms() {
        assert_eq!(
            parse(U),
            Some(PingRoute {
                target: uuid(),
                signal: Signal::Success
            })
        );
        assert_eq!(
            parse(&format!("{U}/")),
            Some(PingRoute {
                target: uuid(),
                signal: Signal::Success
            })
        );
        assert_eq!(
            parse(&format!("{U}/fail")).map(|r| r.signal),
            Some(Signal::Fail)
        );
        assert_eq!(
            parse(&format!("{U}/007")).map(|r| r.signal),
            Some(Signal::Exit(Some(7)))
        );
        assert_eq!(
            parse(&format!("{U}/99999999999999999999")).map(|r| r.signal),
            Some(Signal::Exit(None))
        );
        assert_eq!(parse(&format!("{U}/fail/")), None);
        assert_eq!(parse(&U.to_uppercase()), None);
        assert_eq!(parse(&U.replace('-', "")), None);
        assert_eq!(parse("not-a-uuid/"), None);
        assert_eq!(parse(&format!("{U}/1.5")), None);
    }

    #[test]
    fn unknown_signal_after_uuid_is_a_slug_ping() {
        let r = parse(&format!("{U}/-1")).expect("slug route");
        assert_eq!(
            r.target,
            Target::Slug {
                ping_key: U.into(),
                slug: "-1".into()
            }
        );
    }

    #[test]
    fn slug_forms() {
        let r = parse("key_22-chars/backup").expect("route");
        assert_eq!(
            r.target,
            Target::Slug {
                ping_key: "key_22-chars".into(),
                slug: "backup".into()
            }
        );
        assert_eq!(
            parse("k/backup/start").map(|r| r.signal),
            Some(Signal::Start)
        );
        assert_eq!(
            parse("k/backup/256").map(|r| r.signal),
            Some(Signal::Exit(Some(256)))
        );
        assert_eq!(parse("k/backup/"), None);
        assert_eq!(parse("k/backup/bogus"), None);
        assert_eq!(parse("k/back.up"), None);
        // Uppercase slugs route (and are then refused with 400).
        assert!(parse("k/BackUp").is_some());
    }
}
