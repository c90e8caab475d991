//! Badge URLs (reference §2.16, §7.1): the signature that makes a project's badge URLs
//! unguessable without exposing an API key, and the double percent-encoding of tags.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha1::{Digest, Sha1};

/// First 8 characters of unpadded URL-safe base64 of HMAC-SHA1(SHA1(badge_key ‖ secret), tag).
pub fn signature(secret: &[u8], badge_key: &str, tag: &str) -> String {
    let mut salted = Sha1::new();
    salted.update(badge_key.as_bytes());
    salted.update(secret);
    let key = salted.finalize();
    let mut mac = match Hmac::<Sha1>::new_from_slice(&key) {
        Ok(mac) => mac,
        // HMAC takes keys of any length; this branch cannot run.
        Err(_) => return String::new(),
    };
    mac.update(tag.as_bytes());
    let encoded = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    encoded[..8].to_string()
}

/// Percent-encodes every byte but the unreserved ones (`A-Za-z0-9-._~`).
fn quote_all(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A tag as it appears in a badge URL: percent-encoded twice (`db@dc1` → `db%2540dc1`).
pub fn encode_tag(tag: &str) -> String {
    quote_all(&quote_all(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_reference_examples() {
        let secret = b"test-secret";
        assert_eq!(signature(secret, "alice", "prod"), "Zj1bpYPG");
        assert_eq!(signature(secret, "alice", "*"), "bQvTZqsb");
        assert_eq!(signature(secret, "alice", "db@dc1"), "_YyPt6XB");
    }

    #[test]
    fn tags_are_encoded_twice() {
        assert_eq!(encode_tag("db@dc1"), "db%2540dc1");
        assert_eq!(encode_tag("a/b"), "a%252Fb");
        assert_eq!(encode_tag("x.y-_~"), "x.y-_~");
    }
}
