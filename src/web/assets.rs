//! The dashboard's embedded files (stylesheet, script) and its icon, which shows how many
//! checks are down. Asset URLs carry a version (a digest of the contents), so browsers may
//! keep them for a year and still never run a stale script after an upgrade.

use std::sync::LazyLock;

use sha2::{Digest, Sha256};
use warp::http::StatusCode;
use warp::http::header::{CACHE_CONTROL, HeaderValue};
use warp::reply::Response;

use crate::web::response;

/// The stylesheet: the layout, both themes, and the timeline picture's classes.
pub(crate) const CSS: &str = concat!(
    include_str!("assets/dashboard.css"),
    include_str!("assets/timeline.css"),
    include_str!("assets/checks.css")
);
/// The progressive-enhancement script.
pub(crate) const JS: &str = concat!(
    include_str!("assets/dashboard.js"),
    include_str!("assets/checks.js")
);

/// The digest of every asset, as `?v=` in their URLs.
pub(crate) fn version() -> &'static str {
    static V: LazyLock<String> = LazyLock::new(|| {
        let d = Sha256::new()
            .chain_update(CSS)
            .chain_update(JS)
            .chain_update(ICON_VERSION)
            .finalize();
        crate::model::hex(&d[..6])
    });
    &V
}

/// Changes when [`icon`]'s drawing changes.
const ICON_VERSION: &str = "icon-1";

/// The icon for `down` checks down: a green circle with a tick when none is, a red one with
/// the number (`99+` past 99) otherwise.
pub(crate) fn icon(down: usize) -> String {
    if down == 0 {
        return concat!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">"##,
            r##"<circle cx="16" cy="16" r="15" fill="#1a7f37"/>"##,
            r##"<path d="M9 16.5l5 5 9-10" fill="none" stroke="#fff" stroke-width="3.5" "##,
            r##"stroke-linecap="round" stroke-linejoin="round"/></svg>"##
        )
        .to_string();
    }
    let text = if down > 99 {
        "99+".to_string()
    } else {
        down.to_string()
    };
    let size = match text.len() {
        1 => 22,
        2 => 18,
        _ => 13,
    };
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#cf222e"/><text x="16" y="16" dy=".36em" text-anchor="middle" font-family="system-ui,sans-serif" font-weight="700" font-size="{size}" fill="#fff">{text}</text></svg>"##
    )
}

/// The asset called `name` (`dashboard.css`, `dashboard.js`, `icon-<n>.svg`), or None.
pub(crate) fn serve(name: &str, gzip: bool) -> Option<Response> {
    let (content_type, bytes) = match name {
        "dashboard.css" => ("text/css; charset=utf-8", CSS.as_bytes().to_vec()),
        "dashboard.js" => ("text/javascript; charset=utf-8", JS.as_bytes().to_vec()),
        _ => {
            let n = name.strip_prefix("icon-")?.strip_suffix(".svg")?;
            if n.is_empty() || n.len() > 6 || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            ("image/svg+xml", icon(n.parse().ok()?).into_bytes())
        }
    };
    let mut resp = response::body(StatusCode::OK, content_type, bytes, gzip);
    resp.headers_mut().insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    Some(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icons_count_down_checks() {
        assert!(icon(0).contains("M9 16.5"));
        assert!(icon(3).contains(">3</text>"));
        assert!(icon(120).contains(">99+</text>"));
    }

    #[test]
    fn assets_by_name() {
        assert!(serve("dashboard.css", false).is_some());
        assert!(serve("dashboard.js", false).is_some());
        assert!(serve("icon-12.svg", false).is_some());
        assert!(serve("icon-.svg", false).is_none());
        assert!(serve("icon-1x.svg", false).is_none());
        assert!(serve("../Cargo.toml", false).is_none());
        assert_eq!(version().len(), 12);
    }
}
