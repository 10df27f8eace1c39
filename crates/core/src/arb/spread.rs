//! Cross-venue price spreads (spec 2.11, `/v1/arbitrage/current/difference`).
//!
//! For each paired market, up to two rows: `YES` compares venue_a's YES ask with venue_b's YES ask, `NO` the
//! NO asks; `diff = side1_price − side2_price` (venue_a minus venue_b). These compare the same side across
//! venues and are not risk-free arbitrage. A row needs both asks of its side from fresh books: the venue_a
//! book and that side's venue_b token book (a stale or empty NO book drops the NO row, not the YES row).
//! Both window pairs and matched pairs are included; `interval_code` restricts to windows of that interval.
//! Rows are sorted by `|diff|` descending, then `event_id`, then YES before NO.

use serde::{Deserialize, Serialize};

use crate::{IntervalCode, Outcome, Price, Timestamp};

use super::{
    pairing::{Listing, MarketPair, PairOverride, pair_markets},
    scan::{BookSource, PairBooks},
    units::MicroUsd,
};

/// Parameters of the spread route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpreadParams {
    /// Reference time for staleness and window expiry.
    pub now: Timestamp,
    /// Only window pairs of this interval.
    pub interval_code: Option<IntervalCode>,
    /// Books older than this are ignored (the route's `minutes` × 60).
    pub max_staleness_seconds: i64,
    /// Maximum start/end skew when pairing windows (the scanner's default, 60).
    pub window_tolerance_seconds: i64,
}

/// One price-spread row, exact. `side1` / `side2` are the venues' display names, which the server adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpreadRow {
    /// Canonical event id of the pair (not rendered by the spec's row, useful for logs and extensions).
    pub event_id: String,
    /// Interval of a window pair.
    pub interval_code: Option<IntervalCode>,
    /// The pair's display label (the opportunity's `label`).
    pub label: String,
    /// venue_a market ticker of the pair.
    pub venue_a_market_id: String,
    /// venue_b condition id of the pair.
    pub venue_b_market_id: String,
    /// Window start of a window pair (venue_a's, as the label names it); `None` for matched pairs.
    pub window_start: Option<Timestamp>,
    /// Window end of a window pair; `None` for matched pairs.
    pub window_end: Option<Timestamp>,
    /// `YES` or `NO`.
    pub side: Outcome,
    /// venue_a ask for the side.
    pub side1_price: Price,
    /// venue_b ask for the side.
    pub side2_price: Price,
    /// `side1_price − side2_price`, signed (render with [`MicroUsd::dollars_f64_4`]).
    pub diff: MicroUsd,
}

/// Pairs the catalog and lists the spreads.
pub fn price_spreads<B: BookSource + ?Sized>(
    listings: &[Listing],
    overrides: &[PairOverride],
    books: &B,
    params: &SpreadParams,
) -> Vec<SpreadRow> {
    let pairs = pair_markets(listings, overrides, params.window_tolerance_seconds);
    spreads_for_pairs(&pairs, books, params)
}

/// Lists the spreads of already-formed pairs.
pub fn spreads_for_pairs<B: BookSource + ?Sized>(
    pairs: &[MarketPair<'_>],
    books: &B,
    params: &SpreadParams,
) -> Vec<SpreadRow> {
    let mut rows = Vec::new();
    for (i, p) in pairs.iter().enumerate() {
        if params.interval_code.is_some() && p.interval_code() != params.interval_code {
            continue;
        }
        if p.is_expired(params.now) {
            continue;
        }
        let books = PairBooks::partial(i, p, books, params.now, params.max_staleness_seconds);
        let a = books.venue_a_ladders();
        let b = books.venue_b_ladders();
        let window = p.window();
        for side in [Outcome::Yes, Outcome::No] {
            if let (Some(s1), Some(s2)) = (a.best(side), b.best(side)) {
                rows.push(SpreadRow {
                    event_id: p.event_id.to_string(),
                    interval_code: p.interval_code(),
                    label: p.label(),
                    venue_a_market_id: p.venue_a.market.market_id.clone(),
                    venue_b_market_id: p.venue_b.market.market_id.clone(),
                    window_start: window.map(|(start, _)| start),
                    window_end: window.map(|(_, end)| end),
                    side,
                    side1_price: s1,
                    side2_price: s2,
                    diff: MicroUsd::from_price(s1) - MicroUsd::from_price(s2),
                });
            }
        }
    }
    let side_rank = |o: Outcome| u8::from(o == Outcome::No);
    rows.sort_by(|x, y| {
        y.diff
            .micros()
            .abs()
            .cmp(&x.diff.micros().abs())
            .then_with(|| x.event_id.cmp(&y.event_id))
            .then(side_rank(x.side).cmp(&side_rank(y.side)))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Exchange,
        arb::{
            pairing::tests::T0,
            pricing::tests::lvl,
            scan::tests::{Books, b_book, fixture, insert},
        },
    };

    fn params(now: i64) -> SpreadParams {
        SpreadParams {
            now: Timestamp(now),
            interval_code: None,
            max_staleness_seconds: 600,
            window_tolerance_seconds: 60,
        }
    }

    #[test]
    fn yes_and_no_rows_sorted_by_absolute_diff() {
        let now = T0 + 60_000;
        let (listings, books) = fixture(now);
        // venue_a YES 0.45 vs venue_b YES 0.40 → +0.05; venue_a NO 0.56 vs venue_b NO 0.50 → +0.06.
        let rows = price_spreads(&listings, &[], &books, &params(now));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].side, Outcome::No);
        assert_eq!(
            (rows[0].side1_price, rows[0].side2_price, rows[0].diff),
            (Price(560_000), Price(500_000), MicroUsd(60_000))
        );
        assert_eq!((rows[1].side, rows[1].diff), (Outcome::Yes, MicroUsd(50_000)));
        assert_eq!(rows[1].diff.dollars_f64_4(), 0.05);
        // Both rows name the pair they compare: its markets, label and venue_a's window.
        for r in &rows {
            assert_eq!(r.event_id, "BTC-15M-2026-11-21T19:00Z");
            assert_eq!(r.interval_code, Some(IntervalCode::M15));
            assert_eq!(r.label, "BTC 15m Up 19:00-19:15 UTC");
            assert_eq!(r.venue_a_market_id, "KXBTC15M-26NOV211415-15");
            assert_eq!(r.venue_b_market_id, "0xb1");
            assert_eq!(r.window_start, Some(Timestamp(T0)));
            assert_eq!(r.window_end, Some(Timestamp(T0 + 900_000)));
        }
    }

    #[test]
    fn negative_diffs_sort_by_magnitude_and_stale_sides_drop() {
        let now = T0 + 60_000;
        let (listings, mut books): (_, Books) = fixture(now);
        // venue_b YES ask 0.52 → YES diff 0.45 − 0.52 = −0.07, larger in magnitude than NO's +0.06.
        insert(&mut books, b_book("0xb1", "0xb1-up", now, vec![lvl(5200, 1)]));
        let rows = price_spreads(&listings, &[], &books, &params(now));
        assert_eq!((rows[0].side, rows[0].diff), (Outcome::Yes, MicroUsd(-70_000)));
        assert_eq!(rows[0].diff.dollars_f64_4(), -0.07);
        // A stale NO token book removes only the NO row.
        books
            .get_mut(&(Exchange::VenueB, "0xb1-down".to_string()))
            .unwrap()
            .timestamp = Timestamp(now - 600_001);
        let rows = price_spreads(&listings, &[], &books, &params(now));
        assert_eq!(rows.iter().map(|r| r.side).collect::<Vec<_>>(), vec![Outcome::Yes]);
        // The interval filter.
        let mut p = params(now);
        p.interval_code = Some(IntervalCode::H1);
        assert!(price_spreads(&listings, &[], &books, &p).is_empty());
    }
}
