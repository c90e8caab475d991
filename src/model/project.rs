//! Projects and their API keys, and the formats of every generated secret.

use std::sync::Arc;

use jiff::Timestamp;
use uuid::Uuid;

use crate::model::check::QuietWindow;
use crate::model::limits::{API_KEY_ID_LEN, API_KEY_LEN, API_KEY_RANDOM_LEN, PING_KEY_LEN};

/// A group of checks and channels sharing API keys and a ping key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub uuid: Uuid,
    pub(crate) seq: u64,
    pub name: String,
    /// For `/ping/<ping_key>/<slug>`; 22 URL-safe characters.
    pub ping_key: String,
    /// For project badges (`/badge/<badge_key>/...`).
    pub badge_key: String,
    pub created: Timestamp,
    /// A recurring quiet window that holds the alerts of every check of the project, as a
    /// check's own window does (`model::snooze`).
    pub quiet: Option<Arc<QuietWindow>>,
}

/// An API key as stored: only its argon2id hash and the non-secret identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// The first [`API_KEY_ID_LEN`] characters of the key (`hcw_` + 8): found by this, shown
    /// by `key ls`, not enough to use the key.
    pub id: String,
    pub project: Uuid,
    pub(crate) read_only: bool,
    pub(crate) label: String,
    /// PHC string of the argon2id hash of the whole key.
    pub(crate) hash: String,
    pub created: Timestamp,
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URL_SAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `len` characters drawn uniformly from `alphabet` by the operating system's generator.
pub(crate) fn random_string(alphabet: &[u8], len: usize) -> Result<String, getrandom::Error> {
    // Rejection sampling keeps the draw uniform for alphabets that do not divide 256.
    let limit = 256 - (256 % alphabet.len());
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        getrandom::fill(&mut buf)?;
        for &b in &buf {
            if (b as usize) < limit && out.len() < len {
                out.push(alphabet[b as usize % alphabet.len()] as char);
            }
        }
    }
    Ok(out)
}

/// A fresh API key: `hcw_` (read-write) or `hcr_` (read-only) and 28 alphanumerics.
pub(crate) fn generate_api_key(read_only: bool) -> Result<String, getrandom::Error> {
    let prefix = if read_only { "hcr_" } else { "hcw_" };
    Ok(format!(
        "{prefix}{}",
        random_string(ALNUM, API_KEY_RANDOM_LEN)?
    ))
}

/// A fresh ping key: 22 URL-safe characters.
pub(crate) fn generate_ping_key() -> Result<String, getrandom::Error> {
    random_string(URL_SAFE, PING_KEY_LEN)
}

/// Whether `key` has the shape of a ping key: 22 URL-safe characters, as generated here and by
/// Healthchecks (a slug ping URL or email address names it).
pub(crate) fn is_ping_key(key: &str) -> bool {
    key.len() == PING_KEY_LEN
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The identifier under which a key is stored, if the key has the shape of one of ours.
pub(crate) fn api_key_id(key: &str) -> Option<&str> {
    let well_formed = key.len() == API_KEY_LEN
        && (key.starts_with("hcw_") || key.starts_with("hcr_"))
        && key.as_bytes()[4..].iter().all(u8::is_ascii_alphanumeric);
    well_formed.then(|| &key[..API_KEY_ID_LEN])
}

/// Whether a key of our format is a read-only key.
#[cfg(test)]
fn is_read_only_key(key: &str) -> bool {
    key.starts_with("hcr_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_documented_shape() {
        let rw = generate_api_key(false).expect("random");
        let ro = generate_api_key(true).expect("random");
        assert_eq!(rw.len(), 32);
        assert!(rw.starts_with("hcw_") && ro.starts_with("hcr_"));
        assert_eq!(api_key_id(&rw), Some(&rw[..12]));
        assert!(is_read_only_key(&ro) && !is_read_only_key(&rw));
        let ping = generate_ping_key().expect("random");
        assert_eq!(ping.len(), 22);
        assert!(
            ping.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_ne!(generate_api_key(false).expect("random"), rw);
    }

    #[test]
    fn foreign_keys_have_no_id() {
        assert_eq!(api_key_id("hcw_short"), None);
        assert_eq!(api_key_id(&"x".repeat(32)), None);
        assert_eq!(api_key_id(&format!("hcw_{}", "-".repeat(28))), None);
    }
}
