//! Arbitrage test fixtures: a BTC window pair and the worked example with a known 1.25-cent edge, shared by
//! core's tests and the server's rendering tests. Compiled for tests and with the `testing` feature.

use std::collections::HashMap;

use crate::{Amount, BookSnapshot, Exchange, IntervalCode, Level, Market, Price, Timestamp, arb::Listing};

/// 2026-11-21T19:00:00Z, the start of the fixtures' windows.
pub const T0: i64 = 1_795_287_600_000;

/// A level: price in ten-thousandths of a dollar (a 4-decimal tick), size in whole contracts.
pub fn lvl(cents_x100: i64, size: i64) -> Level {
    Level {
        price: Price(cents_x100 * 100),
        size: Amount::from_units(size),
    }
}

/// A 15-minute BTC up/down window on `exchange` starting `start_ms` after T0 and lasting 900 s plus
/// `end_skew_ms`.
pub fn window(exchange: Exchange, id: &str, ic: IntervalCode, start_ms: i64, end_skew_ms: i64) -> Listing {
    let start = T0 + start_ms;
    let end = T0 + ic.seconds() * 1000 + end_skew_ms;
    let (series, slug) = match exchange {
        Exchange::VenueA => ("KXBTC15M", None),
        Exchange::VenueB => ("btc-up-or-down-15m", Some(format!("btc-updown-15m-{}", start / 1000))),
    };
    let mut m = Market::new(exchange, id, &format!("EV-{id}"), series, "Bitcoin up or down?");
    m.interval_code = Some(ic);
    m.window_start = Some(Timestamp(start));
    m.window_end = Some(Timestamp(end));
    if exchange == Exchange::VenueB {
        m.yes_token_id = Some(format!("{id}-up"));
        m.no_token_id = Some(format!("{id}-down"));
    }
    Listing::new(m, "Bitcoin Up or Down", slug)
}

/// Books by (venue, market id or venue_b token id), as the scan reads them.
pub type Books = HashMap<(Exchange, String), BookSnapshot>;

/// A venue_a book: YES bids and NO bids (its asks are derived from the opposite bids).
pub fn a_book(id: &str, ts: i64, yes_bids: Vec<Level>, no_bids: Vec<Level>) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: id.into(),
        asset_id: None,
        timestamp: Timestamp(ts),
        bids: yes_bids,
        asks: vec![],
        no_bids,
    }
}

/// A venue_b token book with its asks.
pub fn b_book(condition: &str, token: &str, ts: i64, asks: Vec<Level>) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueB,
        market_id: condition.into(),
        asset_id: Some(token.into()),
        timestamp: Timestamp(ts),
        bids: vec![],
        asks,
        no_bids: vec![],
    }
}

/// Adds `b` under its key.
pub fn insert(books: &mut Books, b: BookSnapshot) {
    let key = b.asset_id.clone().unwrap_or_else(|| b.market_id.clone());
    books.insert((b.exchange, key), b);
}

/// The worked example: venue_a YES ask 0.45 × 10 (NO bid 0.55), NO ask 0.56; venue_b YES 0.40, NO 0.50 × 12
/// then 0.51. Best direction YES on venue_a + NO on venue_b at 1.25 c.
pub fn fixture(ts: i64) -> (Vec<Listing>, Books) {
    let listings = vec![
        window(Exchange::VenueA, "KXBTC15M-26NOV211415-15", IntervalCode::M15, 0, 0),
        window(Exchange::VenueB, "0xb1", IntervalCode::M15, 2_000, 2_000),
    ];
    let mut books = Books::new();
    insert(
        &mut books,
        a_book(
            "KXBTC15M-26NOV211415-15",
            ts,
            vec![lvl(4400, 50)],
            vec![lvl(5500, 10), lvl(5400, 5)],
        ),
    );
    insert(&mut books, b_book("0xb1", "0xb1-up", ts, vec![lvl(4000, 30)]));
    insert(
        &mut books,
        b_book("0xb1", "0xb1-down", ts, vec![lvl(5000, 12), lvl(5100, 100)]),
    );
    (listings, books)
}
