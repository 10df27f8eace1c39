//! The markets the pairing sees ([`Listing`]) and how each is classified ([`ListingKind`]): an up/down
//! window, a game with its [`MatchKey`], or neither. [`super::pairing`] forms pairs from them.

use serde::{Deserialize, Serialize};

use crate::{Exchange, Market};

/// One market as the scanner sees it: the catalog market plus the event fields it renders.
///
/// The event's fields are carried here rather than added to [`Market`], which is shared with every other
/// part of the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    /// The catalog market (venue_a ticker or venue_b condition with its token ids).
    pub market: Market,
    /// Title of the market's event.
    pub event_title: String,
    /// venue_b event slug (`venue_b_event_slug`); `None` on venue_a.
    pub event_slug: Option<String>,
    /// How the pairing treats this market. [`Listing::new`] classifies it; callers may override.
    pub kind: ListingKind,
}

impl Listing {
    /// A listing classified by [`ListingKind::classify`].
    pub fn new(market: Market, event_title: impl Into<String>, event_slug: Option<String>) -> Self {
        let event_title = event_title.into();
        let kind = ListingKind::classify(&market, &event_title, event_slug.as_deref());
        Listing {
            market,
            event_title,
            event_slug,
            kind,
        }
    }

    /// What the market settles on, as its venue states it; `None` when the venue states nothing (or only
    /// whitespace).
    pub fn resolution_source(&self) -> Option<&str> {
        self.market
            .resolution_source
            .as_deref()
            .filter(|s| !s.trim().is_empty())
    }
}

/// What kind of market a listing is, for the pairing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ListingKind {
    /// An up/down window on `asset` (`"BTC"`): YES pays when the price ends at or above where it started.
    UpDown {
        /// Upper-case asset symbol, used in the canonical event id.
        asset: String,
    },
    /// A binary sports market eligible for the automatic matcher.
    Game(MatchKey),
    /// Anything else: paired only through an operator override.
    Other,
}

impl ListingKind {
    /// Classifies a market.
    ///
    /// - `UpDown` when the market has an `interval_code`, a window start before its end, mentions `btc` or
    ///   `bitcoin` in its ids, slugs or titles (the scanner's scope is BTC, spec 4.3), and is not a strike
    ///   market: a venue_a ticker whose last segment is `T<digits>` or `B<digits>` (`KXBTCD-…-T97749.99`,
    ///   `KXBTC-…-B97500`) asks "above/between X", not "up or down".
    /// - `Game` when the market has no `interval_code`, its category is `sports`, and a [`MatchKey`] can be
    ///   read from its title.
    /// - `Other` otherwise.
    pub fn classify(market: &Market, event_title: &str, event_slug: Option<&str>) -> ListingKind {
        if let (Some(_), Some(start), Some(end)) = (market.interval_code, market.window_start, market.window_end) {
            let haystack = [
                Some(market.series_id.as_str()),
                Some(market.event_id.as_str()),
                Some(market.market_id.as_str()),
                market.slug.as_deref(),
                event_slug,
                Some(market.question.as_str()),
                market.title.as_deref(),
                Some(event_title),
            ]
            .into_iter()
            .flatten()
            .map(str::to_ascii_lowercase)
            .collect::<Vec<_>>()
            .join(" ");
            let is_btc = haystack.contains("btc") || haystack.contains("bitcoin");
            if start < end && is_btc && !is_strike_ticker(market) {
                return ListingKind::UpDown {
                    asset: "BTC".to_string(),
                };
            }
            return ListingKind::Other;
        }
        let sports = market
            .category
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("sports"));
        if market.interval_code.is_none()
            && sports
            && let Some(key) = MatchKey::from_market(market, event_title, event_slug)
        {
            return ListingKind::Game(key);
        }
        ListingKind::Other
    }
}

/// venue_a strike/bracket market: last ticker segment `T<digit>…` or `B<digit>…`.
pub(super) fn is_strike_ticker(market: &Market) -> bool {
    if market.exchange != Exchange::VenueA {
        return false;
    }
    let Some((_, last)) = market.market_id.rsplit_once('-') else {
        return false;
    };
    let b = last.as_bytes();
    b.len() >= 2 && (b[0] == b'T' || b[0] == b'B') && b[1].is_ascii_digit()
}

/// The automatic matcher's key for a game market.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MatchKey {
    /// Both normalised team names, sorted (so `A at B` and `B vs A` agree on the teams).
    pub teams: [String; 2],
    /// The normalised team whose win pays YES.
    pub yes_team: String,
    /// UTC day (days since 1970-01-01) of the window start, else of the window end.
    pub day: i64,
}

impl MatchKey {
    /// Reads the key of a game market.
    ///
    /// Teams come from the first of `title`, `question`, `event_title` that reads `A <sep> B` with `<sep>`
    /// one of ` vs. `, ` vs `, ` v. `, ` v `, ` @ `, ` at ` (case-insensitive; the leftmost separator wins;
    /// a `League: ` prefix is dropped). Names are normalised by [`normalise_team`]. The YES team is the
    /// market's `subtitle` when it names one of the two teams (venue_a lists one market per team with the team
    /// as subtitle), else the first-named team (venue_b's YES token is its first outcome). The day is the UTC
    /// day of `window_start`, else of `window_end`, else the date the venue's ids carry ([`listed_day`]:
    /// the connectors give game markets no window); a market with none of them has no key.
    pub fn from_market(market: &Market, event_title: &str, event_slug: Option<&str>) -> Option<MatchKey> {
        let day = match market.window_start.or(market.window_end) {
            Some(t) => t.millis().div_euclid(crate::time::DAY_MS),
            None => listed_day(market, event_slug)?,
        };
        let (first, second) = [
            market.title.as_deref(),
            Some(market.question.as_str()),
            Some(event_title),
        ]
        .into_iter()
        .flatten()
        .find_map(split_matchup)?;
        let yes_team = market
            .subtitle
            .as_deref()
            .map(normalise_team)
            .filter(|s| *s == first || *s == second)
            .unwrap_or_else(|| first.clone());
        let mut teams = [first, second];
        teams.sort();
        Some(MatchKey { teams, yes_team, day })
    }
}

/// The game date a market's ids carry, as days since 1970-01-01: a venue_a event ticker `SERIES-YYMONDD…`
/// (`KXNBAGAME-26NOV21AUSPOR`), a venue_b event (or market) slug ending `-YYYY-MM-DD`
/// (`nba-aus-por-2026-11-21`). Both venues write the game's local (US Eastern) date, so the two listings of
/// one game agree even when it starts after midnight UTC.
pub(super) fn listed_day(market: &Market, event_slug: Option<&str>) -> Option<i64> {
    /// Julian day number of 1970-01-01.
    const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;
    let date = match market.exchange {
        Exchange::VenueA => {
            let code = market.event_id.split('-').nth(1)?.get(..7)?;
            let year = 2000 + code.get(..2)?.parse::<i32>().ok()?;
            let month = match code.get(2..5)?.to_ascii_uppercase().as_str() {
                "JAN" => time::Month::January,
                "FEB" => time::Month::February,
                "MAR" => time::Month::March,
                "APR" => time::Month::April,
                "MAY" => time::Month::May,
                "JUN" => time::Month::June,
                "JUL" => time::Month::July,
                "AUG" => time::Month::August,
                "SEP" => time::Month::September,
                "OCT" => time::Month::October,
                "NOV" => time::Month::November,
                "DEC" => time::Month::December,
                _ => return None,
            };
            time::Date::from_calendar_date(year, month, code.get(5..7)?.parse().ok()?).ok()?
        }
        Exchange::VenueB => {
            let slug = event_slug.or(market.slug.as_deref())?;
            let tail = slug.get(slug.len().checked_sub(10)?..)?;
            time::Date::parse(tail, time::macros::format_description!("[year]-[month]-[day]")).ok()?
        }
    };
    Some(i64::from(date.to_julian_day()) - UNIX_EPOCH_JULIAN_DAY)
}

/// Splits `A vs B` into two normalised, non-empty, different team names.
pub(super) fn split_matchup(text: &str) -> Option<(String, String)> {
    let text = text.rsplit_once(": ").map_or(text, |(_, rest)| rest);
    let lower = text.to_ascii_lowercase();
    let (pos, sep) = [" vs. ", " vs ", " v. ", " v ", " @ ", " at "]
        .into_iter()
        .filter_map(|sep| lower.find(sep).map(|p| (p, sep)))
        .min_by_key(|&(p, sep)| (p, std::cmp::Reverse(sep.len())))?;
    let a = normalise_team(&lower[..pos]);
    let b = normalise_team(&lower[pos + sep.len()..]);
    (!a.is_empty() && !b.is_empty() && a != b).then_some((a, b))
}

/// Normalises a team name: lower-case ASCII letters and digits, every other character a word break, words
/// joined by one space; then a leading `will` or `the` and a trailing `winner`, `win`, `wins`, `game` or
/// `match` are dropped (`"Will the Lakers win?"` → `"lakers"`, `"Boston Winner?"` → `"boston"`).
pub fn normalise_team(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    while words.first().is_some_and(|w| matches!(*w, "will" | "the")) {
        words.remove(0);
    }
    while words
        .last()
        .is_some_and(|w| matches!(*w, "winner" | "win" | "wins" | "game" | "match"))
    {
        words.pop();
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_team_names() {
        assert_eq!(normalise_team("Will the Lakers win?"), "lakers");
        assert_eq!(normalise_team(" Boston  Winner? "), "boston");
        assert_eq!(normalise_team("St. Louis Blues"), "st louis blues");
        assert_eq!(
            split_matchup("Lakers at Celtics Winner?"),
            Some(("lakers".into(), "celtics".into()))
        );
        assert_eq!(
            split_matchup("NFL: Chiefs @ Raiders"),
            Some(("chiefs".into(), "raiders".into()))
        );
        assert_eq!(
            split_matchup("Atlanta vs. Boston"),
            Some(("atlanta".into(), "boston".into()))
        );
        assert_eq!(split_matchup("Lakers vs Lakers"), None);
        assert_eq!(split_matchup("Will it rain?"), None);
    }
}
