//! Fuzz target for the OnCalendar parser: any input must parse or fail cleanly, and a parsed
//! schedule must evaluate without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use overdue::schedule::Schedule;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(schedule) = Schedule::parse(text, "America/New_York") {
        let mut t =
            jiff::Timestamp::from_second(1_793_509_200).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        for _ in 0..3 {
            match schedule.next_after(t) {
                Some(next) => t = next,
                None => break,
            }
        }
    }
});
