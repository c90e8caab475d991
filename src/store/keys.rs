//! Fixed-width table keys. Composite keys are byte arrays in big-endian order, never redb
//! tuples, so their encoding (and sort order) cannot change with a redb release.

use sha2::{Digest, Sha256};
use uuid::Uuid;

/// `check ‖ n` for pings and ping bodies; sorts by check, then by n.
pub(crate) fn ping_key(check: Uuid, n: u64) -> [u8; 24] {
    let mut key = [0u8; 24];
    key[..16].copy_from_slice(check.as_bytes());
    key[16..].copy_from_slice(&n.to_be_bytes());
    key
}

/// The `n` of a [`ping_key`].
pub(crate) fn ping_n(key: &[u8; 24]) -> u64 {
    let mut n = [0u8; 8];
    n.copy_from_slice(&key[16..]);
    u64::from_be_bytes(n)
}

/// `i64` microseconds mapped to `u64` so that big-endian bytes sort in time order.
fn ordered_time(us: i64) -> u64 {
    (us as u64) ^ (1 << 63)
}

#[cfg(test)]
fn time_from_ordered(v: u64) -> i64 {
    (v ^ (1 << 63)) as i64
}

/// `check ‖ time` for flips; sorts by check, then by time.
pub(crate) fn flip_key(check: Uuid, created_us: i64) -> [u8; 24] {
    let mut key = [0u8; 24];
    key[..16].copy_from_slice(check.as_bytes());
    key[16..].copy_from_slice(&ordered_time(created_us).to_be_bytes());
    key
}

/// The time of a [`flip_key`].
#[cfg(test)]
fn flip_time(key: &[u8; 24]) -> i64 {
    let mut t = [0u8; 8];
    t.copy_from_slice(&key[16..]);
    time_from_ordered(u64::from_be_bytes(t))
}

/// The first and last 24-byte keys of one check (pings, bodies, flips).
pub(crate) fn check_range24(check: Uuid) -> ([u8; 24], [u8; 24]) {
    let mut lo = [0u8; 24];
    lo[..16].copy_from_slice(check.as_bytes());
    let mut hi = [0xffu8; 24];
    hi[..16].copy_from_slice(check.as_bytes());
    (lo, hi)
}

/// `check ‖ channel` for check-channel links.
pub(crate) fn link_key(check: Uuid, channel: Uuid) -> [u8; 32] {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(check.as_bytes());
    key[16..].copy_from_slice(channel.as_bytes());
    key
}

/// The first and last link keys of one check.
pub(crate) fn check_range32(check: Uuid) -> ([u8; 32], [u8; 32]) {
    let mut lo = [0u8; 32];
    lo[..16].copy_from_slice(check.as_bytes());
    let mut hi = [0xffu8; 32];
    hi[..16].copy_from_slice(check.as_bytes());
    (lo, hi)
}

/// The channel half of a [`link_key`].
pub(crate) fn link_channel(key: &[u8; 32]) -> Uuid {
    let mut c = [0u8; 16];
    c.copy_from_slice(&key[16..]);
    Uuid::from_bytes(c)
}

/// `project ‖ SHA-256(slug)[..16]` for the slug index: fixed width whatever the slug's length.
pub(crate) fn slug_key(project: Uuid, slug: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(project.as_bytes());
    key[16..].copy_from_slice(&Sha256::digest(slug.as_bytes())[..16]);
    key
}

/// An API key identifier (`hcw_` + 8 characters) as a table key.
pub(crate) fn api_key_id(id: &str) -> Option<[u8; 12]> {
    id.as_bytes().try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flip_keys_sort_in_time_order_across_zero() {
        let c = Uuid::from_u128(7);
        let before_epoch = flip_key(c, -5);
        let after_epoch = flip_key(c, 5);
        assert!(before_epoch < after_epoch);
        assert_eq!(flip_time(&before_epoch), -5);
        assert_eq!(flip_time(&after_epoch), 5);
    }

    #[test]
    fn ping_keys_round_trip_and_stay_in_their_check_range() {
        let c = Uuid::from_u128(42);
        let k = ping_key(c, 1_000_000);
        assert_eq!(ping_n(&k), 1_000_000);
        let (lo, hi) = check_range24(c);
        assert!(lo <= k && k <= hi);
        assert!(ping_key(Uuid::from_u128(43), 0) > hi);
    }
}
