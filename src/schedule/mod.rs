//! TEMPORARY interface placeholder while the real engine is developed separately; replaced
//! before the schedule issue closes. Rejects every expression.

pub mod tz {
    pub fn canonical(name: &str) -> Option<&'static str> {
        match name {
            "UTC" => Some("UTC"),
            "Europe/Riga" => Some("Europe/Riga"),
            "Europe/Berlin" => Some("Europe/Berlin"),
            "Europe/Kiev" | "Europe/Kyiv" => Some("Europe/Kyiv"),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleKind {
    Cron,
    OnCalendar,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not implemented")]
pub struct ScheduleError;

#[derive(Debug, Clone)]
pub struct Schedule;

impl Schedule {
    pub fn parse(_expr: &str, _tz: &str) -> Result<Schedule, ScheduleError> {
        Err(ScheduleError)
    }
    pub fn kind(&self) -> ScheduleKind {
        ScheduleKind::Cron
    }
    pub fn next_after(&self, _after: jiff::Timestamp) -> Option<jiff::Timestamp> {
        None
    }
}

pub fn detect_kind(expr: &str) -> ScheduleKind {
    let t = expr.trim();
    if !t.contains('\n') && t.split_whitespace().count() == 5 { ScheduleKind::Cron } else { ScheduleKind::OnCalendar }
}

pub fn validate(expr: &str) -> Result<ScheduleKind, ScheduleError> {
    Schedule::parse(expr, "UTC").map(|s| s.kind())
}
