//! The objects search answers with (spec §2.1–2.3), built from the store's rows.

use crossbook_core::{Exchange, Price, Status};
use crossbook_store::{EventSummary, SeriesSummary, catalog::StoredMarket};
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::common::{dollars, iso_opt};

/// A series.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SeriesOut {
    /// Source series ID; pass it as `series_id` to event and market search.
    pub series_id: String,
    pub exchange: Exchange,
    /// Human-readable title.
    pub title: String,
    /// Web URL slug of venue_a; null for venue_b.
    #[schema(required = true)]
    pub slug: Option<String>,
    /// Exchange web page URL when available.
    #[schema(required = true)]
    pub url: Option<String>,
    /// Category label; may be null.
    #[schema(required = true)]
    pub category: Option<String>,
    pub status: Status,
    /// Total events in the series.
    pub n_events_total: i64,
    /// Events currently open for trading.
    pub n_events_active: i64,
    /// Earliest event window start; null when no event has a window.
    #[schema(required = true, format = DateTime)]
    pub earliest_event_at: Option<String>,
    /// Latest event window end; null when no event has a window.
    #[schema(required = true, format = DateTime)]
    pub latest_event_at: Option<String>,
}

impl From<SeriesSummary> for SeriesOut {
    fn from(s: SeriesSummary) -> Self {
        SeriesOut {
            series_id: s.series.series_id,
            exchange: s.series.exchange,
            title: s.series.title,
            slug: s.series.slug,
            url: s.series.url,
            category: s.series.category,
            status: s.series.status,
            n_events_total: s.n_events_total,
            n_events_active: s.n_events_active,
            earliest_event_at: iso_opt(s.earliest_event_at),
            latest_event_at: iso_opt(s.latest_event_at),
        }
    }
}

/// An event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventOut {
    /// Source event ticker / ID.
    pub event_id: String,
    pub exchange: Exchange,
    /// Parent series source ID.
    pub series_id: String,
    /// Event title.
    pub title: String,
    /// Exchange web page URL when available.
    #[schema(required = true)]
    pub url: Option<String>,
    /// Event image URL when available (often for venue_b).
    #[schema(required = true)]
    pub image_url: Option<String>,
    pub status: Status,
    /// Number of child markets.
    pub market_count: i64,
    /// Sum of child market volume.
    pub total_volume: f64,
    /// Sum of child market liquidity.
    pub total_liquidity: f64,
    /// Questions of the child markets.
    pub market_questions: Vec<String>,
}

impl From<EventSummary> for EventOut {
    fn from(s: EventSummary) -> Self {
        EventOut {
            event_id: s.event.event_id,
            exchange: s.event.exchange,
            series_id: s.event.series_id,
            title: s.event.title,
            url: s.event.url,
            image_url: s.event.image_url,
            status: s.event.status,
            market_count: s.market_count,
            total_volume: dollars(s.total_volume),
            total_liquidity: dollars(s.total_liquidity),
            market_questions: s.market_questions,
        }
    }
}

/// A market.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketOut {
    /// Source market ticker / ID; used with the historical routes.
    pub market_id: String,
    pub exchange: Exchange,
    /// Parent series source ID.
    pub series_id: String,
    /// Formatted headline (venue_a); may be null for venue_b.
    #[schema(required = true)]
    pub title: Option<String>,
    /// Compact disambiguator (strike or close time).
    #[schema(required = true)]
    pub subtitle: Option<String>,
    /// Market question text.
    pub question: String,
    pub status: Status,
    /// Traded volume.
    pub volume: f64,
    /// Liquidity.
    pub liquidity: f64,
    /// Last YES price as the venue reports it, four-decimal string (`"0.5300"`); before the first trade the
    /// venue's own value (`"0.0000"` on both venues), never null.
    #[schema(examples("0.5300"))]
    pub last_yes_price: String,
    /// Last NO price, four-decimal string: `1 − last_yes_price` unless the venue gives its own; never null.
    #[schema(examples("0.4700"))]
    pub last_no_price: String,
    /// Parent event source ID.
    pub event_id: String,
    /// Settlement time when closed (the venue's settlement time, or its close time until it settles), else
    /// null.
    #[schema(required = true, format = DateTime)]
    pub settled_at: Option<String>,
    /// Start of the window the market settles on (a price window's start), null when the venue states none.
    /// With `window_end` it tells apart markets of one series that share a title.
    #[schema(required = true, format = DateTime)]
    pub window_start: Option<String>,
    /// End of that window, when the venue closes trading on the market; null when the venue states none.
    #[schema(required = true, format = DateTime)]
    pub window_end: Option<String>,
}

impl From<StoredMarket> for MarketOut {
    fn from(s: StoredMarket) -> Self {
        let m = s.market;
        // A venue that sent no last price at all (rows stored before the venue's "0.0000" was kept, too)
        // reads as never traded: the venue's own value for that case.
        let last_yes = m.last_yes_price.unwrap_or(Price::ZERO);
        MarketOut {
            market_id: m.market_id,
            exchange: m.exchange,
            series_id: m.series_id,
            title: m.title,
            subtitle: m.subtitle,
            question: m.question,
            status: m.status,
            volume: dollars(m.volume),
            liquidity: dollars(m.liquidity),
            last_yes_price: last_yes.to_string4(),
            last_no_price: m.last_no_price.unwrap_or(last_yes.complement()).to_string4(),
            event_id: m.event_id,
            settled_at: iso_opt(m.settled_at),
            window_start: iso_opt(m.window_start),
            window_end: iso_opt(m.window_end),
        }
    }
}

/// An event of the recent feed: the event object plus when it was first ingested.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecentEventOut {
    #[serde(flatten)]
    pub event: EventOut,
    /// When the service first saw the event.
    #[schema(format = DateTime)]
    pub discovered_at: String,
}

/// A market of the recent feed: the market object plus when it was first ingested.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecentMarketOut {
    #[serde(flatten)]
    pub market: MarketOut,
    /// When the service first saw the market.
    #[schema(format = DateTime)]
    pub discovered_at: String,
}

/// The combined search result.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CombinedOut {
    pub series: Vec<SeriesOut>,
    pub events: Vec<EventOut>,
    pub markets: Vec<MarketOut>,
}
