//! Which alerts an assignment of a channel receives (issue 17, rule 5): `down` and `up` (the
//! flips, as always), `late` (the check entered its grace period) and `failure` (a failure
//! ping that `fail_threshold` kept from taking the check down). A channel carries the set its
//! checks get by default (`down,up`, today's behaviour); a check may choose another set for
//! one of its channels. Plain data and pure functions.

use uuid::Uuid;

/// One kind of alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Down,
    Up,
    Late,
    Failure,
}

impl Event {
    /// Every event, in the order they are written.
    pub(crate) const ALL: [Event; 4] = [Event::Down, Event::Up, Event::Late, Event::Failure];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Event::Down => "down",
            Event::Up => "up",
            Event::Late => "late",
            Event::Failure => "failure",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Event::Down => 1,
            Event::Up => 2,
            Event::Late => 4,
            Event::Failure => 8,
        }
    }
}

/// A set of [`Event`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Events(u8);

impl Default for Events {
    /// `down,up`: what every channel received before this setting existed.
    fn default() -> Events {
        Events(Event::Down.bit() | Event::Up.bit())
    }
}

impl Events {
    pub(crate) fn contains(self, event: Event) -> bool {
        self.0 & event.bit() != 0
    }

    /// The stored form (a byte).
    pub(crate) fn bits(self) -> u8 {
        self.0
    }

    /// The set a stored byte holds; bits no release defines are dropped.
    pub(crate) fn from_bits(bits: u8) -> Events {
        Events(bits & 0b1111)
    }

    /// Parses `down,up,late,failure` (any order, any subset, `""` for none; spaces around
    /// items allowed). The message names the bad item and the allowed ones.
    pub fn parse(text: &str) -> Result<Events, String> {
        let mut bits = 0;
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let event = Event::ALL
                .into_iter()
                .find(|e| e.as_str().eq_ignore_ascii_case(item))
                .ok_or_else(|| format!("unknown event {item:?} (use down, up, late or failure)"))?;
            bits |= event.bit();
        }
        Ok(Events(bits))
    }

    /// The events as `down,up,late`, in [`Event::ALL`]'s order; `""` for none.
    pub fn to_text(self) -> String {
        Event::ALL
            .into_iter()
            .filter(|e| self.contains(*e))
            .map(Event::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The events `channel` sends for a check whose own choices are `overrides` (sorted by
/// channel), given the channel's default set.
pub(crate) fn for_channel(overrides: &[(Uuid, Events)], channel: Uuid, default: Events) -> Events {
    overrides
        .binary_search_by_key(&channel, |(c, _)| *c)
        .map_or(default, |i| overrides[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_any_subset_and_writes_it_in_order() {
        let e = Events::parse("failure, LATE,down").unwrap();
        assert_eq!(e.to_text(), "down,late,failure");
        assert!(e.contains(Event::Late) && !e.contains(Event::Up));
        assert_eq!(Events::parse("").unwrap(), Events::from_bits(0));
        assert_eq!(Events::parse("down,up").unwrap(), Events::default());
        assert_eq!(Events::default().to_text(), "down,up");
    }

    #[test]
    fn parse_names_the_unknown_item() {
        assert_eq!(
            Events::parse("down,grace"),
            Err("unknown event \"grace\" (use down, up, late or failure)".into())
        );
    }

    #[test]
    fn bits_round_trip_and_unknown_bits_are_dropped() {
        let e = Events::parse("up,failure").unwrap();
        assert_eq!(Events::from_bits(e.bits()), e);
        assert_eq!(Events::from_bits(0xff).to_text(), "down,up,late,failure");
    }

    #[test]
    fn a_checks_choice_beats_the_channels_default() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let late = Events::parse("late").unwrap();
        let overrides = vec![(b, late)];
        assert_eq!(
            for_channel(&overrides, a, Events::default()),
            Events::default()
        );
        assert_eq!(for_channel(&overrides, b, Events::default()), late);
    }
}
