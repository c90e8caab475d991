//! Dashboard sessions as plain data: the token format, how a token is stored (hashed), when a
//! session has gone idle for good, and how signing in with one more key changes the keys a
//! session holds. The live keys are looked up by the caller: a session only names them.

use jiff::{SignedDuration, Timestamp};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Sessions end after this long without use.
pub(crate) const SESSION_IDLE: SignedDuration = SignedDuration::from_hours(30 * 24);
/// `last_used` is written at most this often (a read-mostly page must not write on every view).
pub(crate) const SESSION_TOUCH: SignedDuration = SignedDuration::from_hours(1);
/// Random bytes in a token.
pub(crate) const TOKEN_BYTES: usize = 32;
/// Characters in a token: its bytes in lowercase hex.
pub(crate) const TOKEN_LEN: usize = 2 * TOKEN_BYTES;

/// A signed-in browser: the API keys it signed in with, at most one per project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// API key identifiers ([`crate::model::project::api_key_id`], `ApiKey::id`), in the order
    /// they were added.
    pub keys: Vec<String>,
    pub created: Timestamp,
    pub last_used: Timestamp,
}

impl Session {
    /// A session without keys yet, started `now`.
    pub fn new(now: Timestamp) -> Session {
        Session {
            keys: Vec::new(),
            created: now,
            last_used: now,
        }
    }

    /// Whether [`SESSION_IDLE`] has passed since the last use.
    pub fn expired(&self, now: Timestamp) -> bool {
        now.duration_since(self.last_used) >= SESSION_IDLE
    }

    /// Whether the last use is old enough to be written again ([`SESSION_TOUCH`]).
    pub fn needs_touch(&self, now: Timestamp) -> bool {
        now.duration_since(self.last_used) >= SESSION_TOUCH
    }
}

/// A session's identifier in storage: SHA-256 of the token's bytes (the token itself is never
/// stored, so a copy of the data file signs nobody in).
pub(crate) fn session_id(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether `token` has the shape of a token this service hands out: [`TOKEN_LEN`] lowercase
/// hex digits. Anything else (a forged or truncated cookie) is no session, without a lookup.
pub(crate) fn is_token(token: &str) -> bool {
    token.len() == TOKEN_LEN
        && token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A fresh token: [`TOKEN_BYTES`] from the operating system's generator, in lowercase hex.
pub(crate) fn generate_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(crate::model::hex(&bytes))
}

/// What a key grants, as the caller finds it in the live state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyRights {
    pub project: Uuid,
    pub read_only: bool,
}

/// The keys of a session after signing in with `new` (which grants `rights`): one key per
/// project, a read-write key preferred to a read-only one. A read-write key replaces the key
/// held for its project; a read-only key replaces a read-only key but never a read-write one.
/// Keys that no longer exist (`lookup` finds nothing) are dropped on the way.
pub(crate) fn add_key(
    keys: &[String],
    new: &str,
    rights: KeyRights,
    lookup: impl Fn(&str) -> Option<KeyRights>,
) -> Vec<String> {
    let mut out = Vec::with_capacity(keys.len() + 1);
    let mut keep_held = false;
    for key in keys {
        let Some(held) = lookup(key) else { continue };
        if held.project != rights.project {
            out.push(key.clone());
        } else if !held.read_only && rights.read_only {
            // The read-write key stays where it was; the read-only one adds nothing.
            keep_held = true;
            out.push(key.clone());
        }
    }
    if !keep_held {
        out.push(new.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn a_session_expires_after_thirty_idle_days_and_is_touched_hourly() {
        let used = at("2026-01-01T00:00:00Z");
        let s = Session {
            keys: vec![],
            created: at("2025-06-01T00:00:00Z"),
            last_used: used,
        };
        assert!(!s.expired(at("2026-01-30T23:59:59Z")));
        assert!(s.expired(at("2026-01-31T00:00:00Z")));
        assert!(!s.needs_touch(at("2026-01-01T00:59:59Z")));
        assert!(s.needs_touch(at("2026-01-01T01:00:00Z")));
        // A clock that stepped back is no reason to write or to end the session.
        assert!(!s.expired(at("2025-12-01T00:00:00Z")));
        assert!(!s.needs_touch(at("2025-12-01T00:00:00Z")));
    }

    #[test]
    fn tokens_are_64_lowercase_hex_digits_and_stored_hashed() {
        let t = generate_token().expect("random");
        assert!(is_token(&t), "{t}");
        assert_ne!(generate_token().expect("random"), t);
        for bad in [
            "",
            &t[..63],
            &format!("{t}0"),
            &t.to_uppercase(),
            &format!("{}g", &t[..63]),
            &format!("{}é", &t[..62]),
        ] {
            assert!(!is_token(bad), "{bad:?}");
        }
        let id = session_id(&t);
        assert_eq!(id, session_id(&t));
        assert_ne!(id, session_id(&generate_token().expect("random")));
        // SHA-256 of the token's text, so the stored id can be checked by hand.
        assert_eq!(
            session_id("abc")[..4],
            [0xba, 0x78, 0x16, 0xbf],
            "SHA-256(\"abc\")"
        );
    }

    #[test]
    fn signing_in_keeps_one_key_per_project_preferring_read_write() {
        let (p, q) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let rights = |key: &str| {
            Some(match key {
                "p-ro" | "p-ro2" => KeyRights {
                    project: p,
                    read_only: true,
                },
                "p-rw" | "p-rw2" => KeyRights {
                    project: p,
                    read_only: false,
                },
                "q-ro" => KeyRights {
                    project: q,
                    read_only: true,
                },
                _ => return None,
            })
        };
        let add = |keys: &[&str], new: &str| {
            let keys: Vec<String> = keys.iter().map(std::string::ToString::to_string).collect();
            add_key(&keys, new, rights(new).expect("known"), rights)
        };
        assert_eq!(add(&[], "p-ro"), ["p-ro"]);
        assert_eq!(add(&["p-ro"], "q-ro"), ["p-ro", "q-ro"]);
        assert_eq!(add(&["p-ro", "q-ro"], "p-rw"), ["q-ro", "p-rw"]);
        assert_eq!(add(&["p-rw", "q-ro"], "p-ro"), ["p-rw", "q-ro"]);
        assert_eq!(add(&["p-ro"], "p-ro2"), ["p-ro2"]);
        assert_eq!(add(&["p-rw"], "p-rw2"), ["p-rw2"]);
        assert_eq!(add(&["p-rw"], "p-rw"), ["p-rw"]);
        assert_eq!(add(&["gone", "q-ro"], "p-ro"), ["q-ro", "p-ro"]);
    }
}
