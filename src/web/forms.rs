//! Reading `application/x-www-form-urlencoded` bodies and query strings into fields, and
//! turning a check form into the JSON object the API takes, so that a form is validated by
//! exactly the API's rules (`model::spec::parse_spec`).

use serde_json::{Map, Value};

/// The fields of a form, in order, percent-decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Form(pub Vec<(String, String)>);

impl Form {
    pub(crate) fn parse(bytes: &[u8]) -> Form {
        Form(form_urlencoded::parse(bytes).into_owned().collect())
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, trimmed, or "".
    pub(crate) fn text(&self, name: &str) -> &str {
        self.get(name).map_or("", str::trim)
    }

    /// Every value of `name` (checkboxes, multi-selects).
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// Fields of the check form that the API takes as numbers.
const NUMBERS: &[&str] = &[
    "timeout",
    "grace",
    "fail_threshold",
    "max_duration",
    "min_duration",
    "quiet_duration",
];
/// Fields of the check form that the API takes as booleans (checkboxes: present = true; the
/// form sends a hidden `<name>=0` before each box, so an unticked box means false).
const BOOLEANS: &[&str] = &[
    "manual_resume",
    "filter_subject",
    "filter_body",
    "filter_http_body",
    "filter_default_fail",
];
/// Fields copied as strings when present.
const STRINGS: &[&str] = &[
    "name",
    "slug",
    "tags",
    "desc",
    "schedule",
    "tz",
    "methods",
    "start_kw",
    "success_kw",
    "failure_kw",
    "quiet_schedule",
    "quiet_tz",
];

/// The API object a check form stands for. A number field that is not a number is passed on
/// as a string, so that the API's own message ("timeout is not a number") is what the form
/// shows. `kind` = `simple` drops `schedule` (a simple check); the integrations' checkboxes
/// (`channel` values) become the API's comma-separated `channels`, with an empty selection
/// sent as `""` (none) only when the form says it lists them (`channels_listed`).
pub(crate) fn check_object(form: &Form) -> Map<String, Value> {
    let mut obj = Map::new();
    for name in STRINGS {
        if let Some(v) = form.get(name) {
            obj.insert((*name).to_string(), Value::String(v.trim().to_string()));
        }
    }
    for name in NUMBERS {
        if let Some(v) = form.get(name) {
            let v = v.trim();
            let value = v
                .parse::<i64>()
                .map_or_else(|_| Value::String(v.to_string()), Value::from);
            obj.insert((*name).to_string(), value);
        }
    }
    for name in BOOLEANS {
        let values = form.all(name);
        if !values.is_empty() {
            let on = values
                .iter()
                .any(|v| *v == "1" || *v == "on" || *v == "true");
            obj.insert((*name).to_string(), Value::Bool(on));
        }
    }
    if form.get("kind") == Some("simple") {
        obj.remove("schedule");
        obj.remove("tz");
    }
    if form.get("parents_listed").is_some() {
        obj.insert(
            "parents".into(),
            Value::String(form.all("parent").join(",")),
        );
    }
    if form.get("channels_listed").is_some() {
        obj.insert(
            "channels".into(),
            Value::String(form.all("channel").join(",")),
        );
        // Each listed channel's event boxes (`events-<uuid>`): the check's choice for the
        // channels it keeps (the service forgets a choice equal to the channel's own).
        let events: Map<String, Value> = form
            .all("channel")
            .into_iter()
            .filter(|c| form.get(&format!("events_listed-{c}")).is_some())
            .map(|c| {
                let chosen = form.all(&format!("events-{c}")).join(",");
                (c.to_string(), Value::String(chosen))
            })
            .collect();
        if !events.is_empty() {
            obj.insert("channel_events".into(), Value::Object(events));
        }
    }
    obj
}

/// The events ticked in boxes named `name` (`down,late`), or `down,up` when the form did
/// not list them (`<name>_listed` absent).
pub(crate) fn events_chosen(form: &Form, name: &str) -> String {
    if form.get(&format!("{name}_listed")).is_none() {
        return crate::model::events::Events::default().to_text();
    }
    form.all(name).join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_order_and_decoded() {
        let f = Form::parse(b"name=My+job&tags=a%20b&channel=x&channel=y");
        assert_eq!(f.get("name"), Some("My job"));
        assert_eq!(f.text("tags"), "a b");
        assert_eq!(f.all("channel"), vec!["x", "y"]);
        assert_eq!(f.get("nope"), None);
    }

    #[test]
    fn a_check_form_becomes_the_api_object() {
        let f = Form::parse(
            b"kind=simple&name=db&timeout=3600&grace=x&schedule=*+*+*+*+*&manual_resume=0\
              &manual_resume=1&filter_body=0&channels_listed=1",
        );
        let obj = check_object(&f);
        assert_eq!(obj["name"], "db");
        assert_eq!(obj["timeout"], 3600);
        assert_eq!(obj["grace"], "x");
        assert!(!obj.contains_key("schedule"));
        assert_eq!(obj["manual_resume"], true);
        assert_eq!(obj["filter_body"], false);
        assert_eq!(obj["channels"], "");
        let cron = check_object(&Form::parse(
            b"kind=cron&schedule=30+2+*+*+*&tz=Europe/Riga",
        ));
        assert_eq!(cron["schedule"], "30 2 * * *");
        assert_eq!(cron["tz"], "Europe/Riga");
        assert!(!cron.contains_key("channels"));
    }

    #[test]
    fn event_boxes_become_the_checks_choice_for_the_channels_it_keeps() {
        let f = Form::parse(
            b"channels_listed=1&channel=a&events_listed-a=1&events-a=down&events-a=late\
              &events_listed-b=1&events-b=up&channel=c&events_listed-c=1",
        );
        let obj = check_object(&f);
        assert_eq!(obj["channels"], "a,c");
        assert_eq!(
            obj["channel_events"],
            serde_json::json!({"a": "down,late", "c": ""}),
            "b is not kept; c is kept silent"
        );
        let add = Form::parse(b"event_listed=1&event=late");
        assert_eq!(events_chosen(&add, "event"), "late");
        assert_eq!(events_chosen(&Form::parse(b""), "event"), "down,up");
    }
}
