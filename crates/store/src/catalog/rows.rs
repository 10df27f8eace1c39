//! The catalog's rows: the column lists its reads select and their decoders into domain types (also used by
//! the arbitrage concern, which reads markets beside its pairs).

use crossbook_core::{Amount, Event, Market, Price, Series, Timestamp};

use super::StoredMarket;
use crate::{
    StoreResult,
    codec::{Cols, exchange, interval, status},
};

/// Columns of `series` read by [`series_row`], for `SELECT` lists (alias `s`).
pub(crate) const SERIES_COLS: &str =
    "s.exchange, s.series_id, s.title, s.slug, s.url, s.category, s.status, s.discovered_at";

pub(crate) fn series_row(r: &impl Cols) -> StoreResult<(Series, Timestamp)> {
    let s = Series {
        exchange: exchange(&r.text("exchange")?)?,
        series_id: r.text("series_id")?,
        title: r.text("title")?,
        slug: r.opt_text("slug")?,
        url: r.opt_text("url")?,
        category: r.opt_text("category")?,
        status: status(&r.text("status")?)?,
    };
    Ok((s, Timestamp::from_millis(r.int("discovered_at")?)))
}

/// Columns of `events` read by [`event_row`] (alias `e`).
pub(crate) const EVENT_COLS: &str = "e.exchange, e.event_id, e.series_id, e.title, e.subtitle, e.slug, e.url, \
     e.image_url, e.category, e.status, e.interval_code, e.window_start, e.window_end, e.volume_24h, e.discovered_at";

pub(crate) fn event_row(r: &impl Cols) -> StoreResult<(Event, Timestamp)> {
    let e = Event {
        exchange: exchange(&r.text("exchange")?)?,
        event_id: r.text("event_id")?,
        series_id: r.text("series_id")?,
        title: r.text("title")?,
        subtitle: r.opt_text("subtitle")?,
        slug: r.opt_text("slug")?,
        url: r.opt_text("url")?,
        image_url: r.opt_text("image_url")?,
        category: r.opt_text("category")?,
        status: status(&r.text("status")?)?,
        interval_code: interval(r.opt_text("interval_code")?)?,
        window_start: r.opt_int("window_start")?.map(Timestamp::from_millis),
        window_end: r.opt_int("window_end")?.map(Timestamp::from_millis),
        volume_24h: r.opt_int("volume_24h")?.map(Amount::from_micros),
    };
    Ok((e, Timestamp::from_millis(r.int("discovered_at")?)))
}

/// Columns of `markets` read by [`market_row`] (alias `m`).
pub(crate) const MARKET_COLS: &str = "m.exchange, m.market_id, m.event_id, m.series_id, m.title, m.subtitle, \
     m.question, m.description, m.slug, m.url, m.category, m.status, m.interval_code, m.window_start, \
     m.window_end, m.volume, m.volume_24h, m.liquidity, m.open_interest, m.last_yes_price, m.last_no_price, \
     m.settled_at, m.source_id, m.yes_token_id, m.no_token_id, m.resolution_source, m.discovered_at";

pub(crate) fn market_row(r: &impl Cols) -> StoreResult<StoredMarket> {
    let market = Market {
        exchange: exchange(&r.text("exchange")?)?,
        market_id: r.text("market_id")?,
        event_id: r.text("event_id")?,
        series_id: r.text("series_id")?,
        title: r.opt_text("title")?,
        subtitle: r.opt_text("subtitle")?,
        question: r.text("question")?,
        description: r.opt_text("description")?,
        slug: r.opt_text("slug")?,
        url: r.opt_text("url")?,
        category: r.opt_text("category")?,
        status: status(&r.text("status")?)?,
        interval_code: interval(r.opt_text("interval_code")?)?,
        window_start: r.opt_int("window_start")?.map(Timestamp::from_millis),
        window_end: r.opt_int("window_end")?.map(Timestamp::from_millis),
        volume: Amount::from_micros(r.int("volume")?),
        volume_24h: Amount::from_micros(r.int("volume_24h")?),
        liquidity: Amount::from_micros(r.int("liquidity")?),
        open_interest: Amount::from_micros(r.int("open_interest")?),
        last_yes_price: r.opt_int("last_yes_price")?.map(Price::from_micros),
        last_no_price: r.opt_int("last_no_price")?.map(Price::from_micros),
        settled_at: r.opt_int("settled_at")?.map(Timestamp::from_millis),
        source_id: r.opt_text("source_id")?,
        yes_token_id: r.opt_text("yes_token_id")?,
        no_token_id: r.opt_text("no_token_id")?,
        resolution_source: r.opt_text("resolution_source")?,
    };
    Ok(StoredMarket {
        market,
        discovered_at: Timestamp::from_millis(r.int("discovered_at")?),
    })
}
