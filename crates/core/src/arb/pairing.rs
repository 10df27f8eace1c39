//! Pairing markets across venues: which venue_a market and which venue_b market ask the same question.
//!
//! Three sources of pairs, applied in this order; a market joins at most one pair:
//!
//! 1. **Operator overrides** ([`PairOverride`]): an explicit `(venue_a market_id, venue_b market_id)` list.
//!    They win over everything and pair any two active markets, whatever their kind. Both markets must ask
//!    the question the same way round (YES on one is YES on the other).
//! 2. **Up/down windows** ([`ListingKind::UpDown`]): same asset, same `interval_code`, and window start and
//!    end each within `window_tolerance_seconds` (inclusive: a skew equal to the tolerance pairs). When several
//!    candidates qualify (a large tolerance against 5-minute windows), the closest pairs are taken first
//!    (smallest `|Δstart| + |Δend|`, then market ids), greedily. A venue listing two windows with identical
//!    asset, interval, start and end is ambiguous (a strike ladder, not an up/down market) and neither is
//!    paired.
//! 3. **Automatic game matcher** ([`ListingKind::Game`]): markets whose [`MatchKey`] (normalised team names,
//!    the team YES backs, the day: of the window, else the game date in the venue's ids) is equal on both
//!    venues. A key that appears twice on one venue is
//!    ambiguous and not matched. The matcher only covers titles written `A vs B`, `A vs. B`, `A v B`,
//!    `A @ B` or `A at B`; different spellings of a team ("LA Lakers" / "Lakers") do not match — that is what
//!    overrides are for.
//!
//! A formed pair may still be left out of the scan ([`MarketPair::skip_reason`]): the operator rejected it, or
//! its YES outcomes provably name different sides ([`MarketPair::yes_outcomes_differ`]). What the legs settle
//! on is summarised by [`SettlementBasis`]. The server applies both; [`pair_markets`] itself forms every pair.
//!
//! Canonical identifiers (contracts §6):
//! - up/down window: `event_id` = `{ASSET}-{INTERVAL}-{start}Z`, e.g. `BTC-15M-2026-11-21T19:00Z`, where
//!   `start` is venue_a's window start rounded to the nearest UTC minute (so a venue_a window listed a few
//!   seconds off the grid still gets the grid minute) and `INTERVAL` is the interval code upper-cased;
//!   `outcome_key` = `up` (YES is "up" on both venues).
//! - matched pair: `event_id` = `PAIR-{venue_a market_id}` (venue_a tickers are unique and stable, and a
//!   venue_a market is in at most one pair); `outcome_key` = `yes` (the pair's YES side as the venue_a market
//!   states it).

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashMap, HashSet},
};

use serde::{Deserialize, Serialize};

use crate::{Category, Exchange, IntervalCode, Status, Timestamp};

pub use super::listing::{Listing, ListingKind, MatchKey, normalise_team};

/// An operator override: pair these two markets regardless of what the matchers say.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PairOverride {
    /// venue_a market ticker.
    pub venue_a_market_id: String,
    /// venue_b condition id.
    pub venue_b_market_id: String,
}

/// Why two markets are paired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PairKind {
    /// Two up/down windows.
    Window {
        /// Upper-case asset symbol.
        asset: String,
        /// The shared interval.
        interval_code: IntervalCode,
    },
    /// Two matched binary markets.
    Matched {
        /// Whether the pair came from an operator override or the automatic matcher.
        by: MatchSource,
    },
}

/// Source of a matched pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchSource {
    /// The operator's `pairs` list.
    Override,
    /// The automatic game matcher.
    Auto,
}

/// A venue_a market and a venue_b market that ask the same question, with the canonical ids of the pair.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketPair<'a> {
    /// The venue_a side.
    pub venue_a: &'a Listing,
    /// The venue_b side.
    pub venue_b: &'a Listing,
    /// Why they are paired. Borrowed when the pair comes from a cached pairing (the scanner re-reads the same
    /// pairs every pass and should not copy them).
    pub kind: Cow<'a, PairKind>,
    /// Canonical event id (see the module docs).
    pub event_id: Cow<'a, str>,
}

impl MarketPair<'_> {
    /// `up` for windows, `yes` for matched pairs.
    pub fn outcome_key(&self) -> &'static str {
        match *self.kind {
            PairKind::Window { .. } => "up",
            PairKind::Matched { .. } => "yes",
        }
    }

    /// The interval of a window pair.
    pub fn interval_code(&self) -> Option<IntervalCode> {
        match *self.kind {
            PairKind::Window { interval_code, .. } => Some(interval_code),
            PairKind::Matched { .. } => None,
        }
    }

    /// Category for the history's `category` filter: `crypto` for windows; for matched pairs the venue_a
    /// market's category, else venue_b's, else `other`.
    pub fn category(&self) -> Category {
        match *self.kind {
            PairKind::Window { .. } => Category::Crypto,
            PairKind::Matched { .. } => [&self.venue_a.market.category, &self.venue_b.market.category]
                .into_iter()
                .flatten()
                .find_map(|c| c.to_ascii_lowercase().parse().ok())
                .unwrap_or(Category::Other),
        }
    }

    /// The category whose venue_b fee rate prices this pair ([`super::FeeModel`]): the venue_b market's own
    /// category as stored (case-insensitive), since the fee is venue_b's; when it has none the venue knows,
    /// the pair's [`MarketPair::category`] (`crypto` for windows). Compared in place: the scanner asks this
    /// of every pair on every pass.
    pub fn fee_category(&self) -> Category {
        self.venue_b
            .market
            .category
            .as_deref()
            .and_then(super::fees::stored_category)
            .unwrap_or_else(|| self.category())
    }

    /// Settlement time: the later of the two markets' window ends (the pair has paid out once both have).
    pub fn resolution_time(&self) -> Option<Timestamp> {
        self.venue_a.market.window_end.max(self.venue_b.market.window_end)
    }

    /// Whether a window pair can no longer be traded on both venues at `now`: the earlier window end has
    /// passed (venue_a closes trading at its window end). Matched pairs never expire here; their markets leave
    /// the catalog when the venues close them.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        match *self.kind {
            PairKind::Window { .. } => {
                let ends = [self.venue_a.market.window_end, self.venue_b.market.window_end];
                ends.into_iter().flatten().min().is_some_and(|end| now >= end)
            }
            PairKind::Matched { .. } => false,
        }
    }

    /// Human-readable title: for windows `Bitcoin Up or Down 15m - 2026-11-21 19:00-19:15 UTC` (venue_a's
    /// window); for matched pairs the venue_a event title, else venue_b's, else the venue_a question.
    pub fn event_title(&self) -> String {
        match &*self.kind {
            PairKind::Window { asset, interval_code } => {
                let name = if asset == "BTC" { "Bitcoin" } else { asset.as_str() };
                format!("{name} Up or Down {interval_code} - {}", self.window_span())
            }
            PairKind::Matched { .. } => [&self.venue_a.event_title, &self.venue_b.event_title]
                .into_iter()
                .find(|t| !t.trim().is_empty())
                .cloned()
                .unwrap_or_else(|| self.venue_a.market.question.clone()),
        }
    }

    /// Short display label: `BTC 15m Up 19:00-19:15 UTC` for windows; the venue_a market title (else its
    /// question) for matched pairs.
    pub fn label(&self) -> String {
        match &*self.kind {
            PairKind::Window { asset, interval_code } => {
                format!("{asset} {interval_code} Up {}", self.window_span_short())
            }
            PairKind::Matched { .. } => self
                .venue_a
                .market
                .title
                .clone()
                .unwrap_or_else(|| self.venue_a.market.question.clone()),
        }
    }

    /// The window of a window pair as venue_a lists it (start, end), the one its label and title name; `None`
    /// for matched pairs, which are not windows.
    pub fn window(&self) -> Option<(Timestamp, Timestamp)> {
        match *self.kind {
            PairKind::Window { .. } => Some(self.window_bounds()),
            PairKind::Matched { .. } => None,
        }
    }

    fn window_bounds(&self) -> (Timestamp, Timestamp) {
        let m = &self.venue_a.market;
        let start = m.window_start.unwrap_or_default();
        (start, m.window_end.unwrap_or(start))
    }

    /// `2026-11-21 19:00-19:15 UTC`, or `2026-11-21 19:00 - 2026-11-22 19:00 UTC` across days.
    fn window_span(&self) -> String {
        let (s, e) = self.window_bounds();
        let (s, e) = (DateHm::of(s), DateHm::of(e));
        if s.same_day(e) {
            format!("{} {}-{} UTC", s.ymd(), s.hm(), e.hm())
        } else {
            format!("{} {} - {} {} UTC", s.ymd(), s.hm(), e.ymd(), e.hm())
        }
    }

    /// `19:00-19:15 UTC` within a day, `2026-11-21 19:00 UTC` (the start) across days.
    fn window_span_short(&self) -> String {
        let (s, e) = self.window_bounds();
        let (s, e) = (DateHm::of(s), DateHm::of(e));
        if s.same_day(e) {
            format!("{}-{} UTC", s.hm(), e.hm())
        } else {
            format!("{} {} UTC", s.ymd(), s.hm())
        }
    }
}

/// Why a formed pair is listed but not scanned (`skip_reason` of `/v1/arbitrage/pairs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The operator rejected the pair (`crossbook pairs reject`).
    Rejected,
    /// YES on one venue backs a different side than YES on the other, so buying YES on one and NO on the
    /// other is two bets on the same side, not a hedge: the "edge" would be a loss on one outcome.
    YesOutcomesDiffer,
}

impl SkipReason {
    /// `rejected` or `yes_outcomes_differ`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Rejected => "rejected",
            SkipReason::YesOutcomesDiffer => "yes_outcomes_differ",
        }
    }
}

/// Whether the two legs of a pair settle on the same facts, as far as the catalog can tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettlementBasis {
    /// Same window and the same resolution source (after [`normalise_source`]).
    Identical,
    /// Same window, resolution sources both stated and different: the legs may resolve differently.
    SameWindowDifferentSource,
    /// Anything else: a source not stated by a venue, or windows that differ.
    #[default]
    Unverified,
}

impl SettlementBasis {
    /// `identical`, `same_window_different_source` or `unverified`.
    pub fn as_str(self) -> &'static str {
        match self {
            SettlementBasis::Identical => "identical",
            SettlementBasis::SameWindowDifferentSource => "same_window_different_source",
            SettlementBasis::Unverified => "unverified",
        }
    }

    /// The basis of two legs: `sources` as the venues state them (`None` when a venue states none),
    /// `windows_match` from [`MarketPair::windows_match`].
    pub fn of(sources: [Option<&str>; 2], windows_match: bool) -> SettlementBasis {
        match sources {
            [Some(a), Some(b)] if windows_match => {
                if normalise_source(a) == normalise_source(b) {
                    SettlementBasis::Identical
                } else {
                    SettlementBasis::SameWindowDifferentSource
                }
            }
            _ => SettlementBasis::Unverified,
        }
    }
}

/// A resolution source as compared across venues: trimmed, lower-cased, inner whitespace runs as one
/// space, and trailing `/` dropped, so `https://X.com/Index/ ` and `https://x.com/index` are one source
/// (venues write the same URL with and without the slash). An empty source normalises to `""`.
pub fn normalise_source(s: &str) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    joined.trim_end_matches('/').to_string()
}

/// The side YES stands for on this listing, as far as the catalog tells: `Up` for an up/down window; for
/// a game the team YES backs (venue_a's `subtitle` as listed when it names a team, else the matcher's
/// normalised team); otherwise venue_a's `subtitle` when it has one, else `None` (a plain yes/no question).
pub fn yes_outcome(l: &Listing) -> Option<String> {
    match &l.kind {
        ListingKind::UpDown { .. } => Some("Up".to_string()),
        ListingKind::Game(key) => Some(
            l.market
                .subtitle
                .clone()
                .filter(|s| normalise_team(s) == key.yes_team)
                .unwrap_or_else(|| key.yes_team.clone()),
        ),
        ListingKind::Other => l
            .market
            .subtitle
            .clone()
            .filter(|s| l.market.exchange == Exchange::VenueA && !s.trim().is_empty()),
    }
}

impl MarketPair<'_> {
    /// `window` for window pairs, `matched` for matched pairs (the `kind` filter of `/v1/arbitrage/pairs`).
    pub fn kind_name(&self) -> &'static str {
        match *self.kind {
            PairKind::Window { .. } => "window",
            PairKind::Matched { .. } => "matched",
        }
    }

    /// How the pair was matched: `window` (up/down windows), `teams_date` (the game matcher) or `operator`
    /// (an override).
    pub fn match_source_name(&self) -> &'static str {
        match *self.kind {
            PairKind::Window { .. } => "window",
            PairKind::Matched { by: MatchSource::Auto } => "teams_date",
            PairKind::Matched {
                by: MatchSource::Override,
            } => "operator",
        }
    }

    /// Whether YES provably backs different sides on the two venues: both legs are games between the same two
    /// teams and YES backs a different team on each (only an override can form such a pair: the game matcher's
    /// key includes the YES team). Legs whose sides cannot be compared (plain yes/no questions, teams spelt
    /// differently) are not taken to differ; the operator who paired them vouched for them.
    pub fn yes_outcomes_differ(&self) -> bool {
        match (&self.venue_a.kind, &self.venue_b.kind) {
            (ListingKind::Game(a), ListingKind::Game(b)) => a.teams == b.teams && a.yes_team != b.yes_team,
            _ => false,
        }
    }

    /// Whether both legs state the same window: equal start and equal end, or neither states one (game
    /// markets, whose date the matcher compared). A window pair within the tolerance but off by a second
    /// does not match: its legs settle on different prices.
    pub fn windows_match(&self) -> bool {
        let (a, b) = (&self.venue_a.market, &self.venue_b.market);
        a.window_start == b.window_start && a.window_end == b.window_end
    }

    /// Whether the legs settle on the same facts, from their stated sources and windows.
    pub fn settlement_basis(&self) -> SettlementBasis {
        SettlementBasis::of(
            [self.venue_a.resolution_source(), self.venue_b.resolution_source()],
            self.windows_match(),
        )
    }

    /// Why the pair is not scanned, if it is not: rejected by the operator (`is_rejected` answers for the
    /// pair's two market ids), else its YES outcomes differ.
    pub fn skip_reason(&self, is_rejected: impl Fn(&PairOverride) -> bool) -> Option<SkipReason> {
        let id = PairOverride {
            venue_a_market_id: self.venue_a.market.market_id.clone(),
            venue_b_market_id: self.venue_b.market.market_id.clone(),
        };
        if is_rejected(&id) {
            Some(SkipReason::Rejected)
        } else if self.yes_outcomes_differ() {
            Some(SkipReason::YesOutcomesDiffer)
        } else {
            None
        }
    }
}

/// The UTC date and minute of a timestamp, written straight into the title: the scanner builds a title
/// and a label for every opportunity of every pass, and going through ISO strings cost four formatted
/// strings per opportunity.
#[derive(Debug, Clone, Copy)]
struct DateHm {
    year: i32,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
}

impl DateHm {
    fn of(t: Timestamp) -> Self {
        let dt = t.to_datetime();
        DateHm {
            year: dt.year(),
            month: u8::from(dt.month()),
            day: dt.day(),
            hour: dt.hour(),
            minute: dt.minute(),
        }
    }

    fn same_day(self, other: DateHm) -> bool {
        (self.year, self.month, self.day) == (other.year, other.month, other.day)
    }

    /// `YYYY-MM-DD`.
    fn ymd(self) -> impl std::fmt::Display {
        struct Ymd(DateHm);
        impl std::fmt::Display for Ymd {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{:04}-{:02}-{:02}", self.0.year, self.0.month, self.0.day)
            }
        }
        Ymd(self)
    }

    /// `HH:MM`.
    fn hm(self) -> impl std::fmt::Display {
        struct Hm(DateHm);
        impl std::fmt::Display for Hm {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{:02}:{:02}", self.0.hour, self.0.minute)
            }
        }
        Hm(self)
    }
}

/// The canonical id of an up/down window: `BTC-15M-2026-11-21T19:00Z`.
pub fn window_event_id(asset: &str, interval_code: IntervalCode, window_start: Timestamp) -> String {
    let minute = (window_start.millis() + 30_000).div_euclid(60_000) * 60_000;
    let iso = Timestamp(minute).to_iso();
    format!(
        "{asset}-{}-{}Z",
        interval_code.as_str().to_ascii_uppercase(),
        &iso[..16]
    )
}

/// Pairs the active markets of both venues (see the module docs for the rules and their order). The result
/// is sorted by `event_id`, so the same catalog always gives the same pairs in the same order.
pub fn pair_markets<'a>(
    listings: &'a [Listing],
    overrides: &[PairOverride],
    window_tolerance_seconds: i64,
) -> Vec<MarketPair<'a>> {
    let active = |l: &&Listing| l.market.status == Status::Active;
    let mut by_id: HashMap<(Exchange, &str), &Listing> = HashMap::new();
    for l in listings.iter().filter(active) {
        by_id
            .entry((l.market.exchange, l.market.market_id.as_str()))
            .or_insert(l);
    }
    let mut used: HashSet<(Exchange, &str)> = HashSet::new();
    let mut pairs = Vec::new();

    // 1. Operator overrides.
    for o in overrides {
        let ka = (Exchange::VenueA, o.venue_a_market_id.as_str());
        let kb = (Exchange::VenueB, o.venue_b_market_id.as_str());
        let (Some(&a), Some(&b)) = (by_id.get(&ka), by_id.get(&kb)) else {
            continue;
        };
        if used.contains(&ka) || used.contains(&kb) {
            continue;
        }
        used.insert((Exchange::VenueA, a.market.market_id.as_str()));
        used.insert((Exchange::VenueB, b.market.market_id.as_str()));
        pairs.push(matched(a, b, MatchSource::Override));
    }

    // 2. Up/down windows, grouped by (asset, interval), identical windows on one venue dropped as ambiguous.
    type WindowKey<'k> = (&'k str, IntervalCode);
    let mut windows: BTreeMap<WindowKey<'a>, [Vec<&'a Listing>; 2]> = BTreeMap::new();
    for l in listings.iter().filter(active) {
        let ListingKind::UpDown { asset } = &l.kind else {
            continue;
        };
        let m = &l.market;
        let (Some(ic), Some(s), Some(e)) = (m.interval_code, m.window_start, m.window_end) else {
            continue;
        };
        if s >= e || used.contains(&(m.exchange, m.market_id.as_str())) {
            continue;
        }
        if by_id
            .get(&(m.exchange, m.market_id.as_str()))
            .is_none_or(|first| !std::ptr::eq(*first, l))
        {
            continue; // a duplicate market id: only its first listing takes part
        }
        let side = usize::from(m.exchange == Exchange::VenueB);
        windows.entry((asset.as_str(), ic)).or_default()[side].push(l);
    }
    let tol_ms = window_tolerance_seconds.max(0).saturating_mul(1000);
    for ((asset, interval_code), [side_a, side_b]) in windows {
        let side_a = drop_identical_windows(side_a);
        let side_b = drop_identical_windows(side_b);
        let mut edges: Vec<(i64, &str, &str, &Listing, &Listing)> = Vec::new();
        for &a in &side_a {
            let (sa, ea) = bounds(a);
            for &b in &side_b {
                let (sb, eb) = bounds(b);
                let ds = (sa - sb).abs();
                let de = (ea - eb).abs();
                if ds <= tol_ms && de <= tol_ms {
                    edges.push((ds + de, a.market.market_id.as_str(), b.market.market_id.as_str(), a, b));
                }
            }
        }
        edges.sort_by(|x, y| (x.0, x.1, x.2).cmp(&(y.0, y.1, y.2)));
        for (_, ida, idb, a, b) in edges {
            if used.contains(&(Exchange::VenueA, ida)) || used.contains(&(Exchange::VenueB, idb)) {
                continue;
            }
            used.insert((Exchange::VenueA, ida));
            used.insert((Exchange::VenueB, idb));
            let start = a.market.window_start.unwrap_or_default();
            pairs.push(MarketPair {
                venue_a: a,
                venue_b: b,
                kind: Cow::Owned(PairKind::Window {
                    asset: asset.to_string(),
                    interval_code,
                }),
                event_id: Cow::Owned(window_event_id(asset, interval_code, start)),
            });
        }
    }

    // 3. Automatic game matcher on equal keys; a key seen twice on one venue is ambiguous.
    let mut games: BTreeMap<&MatchKey, [Vec<&Listing>; 2]> = BTreeMap::new();
    for l in listings.iter().filter(active) {
        let ListingKind::Game(key) = &l.kind else {
            continue;
        };
        let m = &l.market;
        if used.contains(&(m.exchange, m.market_id.as_str())) {
            continue;
        }
        let side = usize::from(m.exchange == Exchange::VenueB);
        games.entry(key).or_default()[side].push(l);
    }
    for [side_a, side_b] in games.into_values() {
        if let ([a], [b]) = (side_a.as_slice(), side_b.as_slice()) {
            pairs.push(matched(a, b, MatchSource::Auto));
        }
    }

    pairs.sort_by(|x, y| x.event_id.cmp(&y.event_id));
    pairs
}

fn matched<'a>(a: &'a Listing, b: &'a Listing, by: MatchSource) -> MarketPair<'a> {
    MarketPair {
        venue_a: a,
        venue_b: b,
        kind: Cow::Owned(PairKind::Matched { by }),
        event_id: Cow::Owned(format!("PAIR-{}", a.market.market_id)),
    }
}

fn bounds(l: &Listing) -> (i64, i64) {
    (
        l.market.window_start.unwrap_or_default().millis(),
        l.market.window_end.unwrap_or_default().millis(),
    )
}

/// Removes every window whose (start, end) occurs more than once on the same venue and interval.
fn drop_identical_windows(v: Vec<&Listing>) -> Vec<&Listing> {
    let mut count: HashMap<(i64, i64), usize> = HashMap::new();
    for l in &v {
        *count.entry(bounds(l)).or_default() += 1;
    }
    v.into_iter().filter(|l| count[&bounds(l)] == 1).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Market;
    pub(crate) use crate::arb::fixtures::{T0, window};

    pub(crate) fn game(
        exchange: Exchange,
        id: &str,
        title: &str,
        subtitle: Option<&str>,
        day_offset_ms: i64,
    ) -> Listing {
        let mut m = Market::new(exchange, id, &format!("EV-{id}"), "SPORTS", title);
        m.title = Some(title.to_string());
        m.subtitle = subtitle.map(str::to_string);
        m.category = Some("Sports".to_string());
        m.window_start = Some(Timestamp(T0 + day_offset_ms));
        if exchange == Exchange::VenueB {
            m.yes_token_id = Some(format!("{id}-yes"));
            m.no_token_id = Some(format!("{id}-no"));
        }
        Listing::new(m, title, None)
    }

    #[test]
    fn classifies_markets() {
        let w = window(Exchange::VenueA, "KXBTC15M-26NOV211415-15", IntervalCode::M15, 0, 0);
        assert_eq!(w.kind, ListingKind::UpDown { asset: "BTC".into() });
        let mut strike = w.market.clone();
        strike.market_id = "KXBTCD-26NOV2114-T97749.99".into();
        assert_eq!(ListingKind::classify(&strike, "", None), ListingKind::Other);
        let mut eth = Market::new(
            Exchange::VenueB,
            "0xeth",
            "ev",
            "eth-up-or-down-15m",
            "Ethereum Up or Down",
        );
        eth.interval_code = Some(IntervalCode::M15);
        eth.window_start = Some(Timestamp(T0));
        eth.window_end = Some(Timestamp(T0 + 900_000));
        assert_eq!(
            ListingKind::classify(&eth, "Ethereum Up or Down", None),
            ListingKind::Other
        );
        let g = game(Exchange::VenueB, "0xg", "NBA: Lakers vs. Celtics", None, 0);
        let ListingKind::Game(k) = &g.kind else {
            panic!("{:?}", g.kind)
        };
        assert_eq!(k.teams, ["celtics".to_string(), "lakers".to_string()]);
        assert_eq!(k.yes_team, "lakers");
        let mut no_cat = g.market.clone();
        no_cat.category = None;
        assert_eq!(ListingKind::classify(&no_cat, "x", None), ListingKind::Other);
    }

    #[test]
    fn canonical_window_ids() {
        assert_eq!(
            window_event_id("BTC", IntervalCode::M15, Timestamp(T0)),
            "BTC-15M-2026-11-21T19:00Z"
        );
        // A few seconds off the grid either way still names the grid minute.
        assert_eq!(
            window_event_id("BTC", IntervalCode::H1, Timestamp(T0 - 4_000)),
            "BTC-1H-2026-11-21T19:00Z"
        );
        assert_eq!(
            window_event_id("BTC", IntervalCode::W1, Timestamp(T0 + 29_999)),
            "BTC-1W-2026-11-21T19:00Z"
        );
        assert_eq!(
            window_event_id("BTC", IntervalCode::M5, Timestamp(T0 + 30_000)),
            "BTC-5M-2026-11-21T19:01Z"
        );
    }

    #[test]
    fn windows_pair_within_tolerance_inclusive() {
        let tol = 60;
        for (skew_ms, pairs) in [
            (0, true),
            (59_999, true),
            (60_000, true),
            (60_001, false),
            (-60_000, true),
            (-60_001, false),
        ] {
            // Start skew.
            let l = vec![
                window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
                window(Exchange::VenueB, "B1", IntervalCode::M15, skew_ms, 0),
            ];
            assert_eq!(pair_markets(&l, &[], tol).len() == 1, pairs, "start skew {skew_ms}");
            // End skew.
            let l = vec![
                window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
                window(Exchange::VenueB, "B1", IntervalCode::M15, 0, skew_ms),
            ];
            assert_eq!(pair_markets(&l, &[], tol).len() == 1, pairs, "end skew {skew_ms}");
        }
        // Tolerance 0 pairs only exact windows.
        let l = vec![
            window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B1", IntervalCode::M15, 0, 0),
        ];
        let p = pair_markets(&l, &[], 0);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].event_id, "BTC-15M-2026-11-21T19:00Z");
        assert_eq!(p[0].outcome_key(), "up");
        assert_eq!(p[0].interval_code(), Some(IntervalCode::M15));
        assert_eq!(p[0].category(), Category::Crypto);
        // The venue_b market has no category: the fee category is the pair's.
        assert_eq!(p[0].venue_b.market.category, None);
        assert_eq!(p[0].fee_category(), Category::Crypto);
        assert_eq!(
            p[0].event_title(),
            "Bitcoin Up or Down 15m - 2026-11-21 19:00-19:15 UTC"
        );
        assert_eq!(p[0].label(), "BTC 15m Up 19:00-19:15 UTC");
        assert_eq!(p[0].resolution_time(), Some(Timestamp(T0 + 900_000)));

        // A window across midnight names both days in the title and the start day in the label.
        let l = vec![
            window(Exchange::VenueA, "A24", IntervalCode::H24, 0, 0),
            window(Exchange::VenueB, "B24", IntervalCode::H24, 0, 0),
        ];
        let p = pair_markets(&l, &[], 0);
        assert_eq!(
            p[0].event_title(),
            "Bitcoin Up or Down 24h - 2026-11-21 19:00 - 2026-11-22 19:00 UTC"
        );
        assert_eq!(p[0].label(), "BTC 24h Up 2026-11-21 19:00 UTC");
    }

    #[test]
    fn windows_need_the_same_interval_and_pair_closest_first() {
        let l = vec![
            window(Exchange::VenueA, "A15", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B5", IntervalCode::M5, 0, 0),
        ];
        assert!(pair_markets(&l, &[], 3600).is_empty());
        // With a huge tolerance two venue_b 5-minute windows qualify for each venue_a window; the exact ones pair.
        let l = vec![
            window(Exchange::VenueA, "A0", IntervalCode::M5, 0, 0),
            window(Exchange::VenueA, "A1", IntervalCode::M5, 300_000, 300_000),
            window(Exchange::VenueB, "B1", IntervalCode::M5, 300_000, 300_000),
            window(Exchange::VenueB, "B0", IntervalCode::M5, 2_000, 0),
        ];
        let p = pair_markets(&l, &[], 3600);
        let ids: Vec<_> = p
            .iter()
            .map(|p| (p.venue_a.market.market_id.as_str(), p.venue_b.market.market_id.as_str()))
            .collect();
        assert_eq!(ids, vec![("A0", "B0"), ("A1", "B1")]);
        assert_eq!(p[1].event_id, "BTC-5M-2026-11-21T19:05Z");
    }

    #[test]
    fn identical_windows_on_one_venue_are_ambiguous() {
        let l = vec![
            window(Exchange::VenueA, "A1", IntervalCode::H1, 0, 0),
            window(Exchange::VenueA, "A2", IntervalCode::H1, 0, 0),
            window(Exchange::VenueB, "B1", IntervalCode::H1, 0, 0),
        ];
        assert!(pair_markets(&l, &[], 60).is_empty());
    }

    #[test]
    fn inactive_markets_do_not_pair() {
        let mut b = window(Exchange::VenueB, "B1", IntervalCode::M15, 0, 0);
        b.market.status = Status::Closed;
        let l = vec![window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0), b];
        assert!(pair_markets(&l, &[], 60).is_empty());
    }

    #[test]
    fn games_match_by_teams_side_and_day() {
        let l = vec![
            // venue_a: one market per team, the team in the subtitle.
            game(
                Exchange::VenueA,
                "KXNBAGAME-26NOV21LALBOS-LAL",
                "Lakers at Celtics Winner?",
                Some("Lakers"),
                0,
            ),
            game(
                Exchange::VenueA,
                "KXNBAGAME-26NOV21LALBOS-BOS",
                "Lakers at Celtics Winner?",
                Some("Celtics"),
                0,
            ),
            // venue_b: YES = first-named team.
            game(Exchange::VenueB, "0xlakers", "NBA: Lakers vs. Celtics", None, 3_600_000),
            // Another day: not matched.
            game(Exchange::VenueB, "0xother", "Bulls vs. Knicks", None, 0),
            game(
                Exchange::VenueA,
                "KXNBAGAME-26NOV22CHINYK-CHI",
                "Bulls at Knicks",
                Some("Bulls"),
                86_400_000,
            ),
        ];
        let p = pair_markets(&l, &[], 60);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].venue_a.market.market_id, "KXNBAGAME-26NOV21LALBOS-LAL");
        assert_eq!(p[0].venue_b.market.market_id, "0xlakers");
        assert_eq!(p[0].event_id, "PAIR-KXNBAGAME-26NOV21LALBOS-LAL");
        assert_eq!(p[0].outcome_key(), "yes");
        assert_eq!(*p[0].kind, PairKind::Matched { by: MatchSource::Auto });
        assert_eq!(p[0].category(), Category::Sports);
        // The fee category is venue_b's own, whatever venue_a says, matched without regard to case.
        assert_eq!(p[0].fee_category(), Category::Sports);
        let mut vb = p[0].venue_b.clone();
        vb.market.category = Some(" CRYPTO ".into());
        let crossed = MarketPair {
            venue_b: &vb,
            ..p[0].clone()
        };
        assert_eq!(
            (crossed.category(), crossed.fee_category()),
            (Category::Sports, Category::Crypto)
        );
        // A label the model does not know falls back to the pair's category.
        vb.market.category = Some("Basketball".into());
        let unknown = MarketPair {
            venue_b: &vb,
            ..p[0].clone()
        };
        assert_eq!(unknown.fee_category(), Category::Sports);
        assert_eq!(p[0].interval_code(), None);
        assert_eq!(p[0].label(), "Lakers at Celtics Winner?");
        assert!(!p[0].is_expired(Timestamp(i64::MAX)));

        // A duplicate key on venue_b makes it ambiguous.
        let mut l2 = l.clone();
        l2.push(game(Exchange::VenueB, "0xlakers2", "Lakers vs Celtics", None, 0));
        assert!(pair_markets(&l2, &[], 60).is_empty());
    }

    /// The connectors give game markets no window: the day comes from the date in each venue's ids, the
    /// US Eastern date on both, so a game starting after midnight UTC still matches.
    #[test]
    fn games_without_a_window_match_by_the_date_in_their_ids() {
        let unwindowed = |mut l: Listing, slug: Option<&str>| {
            l.market.window_start = None;
            l.event_slug = slug.map(str::to_string);
            Listing::new(l.market, l.event_title, l.event_slug)
        };
        let mut a = game(
            Exchange::VenueA,
            "KXNBAGAME-26NOV21AUSPOR-AUS",
            "Austin at Portland Winner?",
            Some("Austin"),
            0,
        );
        a.market.event_id = "KXNBAGAME-26NOV21AUSPOR".into();
        let a = unwindowed(a, None);
        let b = unwindowed(
            game(Exchange::VenueB, "0xaus", "Austin vs. Portland", None, 0),
            Some("nba-aus-por-2026-11-21"),
        );
        let b_next_day = unwindowed(
            game(Exchange::VenueB, "0xaus2", "Austin vs. Portland", None, 0),
            Some("nba-aus-por-2026-11-22"),
        );
        let day = |l: &Listing| match &l.kind {
            ListingKind::Game(k) => k.day,
            other => panic!("not a game: {other:?}"),
        };
        // 2026-11-21 is day 20,778 after 1970-01-01.
        assert_eq!((day(&a), day(&b), day(&b_next_day)), (20_778, 20_778, 20_779));
        let same_day = [a.clone(), b];
        let p = pair_markets(&same_day, &[], 60);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].venue_b.market.market_id, "0xaus");
        assert!(pair_markets(&[a, b_next_day], &[], 60).is_empty());
    }

    #[test]
    fn overrides_win_and_consume_markets() {
        let l = vec![
            window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B1", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B2", IntervalCode::M15, 0, 5_000),
        ];
        let o = [
            PairOverride {
                venue_a_market_id: "A1".into(),
                venue_b_market_id: "B2".into(),
            },
            // Already used / unknown markets are skipped.
            PairOverride {
                venue_a_market_id: "A1".into(),
                venue_b_market_id: "B1".into(),
            },
            PairOverride {
                venue_a_market_id: "nope".into(),
                venue_b_market_id: "B1".into(),
            },
        ];
        let p = pair_markets(&l, &o, 60);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].venue_b.market.market_id.as_str(), p[0].event_id.as_ref()),
            ("B2", "PAIR-A1")
        );
        assert_eq!(
            *p[0].kind,
            PairKind::Matched {
                by: MatchSource::Override
            }
        );
    }

    #[test]
    fn inverted_yes_overrides_and_rejections_are_skipped() {
        // venue_a YES backs Austin (subtitle); venue_b's YES token is its first-named team, Portland.
        let a = game(Exchange::VenueA, "A-AUS", "Austin at Portland", Some("Austin"), 0);
        let b = game(Exchange::VenueB, "0xpor", "Portland vs Austin", None, 0);
        let l = vec![a, b];
        // The matcher does not pair them (its key includes the YES team); an override does.
        assert!(pair_markets(&l, &[], 60).is_empty());
        let o = PairOverride {
            venue_a_market_id: "A-AUS".into(),
            venue_b_market_id: "0xpor".into(),
        };
        let p = pair_markets(&l, std::slice::from_ref(&o), 60);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].match_source_name(), "operator");
        assert_eq!(yes_outcome(p[0].venue_a).as_deref(), Some("Austin"));
        assert_eq!(yes_outcome(p[0].venue_b).as_deref(), Some("portland"));
        assert!(p[0].yes_outcomes_differ());
        assert_eq!(p[0].skip_reason(|_| false), Some(SkipReason::YesOutcomesDiffer));
        // A rejection wins over the YES check.
        assert_eq!(p[0].skip_reason(|k| *k == o), Some(SkipReason::Rejected));

        // The same side on both venues: scanned.
        let b_same = game(Exchange::VenueB, "0xaus", "Austin vs Portland", None, 0);
        let l = vec![l[0].clone(), b_same];
        let p = pair_markets(&l, &[], 60);
        assert_eq!(p[0].match_source_name(), "teams_date");
        assert!(!p[0].yes_outcomes_differ());
        assert_eq!(p[0].skip_reason(|_| false), None);
    }

    #[test]
    fn settlement_basis_compares_normalised_sources_and_windows() {
        use SettlementBasis::*;
        let url = Some("https://Example.com/BTC-index/ ");
        assert_eq!(
            SettlementBasis::of([url, Some("https://example.com/btc-index")], true),
            Identical
        );
        assert_eq!(
            SettlementBasis::of([Some("CF  Benchmarks\tBRTI"), Some("cf benchmarks brti")], true),
            Identical
        );
        assert_eq!(
            SettlementBasis::of([url, Some("https://other.example/btc")], true),
            SameWindowDifferentSource
        );
        assert_eq!(SettlementBasis::of([url, url], false), Unverified);
        assert_eq!(SettlementBasis::of([url, None], true), Unverified);
        assert_eq!(SettlementBasis::of([None, None], true), Unverified);

        let exact = vec![
            window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B1", IntervalCode::M15, 0, 0),
        ];
        let p = pair_markets(&exact, &[], 60);
        assert!(p[0].windows_match());
        assert_eq!((p[0].kind_name(), p[0].match_source_name()), ("window", "window"));
        assert_eq!(yes_outcome(p[0].venue_b).as_deref(), Some("Up"));
        let skewed = vec![
            window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B1", IntervalCode::M15, 0, 3_000),
        ];
        assert!(!pair_markets(&skewed, &[], 60)[0].windows_match());
    }

    #[test]
    fn window_pairs_expire_at_the_earlier_end() {
        let l = vec![
            window(Exchange::VenueA, "A1", IntervalCode::M15, 0, 0),
            window(Exchange::VenueB, "B1", IntervalCode::M15, 0, 3_000),
        ];
        let p = pair_markets(&l, &[], 60);
        let end = T0 + 900_000;
        assert!(!p[0].is_expired(Timestamp(end - 1)));
        assert!(p[0].is_expired(Timestamp(end)));
        assert_eq!(p[0].resolution_time(), Some(Timestamp(end + 3_000)));
    }
}
