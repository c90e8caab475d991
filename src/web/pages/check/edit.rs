//! The check's edit form: every field the API takes, filled from the check or (after a
//! mistake) from what was typed, validated by exactly the API's rules
//! (`web::forms::check_object` + `model::spec::parse_spec` + `Service::update_check`), and
//! the schedule preview the form fetches as a schedule is typed.

use askama::Template;
use serde_json::Map;
use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::model::events::{self, Event, Events};
use crate::model::spec::parse_spec;
use crate::model::{ApiVersion, Channel, Check, Kind};
use crate::schedule::Schedule;
use crate::service::ServiceError;
use crate::web::error::WebError;
use crate::web::forms::{Form, check_object};
use crate::web::pages::Ctx;
use crate::web::pages::check::when::{Fire, next_fires};
use crate::web::response;
use crate::web::router::CheckId;

/// Fire times a schedule preview lists.
pub(crate) const FIRES_SHOWN: usize = 5;

/// Another check of the project, as an option of the form's parents list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParentOption {
    pub uuid: String,
    pub name: String,
    pub selected: bool,
}

fn parent_options(
    others: &[(Uuid, String)],
    selected: impl Fn(&Uuid) -> bool,
) -> Vec<ParentOption> {
    others
        .iter()
        .map(|(uuid, name)| ParentOption {
            uuid: uuid.to_string(),
            name: if name.is_empty() {
                uuid.to_string()
            } else {
                name.clone()
            },
            selected: selected(uuid),
        })
        .collect()
}

/// A channel of the project, as a checkbox of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChannelBox {
    pub uuid: String,
    pub name: String,
    pub kind: String,
    pub checked: bool,
    /// The events it sends for this check, one box each.
    pub events: Vec<EventBox>,
}

/// One event a channel may send, as a checkbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventBox {
    pub name: &'static str,
    pub on: bool,
}

fn event_boxes(events: Events) -> Vec<EventBox> {
    Event::ALL
        .into_iter()
        .map(|e| EventBox {
            name: e.as_str(),
            on: events.contains(e),
        })
        .collect()
}

/// The values of the edit form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditForm {
    pub name: String,
    pub slug: String,
    pub tags: String,
    pub desc: String,
    /// A simple check (period and grace) rather than a cron or OnCalendar schedule.
    pub simple: bool,
    pub timeout: String,
    pub grace: String,
    pub schedule: String,
    pub tz: String,
    /// `""` or `"POST"`.
    pub methods: String,
    pub start_kw: String,
    pub success_kw: String,
    pub failure_kw: String,
    pub filter_subject: bool,
    pub filter_body: bool,
    pub filter_http_body: bool,
    pub filter_default_fail: bool,
    pub manual_resume: bool,
    pub fail_threshold: String,
    pub max_duration: String,
    pub min_duration: String,
    pub quiet_schedule: String,
    pub quiet_tz: String,
    pub quiet_duration: String,
    pub parents: Vec<ParentOption>,
    pub channels: Vec<ChannelBox>,
}

fn boxes(
    channels: &[&Channel],
    checked: impl Fn(&Uuid) -> bool,
    events: impl Fn(&Channel) -> Events,
) -> Vec<ChannelBox> {
    channels
        .iter()
        .map(|c| ChannelBox {
            uuid: c.uuid.to_string(),
            name: c.name.clone(),
            kind: c.kind().to_string(),
            checked: checked(&c.uuid),
            events: event_boxes(events(c)),
        })
        .collect()
}

impl EditForm {
    /// The form of `check` as it is.
    pub(crate) fn of_check(
        check: &Check,
        channels: &[&Channel],
        others: &[(Uuid, String)],
    ) -> EditForm {
        EditForm {
            name: check.name.clone(),
            slug: check.slug.clone(),
            tags: check.tags.clone(),
            desc: check.desc.clone(),
            simple: check.kind == Kind::Simple,
            timeout: check.timeout.to_string(),
            grace: check.grace.to_string(),
            schedule: check.schedule.to_string(),
            tz: check.tz.to_string(),
            methods: check.methods.to_string(),
            start_kw: check.start_kw.to_string(),
            success_kw: check.success_kw.to_string(),
            failure_kw: check.failure_kw.to_string(),
            filter_subject: check.filter_subject,
            filter_body: check.filter_body,
            filter_http_body: check.filter_http_body,
            filter_default_fail: check.filter_default_fail,
            manual_resume: check.manual_resume,
            fail_threshold: check.fail_threshold.to_string(),
            max_duration: check.max_duration.to_string(),
            min_duration: check.min_duration.to_string(),
            quiet_schedule: check
                .quiet
                .as_ref()
                .map(|q| q.schedule.clone())
                .unwrap_or_default(),
            quiet_tz: check
                .quiet
                .as_ref()
                .map_or_else(|| "UTC".to_string(), |q| q.tz.clone()),
            quiet_duration: check
                .quiet
                .as_ref()
                .map_or_else(|| "3600".to_string(), |q| q.duration.to_string()),
            parents: parent_options(others, |u| check.parents.contains(u)),
            channels: boxes(
                channels,
                |u| check.channels.contains(u),
                |c| events::for_channel(&check.channel_events, c.uuid, c.events),
            ),
        }
    }

    /// The form as it was sent, to show again with the API's message.
    pub(crate) fn typed(form: &Form, channels: &[&Channel], others: &[(Uuid, String)]) -> EditForm {
        let text = |name: &str| form.get(name).unwrap_or("").to_string();
        let on = |name: &str| {
            form.all(name)
                .iter()
                .any(|v| matches!(*v, "1" | "on" | "true"))
        };
        let picked = form.all("channel");
        EditForm {
            name: text("name"),
            slug: text("slug"),
            tags: text("tags"),
            desc: text("desc"),
            simple: form.get("kind") == Some("simple"),
            timeout: text("timeout"),
            grace: text("grace"),
            schedule: text("schedule"),
            tz: text("tz"),
            methods: text("methods"),
            start_kw: text("start_kw"),
            success_kw: text("success_kw"),
            failure_kw: text("failure_kw"),
            filter_subject: on("filter_subject"),
            filter_body: on("filter_body"),
            filter_http_body: on("filter_http_body"),
            filter_default_fail: on("filter_default_fail"),
            manual_resume: on("manual_resume"),
            fail_threshold: text("fail_threshold"),
            max_duration: text("max_duration"),
            min_duration: text("min_duration"),
            quiet_schedule: text("quiet_schedule"),
            quiet_tz: text("quiet_tz"),
            quiet_duration: text("quiet_duration"),
            parents: parent_options(others, |u| {
                form.all("parent").contains(&u.to_string().as_str())
            }),
            channels: boxes(
                channels,
                |u| picked.contains(&u.to_string().as_str()),
                |c| {
                    let name = format!("events-{}", c.uuid);
                    if form.get(&format!("events_listed-{}", c.uuid)).is_none() {
                        return c.events;
                    }
                    Events::parse(&form.all(&name).join(",")).unwrap_or(c.events)
                },
            ),
        }
    }
}

/// The schedule preview: the next fire times, or the API's message about the schedule.
#[derive(Template, Debug, Clone)]
#[template(path = "check_fires.html")]
pub(crate) struct FiresFragment {
    pub fires: Vec<Fire>,
    /// The zone the local times are in.
    pub zone: String,
    pub error: Option<String>,
}

/// The preview of `schedule` in `tz` (UTC when empty) at `now`: the API's validation first,
/// so the message is the one a save would give.
pub(crate) fn fires_of(schedule: &str, tz: &str, now: jiff::Timestamp) -> FiresFragment {
    let tz = if tz.is_empty() { "UTC" } else { tz };
    let mut obj = Map::new();
    obj.insert("schedule".into(), schedule.into());
    obj.insert("tz".into(), tz.into());
    let parsed = parse_spec(&obj)
        .map_err(|e| ServiceError::from(e).to_string())
        .and_then(|_| Schedule::parse(schedule, tz).map_err(|e| e.to_string()));
    match parsed {
        Ok(s) => FiresFragment {
            fires: next_fires(&s, now, FIRES_SHOWN),
            zone: tz.to_string(),
            error: None,
        },
        Err(e) => FiresFragment {
            fires: Vec::new(),
            zone: tz.to_string(),
            error: Some(e),
        },
    }
}

/// GET the preview of the schedule in the query (`schedule`, `tz`) as an HTML fragment, for
/// the edit form (read-write sessions only: the form is theirs).
pub(crate) fn preview(ctx: &Ctx<'_>, uuid: Uuid) -> Result<Response, WebError> {
    let project = ctx.check(&CheckId::Uuid(uuid))?.1.project;
    ctx.writable(&project)?;
    let schedule = ctx.form.text("schedule");
    let fragment = if schedule.is_empty() {
        FiresFragment {
            fires: Vec::new(),
            zone: String::new(),
            error: Some("Type a cron or OnCalendar expression.".into()),
        }
    } else {
        fires_of(schedule, ctx.form.text("tz"), ctx.site.app.service.now())
    };
    Ok(response::html(StatusCode::OK, fragment.render()?, ctx.gzip))
}

/// POST the edit form. A mistake brings the page back (400) with the API's message and what
/// was typed.
pub(crate) async fn edit(ctx: &Ctx<'_>, uuid: Uuid) -> Result<Response, WebError> {
    let project = ctx.check(&CheckId::Uuid(uuid))?.1.project;
    ctx.writable(&project)?;
    let obj = check_object(&ctx.form);
    let result = match parse_spec(&obj) {
        Ok(spec) => {
            ctx.site
                .app
                .service
                .update_check(project, uuid, spec, ApiVersion::V3)
                .await
        }
        Err(e) => Err(ServiceError::from(e)),
    };
    match result {
        Ok(_) => Ok(response::see_other(&ctx.link(&format!("/checks/{uuid}/")))),
        Err(
            e @ (ServiceError::Invalid(_) | ServiceError::BadRequest(_) | ServiceError::InvalidUrl),
        ) => {
            let html = super::render(ctx, &CheckId::Uuid(uuid), Some(e.to_string())).await?;
            Ok(response::html(StatusCode::BAD_REQUEST, html, ctx.gzip))
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> jiff::Timestamp {
        s.parse().expect("ts")
    }

    #[test]
    fn a_preview_lists_fires_or_says_what_is_wrong() {
        let now = ts("2026-03-27T12:00:00Z");
        let ok = fires_of("0 3 * * *", "Europe/Riga", now);
        assert_eq!(ok.error, None);
        assert_eq!(ok.fires.len(), 5);
        assert_eq!(ok.fires[0].utc, "Sat 2026-03-28 01:00 UTC");
        let html = ok.render().expect("render");
        assert!(html.contains("datetime=\"2026-03-28T01:00:00Z\""), "{html}");
        let utc = fires_of("daily", "", now);
        assert_eq!(utc.fires[0].local, "Sat 2026-03-28 00:00 UTC");
        let bad = fires_of("61 * * * *", "UTC", now);
        assert!(bad.fires.is_empty());
        let message = bad.error.clone().expect("an error");
        assert!(message.contains("schedule"), "{message}");
        let zone = fires_of("* * * * *", "Mars/Olympus", now);
        assert!(zone.error.expect("an error").contains("tz"));
        let html = fires_of("<b>", "UTC", now).render().expect("render");
        assert!(!html.contains("<b>"), "escaped: {html}");
    }

    #[test]
    fn typed_values_come_back_as_typed() {
        let f = Form::parse(
            b"name=db&kind=simple&timeout=abc&grace=60&manual_resume=0&manual_resume=1\
              &filter_body=0&channels_listed=1&channel=00000000-0000-0000-0000-000000000001",
        );
        let ch = Channel {
            uuid: Uuid::from_u128(1),
            project: Uuid::nil(),
            seq: 1,
            name: "ops".into(),
            config: crate::model::ChannelConfig::Email {
                address: "ops@example.com".into(),
            },
            created: jiff::Timestamp::UNIX_EPOCH,
            repeat: None,
            default_for_new: false,
            events: crate::model::events::Events::default(),
        };
        let mut other = ch.clone();
        other.uuid = Uuid::from_u128(2);
        let form = EditForm::typed(&f, &[&ch, &other], &[]);
        assert_eq!(form.name, "db");
        assert!(form.simple);
        assert_eq!(form.timeout, "abc");
        assert!(form.manual_resume);
        assert!(!form.filter_body);
        assert!(form.channels[0].checked);
        assert!(!form.channels[1].checked);
    }
}
