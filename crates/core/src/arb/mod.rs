//! Fee-adjusted cross-venue arbitrage: the pure core behind `/v1/arbitrage/current`, the price-spread route,
//! the recorded history and the `arbitrage.opportunity` webhook (spec 2.9–2.12, 4.3, 5.3; contracts §6).
//!
//! No I/O, no clock, no async: every function takes `now`, the catalog and the books as arguments, so the
//! HTTP handler and the background scanner compute exactly the same thing, and tests can pin every input.
//!
//! # Layout
//! - [`units`]: [`MicroUsd`] (exact signed micro-dollars) and [`Roi`] (basis points), with the number
//!   helpers the server renders with; no `f64` arithmetic anywhere else.
//! - [`fees`]: the two venues' taker fee per contract, in integers; [`FeeModel`] (venue_b's rate per
//!   category) and the `fee_model` label ([`PairFees::label`]).
//! - [`pricing`]: ask ladders per venue ([`AskLadders`]), the per-contract [`Edge`] of a pair, the choice
//!   of [`Direction`], and the top-of-book summary of a book ([`BookTop`]).
//! - [`depth`]: the depth walk (`executable_size`, `max_profit_dollars`).
//! - [`execution`]: what a taker order for a size of one outcome pays against one ask ladder
//!   (`/v1/historical/{venue}/execution-price`).
//! - [`listing`]: the markets the pairing sees ([`Listing`]) and how each is classified ([`ListingKind`]).
//! - [`pairing`]: which markets pair ([`PairOverride`], [`pair_markets`]) and their canonical ids.
//! - [`scan`](mod@scan): the scanner ([`scan()`], [`scan_pairs`], [`scan_one`], [`ScanParams`],
//!   [`BookSource`]); every path prices a pair through [`scan_one`].
//! - [`opportunity`]: the [`Opportunity`] object.
//! - [`episode`]: [`EpisodeBook`] (history episodes) and [`Cooldown`] (webhook publication).
//! - [`changes`]: [`Visible`], which turns each pricing into opportunity changes (opened, changed,
//!   closed) for the live stream.
//! - [`mask`]: preview masking of the history ([`mask_page`], [`Masked`]).
//! - [`spread`]: price-spread rows ([`price_spreads`]).
//!
//! # How the server uses it
//! ```text
//! /v1/arbitrage/current   listings = catalog markets of both venues as Listing::new(market, event title, slug)
//!                         scan(&listings, &overrides, &books, &params) → take(limit) → server renders
//! background scanner      every tick, over every pair: opps = scan_pairs(&pairs, &books, &ScanParams { min_net: 0, .. })
//!                         per book change, over the pairs of that book: scan_one(i, &pair, ..) each, then
//!                         sort_opportunities
//!                         changes = episodes.observe(&opps, now) → store (batched): insert Opened, update Extended
//!                         cooldown.select(&opps, webhook_min_net, now) → publish (server renders)
//!                         visible.update(&priced_pairs, &episodes) → opened / changed / closed (live stream)
//! /v1/arbitrage/history   store filter + page → mask_page(&page, offset, preview) → server renders
//! /current/difference     price_spreads(&listings, &overrides, &books, &SpreadParams) → server renders
//! ```
//! Pairing is cheap (linear in the catalog plus the few window candidates per interval), so it runs inside
//! every scan; [`MarketPair`] borrows the listings, which keeps it from being cached apart from them.

pub mod changes;
pub mod depth;
pub mod episode;
pub mod execution;
pub mod fees;
#[cfg(any(test, feature = "testing"))]
pub mod fixtures;
pub mod listing;
pub mod mask;
pub mod opportunity;
pub mod pairing;
pub mod pricing;
pub mod scan;
pub mod spread;
pub mod units;

pub use changes::{ChangeKind, OpportunityChange, PairId, Visible, pair_id};
pub use depth::{Depth, Fill, walk};
pub use episode::{
    Cooldown, DEFAULT_COOLDOWN_SECONDS, EPISODE_GAP_SECONDS, Episode, EpisodeBook, EpisodeChange, EpisodeKey,
};
pub use execution::{Execution, execute};
pub use fees::{FeeModel, FeeRate, PairFees, taker_fee, venue_a_fee, venue_b_fee, venue_b_fee_at};
pub use mask::{Masked, is_locked, mask_page};
pub use opportunity::{
    BookSide, ExecutionLeg, LegAsks, MarketType, ORDERBOOK_LEVELS, Opportunity, OrderbookDepth, VenueALeg, VenueBLeg,
};
pub use pairing::{
    Listing, ListingKind, MarketPair, MatchKey, MatchSource, PairKind, PairOverride, SettlementBasis, SkipReason,
    normalise_source, pair_markets, window_event_id, yes_outcome,
};
pub use pricing::{AskLadders, BookTop, Direction, Edge, TopAsks, best_direction, evaluate, price_pair};
pub use scan::{BookSource, BookView, ScanParams, is_fresh, scan, scan_one, scan_pairs, sort_opportunities};
pub use spread::{SpreadParams, SpreadRow, price_spreads, spreads_for_pairs};
pub use units::{MICROS_PER_CENT, MicroUsd, Roi};
