//! Badge URLs (reference §2.16, §7.1): the signature that makes a project's badge URLs
//! unguessable without exposing an API key, and the double percent-encoding of tags.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha1::{Digest, Sha1};

use crate::model::url::quote;

/// First 8 characters of unpadded URL-safe base64 of HMAC-SHA1(SHA1(badge_key ‖ secret), tag).
pub(crate) fn signature(secret: &[u8], badge_key: &str, tag: &str) -> String {
    let mut salted = Sha1::new();
    salted.update(badge_key.as_bytes());
    salted.update(secret);
    let key = salted.finalize();
    // HMAC takes keys of any length; the else branch cannot run.
    let Ok(mut mac) = Hmac::<Sha1>::new_from_slice(&key) else {
        return String::new();
    };
    mac.update(tag.as_bytes());
    let encoded = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    encoded[..8].to_string()
}

/// A tag as it appears in a badge URL: percent-encoded twice (`db@dc1` → `db%2540dc1`).
pub(crate) fn encode_tag(tag: &str) -> String {
    quote(&quote(tag, b""), b"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_reference_examples() {
        let secret = b"test-secret";
        assert_eq!(signature(secret, "alice", "prod"), "Zj1bpYPG");
        assert_eq!(signature(secret, "alice", "*"), "bQvTZqsb");
        assert_eq!(signature(secret, "alice", "db@dc1"), "_YyPt6XB");
    }

    #[test]
    fn tags_are_encoded_twice() {
        assert_eq!(encode_tag("db@dc1"), "db%2540dc1");
        assert_eq!(encode_tag("a/b"), "a%252Fb");
        assert_eq!(encode_tag("x.y-_~"), "x.y-_~");
    }
}

/// What a badge shows: two states (`up`, `down`) or three (`up`, `late`, `down`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum States {
    Two,
    Three,
}

/// The aggregate of a badge's checks (reference-behavior §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Summary {
    /// `up`, `late` or `down`.
    pub status: &'static str,
    pub(crate) total: u32,
    pub grace: u32,
    pub down: u32,
}

/// Folds checks' displayed statuses into a badge: any down check makes it down; a check in
/// grace makes an up badge late (three states only) and is counted either way.
pub(crate) fn summarize(
    statuses: impl IntoIterator<Item = crate::model::Status>,
    states: States,
) -> Summary {
    use crate::model::Status;
    let mut s = Summary {
        status: "up",
        total: 0,
        grace: 0,
        down: 0,
    };
    for status in statuses {
        s.total += 1;
        match status {
            Status::Down => {
                s.status = "down";
                s.down += 1;
            }
            Status::Grace => {
                s.grace += 1;
                if s.status == "up" && states == States::Three {
                    s.status = "late";
                }
            }
            _ => {}
        }
    }
    s
}

/// The `json` format.
pub(crate) fn json(s: &Summary) -> serde_json::Value {
    serde_json::json!({"status": s.status, "total": s.total, "grace": s.grace, "down": s.down})
}

/// The `shields` format (shields.io endpoint badge).
pub(crate) fn shields(label: &str, s: &Summary) -> serde_json::Value {
    let color = match s.status {
        "down" => "critical",
        "late" => "important",
        _ => "success",
    };
    serde_json::json!({"schemaVersion": 1, "label": label, "message": s.status, "color": color})
}

fn char_width(c: char) -> u32 {
    match c {
        'f' | 'r' => 4,
        'i' | 'j' | 'l' => 3,
        'c' | 'e' | 's' | 'x' => 6,
        't' => 5,
        'm' => 10,
        'w' => 9,
        'a'..='z' => 7,
        '1' => 6,
        '0'..='9' => 7,
        'A' | 'C' | 'D' | 'H' | 'N' | 'U' | 'V' => 8,
        'F' | 'L' | 'P' => 6,
        'G' | 'O' | 'Q' => 9,
        'I' => 3,
        'J' => 4,
        'M' => 10,
        'W' => 11,
        'A'..='Z' => 7,
        '-' => 4,
        '_' => 6,
        _ => 7,
    }
}

fn text_width(s: &str) -> u32 {
    s.chars().map(char_width).sum()
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            other => out.push(other),
        }
    }
    out
}

/// A number as Python prints a float: always with a fractional part (`17.5`, `47.0`).
fn py_float(half_units: u32) -> String {
    format!(
        "{}.{}",
        half_units / 2,
        if half_units % 2 == 1 { 5 } else { 0 }
    )
}

/// The `svg` format: a shields.io "flat" badge (reference-behavior §7.3).
pub(crate) fn svg(label: &str, status: &str) -> String {
    let w1 = text_width(label) + 10;
    let w2 = text_width(status) + 10;
    let w = w1 + w2;
    let color = match status {
        "down" => "#e05d44",
        "late" => "#fe7d37",
        _ => "#4c1",
    };
    let (label_x, status_x) = (py_float(w1), py_float(2 * w1 + w2));
    let (label, status) = (escape(label), escape(status));
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \
width=\"{w}\" height=\"20\">\
<linearGradient id=\"smooth\" x2=\"0\" y2=\"100%\">\
<stop offset=\"0\" stop-color=\"#bbb\" stop-opacity=\".1\"/>\
<stop offset=\"1\" stop-opacity=\".1\"/></linearGradient>\
<mask id=\"round\"><rect width=\"{w}\" height=\"20\" rx=\"3\" fill=\"#fff\"/></mask>\
<g mask=\"url(#round)\"><rect width=\"{w1}\" height=\"20\" fill=\"#555\"/>\
<rect x=\"{w1}\" width=\"{w2}\" height=\"20\" fill=\"{color}\"/>\
<rect width=\"{w}\" height=\"20\" fill=\"url(#smooth)\"/></g>\
<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,Geneva,DejaVu Sans,sans-serif\" \
text-rendering=\"geometricPrecision\" font-size=\"11\">\
<text x=\"{label_x}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{label}</text>\
<text x=\"{label_x}\" y=\"14\">{label}</text>\
<text x=\"{status_x}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{status}</text>\
<text x=\"{status_x}\" y=\"14\">{status}</text></g></svg>"
    )
}

#[cfg(test)]
mod render_tests {
    use super::*;
    use crate::model::Status;

    #[test]
    fn svg_geometry_matches_the_reference_example() {
        let s = svg("prod", "up");
        assert!(s.contains("width=\"59\" height=\"20\""));
        assert!(s.contains("<rect width=\"35\" height=\"20\" fill=\"#555\"/>"));
        assert!(s.contains("<rect x=\"35\" width=\"24\" height=\"20\" fill=\"#4c1\"/>"));
        assert!(s.contains("x=\"17.5\" y=\"14\">prod<"));
        assert!(s.contains("x=\"47.0\" y=\"14\">up<"));
        assert!(
            svg("<a&b>", "down").contains("&lt;a&amp;b&gt;")
                && svg("x", "down").contains("#e05d44")
        );
    }

    #[test]
    fn aggregation_two_and_three_states() {
        let all = [Status::Up, Status::Grace, Status::New, Status::Paused];
        assert_eq!(
            summarize(all, States::Two),
            Summary {
                status: "up",
                total: 4,
                grace: 1,
                down: 0
            }
        );
        assert_eq!(summarize(all, States::Three).status, "late");
        let with_down = [Status::Grace, Status::Down, Status::Grace];
        assert_eq!(
            summarize(with_down, States::Three),
            Summary {
                status: "down",
                total: 3,
                grace: 2,
                down: 1
            }
        );
        assert_eq!(
            summarize([], States::Three),
            Summary {
                status: "up",
                total: 0,
                grace: 0,
                down: 0
            }
        );
    }

    #[test]
    fn shields_colors() {
        let s = summarize([Status::Down], States::Three);
        assert_eq!(
            shields("foo", &s),
            serde_json::json!({"schemaVersion": 1, "label": "foo", "message": "down", "color": "critical"})
        );
        assert_eq!(
            shields("x", &summarize([Status::Grace], States::Three))["color"],
            "important"
        );
    }
}
