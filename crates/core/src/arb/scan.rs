//! The scanner: one pure function from (catalog, latest books, parameters) to opportunities.
//!
//! `/v1/arbitrage/current` calls it per request with the caller's parameters; the background scanner calls it
//! every `scan_interval_ms` with `min_net = 0` over every pair, and after each book change over the pairs of
//! that book ([`scan_one`] per pair, then [`sort_opportunities`]), and feeds the result to
//! [`super::EpisodeBook`] and the webhook cooldown. Neither path touches a clock or the store here: `now` and
//! the books come in as arguments, so the same inputs always give the same output.
//!
//! Per pair ([`scan_one`]; see [`super::pairing`] for how pairs are formed):
//! 1. `interval_code` filter: when set, only window pairs of that interval (matched pairs have none).
//! 2. A window pair whose earlier window end is at or before `now` is skipped (venue_a has closed it).
//! 3. Books: the venue_a book (by ticker) and both venue_b token books (by token id) must exist and be fresh:
//!    `now − timestamp ≤ max_staleness_seconds` (a book exactly that old is kept). Otherwise the pair is
//!    dropped.
//! 4. Fees: venue_a's spec formula, venue_b's rate for the pair's [`MarketPair::fee_category`] in
//!    `params.fees` ([`FeeModel`], 0.07 everywhere by default); the opportunity names them in `fee_model`.
//! 5. Both directions are priced at the top of book, from the books' [`BookTop`] summaries (a live source
//!    computes them when a book is written); the better one ([`super::best_direction`]) is kept
//!    when its net edge is at least `max(min_net, 0)`, i.e. the pair costs less than 1 dollar after fees.
//! 6. The depth walk at the same threshold gives `executable_size` and `max_profit`.
//!
//! The result is sorted by net edge descending, then `event_id` (ROI orders like net, see
//! [`super::best_direction`]).

use std::{collections::HashMap, hash::BuildHasher};

use serde::{Deserialize, Serialize};

use crate::{BookSnapshot, Exchange, IntervalCode, Level, Outcome, Timestamp};

use super::{
    depth::walk,
    fees::FeeModel,
    opportunity::{
        BookSide, ExecutionLeg, LegAsks, MarketType, ORDERBOOK_LEVELS, Opportunity, OrderbookDepth, VenueALeg,
        VenueBLeg,
    },
    pairing::{Listing, MarketPair, PairOverride, pair_markets},
    pricing::{AskLadders, BookTop, TopAsks, best_direction, best_direction_top},
    units::MicroUsd,
};

/// One book as the scanner reads it: the snapshot and its top-of-book summary.
#[derive(Debug, Clone, Copy)]
pub struct BookView<'b> {
    pub book: &'b BookSnapshot,
    /// The book's [`BookTop`]; a live source hands over the one it computed when the book was written.
    pub top: BookTop,
}

impl<'b> BookView<'b> {
    /// A view summarising `book` on the spot (sources that keep no summary).
    pub fn of(book: &'b BookSnapshot) -> Self {
        BookView {
            book,
            top: BookTop::of(book),
        }
    }
}

/// Where the scanner reads the latest books.
pub trait BookSource {
    /// The latest book of a venue_a market (`key` = market ticker) or of a venue_b token (`key` = token id).
    fn book(&self, exchange: Exchange, key: &str) -> Option<&BookSnapshot>;

    /// The three books of `pair`: the venue_a market's, the venue_b YES token's and NO token's, each `None`
    /// when missing (freshness is checked by the caller).
    ///
    /// `index` is the pair's position in the pairing being scanned. It lets a source that resolved every
    /// pair's books once (the server's live books do, per catalog) answer without hashing a key; the
    /// default ignores it, looks the books up with [`BookSource::book`] and summarises them on the spot.
    fn pair_books(&self, index: usize, pair: &MarketPair<'_>) -> [Option<BookView<'_>>; 3] {
        let _ = index;
        let vb = &pair.venue_b.market;
        let token = |t: &Option<String>| t.as_deref().and_then(|t| self.book(Exchange::VenueB, t));
        [
            self.book(Exchange::VenueA, &pair.venue_a.market.market_id),
            token(&vb.yes_token_id),
            token(&vb.no_token_id),
        ]
        .map(|b| b.map(BookView::of))
    }
}

/// A map keyed by `(exchange, ticker or token id)`. Each lookup builds the key, which costs one small
/// allocation; a live state with its own layout can implement [`BookSource`] directly.
impl<S: BuildHasher> BookSource for HashMap<(Exchange, String), BookSnapshot, S> {
    fn book(&self, exchange: Exchange, key: &str) -> Option<&BookSnapshot> {
        self.get(&(exchange, key.to_string()))
    }
}

/// The book staleness of the background scanner and the default of `/v1/arbitrage/current`.
pub const DEFAULT_MAX_STALENESS_SECONDS: i64 = 30;

/// The window tolerance of the background scanner and the default of `/v1/arbitrage/current`.
pub const DEFAULT_WINDOW_TOLERANCE_SECONDS: i64 = 60;

/// Parameters of one scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanParams {
    /// The time the scan is for: staleness, expiry and the opportunities' `timestamp`.
    pub now: Timestamp,
    /// Minimum net edge per contract (`min_net_cents`; 0 for the history scanner). Inclusive. Parse the
    /// query value with [`MicroUsd::parse_cents_ceil`].
    pub min_net: MicroUsd,
    /// Only window pairs of this interval.
    pub interval_code: Option<IntervalCode>,
    /// Books older than this relative to `now` drop their pair (default [`DEFAULT_MAX_STALENESS_SECONDS`]).
    pub max_staleness_seconds: i64,
    /// Maximum start/end skew when pairing windows (default [`DEFAULT_WINDOW_TOLERANCE_SECONDS`]).
    pub window_tolerance_seconds: i64,
    /// Attach the top ask levels per leg (`orderbook=true`).
    pub include_orderbook: bool,
    /// venue_b's taker rate per category (the operator's `venue_b_fee_rate`; default 0.07 everywhere).
    pub fees: FeeModel,
}

impl ScanParams {
    /// The spec defaults at `now`: `min_net_cents` 0, all intervals, staleness 30 s, tolerance 60 s, no
    /// orderbook, the spec's fee rates.
    pub fn new(now: Timestamp) -> Self {
        ScanParams {
            now,
            min_net: MicroUsd::ZERO,
            interval_code: None,
            max_staleness_seconds: DEFAULT_MAX_STALENESS_SECONDS,
            window_tolerance_seconds: DEFAULT_WINDOW_TOLERANCE_SECONDS,
            include_orderbook: false,
            fees: FeeModel::SPEC,
        }
    }
}

/// Pairs the catalog ([`pair_markets`]) and scans the pairs ([`scan_pairs`]).
pub fn scan<B: BookSource + ?Sized>(
    listings: &[Listing],
    overrides: &[PairOverride],
    books: &B,
    params: &ScanParams,
) -> Vec<Opportunity> {
    let pairs = pair_markets(listings, overrides, params.window_tolerance_seconds);
    scan_pairs(&pairs, books, params)
}

/// Scans already-formed pairs (for a caller that pairs once and scans the same listings several times);
/// `params.window_tolerance_seconds` is not used here, the pairing already applied its own.
pub fn scan_pairs<B: BookSource + ?Sized>(
    pairs: &[MarketPair<'_>],
    books: &B,
    params: &ScanParams,
) -> Vec<Opportunity> {
    let out: Vec<Opportunity> = pairs
        .iter()
        .enumerate()
        .filter_map(|(i, p)| scan_one(i, p, books, params))
        .collect();
    sort_opportunities(out)
}

/// Scans one pair: the pricing both [`scan_pairs`] (the full pass, `/v1/arbitrage/current`) and the
/// scanner's re-pricing of the pairs of a changed book go through, so they cannot disagree. `index` is the
/// pair's position in its pairing (see [`BookSource::pair_books`]). `None` when the pair is filtered out
/// (interval, expiry), a book is missing or stale, or no direction reaches the threshold.
pub fn scan_one<B: BookSource + ?Sized>(
    index: usize,
    pair: &MarketPair<'_>,
    books: &B,
    params: &ScanParams,
) -> Option<Opportunity> {
    if params.interval_code.is_some() && pair.interval_code() != params.interval_code {
        return None;
    }
    if pair.is_expired(params.now) {
        return None;
    }
    let books = PairBooks::lookup(index, pair, books, params.now, params.max_staleness_seconds)?;
    opportunity(pair, &books, params)
}

/// The scan's order: net edge descending, then `event_id` (ROI orders like net, see
/// [`super::best_direction`]).
///
/// The positions are sorted and each opportunity then moved once: an opportunity is several hundred bytes,
/// and sorting them in place moved each one about log₂(n) times (a third of a 10,000-pair pass with 1,000
/// opportunities).
pub fn sort_opportunities(opps: Vec<Opportunity>) -> Vec<Opportunity> {
    let mut order: Vec<usize> = (0..opps.len()).collect();
    order.sort_by(|&x, &y| {
        let (x, y) = (&opps[x], &opps[y]);
        y.net.cmp(&x.net).then_with(|| x.event_id.cmp(&y.event_id))
    });
    let mut slots: Vec<Option<Opportunity>> = opps.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Whether a book is fresh at `now`: at most `max_staleness_seconds` old (inclusive). A book time-stamped
/// after `now` (clock skew between the venue and us) counts as fresh.
pub fn is_fresh(book: &BookSnapshot, now: Timestamp, max_staleness_seconds: i64) -> bool {
    now.millis().saturating_sub(book.timestamp.millis()) <= max_staleness_seconds.saturating_mul(1000)
}

/// The three books of a pair.
pub(crate) struct PairBooks<'b> {
    pub(crate) venue_a: Option<BookView<'b>>,
    pub(crate) venue_b_yes: Option<BookView<'b>>,
    pub(crate) venue_b_no: Option<BookView<'b>>,
}

impl<'b> PairBooks<'b> {
    /// Each book of the pair that exists and is fresh; stale or missing books are `None`.
    pub(crate) fn partial<B: BookSource + ?Sized>(
        index: usize,
        pair: &MarketPair<'_>,
        books: &'b B,
        now: Timestamp,
        max_staleness_seconds: i64,
    ) -> PairBooks<'b> {
        let [a, yes, no] = books
            .pair_books(index, pair)
            .map(|v| v.filter(|v| is_fresh(v.book, now, max_staleness_seconds)));
        PairBooks {
            venue_a: a,
            venue_b_yes: yes,
            venue_b_no: no,
        }
    }

    /// All three books, fresh, or `None`: the pair is dropped.
    fn lookup<B: BookSource + ?Sized>(
        index: usize,
        pair: &MarketPair<'_>,
        books: &'b B,
        now: Timestamp,
        max_staleness_seconds: i64,
    ) -> Option<PairBooks<'b>> {
        let p = PairBooks::partial(index, pair, books, now, max_staleness_seconds);
        (p.venue_a.is_some() && p.venue_b_yes.is_some() && p.venue_b_no.is_some()).then_some(p)
    }

    pub(crate) fn venue_a_ladders(&self) -> AskLadders {
        self.venue_a
            .map(|v| AskLadders::from_venue_a(v.book))
            .unwrap_or_default()
    }

    pub(crate) fn venue_b_ladders(&self) -> AskLadders {
        // Cleaned straight from the books' ladders, without an intermediate copy.
        let asks = |b: Option<BookView<'b>>| b.into_iter().flat_map(|b| b.book.asks.iter().copied());
        AskLadders::new(asks(self.venue_b_yes), asks(self.venue_b_no))
    }
}

/// Prices one pair with its books; `None` when no direction reaches the threshold.
fn opportunity(pair: &MarketPair<'_>, books: &PairBooks<'_>, params: &ScanParams) -> Option<Opportunity> {
    let threshold = params.min_net.max(MicroUsd::ZERO);
    let fees = params.fees.for_category(pair.fee_category());
    // Top of book first, without building ladders: most pairs cost more than 1 dollar after fees and stop
    // here. The same prices and tie rule as `best_direction` over the ladders, so the outcome is identical.
    if let (Some(va), Some(by), Some(bn)) = (books.venue_a, books.venue_b_yes, books.venue_b_no) {
        let (_, edge) = best_direction_top(TopAsks::of_tops(&va.top, &by.top, &bn.top), fees)?;
        if edge.net < threshold || edge.gross <= MicroUsd::ZERO {
            return None;
        }
    }
    let a = books.venue_a_ladders();
    let b = books.venue_b_ladders();
    let (direction, edge) = best_direction(&a, &b, fees)?;
    if edge.net < threshold || edge.gross <= MicroUsd::ZERO {
        return None;
    }
    let ladders = |ex: Exchange| if ex == Exchange::VenueA { &a } else { &b };
    let yes_venue = direction.buy_yes_market();
    let no_venue = direction.buy_no_market();
    let yes_asks = ladders(yes_venue).side(Outcome::Yes);
    let no_asks = ladders(no_venue).side(Outcome::No);
    let depth = walk(yes_venue, yes_asks, no_venue, no_asks, threshold, fees);

    let am = &pair.venue_a.market;
    let bm = &pair.venue_b.market;
    let yes_token = bm.yes_token_id.clone().unwrap_or_default();
    let no_token = bm.no_token_id.clone().unwrap_or_default();
    // venue_a trades both outcomes on one ticker (YES = bid, NO = ask side of its YES book); venue_b buys
    // the outcome's own token. See `BookSide`.
    let leg_fee = |outcome: Outcome| {
        if outcome == Outcome::Yes {
            edge.yes_fee
        } else {
            edge.no_fee
        }
    };
    let leg = |outcome: Outcome| match (direction.venue_of(outcome), outcome) {
        (Exchange::VenueA, side) => ExecutionLeg {
            market: Exchange::VenueA,
            identifier: am.market_id.clone(),
            book_side: if side == Outcome::Yes {
                BookSide::Bid
            } else {
                BookSide::Ask
            },
            fee: leg_fee(outcome),
        },
        (Exchange::VenueB, side) => ExecutionLeg {
            market: Exchange::VenueB,
            identifier: if side == Outcome::Yes {
                yes_token.clone()
            } else {
                no_token.clone()
            },
            book_side: BookSide::Bid,
            fee: leg_fee(outcome),
        },
    };
    let top = |levels: &[Level]| levels.iter().take(ORDERBOOK_LEVELS).copied().collect::<Vec<_>>();
    let orderbook = params.include_orderbook.then(|| OrderbookDepth {
        yes: LegAsks {
            market: yes_venue,
            asks: top(yes_asks),
        },
        no: LegAsks {
            market: no_venue,
            asks: top(no_asks),
        },
        walk: depth.fills.clone(),
    });

    Some(Opportunity {
        event_id: pair.event_id.to_string(),
        event_title: pair.event_title(),
        outcome_key: pair.outcome_key().to_string(),
        label: pair.label(),
        timestamp: params.now,
        market_type: MarketType::Binary,
        category: pair.category(),
        interval_code: pair.interval_code(),
        resolution_time: pair.resolution_time(),
        venue_a_event_ticker: Some(am.event_id.clone()).filter(|s| !s.is_empty()),
        venue_b_event_slug: pair.venue_b.event_slug.clone(),
        settlement_basis: pair.settlement_basis(),
        venue_a: VenueALeg {
            market_ticker: am.market_id.clone(),
            yes_ask: a.best(Outcome::Yes),
            no_ask: a.best(Outcome::No),
            volume: am.volume,
            volume_24h: am.volume_24h,
            open_interest: am.open_interest,
        },
        venue_b: VenueBLeg {
            condition_id: bm.market_id.clone(),
            yes_token_id: yes_token.clone(),
            no_token_id: no_token.clone(),
            yes_ask: b.best(Outcome::Yes),
            no_ask: b.best(Outcome::No),
            volume: bm.volume,
            liquidity: bm.liquidity,
        },
        buy_yes_market: yes_venue,
        buy_no_market: no_venue,
        gross: edge.gross,
        fee: edge.fee,
        net: edge.net,
        roi: edge.roi,
        executable_size: depth.executable_size,
        max_profit: depth.max_profit,
        peak_net: edge.net,
        yes_leg: leg(Outcome::Yes),
        no_leg: leg(Outcome::No),
        orderbook,
        fee_model: fees.label(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{
        Amount, Price,
        arb::{
            Roi,
            pairing::tests::{T0, game, window},
            pricing::tests::lvl,
        },
    };

    pub(crate) use crate::arb::fixtures::{Books, a_book, b_book, fixture, insert};

    #[test]
    fn scans_the_worked_example() {
        let now = Timestamp(T0 + 60_000);
        let (listings, books) = fixture(now.millis());
        let mut params = ScanParams::new(now);
        params.include_orderbook = true;
        let opps = scan(&listings, &[], &books, &params);
        assert_eq!(opps.len(), 1);
        let o = &opps[0];
        assert_eq!(o.event_id, "BTC-15M-2026-11-21T19:00Z");
        assert_eq!(o.outcome_key, "up");
        assert_eq!(
            (o.buy_yes_market, o.buy_no_market),
            (Exchange::VenueA, Exchange::VenueB)
        );
        assert_eq!(
            (o.gross, o.fee, o.net, o.roi),
            (MicroUsd(50_000), MicroUsd(37_500), MicroUsd(12_500), Roi(127))
        );
        assert_eq!(o.peak_net, o.net);
        // Depth: 10 @ (0.45 + 0.50) net 1.25 c; then 0.46 + 0.50 × 2 net 0.25 c; then 0.46 + 0.51 loses.
        assert_eq!(o.executable_size, Amount::from_units(12));
        assert_eq!(o.max_profit, MicroUsd::from_cents(13));
        assert_eq!(o.venue_a.yes_ask, Some(Price(450_000)));
        assert_eq!(o.venue_a.no_ask, Some(Price(560_000)));
        assert_eq!(
            (o.venue_b.yes_ask, o.venue_b.no_ask),
            (Some(Price(400_000)), Some(Price(500_000)))
        );
        assert_eq!(o.venue_b.yes_token_id, "0xb1-up");
        assert_eq!(o.venue_a_event_ticker.as_deref(), Some("EV-KXBTC15M-26NOV211415-15"));
        assert_eq!(o.venue_b_event_slug.as_deref(), Some("btc-updown-15m-1795287602"));
        assert_eq!(
            o.yes_leg,
            ExecutionLeg {
                market: Exchange::VenueA,
                identifier: "KXBTC15M-26NOV211415-15".into(),
                book_side: BookSide::Bid,
                // ceil(7 × 0.45 × 0.55) = 2 c.
                fee: MicroUsd::from_cents(2),
            }
        );
        assert_eq!(
            o.no_leg,
            ExecutionLeg {
                market: Exchange::VenueB,
                identifier: "0xb1-down".into(),
                book_side: BookSide::Bid,
                // 0.07 × 0.50 × 0.50 = 1.75 c.
                fee: MicroUsd(17_500),
            }
        );
        assert_eq!(o.yes_leg.fee + o.no_leg.fee, o.fee);
        let ob = o.orderbook.as_ref().unwrap();
        // The walk behind the size and the profit, chunk by chunk.
        let walk: Vec<_> = ob
            .walk
            .iter()
            .map(|f| (f.yes_price, f.no_price, f.size, f.net))
            .collect();
        assert_eq!(
            walk,
            vec![
                (Price(450_000), Price(500_000), Amount::from_units(10), MicroUsd(12_500)),
                (Price(460_000), Price(500_000), Amount::from_units(2), MicroUsd(2_500)),
            ]
        );
        assert_eq!(ob.yes.market, Exchange::VenueA);
        assert_eq!(ob.yes.asks, vec![lvl(4500, 10), lvl(4600, 5)]);
        assert_eq!(ob.no.asks, vec![lvl(5000, 12), lvl(5100, 100)]);
        assert_eq!(o.timestamp, now);
        assert_eq!(o.resolution_time, Some(Timestamp(T0 + 902_000)));

        // Without the flag there is no orderbook.
        let opps = scan(&listings, &[], &books, &ScanParams::new(now));
        assert!(opps[0].orderbook.is_none());
    }

    /// The matched game both fee tests price: YES on venue_b 0.40 + NO on venue_a 1 − 0.58 = 0.42.
    fn lakers_game(listings: &mut Vec<Listing>, books: &mut Books, now: Timestamp) {
        listings.push(game(
            Exchange::VenueA,
            "KXG-LAL",
            "Lakers at Celtics",
            Some("Lakers"),
            0,
        ));
        listings.push(game(Exchange::VenueB, "0xg", "Lakers vs. Celtics", None, 0));
        insert(
            books,
            a_book("KXG-LAL", now.millis(), vec![lvl(5800, 10)], vec![lvl(3000, 10)]),
        );
        insert(books, b_book("0xg", "0xg-yes", now.millis(), vec![lvl(4000, 3)]));
        insert(books, b_book("0xg", "0xg-no", now.millis(), vec![lvl(9000, 3)]));
    }

    #[test]
    fn venue_b_fees_follow_the_category_of_the_venue_b_market() {
        let now = Timestamp(T0 + 60_000);
        let (mut listings, mut books) = fixture(now.millis());
        // The matched game of `sorted_by_net_and_no_losing_pairs`: YES on venue_b 0.40 + NO on venue_a 0.42.
        lakers_game(&mut listings, &mut books, now);
        let by_id = |opps: &[Opportunity], id: &str| opps.iter().find(|o| o.event_id == id).cloned().unwrap();

        // Spec rates: the window nets 1.25 c, the game 14.32 c (fee 1.68 + 2 c).
        let opps = scan(&listings, &[], &books, &ScanParams::new(now));
        let (w, g) = (by_id(&opps, "BTC-15M-2026-11-21T19:00Z"), by_id(&opps, "PAIR-KXG-LAL"));
        assert_eq!((w.fee, w.net), (MicroUsd(37_500), MicroUsd(12_500)));
        assert_eq!(w.fee_model, "venue_a:0.07;venue_b:crypto=0.07");
        assert_eq!((g.fee, g.net), (MicroUsd(36_800), MicroUsd(143_200)));
        // The venue_b market stores "Sports"; the rate is looked up without regard to case.
        assert_eq!(g.fee_model, "venue_a:0.07;venue_b:sports=0.07");

        // Sports at 0.02: the game's venue_b leg costs 0.02 × 0.4 × 0.6 = 0.0048 $ = 0.48 c; the window
        // (crypto) is unchanged.
        let mut params = ScanParams::new(now);
        params.fees = "sports=0.02".parse().unwrap();
        let opps = scan(&listings, &[], &books, &params);
        let (w2, g2) = (by_id(&opps, "BTC-15M-2026-11-21T19:00Z"), by_id(&opps, "PAIR-KXG-LAL"));
        assert_eq!(w2, w);
        assert_eq!(
            (g2.gross, g2.fee, g2.net),
            (g.gross, MicroUsd(24_800), MicroUsd(155_200))
        );
        assert_eq!(g2.roi, Roi::from_ratio(MicroUsd(155_200), MicroUsd(844_800)));
        assert_eq!(g2.fee_model, "venue_a:0.07;venue_b:sports=0.02");
        assert_eq!(g2.category, crate::Category::Sports);

        // Crypto at 0: the window's venue_b leg is free; net 5 − 2 = 3 c, and the depth walk goes deeper
        // (0.46 + 0.50 then 0.46 + 0.51 now pay: 2 c and 1 c).
        params.fees = "crypto=0".parse().unwrap();
        let w3 = by_id(&scan(&listings, &[], &books, &params), "BTC-15M-2026-11-21T19:00Z");
        assert_eq!((w3.fee, w3.net), (MicroUsd::from_cents(2), MicroUsd::from_cents(3)));
        assert_eq!(w3.executable_size, Amount::from_units(15));
        assert_eq!(w3.fee_model, "venue_a:0.07;venue_b:crypto=0");
    }

    #[test]
    fn min_net_is_inclusive_and_filters() {
        let now = Timestamp(T0 + 60_000);
        let (listings, books) = fixture(now.millis());
        let mut params = ScanParams::new(now);
        params.min_net = MicroUsd::parse_cents_ceil("1.25").unwrap();
        let o = scan(&listings, &[], &books, &params);
        assert_eq!(o.len(), 1);
        // At 1.25 c only the first chunk qualifies.
        assert_eq!(o[0].executable_size, Amount::from_units(10));
        params.min_net = MicroUsd::parse_cents_ceil("1.2501").unwrap();
        assert!(scan(&listings, &[], &books, &params).is_empty());
    }

    #[test]
    fn stale_books_drop_the_pair_at_the_boundary() {
        let now = Timestamp(T0 + 100_000);
        for (age_ms, kept) in [(0, true), (30_000, true), (30_001, false), (-5_000, true)] {
            for which in 0..3 {
                let (listings, mut books) = fixture(now.millis());
                let key = [
                    (Exchange::VenueA, "KXBTC15M-26NOV211415-15"),
                    (Exchange::VenueB, "0xb1-up"),
                    (Exchange::VenueB, "0xb1-down"),
                ][which];
                books.get_mut(&(key.0, key.1.to_string())).unwrap().timestamp = Timestamp(now.millis() - age_ms);
                let n = scan(&listings, &[], &books, &ScanParams::new(now)).len();
                assert_eq!(n == 1, kept, "book {which} aged {age_ms} ms");
            }
        }
        // A missing book drops the pair too.
        let (listings, mut books) = fixture(now.millis());
        books.remove(&(Exchange::VenueB, "0xb1-down".to_string()));
        assert!(scan(&listings, &[], &books, &ScanParams::new(now)).is_empty());
    }

    #[test]
    fn interval_filter_and_expiry() {
        let now = Timestamp(T0 + 60_000);
        let (listings, books) = fixture(now.millis());
        let mut params = ScanParams::new(now);
        params.interval_code = Some(IntervalCode::M5);
        assert!(scan(&listings, &[], &books, &params).is_empty());
        params.interval_code = Some(IntervalCode::M15);
        assert_eq!(scan(&listings, &[], &books, &params).len(), 1);
        // At venue_a's window end the pair is gone, even with fresh books.
        let end = Timestamp(T0 + 900_000);
        let (listings, books) = fixture(end.millis());
        assert!(scan(&listings, &[], &books, &ScanParams::new(end)).is_empty());
        let before = Timestamp(end.millis() - 1);
        assert_eq!(scan(&listings, &[], &books, &ScanParams::new(before)).len(), 1);
    }

    #[test]
    fn sorted_by_net_and_no_losing_pairs() {
        let now = Timestamp(T0 + 60_000);
        let (mut listings, mut books) = fixture(now.millis());
        // A matched game: YES on venue_b 0.40 + NO on venue_a 1 − 0.58 = 0.42 → gross 18 c, fee 1.68 + 2 → 14.32 c.
        lakers_game(&mut listings, &mut books, now);
        // A window pair that loses after fees: 0.49 + 0.50.
        listings.push(window(
            Exchange::VenueA,
            "KXBTC15M-LOSE",
            IntervalCode::M15,
            900_000,
            900_000,
        ));
        listings.push(window(Exchange::VenueB, "0xlose", IntervalCode::M15, 900_000, 900_000));
        insert(
            &mut books,
            a_book("KXBTC15M-LOSE", now.millis(), vec![], vec![lvl(5100, 10)]),
        );
        insert(
            &mut books,
            b_book("0xlose", "0xlose-up", now.millis(), vec![lvl(9900, 1)]),
        );
        insert(
            &mut books,
            b_book("0xlose", "0xlose-down", now.millis(), vec![lvl(5000, 10)]),
        );

        let opps = scan(&listings, &[], &books, &ScanParams::new(now));
        let ids: Vec<_> = opps.iter().map(|o| o.event_id.as_str()).collect();
        assert_eq!(ids, vec!["PAIR-KXG-LAL", "BTC-15M-2026-11-21T19:00Z"]);
        let g = &opps[0];
        assert_eq!(
            (g.buy_yes_market, g.buy_no_market),
            (Exchange::VenueB, Exchange::VenueA)
        );
        assert_eq!(g.net, MicroUsd(143_200));
        assert_eq!(g.outcome_key, "yes");
        assert_eq!(g.interval_code, None);
        assert_eq!(g.no_leg.book_side, BookSide::Ask);
        assert_eq!(g.yes_leg.identifier, "0xg-yes");
        assert_eq!(g.executable_size, Amount::from_units(3));
        assert!(opps.windows(2).all(|w| w[0].net >= w[1].net));
    }
}
