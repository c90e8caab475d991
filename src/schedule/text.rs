//! String helpers that reproduce the reference's Python tokenisation exactly (`str.split()`,
//! `str.strip()`, digit-only integers), so edge cases like tabs or odd separators split the
//! same way as in Healthchecks.

/// Python's `str.isspace()` set: Unicode `White_Space` plus the ASCII separators 0x1C..=0x1F.
pub(super) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.split()` with no arguments.
pub(super) fn py_split(s: &str) -> Vec<&str> {
    s.split(is_py_space).filter(|t| !t.is_empty()).collect()
}

/// Python's `str.strip()` with no arguments.
pub(super) fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// A non-empty run of ASCII digits; values too large for u64 saturate (they are out of range
/// for every field anyway).
pub(super) fn parse_digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.bytes().fold(0u64, |acc, b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    }))
}

/// A token shortened for error messages, so hostile input cannot bloat them.
pub(super) fn excerpt(s: &str) -> String {
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_python() {
        assert_eq!(
            py_split(" 0\t0 \u{1f}1 *\u{a0}* "),
            ["0", "0", "1", "*", "*"]
        );
        assert_eq!(py_strip("\u{1c} a b\n"), "a b");
        assert!(py_split(" \t ").is_empty());
    }

    #[test]
    fn digits_only() {
        assert_eq!(parse_digits("007"), Some(7));
        assert_eq!(parse_digits(""), None);
        assert_eq!(parse_digits("+1"), None);
        assert_eq!(parse_digits("١"), None);
        assert_eq!(parse_digits("99999999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn excerpt_is_char_safe() {
        let long = "é".repeat(100);
        assert!(excerpt(&long).ends_with("..."));
        assert_eq!(excerpt("short"), "short");
    }
}
