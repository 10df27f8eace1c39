//! Normalisation rules shared by both venues: category labels, interval windows, YES/NO outcome order,
//! and local ladders that become [`crossbook_core::BookSnapshot`]s.

use std::collections::BTreeMap;

use crossbook_core::{Amount, Category, IntervalCode, Level, Price, Timestamp};

/// An interval ("up or down") window: its code and its `[start, end)` in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub interval: IntervalCode,
    pub start: Timestamp,
    pub end: Timestamp,
}

impl Window {
    /// The window `[start, end)` when its length is exactly one of the interval codes.
    pub fn from_bounds(start: Timestamp, end: Timestamp) -> Option<Window> {
        let len_secs = (end.millis() - start.millis()) / 1000;
        if (end.millis() - start.millis()) % 1000 != 0 {
            return None;
        }
        IntervalCode::ALL
            .into_iter()
            .find(|c| c.seconds() == len_secs)
            .map(|interval| Window { interval, start, end })
    }

    /// The window of length `interval` ending at `end`.
    pub fn ending_at(interval: IntervalCode, end: Timestamp) -> Window {
        Window {
            interval,
            start: Timestamp::from_millis(end.millis() - interval.seconds() * 1000),
            end,
        }
    }
}

/// An interval code from a compact length such as `15M`, `5m`, `1H`, `24h`, `1D`, `1W`, `60M`, `7D`.
pub fn interval_from_length(text: &str) -> Option<IntervalCode> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = t.split_at(split);
    let n: i64 = digits.parse().ok()?;
    let secs = match unit.to_ascii_lowercase().as_str() {
        "m" | "min" => n * 60,
        "h" | "hr" => n * 3600,
        "d" => n * 86_400,
        "w" => n * 604_800,
        _ => return None,
    };
    IntervalCode::ALL.into_iter().find(|c| c.seconds() == secs)
}

/// Category words as venues spell them (venue_a series categories, venue_b tags and categories).
const CRYPTO_WORDS: &[&str] = &[
    "crypto",
    "cryptocurrency",
    "bitcoin",
    "btc",
    "ethereum",
    "eth",
    "solana",
    "sol",
    "xrp",
    "doge",
    "dogecoin",
];
const SPORTS_WORDS: &[&str] = &[
    "sports",
    "sport",
    "nba",
    "nfl",
    "mlb",
    "nhl",
    "wnba",
    "ncaa",
    "ncaab",
    "ncaaf",
    "cfb",
    "cbb",
    "soccer",
    "football",
    "basketball",
    "baseball",
    "hockey",
    "tennis",
    "golf",
    "mma",
    "ufc",
    "boxing",
    "f1",
    "formula 1",
    "cricket",
    "epl",
    "premier league",
    "champions league",
    "mls",
    "esports",
    "games",
];

/// The normalised category of a set of labels (a series category, tags). Crypto wins over sports when
/// both appear; anything else is `other`.
pub fn category_of<'a>(labels: impl IntoIterator<Item = &'a str>) -> Category {
    let mut sports = false;
    for label in labels {
        let l = label.trim().to_ascii_lowercase();
        if CRYPTO_WORDS.contains(&l.as_str()) {
            return Category::Crypto;
        }
        if SPORTS_WORDS.contains(&l.as_str()) {
            sports = true;
        }
    }
    if sports { Category::Sports } else { Category::Other }
}

/// Which of a market's outcome labels is YES. Binary "Yes"/"No" markets are matched by label (their
/// order is not guaranteed); every other pair ("Up"/"Down", two teams) takes the first outcome as YES.
pub fn yes_index(outcomes: &[String]) -> usize {
    outcomes
        .iter()
        .position(|o| o.trim().eq_ignore_ascii_case("yes"))
        .unwrap_or(0)
}

/// A ladder of one side of a local book: price → size.
pub type Ladder = BTreeMap<Price, Amount>;

/// Levels best first: bids descending, asks ascending. Empty levels are left out.
pub fn levels(ladder: &Ladder, descending: bool) -> Vec<Level> {
    let make = |(price, size): (&Price, &Amount)| Level {
        price: *price,
        size: *size,
    };
    let nonempty = |(_, size): &(&Price, &Amount)| size.micros() > 0;
    if descending {
        ladder.iter().rev().filter(nonempty).map(make).collect()
    } else {
        ladder.iter().filter(nonempty).map(make).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_from_bounds_and_lengths() {
        let s = Timestamp::from_secs(1_778_583_600);
        let w = Window::from_bounds(s, Timestamp::from_secs(1_778_584_500)).unwrap();
        assert_eq!(w.interval, IntervalCode::M15);
        assert!(Window::from_bounds(s, Timestamp::from_secs(1_778_583_600 + 14_400)).is_none());
        assert_eq!(interval_from_length("15M"), Some(IntervalCode::M15));
        assert_eq!(interval_from_length("5m"), Some(IntervalCode::M5));
        assert_eq!(interval_from_length("60M"), Some(IntervalCode::H1));
        assert_eq!(interval_from_length("1H"), Some(IntervalCode::H1));
        assert_eq!(interval_from_length("24h"), Some(IntervalCode::H24));
        assert_eq!(interval_from_length("1D"), Some(IntervalCode::H24));
        assert_eq!(interval_from_length("1W"), Some(IntervalCode::W1));
        assert_eq!(interval_from_length("4h"), None);
        assert_eq!(interval_from_length("D"), None);
    }

    #[test]
    fn categories_and_yes_side() {
        assert_eq!(category_of(["Crypto"]), Category::Crypto);
        assert_eq!(category_of(["Bitcoin", "15M"]), Category::Crypto);
        assert_eq!(category_of(["Sports", "NBA"]), Category::Sports);
        assert_eq!(category_of(["Politics"]), Category::Other);
        assert_eq!(category_of([]), Category::Other);
        let o = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(yes_index(&o(&["Up", "Down"])), 0);
        assert_eq!(yes_index(&o(&["No", "Yes"])), 1);
        assert_eq!(yes_index(&o(&["Lakers", "Celtics"])), 0);
    }
}
