//! venue_b wire types → core domain types. Nothing past this module knows a Polymarket field name.
//!
//! - Market id = condition id; event id = Gamma event id; series id = Gamma series id (else the series slug,
//!   else the event itself for events outside any series).
//! - YES = the outcome labelled "Yes" when there is one, else the first outcome ("Up", the first team);
//!   `yes_token_id`/`no_token_id` follow that choice.
//! - BTC up/down windows (B.6): `btc-updown-<len>-<unix>` slugs, the hourly and daily
//!   `bitcoin-up-or-down-…-et` slugs, and the series recurrence; the window comes from `eventStartTime` /
//!   `startTime` and `endDate` (never `startDate`, the listing time), with the slug as a fallback.
//! - Prices and sizes are exact micro-units; books are sorted best first whatever order they came in.

use crossbook_core::{
    Amount, BookSnapshot, Category, Event, Exchange, IntervalCode, Level, Market, Outcome, Price, Series, Status,
    TakerSide, Timestamp, Trade,
};
use sha2::{Digest, Sha256};
use tracing::debug;

use super::model;
use crate::{
    classify::{Window, category_of, interval_from_length, yes_index},
    eastern::{eastern_to_utc, month_from_name},
    error::VenueError,
    wire::{Lenient, Num},
};

const EX: Exchange = Exchange::VenueB;

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_ref().filter(|t| !t.trim().is_empty()).cloned()
}

/// The web page of an event.
fn event_url(slug: &str) -> String {
    format!("https://polymarket.com/event/{slug}")
}

/// The normalised category of an event, from its tags, category and series.
pub fn event_category(e: &model::GammaEvent) -> Category {
    let labels = e
        .tags
        .iter()
        .flat_map(|t| t.label.iter().chain(t.slug.iter()))
        .chain(e.category.iter())
        .chain(e.subcategory.iter())
        .map(String::as_str);
    let c = category_of(labels);
    if c == Category::Other && is_btc_up_down(e, None) {
        Category::Crypto
    } else {
        c
    }
}

/// The series an event belongs to.
pub fn event_series(e: &model::GammaEvent, category: Category) -> Series {
    let closed = |c: Option<bool>| {
        if c == Some(true) {
            Status::Closed
        } else {
            Status::Active
        }
    };
    let (id, title, status) = match e.series.first() {
        Some(s) => (
            s.id.to_string(),
            nonempty(&s.title)
                .or_else(|| nonempty(&s.slug))
                .unwrap_or_else(|| s.id.to_string()),
            closed(s.closed),
        ),
        None => match nonempty(&e.series_slug) {
            Some(slug) => (slug.clone(), slug, Status::Active),
            // An event outside any series is its own series.
            None => (
                standalone_series_id(e),
                nonempty(&e.title).unwrap_or_else(|| e.id.to_string()),
                closed(e.closed),
            ),
        },
    };
    Series {
        category: Some(category.as_str().to_string()),
        status,
        ..Series::new(EX, &id, &title)
    }
}

fn standalone_series_id(e: &model::GammaEvent) -> String {
    nonempty(&e.slug).unwrap_or_else(|| e.id.to_string())
}

/// The series id of an event (see [`event_series`]).
pub fn series_id(e: &model::GammaEvent) -> String {
    match e.series.first() {
        Some(s) => s.id.to_string(),
        None => nonempty(&e.series_slug).unwrap_or_else(|| standalone_series_id(e)),
    }
}

fn slug_of(e: &model::GammaEvent, m: Option<&model::GammaMarket>) -> String {
    m.and_then(|m| nonempty(&m.slug))
        .or_else(|| nonempty(&e.slug))
        .or_else(|| nonempty(&e.ticker))
        .unwrap_or_default()
        .to_ascii_lowercase()
}

fn is_btc_up_down(e: &model::GammaEvent, m: Option<&model::GammaMarket>) -> bool {
    let slug = slug_of(e, m);
    let series_slug = e
        .series
        .first()
        .and_then(|s| nonempty(&s.slug))
        .or_else(|| nonempty(&e.series_slug))
        .unwrap_or_default();
    slug.starts_with("btc-updown-")
        || slug.starts_with("bitcoin-up-or-down-")
        || series_slug.starts_with("btc-up-or-down")
}

/// `8am` → 8, `12pm` → 12, `12am` → 0.
fn hour_12(s: &str) -> Option<u8> {
    let (digits, pm) = if let Some(d) = s.strip_suffix("am") {
        (d, false)
    } else {
        (s.strip_suffix("pm")?, true)
    };
    let h: u8 = digits.parse().ok()?;
    if !(1..=12).contains(&h) {
        return None;
    }
    Some(match (h, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (h, false) => h,
        (h, true) => h + 12,
    })
}

/// The window a slug spells out, if any. `year_hint` fills in slugs without a year.
fn window_from_slug(slug: &str, year_hint: i32) -> Option<Window> {
    if let Some(rest) = slug.strip_prefix("btc-updown-") {
        // btc-updown-15m-1778583600
        let (len, unix) = rest.split_once('-')?;
        let interval = interval_from_length(len)?;
        let start = Timestamp::from_secs(unix.parse().ok()?);
        return Some(Window {
            interval,
            start,
            end: Timestamp::from_millis(start.millis() + interval.seconds() * 1000),
        });
    }
    if let Some(rest) = slug.strip_prefix("bitcoin-up-or-down-on-") {
        // bitcoin-up-or-down-on-june-19[-2026]: noon ET the day before → noon ET the named day.
        let parts: Vec<&str> = rest.split('-').collect();
        let month = month_from_name(parts.first()?)?;
        let day: u8 = parts.get(1)?.parse().ok()?;
        let year = parts.get(2).and_then(|y| y.parse().ok()).unwrap_or(year_hint);
        let end = eastern_to_utc(year, month, day, 12, 0)?;
        return Some(Window::ending_at(IntervalCode::H24, end));
    }
    if let Some(rest) = slug.strip_prefix("bitcoin-up-or-down-") {
        // bitcoin-up-or-down-june-19[-2026]-8am-et: the ET clock hour named.
        let parts: Vec<&str> = rest.split('-').collect();
        if parts.last() != Some(&"et") {
            return None;
        }
        let month = month_from_name(parts.first()?)?;
        let day: u8 = parts.get(1)?.parse().ok()?;
        let (year, hour_part) = match parts.len() {
            5 => (parts[2].parse().ok()?, parts[3]),
            4 => (year_hint, parts[2]),
            _ => return None,
        };
        let start = eastern_to_utc(year, month, day, hour_12(hour_part)?, 0)?;
        return Some(Window {
            interval: IntervalCode::H1,
            start,
            end: Timestamp::from_millis(start.millis() + 3_600_000),
        });
    }
    None
}

/// An interval code from a Gamma series recurrence.
fn interval_from_recurrence(r: &str) -> Option<IntervalCode> {
    match r.to_ascii_lowercase().as_str() {
        "hourly" => Some(IntervalCode::H1),
        "daily" => Some(IntervalCode::H24),
        "weekly" => Some(IntervalCode::W1),
        other => interval_from_length(other),
    }
}

/// The BTC up/down window of a market (or of an event, `m = None`), when it is one (B.6).
pub fn window(e: &model::GammaEvent, m: Option<&model::GammaMarket>) -> Option<Window> {
    if !is_btc_up_down(e, m) {
        return None;
    }
    let end_field = m.and_then(|m| m.end_date).or(e.end_date);
    let year_hint = end_field
        .or(e.start_date)
        .map(|t| t.to_datetime().year())
        .unwrap_or_else(|| Timestamp::now().to_datetime().year());
    let from_slug = window_from_slug(&slug_of(e, m), year_hint);
    let start_field = m.and_then(|m| m.event_start_time).or(e.start_time);
    // The venue's own fields are authoritative when both are present and span an interval.
    if let (Some(start), Some(end)) = (start_field, end_field)
        && let Some(w) = Window::from_bounds(start, end)
    {
        return Some(w);
    }
    let interval = from_slug.map(|w| w.interval).or_else(|| {
        e.series
            .first()
            .and_then(|s| s.recurrence.as_deref())
            .and_then(interval_from_recurrence)
    })?;
    let len = interval.seconds() * 1000;
    let start = start_field
        .or(from_slug.map(|w| w.start))
        .or(end_field.map(|end| Timestamp::from_millis(end.millis() - len)))?;
    Some(Window {
        interval,
        start,
        end: Timestamp::from_millis(start.millis() + len),
    })
}

fn amount_of(name: &str, v: &Option<Num>) -> Result<Option<Amount>, String> {
    v.as_ref()
        .map(|n| n.amount().map_err(|e| format!("{name}: {e}")))
        .transpose()
}

fn price_of(name: &str, v: &Num) -> Result<Price, String> {
    in_range(name, v, v.price().map_err(|e| format!("{name}: {e}"))?)
}

fn in_range(name: &str, v: &Num, p: Price) -> Result<Price, String> {
    if p < Price::ZERO || p > Price::ONE {
        return Err(format!("{name}: price {v} outside [0, 1]"));
    }
    Ok(p)
}

/// A book level's price, exactly (see [`Num::price_exact`]).
fn level_price(name: &str, v: &Num) -> Result<Price, String> {
    in_range(name, v, v.price_exact().map_err(|e| format!("{name}: {e}"))?)
}

/// A market of event `e` (series `series_id`, `category`).
pub fn market(
    e: &model::GammaEvent,
    m: &model::GammaMarket,
    series_id: &str,
    category: Category,
) -> Result<Market, VenueError> {
    market_inner(e, m, series_id, category)
        .map_err(|reason| VenueError::malformed(EX, "market", reason, &format!("{m:?}")))
}

fn market_inner(
    e: &model::GammaEvent,
    m: &model::GammaMarket,
    series_id: &str,
    category: Category,
) -> Result<Market, String> {
    let condition_id = nonempty(&m.condition_id).ok_or("no conditionId")?;
    let question = nonempty(&m.question)
        .or_else(|| nonempty(&e.title))
        .unwrap_or_else(|| condition_id.clone());
    let outcomes = &m.outcomes.0;
    let tokens = m.outcome_ids();
    let yes = yes_index(outcomes);
    let no = usize::from(yes == 0);
    if !tokens.is_empty() && tokens.len() != 2 {
        return Err(format!("{} token ids for a binary market", tokens.len()));
    }
    let closed = m.closed == Some(true) || m.archived == Some(true);
    let last_yes = match (&m.last_trade_price, m.outcome_prices.0.get(yes)) {
        (Some(p), _) => {
            let p = price_of("lastTradePrice", p)?;
            Some(if yes == 0 { p } else { p.complement() })
        }
        (None, Some(p)) => Some(price_of("outcomePrices", &Num(p.clone()))?),
        (None, None) => None,
    };
    let window = window(e, Some(m));
    let event_slug = nonempty(&e.slug).or_else(|| nonempty(&m.slug));
    Ok(Market {
        subtitle: nonempty(&m.group_item_title),
        description: nonempty(&m.description),
        slug: nonempty(&m.slug),
        url: event_slug.as_deref().map(event_url),
        category: Some(category.as_str().to_string()),
        status: if closed { Status::Closed } else { Status::Active },
        interval_code: window.map(|w| w.interval),
        window_start: window.map(|w| w.start),
        window_end: window.map(|w| w.end),
        volume: amount_of("volume", &m.volume.clone().or(m.volume_num.clone()))?.unwrap_or_default(),
        volume_24h: amount_of("volume24hr", &m.volume24hr)?.unwrap_or_default(),
        liquidity: amount_of("liquidity", &m.liquidity.clone().or(m.liquidity_num.clone()))?.unwrap_or_default(),
        last_yes_price: last_yes,
        last_no_price: last_yes.map(Price::complement),
        settled_at: if closed {
            m.closed_time.or(e.closed_time).or(m.end_date)
        } else {
            None
        },
        source_id: m.id.as_ref().map(Num::to_string),
        yes_token_id: tokens.get(yes).cloned(),
        no_token_id: tokens.get(no).cloned(),
        // The market's own statement, else its event's (Gamma repeats it on both, but either may be empty).
        resolution_source: nonempty(&m.resolution_source).or_else(|| nonempty(&e.resolution_source)),
        ..Market::new(EX, &condition_id, &e.id.to_string(), series_id, &question)
    })
}

/// An event with its (already normalised) markets.
pub fn event(
    e: &model::GammaEvent,
    markets: &[Market],
    series_id: &str,
    category: Category,
) -> Result<Event, VenueError> {
    let first = e.markets.iter().find_map(|m| match m {
        Lenient::Ok(m) => Some(m),
        Lenient::Bad { .. } => None,
    });
    let window = window(e, first);
    let closed = e.closed == Some(true)
        || e.archived == Some(true)
        || (!markets.is_empty() && markets.iter().all(|m| m.status == Status::Closed));
    let volume_24h = amount_of("volume24hr", &e.volume24hr)
        .map_err(|reason| VenueError::malformed(EX, "event", reason, &format!("{e:?}")))?;
    let title = nonempty(&e.title).unwrap_or_else(|| e.id.to_string());
    Ok(Event {
        subtitle: nonempty(&e.subtitle),
        slug: nonempty(&e.slug),
        url: nonempty(&e.slug).as_deref().map(event_url),
        image_url: nonempty(&e.image).or_else(|| nonempty(&e.icon)),
        category: Some(category.as_str().to_string()),
        status: if closed { Status::Closed } else { Status::Active },
        interval_code: window.map(|w| w.interval),
        window_start: window.map(|w| w.start),
        window_end: window.map(|w| w.end),
        volume_24h,
        ..Event::new(EX, &e.id.to_string(), series_id, &title)
    })
}

fn levels(name: &str, ls: &[model::BookLevel]) -> Result<Vec<Level>, String> {
    ls.iter()
        .map(|l| {
            let price = level_price(name, &l.price)?;
            let size = l.size.amount().map_err(|e| format!("{name} size: {e}"))?;
            if size.micros() < 0 {
                return Err(format!("{name}: negative size {}", l.size));
            }
            Ok(Level { price, size })
        })
        .collect()
}

/// A token's book (REST `/book`, `/books`, WS `book`), sorted best first: the venue sends both ladders
/// best-last, the docs say otherwise, so order is never trusted.
pub fn book(b: &model::OrderBookSummary, now: Timestamp) -> Result<BookSnapshot, VenueError> {
    let inner = || -> Result<BookSnapshot, String> {
        let mut snap = BookSnapshot {
            exchange: EX,
            market_id: b.market.clone(),
            asset_id: Some(b.asset_id.clone()),
            timestamp: b.timestamp.map(|t| t.timestamp()).unwrap_or(now),
            bids: levels("bids", &b.bids)?,
            asks: levels("asks", &b.asks)?,
            no_bids: Vec::new(),
        };
        snap.normalise();
        Ok(snap)
    };
    inner().map_err(|reason| VenueError::malformed(EX, "book", reason, &format!("{b:?}")))
}

/// The taker side of a `BUY`/`SELL` label.
pub fn taker_side(s: &str) -> Option<TakerSide> {
    match s.to_ascii_uppercase().as_str() {
        "BUY" => Some(TakerSide::Buy),
        "SELL" => Some(TakerSide::Sell),
        _ => None,
    }
}

/// A stable id for a Data API trade, which has none: the hash of the fields that identify a fill
/// (PROTOCOLS B.4: transaction, token, side, size, price, wallet), prefixed with the transaction hash.
pub fn data_trade_id(t: &model::DataTrade) -> String {
    let mut h = Sha256::new();
    for part in [
        t.transaction_hash.as_deref().unwrap_or(""),
        &t.asset,
        &t.side.to_ascii_uppercase(),
        &t.size.0,
        &t.price.0,
        t.proxy_wallet.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    if t.transaction_hash.is_none() {
        h.update(t.timestamp.0.as_bytes());
    }
    let digest = h.finalize();
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    match &t.transaction_hash {
        Some(tx) => format!("{tx}:{hex}"),
        None => hex,
    }
}

/// The transaction hash of a trade id made by [`data_trade_id`], when the venue sent one (the part before
/// the `:`).
pub fn transaction_hash_of(trade_id: &str) -> Option<&str> {
    trade_id.split_once(':').map(|(tx, _)| tx).filter(|tx| !tx.is_empty())
}

/// A Data API trade of `market`.
pub fn trade(t: &model::DataTrade, market: &Market) -> Result<Trade, VenueError> {
    let inner = || -> Result<Trade, String> {
        let outcome = if market.yes_token_id.as_deref() == Some(t.asset.as_str()) {
            Outcome::Yes
        } else if market.no_token_id.as_deref() == Some(t.asset.as_str()) {
            Outcome::No
        } else {
            return Err(format!("token {} is not one of the market's", t.asset));
        };
        let side = taker_side(&t.side).ok_or_else(|| format!("unknown side {:?}", t.side))?;
        // The Data API's price is the fill's dollars over its shares, an average that can run past six
        // decimals: it is stored rounded half-up to a micro-dollar, and each rounding is counted and logged
        // with the venue's text (which the trade id keeps).
        let (price, rounded) = t.price.price_rounding().map_err(|e| format!("price: {e}"))?;
        let price = in_range("price", &t.price, price)?;
        if rounded {
            metrics::counter!("crossbook_venue_prices_rounded_total", "venue" => EX.as_str(), "field" => "trade_price")
                .increment(1);
            debug!(venue = %EX, price = %t.price, stored_micros = price.micros(), "trade price rounded to a micro-dollar");
        }
        let size = t.size.amount().map_err(|e| format!("size: {e}"))?;
        if size.micros() <= 0 {
            return Err(format!("size {} is not positive", t.size));
        }
        let ts = t
            .timestamp
            .integer()
            .ok_or_else(|| format!("timestamp: not an integer: {}", t.timestamp))?;
        // Seconds on the Data API; tolerate milliseconds.
        let executed_at = if ts > 100_000_000_000 {
            Timestamp::from_millis(ts)
        } else {
            Timestamp::from_secs(ts)
        };
        Ok(Trade {
            exchange: EX,
            source_trade_id: data_trade_id(t),
            market_id: market.market_id.clone(),
            event_id: market.event_id.clone(),
            executed_at,
            taker_side: side,
            outcome,
            price,
            size,
        })
    };
    inner().map_err(|reason| VenueError::malformed(EX, "trade", reason, &format!("{t:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAMMA_EVENT: &str = include_str!("../../tests/fixtures/polymarket_gamma_event.json");
    const CLOB_BOOK: &str = include_str!("../../tests/fixtures/polymarket_clob_book.json");
    const DATA_TRADES: &str = include_str!("../../tests/fixtures/polymarket_data_api_trades.json");
    const UP_TOKEN: &str = "48418917734180607831833027288777571190488909295977497623601373906809754084036";
    const DOWN_TOKEN: &str = "14943202171143669362180565155331992758433128192256190594100236888666963607938";

    fn sample() -> (model::GammaEvent, model::GammaMarket) {
        let page: model::GammaPage<model::GammaEvent> = serde_json::from_str(GAMMA_EVENT).unwrap();
        let Lenient::Ok(e) = page.items.into_iter().next().unwrap() else {
            panic!("sample event decodes")
        };
        let Lenient::Ok(m) = e.markets[0].clone() else {
            panic!("sample market decodes")
        };
        (e, m)
    }

    fn iso(t: Option<Timestamp>) -> Option<String> {
        t.map(|t| t.to_iso())
    }

    fn lv(price: &str, size: &str) -> Level {
        Level {
            price: price.parse().unwrap(),
            size: size.parse().unwrap(),
        }
    }

    #[test]
    fn sample_event_series_and_market() {
        let (e, m) = sample();
        let cat = event_category(&e);
        assert_eq!(cat, Category::Crypto);
        let s = event_series(&e, cat);
        assert_eq!(
            (s.series_id.as_str(), s.title.as_str()),
            ("10192", "BTC Up or Down 15m")
        );
        assert_eq!(s.slug, None, "null for venue_b");
        assert_eq!(series_id(&e), "10192");

        let mk = market(&e, &m, "10192", cat).unwrap();
        assert_eq!(mk.exchange, Exchange::VenueB);
        assert_eq!(
            mk.market_id,
            "0x6f1c2a9e4b7d03a55e8c91f2d4b6a7c8e9f0a1b2c3d4e5f60718293a4b5c6d7e"
        );
        assert_eq!((mk.event_id.as_str(), mk.series_id.as_str()), ("473201", "10192"));
        assert_eq!(mk.question, "Bitcoin Up or Down - May 12, 7:00AM-7:15AM ET");
        assert_eq!(mk.title, None);
        assert_eq!(
            mk.yes_token_id.as_deref(),
            Some(UP_TOKEN),
            "YES = Up, the first outcome"
        );
        assert_eq!(mk.no_token_id.as_deref(), Some(DOWN_TOKEN));
        assert_eq!(mk.interval_code, Some(IntervalCode::M15));
        assert_eq!(iso(mk.window_start).as_deref(), Some("2026-05-12T11:00:00.000Z"));
        assert_eq!(iso(mk.window_end).as_deref(), Some("2026-05-12T11:15:00.000Z"));
        assert_eq!(mk.last_yes_price, Some(Price::from_micros(520_000)));
        assert_eq!(mk.last_no_price, Some(Price::from_micros(480_000)));
        assert_eq!(mk.volume, Amount::from_micros(15_230_552_104));
        assert_eq!(mk.volume_24h, Amount::from_micros(15_230_552_104));
        assert_eq!(mk.liquidity, Amount::from_micros(48_211_447_100));
        assert_eq!(mk.status, Status::Active);
        assert_eq!(mk.settled_at, None);
        assert_eq!(mk.source_id.as_deref(), Some("2228960"));
        assert_eq!(
            mk.resolution_source.as_deref(),
            Some("https://data.chain.link/streams/btc-usd")
        );
        // Stated on the event only: the event's; stated nowhere: none.
        let bare = model::GammaMarket {
            resolution_source: Some(" ".into()),
            ..m.clone()
        };
        assert_eq!(
            market(&e, &bare, "10192", cat).unwrap().resolution_source.as_deref(),
            Some("https://data.chain.link/streams/btc-usd")
        );
        let nowhere = model::GammaEvent {
            resolution_source: None,
            ..e.clone()
        };
        assert_eq!(market(&nowhere, &bare, "10192", cat).unwrap().resolution_source, None);
        assert_eq!(mk.slug.as_deref(), Some("btc-updown-15m-1778583600"));
        assert_eq!(
            mk.url.as_deref(),
            Some("https://polymarket.com/event/btc-updown-15m-1778583600")
        );
        assert_eq!(mk.category.as_deref(), Some("crypto"));

        let ev = event(&e, std::slice::from_ref(&mk), "10192", cat).unwrap();
        assert_eq!(ev.event_id, "473201");
        assert_eq!(ev.slug.as_deref(), Some("btc-updown-15m-1778583600"));
        assert_eq!(ev.interval_code, Some(IntervalCode::M15));
        assert_eq!(ev.window_start, mk.window_start);
        assert_eq!(ev.window_end, mk.window_end);
        assert!(ev.image_url.is_some());
        assert_eq!(ev.volume_24h, Some(Amount::from_micros(15_230_552_104)));
        assert_eq!(ev.status, Status::Active);
    }

    #[test]
    fn window_never_uses_the_listing_time() {
        let (mut e, mut m) = sample();
        e.start_time = None;
        m.event_start_time = None;
        // startDate is a day earlier (listing); the slug's epoch is the window start.
        let w = window(&e, Some(&m)).unwrap();
        assert_eq!(w.start.to_iso(), "2026-05-12T11:00:00.000Z");
        assert_eq!(w.end.to_iso(), "2026-05-12T11:15:00.000Z");
    }

    fn up_down(slug: &str, end: Option<&str>) -> model::GammaEvent {
        serde_json::from_value(serde_json::json!({
            "id": "1", "slug": slug, "endDate": end, "title": "Bitcoin Up or Down"
        }))
        .unwrap()
    }

    #[test]
    fn windows_from_slugs() {
        // 5m: epoch is the start.
        let w = window(&up_down("btc-updown-5m-1778583600", None), None).unwrap();
        assert_eq!(
            (w.interval, w.start.secs(), w.end.secs()),
            (IntervalCode::M5, 1_778_583_600, 1_778_583_900)
        );
        // Hourly: the ET clock hour named (EDT in June: 8am ET = 12:00Z).
        let w = window(&up_down("bitcoin-up-or-down-june-19-2026-8am-et", None), None).unwrap();
        assert_eq!(w.interval, IntervalCode::H1);
        assert_eq!(w.start.to_iso(), "2026-06-19T12:00:00.000Z");
        assert_eq!(w.end.to_iso(), "2026-06-19T13:00:00.000Z");
        // Older hourly slug without a year: the year comes from endDate. 12pm ET in January = 17:00Z.
        let w = window(
            &up_down("bitcoin-up-or-down-january-5-12pm-et", Some("2026-01-05T18:00:00Z")),
            None,
        )
        .unwrap();
        assert_eq!(w.start.to_iso(), "2026-01-05T17:00:00.000Z");
        // Daily: noon ET the day before to noon ET the named day.
        let w = window(&up_down("bitcoin-up-or-down-on-june-19-2026", None), None).unwrap();
        assert_eq!(w.interval, IntervalCode::H24);
        assert_eq!(w.start.to_iso(), "2026-06-18T16:00:00.000Z");
        assert_eq!(w.end.to_iso(), "2026-06-19T16:00:00.000Z");
        // 4h is not an interval code.
        assert_eq!(window(&up_down("btc-updown-4h-1778587200", None), None), None);
        // Not an up/down event.
        assert_eq!(window(&up_down("will-btc-hit-100k", None), None), None);
        // Series recurrence and explicit times, slug unknown.
        let weekly: model::GammaEvent = serde_json::from_value(serde_json::json!({
            "id": "2", "slug": "btc-weekly-up-down", "series": [{"id": "7", "slug": "btc-up-or-down-weekly", "recurrence": "weekly"}],
            "startTime": "2026-05-11T16:00:00Z", "endDate": "2026-05-18T16:00:00Z"
        }))
        .unwrap();
        assert_eq!(window(&weekly, None).map(|w| w.interval), Some(IntervalCode::W1));
    }

    fn market_with(outcomes: &str, extra: serde_json::Value) -> (model::GammaEvent, model::GammaMarket) {
        let mut m = serde_json::json!({
            "conditionId": "0xabc", "question": "Lakers vs Celtics", "outcomes": outcomes,
            "clobTokenIds": "[\"111\", \"222\"]",
        });
        if let (Some(m), Some(x)) = (m.as_object_mut(), extra.as_object()) {
            m.extend(x.clone());
        }
        let e: model::GammaEvent = serde_json::from_value(serde_json::json!({
            "id": "9", "slug": "nba-lal-bos-2026-05-12", "title": "Lakers vs Celtics",
            "tags": [{"id": "1", "label": "Sports", "slug": "sports"}, {"id": "2", "label": "NBA", "slug": "nba"}]
        }))
        .unwrap();
        (e, serde_json::from_value(m).unwrap())
    }

    #[test]
    fn yes_side_of_team_and_yes_no_markets() {
        let (e, m) = market_with("[\"Lakers\", \"Celtics\"]", serde_json::json!({}));
        let cat = event_category(&e);
        assert_eq!(cat, Category::Sports);
        let mk = market(&e, &m, &series_id(&e), cat).unwrap();
        assert_eq!(
            (mk.yes_token_id.as_deref(), mk.no_token_id.as_deref()),
            (Some("111"), Some("222"))
        );
        assert_eq!(mk.interval_code, None);
        assert_eq!(
            mk.series_id, "nba-lal-bos-2026-05-12",
            "an event outside any series is its own series"
        );

        let (e, m) = market_with(
            "[\"No\", \"Yes\"]",
            serde_json::json!({"outcomePrices": "[\"0.3\", \"0.7\"]"}),
        );
        let mk = market(&e, &m, "s", Category::Other).unwrap();
        assert_eq!(
            (mk.yes_token_id.as_deref(), mk.no_token_id.as_deref()),
            (Some("222"), Some("111"))
        );
        assert_eq!(
            mk.last_yes_price,
            Some(Price::from_micros(700_000)),
            "the Yes outcome's price"
        );

        let (e, m) = market_with("[\"No\", \"Yes\"]", serde_json::json!({"lastTradePrice": 0.25}));
        let mk = market(&e, &m, "s", Category::Other).unwrap();
        assert_eq!(
            mk.last_yes_price,
            Some(Price::from_micros(750_000)),
            "lastTradePrice is the first token's"
        );
    }

    /// A `"v2"` market's outcomes are its `positionIds`, even when it lists `clobTokenIds` too; a market
    /// without `version` (or `"v1"`) keeps its `clobTokenIds`.
    #[test]
    fn v2_markets_use_their_position_ids() {
        let both = serde_json::json!({"clobTokenIds": "[\"111\", \"222\"]", "positionIds": "[\"555\", \"666\"]"});
        let tokens = |extra: serde_json::Value| {
            let mut x = both.clone();
            x.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let (e, m) = market_with("[\"Yes\", \"No\"]", x);
            let mk = market(&e, &m, "s", Category::Other).unwrap();
            (mk.yes_token_id.unwrap(), mk.no_token_id.unwrap())
        };
        assert_eq!(
            tokens(serde_json::json!({"version": "v2"})),
            ("555".into(), "666".into())
        );
        assert_eq!(
            tokens(serde_json::json!({"version": "V2"})),
            ("555".into(), "666".into())
        );
        assert_eq!(
            tokens(serde_json::json!({"version": "v1"})),
            ("111".into(), "222".into())
        );
        assert_eq!(tokens(serde_json::json!({})), ("111".into(), "222".into()));
        // Only the other list present: it is used.
        assert_eq!(
            tokens(serde_json::json!({"version": "v2", "positionIds": null})),
            ("111".into(), "222".into())
        );
        assert_eq!(
            tokens(serde_json::json!({"clobTokenIds": null, "positionIds": ["7", "8"]})),
            ("7".into(), "8".into())
        );
        // A v2 market with three position ids is not a binary market.
        let (e, m) = market_with(
            "[\"A\", \"B\"]",
            serde_json::json!({"version": "v2", "positionIds": "[\"1\", \"2\", \"3\"]"}),
        );
        assert!(market(&e, &m, "s", Category::Other).unwrap_err().is_malformed());
    }

    #[test]
    fn closed_markets_and_malformed_ones() {
        let (e, m) = market_with(
            "[\"Lakers\", \"Celtics\"]",
            serde_json::json!({"closed": true, "closedTime": "2026-05-12 23:10:00+00", "outcomePrices": "[\"1\", \"0\"]"}),
        );
        let mk = market(&e, &m, "s", Category::Sports).unwrap();
        assert_eq!(mk.status, Status::Closed);
        assert_eq!(iso(mk.settled_at).as_deref(), Some("2026-05-12T23:10:00.000Z"));
        assert_eq!(mk.last_yes_price, Some(Price::ONE));
        let ev = event(&e, &[mk], "s", Category::Sports).unwrap();
        assert_eq!(ev.status, Status::Closed, "all markets closed");

        let (e, m) = market_with(
            "[\"A\", \"B\", \"C\"]",
            serde_json::json!({"clobTokenIds": "[\"1\", \"2\", \"3\"]"}),
        );
        assert!(market(&e, &m, "s", Category::Other).unwrap_err().is_malformed());
        let (e, m) = market_with("[\"A\", \"B\"]", serde_json::json!({"conditionId": null}));
        assert!(market(&e, &m, "s", Category::Other).unwrap_err().is_malformed());
        let (e, m) = market_with("[\"A\", \"B\"]", serde_json::json!({"volume": "lots"}));
        let err = market(&e, &m, "s", Category::Other).unwrap_err();
        assert!(err.to_string().contains("lots"), "{err}");
    }

    #[test]
    fn book_sorted_best_first() {
        let b: model::OrderBookSummary = serde_json::from_str(CLOB_BOOK).unwrap();
        let s = book(&b, Timestamp::from_millis(1)).unwrap();
        assert_eq!(s.asset_id.as_deref(), Some(UP_TOKEN));
        assert_eq!(s.timestamp.millis(), 1_778_584_051_466);
        assert_eq!(s.bids.first(), Some(&lv("0.51", "212.49")));
        assert_eq!(s.bids.last(), Some(&lv("0.01", "14468.29")));
        assert!(s.bids.windows(2).all(|w| w[0].price > w[1].price));
        assert_eq!(
            s.asks,
            vec![
                lv("0.52", "310.14"),
                lv("0.53", "143.21"),
                lv("0.54", "555.01"),
                lv("0.58", "715"),
                lv("0.70", "300"),
                lv("0.99", "12884.26"),
            ]
        );
        assert!(s.no_bids.is_empty());
        let bad: model::OrderBookSummary =
            serde_json::from_str(r#"{"market": "0x1", "asset_id": "2", "bids": [{"price": "1.5", "size": "1"}]}"#)
                .unwrap();
        assert!(book(&bad, Timestamp::from_millis(1)).unwrap_err().is_malformed());
    }

    #[test]
    fn data_api_trades_exact_with_stable_ids() {
        let (e, m) = sample();
        let mk = market(&e, &m, "10192", Category::Crypto).unwrap();
        let raw: Vec<Lenient<model::DataTrade>> = serde_json::from_str(DATA_TRADES).unwrap();
        let raw: Vec<model::DataTrade> = raw
            .into_iter()
            .map(|t| match t {
                Lenient::Ok(t) => t,
                Lenient::Bad { error, .. } => panic!("{error}"),
            })
            .collect();
        let t0 = trade(&raw[0], &mk).unwrap();
        assert_eq!((t0.outcome, t0.taker_side), (Outcome::Yes, TakerSide::Buy));
        assert_eq!(t0.price, Price::from_micros(520_000));
        assert_eq!(t0.size, Amount::from_micros(21_300_000));
        assert_eq!(t0.executed_at.millis(), 1_778_584_051_000);
        assert_eq!(t0.event_id, "473201");
        assert!(t0.source_trade_id.starts_with("0x03039ae5"));
        let t1 = trade(&raw[1], &mk).unwrap();
        assert_eq!(
            (t1.outcome, t1.taker_side),
            (Outcome::No, TakerSide::Sell),
            "the Down token"
        );
        assert_eq!(
            (t1.price, t1.size),
            (Price::from_micros(490_000), Amount::from_units(8))
        );
        assert_ne!(t0.source_trade_id, t1.source_trade_id);
        assert_eq!(
            trade(&raw[0], &mk).unwrap().source_trade_id,
            t0.source_trade_id,
            "stable"
        );
        // Two fills of one transaction differ by their other fields.
        let sibling = model::DataTrade {
            size: Num("5".into()),
            ..raw[0].clone()
        };
        assert_ne!(data_trade_id(&sibling), t0.source_trade_id);
        // The transaction hash reads back from the id, and an id without one has none.
        assert!(
            raw[0].transaction_hash.is_some(),
            "the sample trade has a transaction hash"
        );
        assert_eq!(
            transaction_hash_of(&t0.source_trade_id),
            raw[0].transaction_hash.as_deref()
        );
        let no_tx = model::DataTrade {
            transaction_hash: None,
            ..raw[0].clone()
        };
        assert_eq!(transaction_hash_of(&data_trade_id(&no_tx)), None);
        let foreign = model::DataTrade {
            asset: "999".into(),
            ..raw[0].clone()
        };
        assert!(trade(&foreign, &mk).unwrap_err().is_malformed());
    }

    /// A Data API price past six decimals (an average over the fill's maker orders), in both page shapes
    /// with a 78-digit token id: stored rounded half-up to a micro-dollar, while the trade id keeps the
    /// venue's exact text, so two fills that differ only below a micro-dollar stay two trades.
    #[test]
    fn data_api_prices_past_six_decimals_round_half_up_and_keep_distinct_ids() {
        let (e, m) = sample();
        let mut mk = market(&e, &m, "10192", Category::Crypto).unwrap();
        // A token id at the top of the venue's range: 78 digits, past every native integer type.
        const UP_TOKEN: &str = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
        assert_eq!(UP_TOKEN.len(), 78);
        mk.yes_token_id = Some(UP_TOKEN.into());
        let cond = &mk.market_id;
        let v1 = format!(
            r#"[{{"proxyWallet":"0xa","side":"BUY","asset":"{UP_TOKEN}","conditionId":"{cond}","size":10,"price":0.1234567,"timestamp":1778584051,"transactionHash":"0x1"}},
                {{"proxyWallet":"0xa","side":"BUY","asset":"{UP_TOKEN}","conditionId":"{cond}","size":10,"price":0.1234568,"timestamp":1778584051,"transactionHash":"0x1"}}]"#
        );
        let v2 = format!(
            r#"{{"data":[{{"proxy_wallet":"0xa","side":"SELL","asset":"{UP_TOKEN}","condition_id":"{cond}","size":"3.5","price":"0.98765449","timestamp":1778584051466,"transaction_hash":"0x2"}}],"pagination":{{"has_more":false}}}}"#
        );
        let trades = |json: &str| -> Vec<Trade> {
            let page: model::DataTradesPage = serde_json::from_str(json).unwrap();
            page.rows
                .into_iter()
                .map(|r| match r {
                    Lenient::Ok(t) => trade(&t, &mk).unwrap(),
                    Lenient::Bad { error, .. } => panic!("{error}"),
                })
                .collect()
        };
        let got = trades(&v1);
        assert_eq!(got[0].price, Price::from_micros(123_457), "0.1234567 rounds half-up");
        assert_eq!(got[1].price, Price::from_micros(123_457));
        assert_ne!(
            got[0].source_trade_id, got[1].source_trade_id,
            "the ids keep the digits the stored price cannot"
        );
        let got = trades(&v2);
        assert_eq!(got[0].price, Price::from_micros(987_654), "0.98765449 rounds down");
        assert_eq!((got[0].outcome, got[0].taker_side), (Outcome::Yes, TakerSide::Sell));
        assert_eq!(got[0].size, Amount::from_micros(3_500_000));
    }

    /// Book levels on a 0.001 tick (venue_b's BTC windows) come through exactly; a level below a
    /// micro-dollar is refused rather than rounded into a neighbour.
    #[test]
    fn sub_cent_book_levels_are_exact() {
        let b: model::OrderBookSummary = serde_json::from_str(&format!(
            r#"{{"market":"0x1","asset_id":"{UP_TOKEN}","bids":[{{"price":"0.001","size":"5"}},{{"price":"0.487","size":"12.5"}}],"asks":[{{"price":"0.999","size":"1"}},{{"price":"0.489","size":"3"}}]}}"#
        ))
        .unwrap();
        let s = book(&b, Timestamp::from_millis(1)).unwrap();
        let px = |ls: &[Level]| ls.iter().map(|l| l.price.micros()).collect::<Vec<_>>();
        assert_eq!(px(&s.bids), vec![487_000, 1_000]);
        assert_eq!(px(&s.asks), vec![489_000, 999_000]);
        let bad: model::OrderBookSummary =
            serde_json::from_str(r#"{"market":"0x1","asset_id":"2","bids":[{"price":"0.4870001","size":"1"}]}"#)
                .unwrap();
        assert!(book(&bad, Timestamp::from_millis(1)).unwrap_err().is_malformed());
    }
}
