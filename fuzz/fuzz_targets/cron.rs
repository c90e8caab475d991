//! Fuzz target for the cron parser: any input must parse or fail cleanly, and a parsed
//! schedule must evaluate without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use overdue::schedule::{Schedule, ScheduleKind, detect_kind};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Bias towards the cron parser: force five whitespace-separated tokens when possible.
    let expr = if detect_kind(text) == ScheduleKind::Cron {
        text.to_string()
    } else {
        let mut parts: Vec<&str> = text.split_whitespace().collect();
        parts.resize(5, "*");
        parts.join(" ")
    };
    if let Ok(schedule) = Schedule::parse(&expr, "Europe/Riga") {
        let mut t =
            jiff::Timestamp::from_second(1_774_828_800).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        for _ in 0..3 {
            match schedule.next_after(t) {
                Some(next) => t = next,
                None => break,
            }
        }
    }
});
