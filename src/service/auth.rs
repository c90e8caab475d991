//! API key verification. Keys are stored only as argon2id hashes and found by their
//! non-secret identifier (`hcw_`/`hcr_` + 8 characters), never by scanning.
//!
//! An argon2 verification costs tens of milliseconds and ~19 MiB, so it runs on the blocking
//! pool behind a small semaphore, and a verified key is remembered (by its SHA-256, in a
//! bounded map) so that only its first use after start pays. The cache maps to the key's
//! identifier, which is looked up in the live state on every hit: a removed key stops
//! working at once.
//!
//! Failed verifications are throttled per key identifier and per client address (an IPv6
//! client by its /64): once either has used its failures of the minute, further keys it
//! presents that are not already verified are refused at once ([`Verdict::Throttled`]) without
//! an argon2 run, so a leaked identifier (the 12 characters `key ls` shows) cannot keep the
//! verifiers busy.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use uuid::Uuid;

use crate::model::limits::{API_KEY_LEN, FAILURES_PER_CLIENT, FAILURES_PER_KEY};
use crate::model::project::api_key_id;
use crate::model::ratelimit::Windows;
use crate::service::metrics::KeyVerification;
use crate::service::{Service, ServiceError};

/// Verified keys remembered at most; the map is emptied when it would grow past this.
pub(crate) const KEY_CACHE_MAX: usize = 4096;
/// argon2 verifications running at once.
pub const VERIFY_PERMITS: usize = 2;

/// The project and rights a request's key grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    pub project: Uuid,
    pub(crate) read_only: bool,
    /// Identifier of the key (for rate limiting and logs).
    pub(crate) key_id: String,
}

/// Result of checking a presented key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No key, or not 32 characters long (the reference says "missing" for both).
    Missing,
    /// A key of the right length that does not match.
    Wrong,
    /// Too many failed verifications for this key's identifier or from this client: try again
    /// after the wait (429), without an argon2 run.
    Throttled {
        retry_after: Duration,
    },
    Granted(Grant),
}

/// Memory of verified keys.
pub(crate) struct KeyCache {
    verified: Mutex<HashMap<[u8; 32], String>>,
    permits: Semaphore,
    /// Failed verifications per key identifier and per client address.
    failures: Mutex<Failures>,
}

#[derive(Debug)]
struct Failures {
    by_key: Windows,
    by_client: Windows,
}

impl Failures {
    fn check(
        &self,
        id: &str,
        client: Option<&str>,
        now: std::time::Instant,
    ) -> Result<(), Duration> {
        self.by_key.check(id, now)?;
        match client {
            Some(client) => self.by_client.check(&client_bucket(client), now),
            None => Ok(()),
        }
    }

    fn count(&mut self, id: &str, client: Option<&str>, now: std::time::Instant) {
        self.by_key.count(id, now);
        if let Some(client) = client {
            self.by_client.count(&client_bucket(client), now);
        }
    }
}

/// What failures of `addr` are counted against: the address, or for IPv6 its /64, which one
/// host commonly holds whole (counting single addresses there would limit nothing). An
/// IPv4-mapped IPv6 address counts as its IPv4 address; text that is no address (a forwarded
/// header can say anything) counts as itself.
pub(crate) fn client_bucket(addr: &str) -> String {
    match addr.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                v4.to_string()
            } else {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        }
        Ok(ip) => ip.to_string(),
        Err(_) => addr.to_string(),
    }
}

impl KeyCache {
    pub(crate) fn new() -> KeyCache {
        KeyCache {
            verified: Mutex::new(HashMap::new()),
            permits: Semaphore::new(VERIFY_PERMITS),
            failures: Mutex::new(Failures {
                by_key: Windows::new(FAILURES_PER_KEY),
                by_client: Windows::new(FAILURES_PER_CLIENT),
            }),
        }
    }

    fn lookup(&self, digest: &[u8; 32]) -> Option<String> {
        self.verified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(digest)
            .cloned()
    }

    fn remember(&self, digest: [u8; 32], id: String) {
        let mut map = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= KEY_CACHE_MAX {
            map.clear();
        }
        map.insert(digest, id);
    }

    /// Forgets every cached verification of the key `id`.
    pub(crate) fn forget(&self, id: &str) {
        self.verified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, v| v != id);
    }
}

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache::new()
    }
}

/// The argon2id hash (PHC string) of a key, with a fresh salt.
pub(crate) fn hash_key(key: &str) -> Result<String, ServiceError> {
    Argon2::default()
        .hash_password(key.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| ServiceError::Random(e.to_string()))
}

fn verify_hash(key: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(key.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

impl Service {
    /// The grant of a live key by its identifier.
    fn grant_of(&self, id: &str) -> Option<Grant> {
        self.read(|s| {
            s.api_key(id).map(|k| Grant {
                project: k.project,
                read_only: k.read_only,
                key_id: k.id.clone(),
            })
        })
    }

    /// Checks a presented API key. `allow_read_only` is false for endpoints that need a
    /// read-write key; a read-only key there is "wrong", as in the reference. `client` is the
    /// caller's address (failed verifications are throttled per address too).
    pub(crate) async fn authenticate(
        &self,
        key: &str,
        allow_read_only: bool,
        client: Option<&str>,
    ) -> Verdict {
        if key.chars().count() != API_KEY_LEN {
            return Verdict::Missing;
        }
        let Some(id) = api_key_id(key) else {
            return Verdict::Wrong;
        };
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let grant = match self.auth.lookup(&digest) {
            // A verified key works whatever happens to its identifier meanwhile.
            Some(cached_id) => self.grant_of(&cached_id),
            None => match self.verify_slowly(key, id, digest, client).await {
                Ok(grant) => grant,
                Err(retry_after) => return Verdict::Throttled { retry_after },
            },
        };
        match grant {
            Some(g) if allow_read_only || !g.read_only => Verdict::Granted(g),
            _ => Verdict::Wrong,
        }
    }

    /// Runs argon2 for a key not verified before, unless its identifier or its client has
    /// used up its failures (`Err(wait)`).
    async fn verify_slowly(
        &self,
        key: &str,
        id: &str,
        digest: [u8; 32],
        client: Option<&str>,
    ) -> Result<Option<Grant>, Duration> {
        // Unknown identifiers cost nothing, so they are neither throttled nor counted.
        let Some(hash) = self.read(|s| s.api_key(id).map(|k| k.hash.clone())) else {
            return Ok(None);
        };
        let failures = || {
            self.auth
                .failures
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        let now = || tokio::time::Instant::now().into_std();
        if let Err(wait) = failures().check(id, client, now()) {
            self.metrics().key_verification(KeyVerification::Throttled);
            return Err(wait);
        }
        // Held until the outcome is recorded, so that the next in line sees it.
        let Ok(_permit) = self.auth.permits.acquire().await else {
            return Ok(None);
        };
        // While this waited, the same key may have been verified (a client's first burst with
        // a new key then costs one argon2 run per permit, not one per request), or failures may
        // have reached a limit.
        if let Some(cached_id) = self.auth.lookup(&digest) {
            return Ok(self.grant_of(&cached_id));
        }
        if let Err(wait) = failures().check(id, client, now()) {
            self.metrics().key_verification(KeyVerification::Throttled);
            return Err(wait);
        }
        let presented = key.to_string();
        let ok = tokio::task::spawn_blocking(move || verify_hash(&presented, &hash))
            .await
            .unwrap_or(false);
        if !ok {
            failures().count(id, client, now());
            self.metrics().key_verification(KeyVerification::Failed);
            return Ok(None);
        }
        self.metrics().key_verification(KeyVerification::Ok);
        // The key may have been removed while it was being verified.
        let Some(grant) = self.grant_of(id) else {
            return Ok(None);
        };
        self.auth.remember(digest, id.to_string());
        Ok(Some(grant))
    }

    /// Forgets cached verifications of a removed key.
    pub(crate) fn forget_key(&self, id: &str) {
        self.auth.forget(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_count_by_address_and_ipv6_by_its_64() {
        assert_eq!(client_bucket("192.0.2.7"), "192.0.2.7");
        assert_eq!(client_bucket("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(
            client_bucket("2001:db8:1:2:aaaa::1"),
            client_bucket("2001:db8:1:2:bbbb::2")
        );
        assert_eq!(client_bucket("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_ne!(
            client_bucket("2001:db8:1:2::1"),
            client_bucket("2001:db8:1:3::1")
        );
        assert_eq!(client_bucket("not an address"), "not an address");
    }

    #[test]
    fn hashes_verify_only_their_key() {
        let hash = hash_key("hcw_abcdefghijklmnopqrstuvwxyz12").expect("hash");
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_hash("hcw_abcdefghijklmnopqrstuvwxyz12", &hash));
        assert!(!verify_hash("hcw_abcdefghijklmnopqrstuvwxyz13", &hash));
        assert!(!verify_hash(
            "hcw_abcdefghijklmnopqrstuvwxyz12",
            "not a phc string"
        ));
    }
}
