//! The venue-neutral catalog: series → events → markets (→ tokens on venue_b).
//!
//! Connectors fill these from each venue's wire shapes; the store persists them with `discovered_at` (set by
//! the store the first time an item is seen) and the server renders them.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use crate::{Amount, Price, Timestamp};

/// One of the two venues. The API spells them `venue_a` and `venue_b` everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ExchangeName, description = "A venue: `venue_a` or `venue_b`."))]
pub enum Exchange {
    #[serde(rename = "venue_a")]
    VenueA,
    #[serde(rename = "venue_b")]
    VenueB,
}

impl Exchange {
    pub const ALL: [Exchange; 2] = [Exchange::VenueA, Exchange::VenueB];
    pub fn as_str(self) -> &'static str {
        match self {
            Exchange::VenueA => "venue_a",
            Exchange::VenueB => "venue_b",
        }
    }
}

impl fmt::Display for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Exchange {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "venue_a" => Ok(Exchange::VenueA),
            "venue_b" => Ok(Exchange::VenueB),
            _ => Err(()),
        }
    }
}

/// Trading status of a series, event or market.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = StatusName, description = "Trading status: `active` or `closed`."))]
pub enum Status {
    Active,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Closed => "closed",
        }
    }
}

impl FromStr for Status {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "active" => Ok(Status::Active),
            "closed" => Ok(Status::Closed),
            _ => Err(()),
        }
    }
}

/// Normalised category label. Stored and matched as its string form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Crypto,
    Sports,
    Other,
}

impl Category {
    pub const ALL: [Category; 3] = [Category::Crypto, Category::Sports, Category::Other];
    pub const fn as_str(self) -> &'static str {
        match self {
            Category::Crypto => "crypto",
            Category::Sports => "sports",
            Category::Other => "other",
        }
    }
}

impl FromStr for Category {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "crypto" => Ok(Category::Crypto),
            "sports" => Ok(Category::Sports),
            "other" => Ok(Category::Other),
            _ => Err(()),
        }
    }
}

/// Window length of an interval market.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = IntervalCodeName, description = "Window length of an interval market: `5m`, `15m`, `1h`, `24h` or `1w`."))]
pub enum IntervalCode {
    #[serde(rename = "5m")]
    M5,
    #[serde(rename = "15m")]
    M15,
    #[serde(rename = "1h")]
    H1,
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "1w")]
    W1,
}

impl IntervalCode {
    pub const ALL: [IntervalCode; 5] = [
        IntervalCode::M5,
        IntervalCode::M15,
        IntervalCode::H1,
        IntervalCode::H24,
        IntervalCode::W1,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            IntervalCode::M5 => "5m",
            IntervalCode::M15 => "15m",
            IntervalCode::H1 => "1h",
            IntervalCode::H24 => "24h",
            IntervalCode::W1 => "1w",
        }
    }
    /// Window length in seconds.
    pub fn seconds(self) -> i64 {
        match self {
            IntervalCode::M5 => 300,
            IntervalCode::M15 => 900,
            IntervalCode::H1 => 3_600,
            IntervalCode::H24 => 86_400,
            IntervalCode::W1 => 604_800,
        }
    }
}

impl fmt::Display for IntervalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for IntervalCode {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        IntervalCode::ALL.into_iter().find(|c| c.as_str() == s).ok_or(())
    }
}

/// The two outcomes of a binary market.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OutcomeName, description = "`YES` or `NO`."))]
pub enum Outcome {
    Yes,
    No,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Yes => "YES",
            Outcome::No => "NO",
        }
    }
    pub fn opposite(self) -> Outcome {
        match self {
            Outcome::Yes => Outcome::No,
            Outcome::No => Outcome::Yes,
        }
    }
}

/// A product line on a venue (venue_a `KXBTC15M`; venue_b a Gamma series).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub exchange: Exchange,
    pub series_id: String,
    pub title: String,
    /// venue_a web slug; `None` for venue_b.
    pub slug: Option<String>,
    pub url: Option<String>,
    pub category: Option<String>,
    pub status: Status,
}

/// One tradable window or question group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub exchange: Exchange,
    pub event_id: String,
    pub series_id: String,
    pub title: String,
    pub subtitle: Option<String>,
    /// venue_b event slug (venue_a has none).
    pub slug: Option<String>,
    pub url: Option<String>,
    pub image_url: Option<String>,
    pub category: Option<String>,
    pub status: Status,
    pub interval_code: Option<IntervalCode>,
    pub window_start: Option<Timestamp>,
    pub window_end: Option<Timestamp>,
    /// Venue's own 24h volume for the event when it reports one (used to draw the public whale pool).
    pub volume_24h: Option<Amount>,
}

/// One binary question with a YES and a NO side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Market {
    pub exchange: Exchange,
    /// venue_a ticker; venue_b condition id (`0x…`).
    pub market_id: String,
    pub event_id: String,
    pub series_id: String,
    /// Formatted headline (venue_a); may be `None` for venue_b.
    pub title: Option<String>,
    pub subtitle: Option<String>,
    pub question: String,
    pub description: Option<String>,
    pub slug: Option<String>,
    pub url: Option<String>,
    pub category: Option<String>,
    pub status: Status,
    pub interval_code: Option<IntervalCode>,
    pub window_start: Option<Timestamp>,
    pub window_end: Option<Timestamp>,
    pub volume: Amount,
    pub volume_24h: Amount,
    pub liquidity: Amount,
    pub open_interest: Amount,
    pub last_yes_price: Option<Price>,
    pub last_no_price: Option<Price>,
    pub settled_at: Option<Timestamp>,
    /// venue_b numeric Gamma market id (accepted by the historical routes besides the condition id).
    pub source_id: Option<String>,
    /// venue_b CLOB token ids (78-digit decimal strings, kept as strings).
    pub yes_token_id: Option<String>,
    pub no_token_id: Option<String>,
    /// What the market settles on, as the venue states it (venue_a: the settlement sources' names or URLs,
    /// else the primary rules; venue_b: `resolutionSource`); `None` when the venue states nothing. Compared
    /// across venues by `/v1/arbitrage/pairs` to say whether a pair's legs pay on the same facts.
    #[serde(default)]
    pub resolution_source: Option<String>,
}

impl Market {
    /// A market with the required identity fields and everything else empty; connectors and tests fill in
    /// the rest with struct-update syntax.
    pub fn new(exchange: Exchange, market_id: &str, event_id: &str, series_id: &str, question: &str) -> Self {
        Market {
            exchange,
            market_id: market_id.to_string(),
            event_id: event_id.to_string(),
            series_id: series_id.to_string(),
            title: None,
            subtitle: None,
            question: question.to_string(),
            description: None,
            slug: None,
            url: None,
            category: None,
            status: Status::Active,
            interval_code: None,
            window_start: None,
            window_end: None,
            volume: Amount::ZERO,
            volume_24h: Amount::ZERO,
            liquidity: Amount::ZERO,
            open_interest: Amount::ZERO,
            last_yes_price: None,
            last_no_price: None,
            settled_at: None,
            source_id: None,
            yes_token_id: None,
            no_token_id: None,
            resolution_source: None,
        }
    }
}

impl Event {
    /// An event with the required identity fields and everything else empty.
    pub fn new(exchange: Exchange, event_id: &str, series_id: &str, title: &str) -> Self {
        Event {
            exchange,
            event_id: event_id.to_string(),
            series_id: series_id.to_string(),
            title: title.to_string(),
            subtitle: None,
            slug: None,
            url: None,
            image_url: None,
            category: None,
            status: Status::Active,
            interval_code: None,
            window_start: None,
            window_end: None,
            volume_24h: None,
        }
    }
}

impl Series {
    /// A series with the required identity fields and everything else empty.
    pub fn new(exchange: Exchange, series_id: &str, title: &str) -> Self {
        Series {
            exchange,
            series_id: series_id.to_string(),
            title: title.to_string(),
            slug: None,
            url: None,
            category: None,
            status: Status::Active,
        }
    }
}
