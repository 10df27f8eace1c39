//! Whale rules (spec §2.13, contracts §7): what a whale is, and the daily public pool.
//!
//! A whale is a trade whose notional `abs(price × size)` meets a threshold (`>=`, contracts §1). The public pool
//! of a UTC day is drawn from the active events with the most 24h volume: the candidates (a few times the pool
//! size, most volume first) are ordered by a hash of the day and the event, and the first `size` make the pool,
//! in that order (the free preview unlocks a prefix of it). The draw depends only on the day and the
//! candidates, so every replica that draws from the same data draws the same pool, and the pool rotates from
//! one day to the next even when the volumes do not change.

use crate::{Amount, Exchange, Market, Timestamp, Trade};

/// Candidates considered per pool slot: the pool is drawn from the `size × POOL_CANDIDATE_FACTOR` events with
/// the most 24h volume.
pub const POOL_CANDIDATE_FACTOR: usize = 2;

/// A stored trade at or above the platform whale threshold, with the catalog's market when it has it (the
/// market's title and slug name it in feeds and webhooks). What the whale tracker publishes; each consumer
/// renders it at its own edge.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WhaleEntry {
    pub trade: Trade,
    /// `None` when the catalog does not have the market (or could not be read): the market id names it then.
    pub market: Option<Market>,
    /// Title of the trade's event; `None` when the catalog does not have the event (or could not be read).
    /// Carried with the entry so a receiver can tell what the whale bet on without a second lookup.
    pub event_title: Option<String>,
}

/// Whether `trade` is a whale at `threshold` (inclusive).
pub fn is_whale(trade: &Trade, threshold: Amount) -> bool {
    trade.notional() >= threshold
}

/// The UTC day of `t` as `YYYY-MM-DD` (the key of a day's pool).
pub fn utc_day(t: Timestamp) -> String {
    let d = t.to_datetime().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// The pool of `day` (`YYYY-MM-DD`): `size` of the `candidates`, in draw order.
pub fn draw_pool(day: &str, candidates: &[(Exchange, String)], size: usize) -> Vec<(Exchange, String)> {
    let mut keyed: Vec<(u64, &(Exchange, String))> = candidates
        .iter()
        .map(|c| (fnv1a(&[day.as_bytes(), c.0.as_str().as_bytes(), c.1.as_bytes()]), c))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    keyed.dedup_by(|a, b| a.1 == b.1);
    keyed.into_iter().take(size).map(|(_, c)| c.clone()).collect()
}

/// 64-bit FNV-1a over the parts, each followed by a 0 byte (so `("ab", "c")` and `("a", "bc")` differ). Stable
/// across platforms and releases, unlike `std`'s hasher.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(std::iter::once(&0u8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Outcome, Price, TakerSide};

    fn candidates(n: usize) -> Vec<(Exchange, String)> {
        (0..n)
            .map(|i| {
                (
                    if i % 2 == 0 { Exchange::VenueA } else { Exchange::VenueB },
                    format!("EV-{i}"),
                )
            })
            .collect()
    }

    #[test]
    fn the_draw_is_deterministic_per_day_and_rotates() {
        let c = candidates(40);
        let a = draw_pool("2026-11-21", &c, 20);
        assert_eq!(a.len(), 20);
        assert_eq!(a, draw_pool("2026-11-21", &c, 20));
        // Input order does not matter: only the day and the set of candidates.
        let mut rev = c.clone();
        rev.reverse();
        assert_eq!(a, draw_pool("2026-11-21", &rev, 20));
        let b = draw_pool("2026-11-22", &c, 20);
        assert_ne!(a, b);
        assert!(a.iter().all(|e| c.contains(e)));
        // Fewer candidates than slots: all of them, each once.
        let mut dup = candidates(3);
        dup.push(dup[0].clone());
        assert_eq!(draw_pool("2026-11-21", &dup, 20).len(), 3);
    }

    #[test]
    fn days_and_thresholds() {
        assert_eq!(
            utc_day(Timestamp::parse_iso("2026-11-21T23:59:59.999Z").unwrap()),
            "2026-11-21"
        );
        assert_eq!(
            utc_day(Timestamp::parse_iso("2026-11-22T00:00:00Z").unwrap()),
            "2026-11-22"
        );
        let t = Trade {
            exchange: Exchange::VenueA,
            source_trade_id: "t".into(),
            market_id: "m".into(),
            event_id: "e".into(),
            executed_at: Timestamp::from_millis(0),
            taker_side: TakerSide::Buy,
            outcome: Outcome::Yes,
            price: Price::from_cents(50),
            size: Amount::from_units(2000),
        };
        assert!(is_whale(&t, Amount::from_units(1000)));
        assert!(!is_whale(&t, Amount::from_micros(1_000_000_001)));
    }
}
