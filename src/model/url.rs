//! Percent-encoding as the reference builds URLs (Python's `urllib.parse.quote`): every byte
//! but `A-Za-z0-9-._~` and the caller's safe bytes becomes `%XX`.

/// Percent-encodes `s`, leaving the unreserved bytes and those in `safe` as they are.
pub(crate) fn quote(s: &str, safe: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') || safe.contains(&b)
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn only_unreserved_and_safe_bytes_stay() {
        assert_eq!(quote("a-b.c_d~e", b""), "a-b.c_d~e");
        assert_eq!(quote("!room:hs/x y", b""), "%21room%3Ahs%2Fx%20y");
        assert_eq!(quote("a/b c", b"/"), "a/b%20c");
        assert_eq!(quote("é", b""), "%C3%A9");
    }
}
