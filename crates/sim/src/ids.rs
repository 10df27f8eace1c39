//! Deterministic identifiers.
//!
//! Every identifier the venues would mint (condition ids, 78-digit token ids, Gamma numeric ids, UUIDs) is
//! derived from `(seed, key)` where the key names the thing (`"btc:15m:1778583600:b"`). Two models with the
//! same seed therefore agree on the ids of the same window even when they were started at different times,
//! which is what "same seed → same markets" has to mean for a catalog that follows the wall clock.

use rand::{Rng, SeedableRng, rngs::StdRng};

/// FNV-1a over the key's bytes: stable across Rust versions, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// SplitMix64 finaliser: spreads nearby inputs over the whole `u64` range.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A 64-bit hash of `(seed, key)`.
pub(crate) fn key_hash(seed: u64, key: &str) -> u64 {
    mix(seed ^ fnv1a(key.as_bytes()))
}

/// A random generator owned by one named thing, independent of the model's main generator.
pub(crate) fn key_rng(seed: u64, key: &str) -> StdRng {
    StdRng::seed_from_u64(key_hash(seed, key))
}

/// `n` lowercase hex digits.
pub(crate) fn hex(rng: &mut impl Rng, n: usize) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    (0..n).map(|_| DIGITS[rng.random_range(0..16)] as char).collect()
}

/// `0x` + 64 hex digits: a condition id, question id or transaction hash.
pub(crate) fn hash32(rng: &mut impl Rng) -> String {
    format!("0x{}", hex(rng, 64))
}

/// A version-4 style UUID string (venue_a `market_id`, `trade_id`).
pub(crate) fn uuid(rng: &mut impl Rng) -> String {
    let h = hex(rng, 32);
    let variant = ["8", "9", "a", "b"][rng.random_range(0..4)];
    format!(
        "{}-{}-4{}-{}{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        variant,
        &h[17..20],
        &h[20..32]
    )
}

/// A 78-digit decimal token id below 2^256 (it starts with `10`, and 2^256 ≈ 1.158e77), so it overflows
/// every native integer exactly like the venue's uint256 ids do.
pub(crate) fn token_id(rng: &mut impl Rng) -> String {
    let mut s = String::with_capacity(78);
    s.push_str("10");
    for _ in 0..76 {
        s.push(char::from(b'0' + rng.random_range(0..10u8)));
    }
    s
}

/// A decimal id of `digits` digits with no leading zero (Gamma's numeric-string ids).
pub(crate) fn numeric_id(rng: &mut impl Rng, digits: u32) -> String {
    let lo = 10u64.pow(digits - 1);
    rng.random_range(lo..lo * 10).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_venue_shapes_and_depend_only_on_seed_and_key() {
        let mut r = key_rng(7, "x");
        let t = token_id(&mut r);
        assert_eq!(t.len(), 78);
        assert!(t.bytes().all(|b| b.is_ascii_digit()));
        assert!(t.as_str() < "115792089237316195423570985008687907853269984665640564039457584007913129639936");
        let c = hash32(&mut r);
        assert!(c.starts_with("0x") && c.len() == 66);
        let u = uuid(&mut r);
        assert_eq!(u.len(), 36);
        assert_eq!(u.as_bytes()[14], b'4');
        assert_eq!(numeric_id(&mut r, 6).len(), 6);
        assert_eq!(token_id(&mut key_rng(7, "k")), token_id(&mut key_rng(7, "k")));
        assert_ne!(token_id(&mut key_rng(7, "k")), token_id(&mut key_rng(8, "k")));
    }
}
