//! The live scan: the core [`scan_pairs`](crossbook_core::arb::scan_pairs) / [`scan_one`] and [`spreads_for_pairs`] over the catalog's pairs
//! and the in-memory books (`state.live`, read in place under its lock, never copied).
//! `/v1/arbitrage/current`, `/v1/arbitrage/current/difference` and the scanner all call these, so they can
//! never disagree.
//!
//! At the default window tolerance each pair reads its books from the slots the catalog resolved once
//! ([`ArbCatalog::pair_slots`]) with the top of book the live books computed at write time; other
//! tolerances look books up by key.

use crossbook_core::{
    BookSnapshot, Exchange,
    arb::{
        BookSource, BookView, MarketPair, Opportunity, ScanParams, SpreadParams, SpreadRow, scan_one,
        sort_opportunities, spreads_for_pairs,
    },
};
use crossbook_live::{BookSlot, LiveBook, LiveBooks, LiveView};

use super::{
    DEFAULT_WINDOW_TOLERANCE_SECONDS,
    catalog::{ArbCatalog, KeyMap},
};

/// The live books as a [`BookSource`]: stale books count as missing.
struct LiveSource<'m> {
    view: &'m LiveView<'m>,
    book_keys: &'m [KeyMap; 2],
    /// The pairs' slots, when the pairs scanned are the catalog's default pairs and the slots are of this
    /// map and epoch.
    slots: Option<&'m [[Option<BookSlot>; 3]]>,
}

impl<'m> LiveSource<'m> {
    fn new(catalog: &'m ArbCatalog, view: &'m LiveView<'m>, slots: Option<&'m super::catalog::PairSlots>) -> Self {
        LiveSource {
            view,
            book_keys: &catalog.book_keys,
            slots: slots.filter(|s| view.holds(s.live_id, s.epoch)).map(|s| &s.slots[..]),
        }
    }

    fn live(&self, exchange: Exchange, key: &str) -> Option<&LiveBook> {
        let keys = &self.book_keys[usize::from(exchange == Exchange::VenueB)];
        self.view.get(keys.get(key)?).filter(|e| !e.stale)
    }
}

fn view_of(e: &LiveBook) -> BookView<'_> {
    BookView {
        book: &e.book,
        top: e.top,
    }
}

impl BookSource for LiveSource<'_> {
    fn book(&self, exchange: Exchange, key: &str) -> Option<&BookSnapshot> {
        self.live(exchange, key).map(|e| &e.book)
    }

    fn pair_books(&self, index: usize, pair: &MarketPair<'_>) -> [Option<BookView<'_>>; 3] {
        if let Some(slots) = self.slots {
            return slots[index].map(|s| s.and_then(|s| self.view.at(s)).filter(|e| !e.stale).map(view_of));
        }
        let vb = &pair.venue_b.market;
        let token = |t: &Option<String>| t.as_deref().and_then(|t| self.live(Exchange::VenueB, t));
        [
            self.live(Exchange::VenueA, &pair.venue_a.market.market_id),
            token(&vb.yes_token_id),
            token(&vb.no_token_id),
        ]
        .map(|e| e.map(view_of))
    }
}

/// Pairs priced under one hold of the live books' read lock. A whole venue's catalog takes hundreds of
/// milliseconds to price, and the connectors wait for the lock to apply every change, so a full pass lets
/// them in between batches: each pair still reads its books at one instant, and a change waits for at most
/// one batch.
const PAIRS_PER_LOCK: usize = 256;

/// The opportunities of the catalog over the live books (see the module docs), priced as the core scan
/// prices them ([`crossbook_core::arb::scan_pairs`]), a batch of pairs at a time.
pub fn scan_live(catalog: &ArbCatalog, live: &LiveBooks, params: &ScanParams) -> Vec<Opportunity> {
    let default = params.window_tolerance_seconds == DEFAULT_WINDOW_TOLERANCE_SECONDS;
    let slots = default.then(|| catalog.pair_slots(live));
    let pairs = catalog.pairs(params.window_tolerance_seconds);
    let mut out = Vec::new();
    for (batch, chunk) in pairs.chunks(PAIRS_PER_LOCK).enumerate() {
        let first = batch * PAIRS_PER_LOCK;
        live.with_books(|view| {
            let source = LiveSource::new(catalog, view, slots.as_deref());
            out.extend(
                chunk
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| scan_one(first + i, p, &source, params)),
            );
        });
    }
    sort_opportunities(out)
}

/// The opportunities of some of the catalog's default pairs (indexes from
/// [`ArbCatalog::pairs_of_books`]), priced exactly as [`scan_live`] prices them and in the same order: the
/// scanner's re-pricing after a book change. `params.window_tolerance_seconds` is not used (the default
/// pairing is the one indexed).
pub fn scan_live_pairs(catalog: &ArbCatalog, live: &LiveBooks, params: &ScanParams, pairs: &[u32]) -> Vec<Opportunity> {
    let slots = catalog.pair_slots(live);
    live.with_books(|view| {
        let source = LiveSource::new(catalog, view, Some(&slots));
        let out: Vec<Opportunity> = pairs
            .iter()
            .filter_map(|&i| scan_one(i as usize, &catalog.pair(i as usize), &source, params))
            .collect();
        sort_opportunities(out)
    })
}

/// The price-spread rows of the catalog over the live books.
pub fn spreads_live(catalog: &ArbCatalog, live: &LiveBooks, params: &SpreadParams) -> Vec<SpreadRow> {
    let default = params.window_tolerance_seconds == DEFAULT_WINDOW_TOLERANCE_SECONDS;
    let slots = default.then(|| catalog.pair_slots(live));
    let pairs = catalog.pairs(params.window_tolerance_seconds);
    live.with_books(|view| spreads_for_pairs(&pairs, &LiveSource::new(catalog, view, slots.as_deref()), params))
}

#[cfg(test)]
mod tests {
    use crossbook_core::{
        Timestamp,
        arb::{
            fixtures::{T0, fixture},
            scan,
        },
    };
    use crossbook_live::BookKey;

    use super::*;

    /// The live scan (slots at the default tolerance, keys at another) and the re-pricing of a subset give
    /// exactly what the core scan gives over the same books.
    #[test]
    fn live_scans_equal_the_core_scan() {
        let now = Timestamp(T0 + 60_000);
        let (listings, books) = fixture(now.millis());
        let mut params = ScanParams::new(now);
        params.include_orderbook = true;
        let expected = scan(&listings, &[], &books, &params);
        assert_eq!(expected.len(), 1);
        let catalog = ArbCatalog::new(listings, vec![]);
        let live = LiveBooks::new();
        // Resolved before the books arrive: the reserved slots receive them.
        assert!(scan_live(&catalog, &live, &params).is_empty());
        for b in books.values() {
            live.upsert(b.clone());
        }
        assert_eq!(scan_live(&catalog, &live, &params), expected);
        let other = ScanParams {
            window_tolerance_seconds: 90,
            ..params
        };
        assert_eq!(scan_live(&catalog, &live, &other), expected);

        let no_book = BookKey::venue_b("0xb1", "0xb1-down");
        let pairs = catalog.pairs_of_books([&no_book, &BookKey::venue_a("KXBTC15M-26NOV211415-15")]);
        assert_eq!(pairs, [0], "both books are in the one pair, listed once");
        assert!(catalog.pairs_of_books([&BookKey::venue_a("ELSEWHERE")]).is_empty());
        assert_eq!(scan_live_pairs(&catalog, &live, &params, &pairs), expected);

        // A stale book drops the pair on every path.
        live.mark_stale([&no_book]);
        assert!(scan_live(&catalog, &live, &params).is_empty());
        assert!(scan_live(&catalog, &live, &other).is_empty());
        assert!(scan_live_pairs(&catalog, &live, &params, &pairs).is_empty());

        // Another live map: the catalog resolves its slots again.
        let other_live = LiveBooks::new();
        for b in books.values() {
            other_live.upsert(b.clone());
        }
        assert_eq!(scan_live(&catalog, &other_live, &params), expected);
    }

    /// A catalog of several lock batches prices every pair once, with its own slots, in the core's order.
    #[test]
    fn a_pass_in_batches_equals_the_core_scan() {
        use crossbook_core::{
            Exchange, IntervalCode,
            arb::fixtures::{a_book, b_book, insert, lvl, window},
        };
        let now = Timestamp(T0 + 60_000);
        let (mut listings, mut books) = (Vec::new(), crossbook_core::arb::fixtures::Books::new());
        let n = 2 * PAIRS_PER_LOCK + 7;
        for k in 0..n as i64 {
            let (a, b) = (format!("KXBTC15M-{k}"), format!("0xb{k}"));
            let start = k * 900_000;
            listings.push(window(Exchange::VenueA, &a, IntervalCode::M15, start, start));
            listings.push(window(
                Exchange::VenueB,
                &b,
                IntervalCode::M15,
                start + 2_000,
                start + 2_000,
            ));
            // Edges that differ by pair, so the order is the sort's and not the catalog's.
            let no_bid = 5500 + (k % 5) * 10;
            insert(
                &mut books,
                a_book(&a, now.millis(), vec![lvl(4400, 50)], vec![lvl(no_bid, 10)]),
            );
            insert(
                &mut books,
                b_book(&b, &format!("{b}-up"), now.millis(), vec![lvl(4000, 30)]),
            );
            insert(
                &mut books,
                b_book(&b, &format!("{b}-down"), now.millis(), vec![lvl(5000, 12)]),
            );
        }
        let params = ScanParams::new(now);
        let expected = scan(&listings, &[], &books, &params);
        assert_eq!(expected.len(), n, "every pair has an edge");
        let catalog = ArbCatalog::new(listings, vec![]);
        let live = LiveBooks::new();
        for b in books.values() {
            live.upsert(b.clone());
        }
        assert_eq!(scan_live(&catalog, &live, &params), expected);
    }
}
