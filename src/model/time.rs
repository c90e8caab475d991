//! Timestamp formats of the API: ISO 8601 with a `+00:00` offset, with or without microseconds.

use std::fmt;

use jiff::Timestamp;

/// `2024-03-30T23:59:30+00:00`: check fields and flips (sub-seconds dropped).
pub(crate) fn iso_seconds(t: Timestamp) -> String {
    iso_seconds_display(t).to_string()
}

/// [`iso_seconds`] without its `String`, for writing straight into a response body.
pub(crate) fn iso_seconds_display(t: Timestamp) -> impl fmt::Display {
    t.strftime("%Y-%m-%dT%H:%M:%S+00:00")
}

/// `2026-11-21T22:46:20.926791+00:00`: ping dates (microseconds when not zero).
pub(crate) fn iso_micros(t: Timestamp) -> String {
    let micros = t.subsec_microsecond();
    if micros == 0 {
        iso_seconds(t)
    } else {
        format!("{}.{micros:06}+00:00", t.strftime("%Y-%m-%dT%H:%M:%S"))
    }
}

/// Microseconds since the Unix epoch, the stored form of every timestamp.
pub(crate) fn to_micros(t: Timestamp) -> i64 {
    t.as_microsecond()
}

/// The inverse of [`to_micros`]; out-of-range values clamp to jiff's limits.
pub(crate) fn from_micros(us: i64) -> Timestamp {
    Timestamp::from_microsecond(us).unwrap_or(if us < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let t: Timestamp = "2026-11-21T22:46:20.926791Z".parse().expect("ts");
        assert_eq!(iso_seconds(t), "2026-11-21T22:46:20+00:00");
        assert_eq!(iso_micros(t), "2026-11-21T22:46:20.926791+00:00");
        let whole: Timestamp = "2026-11-21T22:46:20Z".parse().expect("ts");
        assert_eq!(iso_micros(whole), "2026-11-21T22:46:20+00:00");
        assert_eq!(from_micros(to_micros(t)), t);
    }
}
