//! The settings of a recurring quiet window (`quiet_schedule`, `quiet_tz`, `quiet_duration`),
//! as a check's create/update body and a project's settings body carry them: validated one
//! way for both, and applied to the window they change.

use serde_json::{Map, Value};

use crate::model::check::QuietWindow;
use crate::model::limits::{
    DEFAULT_QUIET_SECS, DEFAULT_TZ, MAX_RUN_BOUND_SECS, SCHEDULE_MAX_CHARS,
};
use crate::model::spec::{SpecError, integer, string};
use crate::schedule;

/// The quiet-window fields of a body, validated. `None` means "not in the body".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuietSpec {
    /// A cron or OnCalendar expression; `""` removes the window.
    pub schedule: Option<String>,
    pub tz: Option<&'static str>,
    /// Seconds the window stays open.
    pub duration: Option<i64>,
}

impl QuietSpec {
    /// Reads and validates the three fields of `body`, in this order.
    pub(crate) fn parse(body: &Map<String, Value>) -> Result<QuietSpec, SpecError> {
        let schedule = string(body, "quiet_schedule", Some(SCHEDULE_MAX_CHARS))?;
        if let Some(expr) = schedule.as_deref().filter(|e| !e.is_empty())
            && schedule::validate(expr).is_err()
        {
            return Err(invalid_schedule());
        }
        let tz = match string(body, "quiet_tz", None)? {
            None => None,
            Some(name) => match schedule::tz::accepted(&name) {
                Some(name) => Some(name),
                None => return Err(SpecError::new("quiet_tz", "is not a valid timezone")),
            },
        };
        let duration = integer(body, "quiet_duration", 1, MAX_RUN_BOUND_SECS)?;
        Ok(QuietSpec {
            schedule,
            tz,
            duration,
        })
    }

    /// Whether the body named any of the fields.
    pub(crate) fn is_empty(&self) -> bool {
        self.schedule.is_none() && self.tz.is_none() && self.duration.is_none()
    }

    /// The window `current` becomes: fields the body left out keep their value (or take the
    /// default: UTC, [`DEFAULT_QUIET_SECS`]); no window when the schedule is `""` or there
    /// is none at all.
    pub(crate) fn apply(
        &self,
        current: Option<&QuietWindow>,
    ) -> Result<Option<QuietWindow>, SpecError> {
        let expr = self
            .schedule
            .clone()
            .or_else(|| current.map(|q| q.schedule.clone()))
            .unwrap_or_default();
        if expr.is_empty() {
            return Ok(None);
        }
        let tz = self
            .tz
            .map(str::to_string)
            .or_else(|| current.map(|q| q.tz.clone()))
            .unwrap_or_else(|| DEFAULT_TZ.to_string());
        let duration = self
            .duration
            .or_else(|| current.map(|q| q.duration))
            .unwrap_or(DEFAULT_QUIET_SECS);
        let window = QuietWindow::new(&expr, &tz, duration);
        if window.compiled.is_none() {
            return Err(invalid_schedule());
        }
        Ok(Some(window))
    }
}

/// The window of three stored settings (an export, a form), validated as a body with those
/// fields is: `None` when `schedule` is `""`.
pub(crate) fn window_of(
    schedule: &str,
    tz: &str,
    duration: i64,
) -> Result<Option<QuietWindow>, SpecError> {
    let mut body = Map::new();
    body.insert("quiet_schedule".into(), Value::from(schedule));
    body.insert("quiet_tz".into(), Value::from(tz));
    body.insert("quiet_duration".into(), Value::from(duration));
    QuietSpec::parse(&body)?.apply(None)
}

fn invalid_schedule() -> SpecError {
    SpecError::new(
        "quiet_schedule",
        "is not a valid cron or OnCalendar expression",
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(v: &Value) -> Result<QuietSpec, SpecError> {
        QuietSpec::parse(v.as_object().expect("object"))
    }

    #[test]
    fn fields_are_validated_in_order_and_missing_ones_keep_their_value() {
        for (body, message) in [
            (
                json!({"quiet_schedule": "Sundays", "quiet_tz": "Mars/Base"}),
                "quiet_schedule is not a valid cron or OnCalendar expression",
            ),
            (
                json!({"quiet_tz": "Mars/Base"}),
                "quiet_tz is not a valid timezone",
            ),
            (json!({"quiet_duration": 0}), "quiet_duration is too small"),
            (
                json!({"quiet_schedule": 5}),
                "quiet_schedule is not a string",
            ),
        ] {
            assert_eq!(
                parse(&body).map(|_| ()),
                Err(SpecError(message.into())),
                "{body}"
            );
        }
        assert!(parse(&json!({"name": "x"})).expect("valid").is_empty());
        let w = parse(&json!({"quiet_schedule": "Sun 02:00", "quiet_tz": "Europe/Riga"}))
            .expect("valid")
            .apply(None)
            .expect("applies")
            .expect("a window");
        assert_eq!(
            (w.tz.as_str(), w.duration),
            ("Europe/Riga", DEFAULT_QUIET_SECS)
        );
        let longer = parse(&json!({"quiet_duration": 7200}))
            .expect("valid")
            .apply(Some(&w))
            .expect("applies")
            .expect("a window");
        assert_eq!(
            (
                longer.schedule.as_str(),
                longer.tz.as_str(),
                longer.duration
            ),
            ("Sun 02:00", "Europe/Riga", 7200)
        );
        let removed = parse(&json!({"quiet_schedule": ""})).expect("valid");
        assert_eq!(removed.apply(Some(&longer)), Ok(None));
        assert_eq!(
            parse(&json!({"quiet_duration": 60}))
                .expect("valid")
                .apply(None),
            Ok(None)
        );
    }
}
