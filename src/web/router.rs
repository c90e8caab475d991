//! Which dashboard page a path names. Paths follow Healthchecks' own (`/projects/<uuid>/checks/`,
//! `/checks/<uuid>/`), so links people know keep their shape; anything not named here (the
//! APIs, `/ping/`, badges, `/projects/<uuid>/metrics/...`) belongs to the API.

use uuid::Uuid;

use crate::api::router::canonical_uuid;

/// A check named in a path: by UUID, or (for read-only sessions, which never see UUIDs, as
/// in the read-only API) by its `unique_key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CheckId {
    Uuid(Uuid),
    UniqueKey(String),
}

impl CheckId {
    fn parse(s: &str) -> Option<CheckId> {
        if let Some(u) = canonical_uuid(s) {
            return Some(CheckId::Uuid(u));
        }
        let key = s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        key.then(|| CheckId::UniqueKey(s.to_string()))
    }
}

/// A state-changing action on one check (always a POST).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckAction {
    Pause,
    Resume,
    Snooze,
    Delete,
    Edit,
}

/// A state-changing action on a project (always a POST).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProjectAction {
    /// Add a check from the checks page's form.
    AddCheck,
    AddChannel,
    RemoveChannel,
    TestChannel,
    AddKey,
    RemoveKey,
    /// Set, change or remove the project's quiet window.
    SetQuiet,
    /// Snooze every check of the project, or of one tag.
    SnoozeChecks,
}

/// One dashboard page or action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Page {
    /// `/`: the first project's checks when signed in, else the sign-in form.
    Home,
    /// `/signin/`: the form (GET) and signing in (POST).
    SignIn,
    /// `/signout/` (POST).
    SignOut,
    /// `/static/<name>`: an embedded asset.
    Asset(String),
    /// `/projects/<uuid>/checks/`.
    Checks(Uuid),
    /// `/projects/<uuid>/checks/rows/`: the checks table alone, for live updates.
    CheckRows(Uuid),
    /// `/projects/<uuid>/integrations/`.
    Integrations(Uuid),
    /// `/projects/<uuid>/settings/`: badges, API keys, the ping key.
    Project(Uuid),
    /// `/projects/<uuid>/<action>/` (POST).
    ProjectAction(Uuid, ProjectAction),
    /// `/checks/<uuid>/`.
    Check(CheckId),
    /// `/checks/<uuid>/<action>/` (POST).
    CheckAction(Uuid, CheckAction),
    /// `/checks/<id>/pings/<n>/body/`: a ping's whole body, as text.
    PingBody(CheckId, u64),
    /// `/checks/<uuid>/preview/?schedule=..&tz=..`: the next fire times of a schedule being
    /// typed into the edit form.
    SchedulePreview(Uuid),
}

/// The page `path` names (trailing slash optional), or None for a path of the APIs.
pub(crate) fn parse(path: &str) -> Option<Page> {
    if path == "/" {
        return Some(Page::Home);
    }
    if let Some(name) = path.strip_prefix("/static/") {
        return Some(Page::Asset(name.to_string()));
    }
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    let parts: Vec<&str> = trimmed.split('/').skip(1).collect();
    let page = match parts.as_slice() {
        ["signin"] => Page::SignIn,
        ["signout"] => Page::SignOut,
        ["projects", p, rest @ ..] => {
            let p = canonical_uuid(p)?;
            match rest {
                ["checks"] => Page::Checks(p),
                ["checks", "rows"] => Page::CheckRows(p),
                ["integrations"] => Page::Integrations(p),
                ["settings"] => Page::Project(p),
                ["add_check"] => Page::ProjectAction(p, ProjectAction::AddCheck),
                ["add_channel"] => Page::ProjectAction(p, ProjectAction::AddChannel),
                ["remove_channel"] => Page::ProjectAction(p, ProjectAction::RemoveChannel),
                ["test_channel"] => Page::ProjectAction(p, ProjectAction::TestChannel),
                ["add_key"] => Page::ProjectAction(p, ProjectAction::AddKey),
                ["remove_key"] => Page::ProjectAction(p, ProjectAction::RemoveKey),
                ["quiet"] => Page::ProjectAction(p, ProjectAction::SetQuiet),
                ["snooze"] => Page::ProjectAction(p, ProjectAction::SnoozeChecks),
                _ => return None,
            }
        }
        ["checks", c, rest @ ..] => {
            let id = CheckId::parse(c)?;
            if rest.is_empty() {
                return Some(Page::Check(id));
            }
            if let ["pings", n, "body"] = rest {
                if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                return Some(Page::PingBody(id, n.parse().ok()?));
            }
            let CheckId::Uuid(c) = id else {
                return None;
            };
            match rest {
                ["pause"] => Page::CheckAction(c, CheckAction::Pause),
                ["resume"] => Page::CheckAction(c, CheckAction::Resume),
                ["snooze"] => Page::CheckAction(c, CheckAction::Snooze),
                ["delete"] => Page::CheckAction(c, CheckAction::Delete),
                ["edit"] => Page::CheckAction(c, CheckAction::Edit),
                ["preview"] => Page::SchedulePreview(c),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(page)
}

impl Page {
    /// Whether the page changes state: only POST reaches it, and it needs the session's CSRF
    /// token (sign-in has no session yet; it checks the origin only).
    pub(crate) fn is_action(&self) -> bool {
        matches!(
            self,
            Page::SignOut | Page::ProjectAction(..) | Page::CheckAction(..)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "cf204185-012a-4bc0-8efb-5dc6ccf91181";

    #[test]
    fn pages_with_and_without_slash() {
        let u = Uuid::parse_str(U).expect("uuid");
        assert_eq!(parse("/"), Some(Page::Home));
        assert_eq!(parse("/signin/"), Some(Page::SignIn));
        assert_eq!(parse("/signin"), Some(Page::SignIn));
        assert_eq!(
            parse(&format!("/projects/{U}/checks/")),
            Some(Page::Checks(u))
        );
        assert_eq!(
            parse(&format!("/checks/{U}")),
            Some(Page::Check(CheckId::Uuid(u)))
        );
        let key = "23271726e9a15fc8c0b82d52b9d0bf059fc03344";
        assert_eq!(
            parse(&format!("/checks/{key}/")),
            Some(Page::Check(CheckId::UniqueKey(key.into())))
        );
        assert_eq!(parse(&format!("/checks/{key}/pause/")), None);
        assert_eq!(
            parse(&format!("/checks/{U}/pause/")),
            Some(Page::CheckAction(u, CheckAction::Pause))
        );
        assert_eq!(
            parse(&format!("/checks/{U}/pings/12/body/")),
            Some(Page::PingBody(CheckId::Uuid(u), 12))
        );
        assert_eq!(
            parse("/static/dashboard.css"),
            Some(Page::Asset("dashboard.css".into()))
        );
    }

    #[test]
    fn api_paths_are_not_pages() {
        assert_eq!(parse("/api/v3/checks/"), None);
        assert_eq!(parse(&format!("/projects/{U}/metrics/abc")), None);
        assert_eq!(parse("/ping/abc"), None);
        assert_eq!(parse("/badge/x/y.svg"), None);
        assert_eq!(parse(&format!("/checks/{}/", U.to_uppercase())), None);
        assert_eq!(parse(&format!("/checks/{U}/pings/x/body")), None);
    }

    #[test]
    fn actions_need_a_token() {
        let u = Uuid::nil();
        assert!(Page::CheckAction(u, CheckAction::Delete).is_action());
        assert!(Page::SignOut.is_action());
        assert!(!Page::SignIn.is_action());
        assert!(!Page::Check(CheckId::Uuid(u)).is_action());
    }
}
