//! Time zone names accepted by the API (§6.4): the allowed list of Appendix B, the legacy
//! aliases of Appendix A, which are kept as given and evaluated as their canonical zone, and
//! the lookup of the bundled (never the host's) tz database.

use jiff::tz::TimeZone;

use super::tz_names::{ALLOWED, LEGACY};

/// Appendix A/B: the canonical allowed name for an allowed name or a legacy alias
/// (e.g. "Europe/Kiev" -> "Europe/Kyiv", "UCT" -> "Etc/UTC"); `None` for anything else.
/// Matching is exact and case-sensitive, as in the reference.
pub fn canonical(name: &str) -> Option<&'static str> {
    if let Ok(i) = ALLOWED.binary_search(&name) {
        return Some(ALLOWED[i]);
    }
    LEGACY
        .binary_search_by(|(legacy, _)| (*legacy).cmp(name))
        .ok()
        .map(|i| LEGACY[i].1)
}

/// An accepted name (allowed or legacy) as the static string of its table, so that a check
/// keeps the name it was given without allocating: declarative clients (Terraform, Ansible)
/// compare what they sent with what they read back (issue 14.10). `None` for anything else.
pub(crate) fn accepted(name: &str) -> Option<&'static str> {
    if let Ok(i) = ALLOWED.binary_search(&name) {
        return Some(ALLOWED[i]);
    }
    LEGACY
        .binary_search_by(|(legacy, _)| (*legacy).cmp(name))
        .ok()
        .map(|i| LEGACY[i].0)
}

/// Every allowed zone name (Appendix B), sorted: what a form offers to pick from.
pub fn allowed_names() -> &'static [&'static str] {
    &ALLOWED
}

/// The jiff time zone for a canonical name, from the database compiled into the binary.
/// `None` for names outside the allowed list (so "Factory" or host-only zones never leak in).
pub fn time_zone(canonical_name: &str) -> Option<TimeZone> {
    ALLOWED.binary_search(&canonical_name).ok()?;
    jiff::tz::db().get(canonical_name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_sized() {
        assert_eq!(ALLOWED.len(), 483);
        assert_eq!(LEGACY.len(), 113);
        assert!(ALLOWED.windows(2).all(|w| w[0] < w[1]));
        assert!(LEGACY.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn allowed_names_are_canonical_and_resolve() {
        for name in ALLOWED {
            assert_eq!(canonical(name), Some(name));
            assert!(
                time_zone(name).is_some(),
                "{name} missing from the bundled tzdb"
            );
        }
    }

    #[test]
    fn legacy_names_are_rewritten() {
        let cases = [
            ("Europe/Kiev", "Europe/Kyiv"),
            ("UCT", "Etc/UTC"),
            ("CET", "Europe/Brussels"),
            ("EST", "America/Panama"),
            ("US/Eastern", "America/New_York"),
            ("Asia/Calcutta", "Asia/Kolkata"),
            ("GB", "Europe/London"),
            ("Universal", "Etc/UTC"),
            ("Zulu", "Etc/UTC"),
            ("GMT+0", "Etc/GMT"),
            ("GMT-0", "Etc/GMT"),
            ("GMT0", "Etc/GMT"),
            ("Greenwich", "Etc/GMT"),
            ("MST", "America/Phoenix"),
            ("HST", "Pacific/Honolulu"),
            ("PST8PDT", "America/Los_Angeles"),
            ("EST5EDT", "America/New_York"),
            ("Australia/LHI", "Australia/Lord_Howe"),
        ];
        for (legacy, canon) in cases {
            assert_eq!(canonical(legacy), Some(canon), "{legacy}");
        }
        for (legacy, canon) in LEGACY {
            assert_eq!(canonical(legacy), Some(canon));
            assert!(time_zone(canon).is_some());
        }
    }

    #[test]
    fn accepted_names_are_kept_as_given() {
        assert_eq!(accepted("US/Eastern"), Some("US/Eastern"));
        assert_eq!(accepted("EST"), Some("EST"));
        assert_eq!(accepted("Europe/Riga"), Some("Europe/Riga"));
        assert_eq!(accepted("europe/riga"), None);
        assert_eq!(accepted("Factory"), None);
        for (legacy, _) in LEGACY {
            assert_eq!(accepted(legacy), Some(legacy));
        }
    }

    #[test]
    fn rejects_unknown_names() {
        for name in [
            "",
            "Factory",
            "localtime",
            "europe/riga",
            "America/Coyhaique",
            "Mars/Base",
            "UTC ",
        ] {
            assert_eq!(canonical(name), None, "{name:?}");
        }
        assert!(time_zone("Factory").is_none());
        assert!(time_zone("Europe/Kiev").is_none());
        assert_eq!(canonical("UTC"), Some("UTC"));
        assert_eq!(canonical("Etc/GMT+5"), Some("Etc/GMT+5"));
    }
}
