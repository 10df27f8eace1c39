//! venue_a wire types → core domain types. Nothing past this module knows a Kalshi field name.
//!
//! - Prices become exact micro-dollars: `*_dollars` strings are parsed as decimals, legacy integer prices
//!   are cents. Counts become micro-contracts (`*_fp` strings, legacy integers).
//! - A book is two bid ladders: YES bids in `bids`, NO bids in `no_bids`, `asks` empty (core's venue_a
//!   convention). Asks are derived on demand by core ([`BookSnapshot::derived_yes_asks`] /
//!   [`BookSnapshot::derived_no_asks`]).
//! - Interval windows come from the series (`KXBTC15M` is a 15-minute up/down series) and the market's
//!   `open_time`/`close_time` (A.7), with the ET-coded event ticker as a fallback.

use crossbook_core::{
    Amount, BookSnapshot, Category, Event, Exchange, Level, Market, Outcome, Price, Series, Status, TakerSide,
    Timestamp, Trade,
};

use super::model;
use crate::{
    classify::{Window, category_of, interval_from_length},
    eastern::{eastern_to_utc, month_from_name},
    error::VenueError,
    wire::Num,
};

const EX: Exchange = Exchange::VenueA;

/// The web page of a series (its slug is the lower-case ticker).
fn series_url(series_ticker: &str) -> String {
    format!("https://kalshi.com/markets/{}", series_ticker.to_ascii_lowercase())
}

/// The series ticker of an event or market ticker: the part before the first `-`.
pub fn series_of_ticker(ticker: &str) -> &str {
    ticker.split('-').next().unwrap_or(ticker)
}

/// The event ticker of a market ticker: everything before the last `-`.
pub fn event_of_market_ticker(ticker: &str) -> &str {
    ticker.rsplit_once('-').map_or(ticker, |(e, _)| e)
}

/// The normalised category of a series.
pub fn series_category(s: &model::Series) -> Category {
    category_of(
        s.category
            .iter()
            .map(String::as_str)
            .chain(s.tags.iter().map(String::as_str)),
    )
}

/// A series.
pub fn series(s: &model::Series) -> Series {
    let title = if s.title.trim().is_empty() {
        s.ticker.clone()
    } else {
        s.title.clone()
    };
    Series {
        slug: Some(s.ticker.to_ascii_lowercase()),
        url: Some(series_url(&s.ticker)),
        category: Some(series_category(s).as_str().to_string()),
        ..Series::new(EX, &s.ticker, &title)
    }
}

/// A placeholder series for an event whose series could not be read (the event still needs its parent).
pub fn bare_series(series_ticker: &str, category: Category) -> Series {
    Series {
        slug: Some(series_ticker.to_ascii_lowercase()),
        url: Some(series_url(series_ticker)),
        category: Some(category.as_str().to_string()),
        ..Series::new(EX, series_ticker, series_ticker)
    }
}

/// Whether a returned status means the market still trades or will (`initialized` markets are listed
/// ahead of their window). The enum is open: an unknown value is judged by the close time.
fn status(raw: &str, close: Option<Timestamp>, now: Timestamp) -> Status {
    match raw.to_ascii_lowercase().as_str() {
        "active" | "open" | "initialized" | "unopened" | "inactive" | "paused" => Status::Active,
        "closed" | "determined" | "disputed" | "amended" | "finalized" | "settled" => Status::Closed,
        _ => match close {
            Some(c) if c < now => Status::Closed,
            _ => Status::Active,
        },
    }
}

fn is_settled(raw: &str) -> bool {
    matches!(
        raw.to_ascii_lowercase().as_str(),
        "finalized" | "settled" | "determined" | "amended"
    )
}

fn price_field(name: &str, v: &Num) -> Result<Price, String> {
    let p = v.price().map_err(|e| format!("{name}: {e}"))?;
    if p < Price::ZERO || p > Price::ONE {
        return Err(format!("{name}: price {v} outside [0, 1]"));
    }
    Ok(p)
}

/// A book level's price: exact micro-dollars in `[0, 1]`. Digits below a micro-dollar are refused (the
/// level malformed), not rounded: rounding could put two of the venue's levels on one price and merge them.
fn level_price_field(name: &str, v: &Num) -> Result<Price, String> {
    let p = v.price_exact().map_err(|e| format!("{name}: {e}"))?;
    if p < Price::ZERO || p > Price::ONE {
        return Err(format!("{name}: price {v} outside [0, 1]"));
    }
    Ok(p)
}

fn amount_field(name: &str, v: &Num) -> Result<Amount, String> {
    v.amount().map_err(|e| format!("{name}: {e}"))
}

/// A count from the fixed-point field, else from the legacy integer one, else zero.
fn count(fp: &Option<Num>, legacy: &Option<Num>, name: &str) -> Result<Amount, String> {
    match (fp, legacy) {
        (Some(v), _) => amount_field(name, v),
        (None, Some(v)) => amount_field(name, v),
        (None, None) => Ok(Amount::ZERO),
    }
}

/// The interval window of a market of `series_ticker`, when it is a BTC up/down window (A.7).
///
/// A series whose ticker encodes a length (`KXBTC15M`, `KXBTC5M`, `KXBTC1H`) is an up/down series of that
/// length. Any other `KXBTC…` series counts when its market is a binary "at least the start price"
/// (`greater_or_equal`) market whose `open_time`–`close_time` span is exactly an interval. The `KXBTCD`
/// hourly ladder and `KXBTC` ranges ("above $X", brackets) are not up/down markets and get no window:
/// pairing them with the other venue's up/down windows would compare different questions.
pub fn window(series_ticker: &str, m: &model::Market) -> Option<Window> {
    let rest = series_ticker.strip_prefix("KXBTC")?;
    if let Some(interval) = interval_from_length(rest) {
        if let (Some(open), Some(close)) = (m.open_time, m.close_time)
            && let Some(w) = Window::from_bounds(open, close)
            && w.interval == interval
        {
            return Some(w);
        }
        let close = m.close_time.or_else(|| close_from_event_ticker(&m.event_ticker))?;
        return Some(Window::ending_at(interval, close));
    }
    let up_down =
        m.strike_type.as_deref() == Some("greater_or_equal") && m.market_type.as_deref().is_none_or(|t| t == "binary");
    if !up_down {
        return None;
    }
    Window::from_bounds(m.open_time?, m.close_time?)
}

/// The close time encoded in an event ticker: `SERIES-YYMONDDHHMM` or `SERIES-YYMONDDHH`, US Eastern.
pub fn close_from_event_ticker(event_ticker: &str) -> Option<Timestamp> {
    let code = event_ticker.split('-').nth(1)?;
    if !(code.len() == 9 || code.len() == 11) || !code.is_ascii() {
        return None;
    }
    let year = 2000 + code.get(0..2)?.parse::<i32>().ok()?;
    let month = month_from_name(code.get(2..5)?)?;
    let day = code.get(5..7)?.parse::<u8>().ok()?;
    let hour = code.get(7..9)?.parse::<u8>().ok()?;
    let minute = match code.get(9..11) {
        Some(m) => m.parse::<u8>().ok()?,
        None => 0,
    };
    eastern_to_utc(year, month, day, hour, minute)
}

/// The resolution source of a series' markets as the venue states it: each `settlement_sources` entry's URL
/// (else its name), joined with `, `; `None` when the series lists none. The URL is preferred because it is
/// what venue_b states (`resolutionSource`), so the two can be compared.
pub fn settlement_sources(s: &model::Series) -> Option<String> {
    let nonempty = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    let parts: Vec<String> = s
        .settlement_sources
        .iter()
        .filter_map(|src| nonempty(&src.url).or_else(|| nonempty(&src.name)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A market of `series_ticker` in `category`, read at `now`. Its `resolution_source` is the market's
/// `rules_primary` (the venue's authoritative resolution text); the connector replaces it with the series'
/// [`settlement_sources`] when it has read the series.
pub fn market(
    m: &model::Market,
    series_ticker: &str,
    category: Category,
    now: Timestamp,
) -> Result<Market, VenueError> {
    market_inner(m, series_ticker, category, now)
        .map_err(|reason| VenueError::malformed(EX, "market", reason, &format!("{m:?}")))
}

fn market_inner(m: &model::Market, series_ticker: &str, category: Category, now: Timestamp) -> Result<Market, String> {
    let nonempty = |s: &Option<String>| s.as_ref().filter(|t| !t.trim().is_empty()).cloned();
    let event_ticker = if m.event_ticker.is_empty() {
        event_of_market_ticker(&m.ticker).to_string()
    } else {
        m.event_ticker.clone()
    };
    let title = nonempty(&m.title);
    let question = title.clone().unwrap_or_else(|| m.ticker.clone());
    let window = window(series_ticker, m);

    let volume = count(&m.volume_fp, &m.volume, "volume_fp")?;
    let last_yes = match (&m.last_price_dollars, &m.last_price) {
        (Some(v), _) => Some(price_field("last_price_dollars", v)?),
        (None, Some(c)) => Some(Price::from_cents(
            c.integer()
                .ok_or_else(|| format!("last_price: not integer cents: {c}"))?,
        )),
        (None, None) => None,
    };
    let liquidity = match (&m.liquidity_dollars, &m.liquidity) {
        (Some(v), _) => amount_field("liquidity_dollars", v)?,
        (None, Some(c)) => Amount::from_micros(
            c.integer()
                .ok_or_else(|| format!("liquidity: not integer cents: {c}"))?
                * 10_000,
        ),
        (None, None) => Amount::ZERO,
    };
    let status = status(&m.status, m.close_time, now);
    // A closed market always has a settlement time: the venue's own once it settled, else when it closed
    // (the API promises `settled_at` on every closed market, and its settled_after/before filters rely on it).
    let settled_at = match status {
        Status::Closed if is_settled(&m.status) => m.settlement_ts.or(m.expected_expiration_time).or(m.close_time),
        Status::Closed => m.settlement_ts.or(m.close_time).or(m.expected_expiration_time),
        Status::Active => m.settlement_ts,
    };
    // A settled market's last price is its payout, as venue_b states it: 1 for the side that won. The
    // recorded outcome is what backtests settle on.
    let last_yes = match (status, m.result.as_deref()) {
        (Status::Closed, Some("yes")) if is_settled(&m.status) => Some(Price::ONE),
        (Status::Closed, Some("no")) if is_settled(&m.status) => Some(Price::ZERO),
        _ => last_yes,
    };
    Ok(Market {
        title,
        subtitle: nonempty(&m.yes_sub_title).or_else(|| nonempty(&m.subtitle)),
        description: nonempty(&m.rules_primary),
        url: Some(series_url(series_ticker)),
        category: Some(category.as_str().to_string()),
        status,
        interval_code: window.map(|w| w.interval),
        window_start: window.map(|w| w.start),
        window_end: window.map(|w| w.end),
        volume,
        volume_24h: count(&m.volume_24h_fp, &m.volume_24h, "volume_24h_fp")?,
        liquidity,
        open_interest: count(&m.open_interest_fp, &m.open_interest, "open_interest_fp")?,
        last_yes_price: last_yes,
        last_no_price: last_yes.map(Price::complement),
        settled_at,
        resolution_source: nonempty(&m.rules_primary),
        ..Market::new(EX, &m.ticker, &event_ticker, series_ticker, &question)
    })
}

/// An event with its (already normalised) markets, in `category`.
pub fn event(e: &model::EventData, markets: &[Market], category: Category) -> Event {
    let series_ticker = if e.series_ticker.is_empty() {
        series_of_ticker(&e.event_ticker).to_string()
    } else {
        e.series_ticker.clone()
    };
    let title = if e.title.trim().is_empty() {
        e.event_ticker.clone()
    } else {
        e.title.clone()
    };
    // The event is one window when all its markets share one.
    let first = markets.first();
    let shared_window = first.and_then(|f| {
        markets
            .iter()
            .all(|m| {
                m.interval_code == f.interval_code && m.window_start == f.window_start && m.window_end == f.window_end
            })
            .then_some((f.interval_code, f.window_start, f.window_end))
    });
    let (interval_code, window_start, window_end) = shared_window.unwrap_or((None, None, None));
    let status = if markets.is_empty() || markets.iter().any(|m| m.status == Status::Active) {
        Status::Active
    } else {
        Status::Closed
    };
    let volume_24h =
        (!markets.is_empty()).then(|| markets.iter().fold(Amount::ZERO, |a, m| a.saturating_add(m.volume_24h)));
    Event {
        subtitle: e.sub_title.clone().filter(|s| !s.trim().is_empty()),
        url: Some(series_url(&series_ticker)),
        category: Some(category.as_str().to_string()),
        status,
        interval_code,
        window_start,
        window_end,
        volume_24h,
        ..Event::new(EX, &e.event_ticker, &series_ticker, &title)
    }
}

/// How prices of a ladder are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceUnit {
    /// `"0.4700"` (current).
    Dollars,
    /// `47` (before 2026).
    Cents,
}

/// One level of a ladder.
pub fn level(l: &model::WireLevel, unit: PriceUnit) -> Result<Level, String> {
    let price = match unit {
        PriceUnit::Dollars => level_price_field("price", &l.0)?,
        PriceUnit::Cents => {
            let c =
                l.0.integer()
                    .ok_or_else(|| format!("price: not integer cents: {}", l.0))?;
            if !(0..=100).contains(&c) {
                return Err(format!("price: {c} cents outside [0, 100]"));
            }
            Price::from_cents(c)
        }
    };
    let size = amount_field("count", &l.1)?;
    if size.micros() < 0 {
        return Err(format!("count: negative size {}", l.1));
    }
    Ok(Level { price, size })
}

fn ladder(levels: &[model::WireLevel], unit: PriceUnit) -> Result<Vec<Level>, String> {
    levels.iter().map(|l| level(l, unit)).collect()
}

/// A book from its two bid ladders, sorted best first.
pub fn book(
    ticker: &str,
    yes: &[model::WireLevel],
    no: &[model::WireLevel],
    unit: PriceUnit,
    timestamp: Timestamp,
) -> Result<BookSnapshot, String> {
    let mut b = BookSnapshot {
        exchange: EX,
        market_id: ticker.to_string(),
        asset_id: None,
        timestamp,
        bids: ladder(yes, unit)?,
        asks: Vec::new(),
        no_bids: ladder(no, unit)?,
    };
    b.normalise();
    Ok(b)
}

/// The REST order book of `ticker` in whichever shape it came: `orderbook_fp` (current) first, then the
/// legacy `orderbook` with dollar strings, then with cents. An unknown ticker answers with empty ladders,
/// which is an empty book here (existence is checked through the catalog, not the book).
pub fn rest_book(
    ticker: &str,
    resp: &model::OrderbookResponse,
    timestamp: Timestamp,
) -> Result<BookSnapshot, VenueError> {
    let result = if let Some(fp) = &resp.orderbook_fp {
        book(ticker, &fp.yes_dollars, &fp.no_dollars, PriceUnit::Dollars, timestamp)
    } else if let Some(ob) = &resp.orderbook {
        match (&ob.yes_dollars, &ob.no_dollars) {
            (None, None) => book(ticker, &ob.yes, &ob.no, PriceUnit::Cents, timestamp),
            (yes, no) => book(
                ticker,
                yes.as_deref().unwrap_or_default(),
                no.as_deref().unwrap_or_default(),
                PriceUnit::Dollars,
                timestamp,
            ),
        }
    } else {
        book(ticker, &[], &[], PriceUnit::Dollars, timestamp)
    };
    result.map_err(|reason| VenueError::malformed(EX, "orderbook", reason, &format!("{resp:?}")))
}

/// Which outcome the taker bought: `taker_outcome_side`, else the deprecated `taker_side`, else the book
/// side (`bid` ≡ yes).
fn taker_outcome(t: &model::Trade) -> Option<Outcome> {
    let side = |s: &str| match s.to_ascii_lowercase().as_str() {
        "yes" | "bid" => Some(Outcome::Yes),
        "no" | "ask" => Some(Outcome::No),
        _ => None,
    };
    t.taker_outcome_side
        .as_deref()
        .and_then(side)
        .or_else(|| t.taker_side.as_deref().and_then(side))
        .or_else(|| t.taker_book_side.as_deref().and_then(side))
}

/// A trade of a market of `event_id`. The taker always buys an outcome on venue_a; the price is that
/// outcome's price.
pub fn trade(t: &model::Trade, event_id: &str) -> Result<Trade, VenueError> {
    trade_inner(t, event_id).map_err(|reason| VenueError::malformed(EX, "trade", reason, &format!("{t:?}")))
}

fn trade_inner(t: &model::Trade, event_id: &str) -> Result<Trade, String> {
    let outcome = taker_outcome(t).ok_or("no taker side")?;
    let leg = |dollars: &Option<Num>, cents: &Option<Num>, name: &str| -> Result<Option<Price>, String> {
        match (dollars, cents) {
            (Some(d), _) => price_field(name, d).map(Some),
            (None, Some(c)) => c
                .integer()
                .map(|c| Some(Price::from_cents(c)))
                .ok_or_else(|| format!("{name}: not integer cents: {c}")),
            (None, None) => Ok(None),
        }
    };
    let yes = leg(&t.yes_price_dollars, &t.yes_price, "yes_price_dollars")?;
    let no = leg(&t.no_price_dollars, &t.no_price, "no_price_dollars")?;
    let price = match outcome {
        Outcome::Yes => yes.or(no.map(Price::complement)),
        Outcome::No => no.or(yes.map(Price::complement)),
    }
    .ok_or("no price")?;
    let size = count(&t.count_fp, &t.count, "count_fp")?;
    if size.micros() <= 0 {
        return Err(format!("count: {size} is not positive"));
    }
    let executed_at = t
        .ts_ms
        .map(Timestamp::from_millis)
        .or(t.created_time)
        .or_else(|| t.ts.as_ref().and_then(Num::integer).map(Timestamp::from_secs))
        .ok_or("no execution time")?;
    Ok(Trade {
        exchange: EX,
        source_trade_id: t.trade_id.clone(),
        market_id: t.ticker.clone(),
        event_id: event_id.to_string(),
        executed_at,
        taker_side: TakerSide::Buy,
        outcome,
        price,
        size,
    })
}

#[cfg(test)]
mod tests {
    use crossbook_core::IntervalCode;

    use super::*;

    const MARKET: &str = include_str!("../../tests/fixtures/kalshi_market.json");
    const ORDERBOOK: &str = include_str!("../../tests/fixtures/kalshi_orderbook.json");
    const ORDERBOOK_TRANSITION: &str =
        include_str!("../../tests/fixtures/variants/kalshi_orderbook_transition_era.json");
    const TRADES: &str = include_str!("../../tests/fixtures/kalshi_trades.json");

    fn sample_market() -> model::Market {
        serde_json::from_str::<model::MarketOne>(MARKET).unwrap().market
    }

    fn iso(t: Option<Timestamp>) -> Option<String> {
        t.map(|t| t.to_iso())
    }

    fn p(s: &str) -> Price {
        s.parse().unwrap()
    }

    fn a(s: &str) -> Amount {
        s.parse().unwrap()
    }

    fn lv(price: &str, size: &str) -> Level {
        Level {
            price: p(price),
            size: a(size),
        }
    }

    #[test]
    fn btc_15m_window_from_open_and_close() {
        let w = window("KXBTC15M", &sample_market()).unwrap();
        assert_eq!(w.interval, IntervalCode::M15);
        assert_eq!(w.start.to_iso(), "2026-05-12T11:00:00.000Z");
        assert_eq!(w.end.to_iso(), "2026-05-12T11:15:00.000Z");
    }

    #[test]
    fn btc_window_from_the_et_ticker_when_times_are_missing() {
        // PROTOCOLS A.7: KXBTC15M-26APR031645 closes 2026-04-03T20:45Z.
        let m = model::Market {
            event_ticker: "KXBTC15M-26APR031645".into(),
            open_time: None,
            close_time: None,
            ..sample_market()
        };
        let w = window("KXBTC15M", &m).unwrap();
        assert_eq!(w.interval, IntervalCode::M15);
        assert_eq!(w.start.to_iso(), "2026-04-03T20:30:00.000Z");
        assert_eq!(w.end.to_iso(), "2026-04-03T20:45:00.000Z");
        assert_eq!(
            iso(close_from_event_ticker("KXBTCD-26APR0318")).as_deref(),
            Some("2026-04-03T22:00:00.000Z")
        );
        assert_eq!(close_from_event_ticker("KXBTC15M"), None);
        assert_eq!(close_from_event_ticker("KXBTC15M-26XYZ031645"), None);
    }

    #[test]
    fn windows_of_other_series() {
        let hourly_up_down = model::Market {
            open_time: Some(Timestamp::parse_iso("2026-05-12T11:00:00Z").unwrap()),
            close_time: Some(Timestamp::parse_iso("2026-05-12T12:00:00Z").unwrap()),
            ..sample_market()
        };
        // A series spelling its length.
        let w = window("KXBTC1H", &hourly_up_down).unwrap();
        assert_eq!(
            (w.interval, iso(Some(w.start))),
            (IntervalCode::H1, Some("2026-05-12T11:00:00.000Z".into()))
        );
        // Any BTC series whose binary "≥ start" market spans exactly an interval.
        assert_eq!(
            window("KXBTCUPDOWN", &hourly_up_down).map(|w| w.interval),
            Some(IntervalCode::H1)
        );
        // The hourly ladder ("above $X", strike_type greater) is not an up/down window.
        let ladder = model::Market {
            strike_type: Some("greater".into()),
            ..hourly_up_down.clone()
        };
        assert_eq!(window("KXBTCD", &ladder), None);
        // Not BTC.
        assert_eq!(window("KXETH15M", &sample_market()), None);
        // A 15M series whose times disagree with its length: the close wins.
        let odd = model::Market {
            open_time: Some(Timestamp::parse_iso("2026-05-11T11:00:00Z").unwrap()),
            ..sample_market()
        };
        let w = window("KXBTC15M", &odd).unwrap();
        assert_eq!(w.start.to_iso(), "2026-05-12T11:00:00.000Z");
    }

    #[test]
    fn market_normalised_exactly() {
        let now = Timestamp::parse_iso("2026-05-12T11:07:00Z").unwrap();
        let m = market(&sample_market(), "KXBTC15M", Category::Crypto, now).unwrap();
        assert_eq!(m.exchange, Exchange::VenueA);
        assert_eq!(m.market_id, "KXBTC15M-26MAY120715-15");
        assert_eq!(m.event_id, "KXBTC15M-26MAY120715");
        assert_eq!(m.series_id, "KXBTC15M");
        assert_eq!(m.title.as_deref(), Some("BTC price up in next 15 mins?"));
        assert_eq!(m.subtitle.as_deref(), Some("Target Price: $80,712.34"));
        assert_eq!(m.category.as_deref(), Some("crypto"));
        // Without the series' sources, the rules text is the venue's statement of the source.
        assert_eq!(
            m.resolution_source.as_deref(),
            Some(
                "If the simple average of the sixty seconds of CF Benchmarks' BRTI before 7:15 AM EDT is at \
                 least the average before 7:00 AM EDT, then the market resolves to Yes."
            )
        );
        assert_eq!(m.status, Status::Active);
        assert_eq!(m.interval_code, Some(IntervalCode::M15));
        assert_eq!(iso(m.window_start).as_deref(), Some("2026-05-12T11:00:00.000Z"));
        assert_eq!(iso(m.window_end).as_deref(), Some("2026-05-12T11:15:00.000Z"));
        assert_eq!(m.last_yes_price, Some(Price::from_micros(480_000)));
        assert_eq!(m.last_no_price, Some(Price::from_micros(520_000)));
        assert_eq!(m.volume, Amount::from_units(18_452));
        assert_eq!(m.open_interest, Amount::from_units(9_120));
        assert_eq!(m.liquidity, Amount::ZERO);
        assert_eq!(m.settled_at, None);
        assert!(m.description.as_deref().is_some_and(|d| d.contains("BRTI")));
        assert_eq!(m.yes_token_id, None);
    }

    #[test]
    fn legacy_and_settled_markets() {
        let now = Timestamp::parse_iso("2026-05-12T12:00:00Z").unwrap();
        let legacy: model::MarketOne = serde_json::from_str(
            r#"{"market": {"ticker": "KXBTC15M-25DEC010915-15", "event_ticker": "KXBTC15M-25DEC010915",
                "status": "open", "last_price": 48, "volume": 10, "open_interest": 4, "liquidity": 125}}"#,
        )
        .unwrap();
        let m = market(&legacy.market, "KXBTC15M", Category::Crypto, now).unwrap();
        assert_eq!(m.last_yes_price, Some(Price::from_cents(48)));
        assert_eq!(m.volume, Amount::from_units(10));
        assert_eq!(m.liquidity, Amount::from_micros(1_250_000), "125 cents");
        assert_eq!(m.status, Status::Active);
        // No window from times, but the ticker spells the close in ET (Dec 1 09:15 EST = 14:15Z).
        assert_eq!(iso(m.window_end).as_deref(), Some("2025-12-01T14:15:00.000Z"));

        let settled = model::Market {
            status: "finalized".into(),
            settlement_ts: Some(Timestamp::parse_iso("2026-05-12T11:21:00Z").unwrap()),
            ..sample_market()
        };
        let m = market(&settled, "KXBTC15M", Category::Crypto, now).unwrap();
        assert_eq!(m.status, Status::Closed);
        assert_eq!(iso(m.settled_at).as_deref(), Some("2026-05-12T11:21:00.000Z"));

        let unknown_status_past_close = model::Market {
            status: "some_new_state".into(),
            ..sample_market()
        };
        assert_eq!(
            market(&unknown_status_past_close, "KXBTC15M", Category::Crypto, now)
                .unwrap()
                .status,
            Status::Closed
        );

        let never_traded = model::Market {
            last_price_dollars: Some(Num("0.0000".into())),
            volume_fp: Some(Num("0.00".into())),
            ..sample_market()
        };
        // The venue's own "0.0000" before the first trade is kept: the API gives a price, never null.
        let m = market(&never_traded, "KXBTC15M", Category::Crypto, now).unwrap();
        assert_eq!(m.last_yes_price, Some(Price::ZERO));
        assert_eq!(m.last_no_price, Some(Price::ONE));

        // Closed but not yet settled: the settlement time is the close time.
        let closed = model::Market {
            status: "closed".into(),
            settlement_ts: None,
            ..sample_market()
        };
        let m = market(&closed, "KXBTC15M", Category::Crypto, now).unwrap();
        assert_eq!(m.status, Status::Closed);
        assert_eq!(m.settled_at, closed.close_time);
        assert!(m.settled_at.is_some());
        // Past its close under a status we do not know: closed, and so settled at the close.
        let m = market(&unknown_status_past_close, "KXBTC15M", Category::Crypto, now).unwrap();
        assert_eq!(m.settled_at, unknown_status_past_close.close_time);

        let bad = model::Market {
            last_price_dollars: Some(Num("0.47x".into())),
            ..sample_market()
        };
        let err = market(&bad, "KXBTC15M", Category::Crypto, now).unwrap_err();
        assert!(
            matches!(&err, VenueError::Malformed { reason, payload, .. }
            if reason.contains("0.47x") && payload.contains("KXBTC15M-26MAY120715-15")),
            "{err}"
        );
    }

    #[test]
    fn series_and_events() {
        let s: model::SeriesOne = serde_json::from_str(
            r#"{"series": {"ticker": "KXBTC15M", "title": "Bitcoin 15 minutes", "category": "Crypto", "tags": ["BTC"]}}"#,
        )
        .unwrap();
        let n = series(&s.series);
        assert_eq!(n.series_id, "KXBTC15M");
        assert_eq!(settlement_sources(&s.series), None, "no settlement_sources listed");
        let sourced: model::SeriesOne = serde_json::from_str(
            r#"{"series": {"ticker": "KXBTC15M", "settlement_sources": [
                {"name": "CF Benchmarks", "url": "https://www.cfbenchmarks.com/data/indices/BRTI"},
                {"name": "Exchange notice", "url": ""}]}}"#,
        )
        .unwrap();
        assert_eq!(
            settlement_sources(&sourced.series).as_deref(),
            Some("https://www.cfbenchmarks.com/data/indices/BRTI, Exchange notice"),
            "the URL, else the name"
        );
        let null: model::SeriesOne =
            serde_json::from_str(r#"{"series": {"ticker": "KXBTC15M", "settlement_sources": null}}"#).unwrap();
        assert_eq!(settlement_sources(&null.series), None);
        assert_eq!(n.slug.as_deref(), Some("kxbtc15m"));
        assert_eq!(n.url.as_deref(), Some("https://kalshi.com/markets/kxbtc15m"));
        assert_eq!(n.category.as_deref(), Some("crypto"));
        let sports: model::SeriesOne =
            serde_json::from_str(r#"{"series": {"ticker": "KXNBAGAME", "category": "Sports"}}"#).unwrap();
        assert_eq!(series(&sports.series).category.as_deref(), Some("sports"));
        assert_eq!(series(&sports.series).title, "KXNBAGAME");
        let other: model::SeriesOne =
            serde_json::from_str(r#"{"series": {"ticker": "KXFED", "category": "Economics"}}"#).unwrap();
        assert_eq!(series(&other.series).category.as_deref(), Some("other"));

        let now = Timestamp::parse_iso("2026-05-12T11:07:00Z").unwrap();
        let m = market(&sample_market(), "KXBTC15M", Category::Crypto, now).unwrap();
        let e: model::EventData = serde_json::from_str(
            r#"{"event_ticker": "KXBTC15M-26MAY120715", "series_ticker": "KXBTC15M", "title": "BTC 15m", "sub_title": "At 7:15 AM ET"}"#,
        )
        .unwrap();
        let ev = event(&e, std::slice::from_ref(&m), Category::Crypto);
        assert_eq!(ev.event_id, "KXBTC15M-26MAY120715");
        assert_eq!(ev.series_id, "KXBTC15M");
        assert_eq!(ev.subtitle.as_deref(), Some("At 7:15 AM ET"));
        assert_eq!(ev.interval_code, Some(IntervalCode::M15));
        assert_eq!(ev.window_start, m.window_start);
        assert_eq!(ev.status, Status::Active);
        assert_eq!(ev.volume_24h, Some(Amount::from_units(18_452)));
        let closed = Market {
            status: Status::Closed,
            ..m
        };
        assert_eq!(event(&e, &[closed], Category::Crypto).status, Status::Closed);
    }

    /// A book level priced below a micro-dollar is malformed, in a snapshot as on REST: rounding it could
    /// put two of the venue's levels on one price. Trade and market prices (figures, not levels) still round.
    #[test]
    fn a_level_price_finer_than_a_micro_dollar_is_refused() {
        let level = |price: &str| model::WireLevel(Num(price.into()), Num("10".into()));
        assert_eq!(
            super::level(&level("0.470000"), PriceUnit::Dollars).unwrap(),
            lv("0.47", "10")
        );
        let err = super::level(&level("0.4700004"), PriceUnit::Dollars).unwrap_err();
        assert!(err.contains("below a micro-dollar"), "{err}");
        let ts = Timestamp::from_millis(1);
        assert!(book("T", &[level("0.47"), level("0.4700001")], &[], PriceUnit::Dollars, ts).is_err());
        let resp: model::OrderbookResponse =
            serde_json::from_str(r#"{"orderbook_fp": {"yes_dollars": [["0.4700001", "10"]], "no_dollars": []}}"#)
                .unwrap();
        assert!(rest_book("T", &resp, ts).is_err());
        assert_eq!(
            price_field("last_price_dollars", &Num("0.30000000000000004".into())).unwrap(),
            Price::from_micros(300_000)
        );
    }

    #[test]
    fn rest_books_sorted_best_first_with_derived_asks() {
        let ts = Timestamp::from_millis(1);
        let resp: model::OrderbookResponse = serde_json::from_str(ORDERBOOK).unwrap();
        let b = rest_book("KXBTC15M-26MAY120715-15", &resp, ts).unwrap();
        assert_eq!(
            b.bids,
            vec![
                lv("0.47", "312"),
                lv("0.46", "88"),
                lv("0.45", "210"),
                lv("0.43", "500")
            ]
        );
        assert_eq!(
            b.no_bids,
            vec![
                lv("0.52", "95.5"),
                lv("0.51", "150"),
                lv("0.50", "40"),
                lv("0.49", "1000")
            ]
        );
        assert!(b.asks.is_empty(), "venue_a books are bid-only");
        assert_eq!(b.asset_id, None);
        // YES ask = 1 − NO bid (the market sample's yes_ask 0.48 × 95.50), NO ask = 1 − YES bid.
        assert_eq!(
            b.derived_yes_asks(),
            vec![
                lv("0.48", "95.5"),
                lv("0.49", "150"),
                lv("0.50", "40"),
                lv("0.51", "1000")
            ]
        );
        assert_eq!(b.derived_no_asks()[0], lv("0.53", "312"));

        // Transition era: the fixed-point book wins (95.00 there, 95 in the legacy one).
        let resp: model::OrderbookResponse = serde_json::from_str(ORDERBOOK_TRANSITION).unwrap();
        let t = rest_book("T", &resp, ts).unwrap();
        assert_eq!(t.bids, b.bids);
        assert_eq!(t.no_bids[0], lv("0.52", "95"));

        // Legacy cents, a null side.
        let resp: model::OrderbookResponse =
            serde_json::from_str(r#"{"orderbook": {"yes": [[43, 500], [47, 312]], "no": null}}"#).unwrap();
        let l = rest_book("T", &resp, ts).unwrap();
        assert_eq!(l.bids, vec![lv("0.47", "312"), lv("0.43", "500")]);
        assert!(l.no_bids.is_empty());

        // Legacy with dollar strings and integer counts only.
        let resp: model::OrderbookResponse = serde_json::from_str(
            r#"{"orderbook": {"yes": [], "no": [], "yes_dollars": [["0.0800", 300]], "no_dollars": null}}"#,
        )
        .unwrap();
        assert_eq!(rest_book("T", &resp, ts).unwrap().bids, vec![lv("0.08", "300")]);

        // Nothing at all: an empty book.
        let empty = rest_book("T", &model::OrderbookResponse::default(), ts).unwrap();
        assert!(empty.bids.is_empty() && empty.no_bids.is_empty());

        // Out-of-range prices are malformed, with the payload.
        let resp: model::OrderbookResponse =
            serde_json::from_str(r#"{"orderbook_fp": {"yes_dollars": [["1.2000", "1.00"]], "no_dollars": []}}"#)
                .unwrap();
        let err = rest_book("T", &resp, ts).unwrap_err();
        assert!(err.is_malformed() && err.to_string().contains("1.2000"), "{err}");
    }

    #[test]
    fn trades_yes_and_no() {
        let page: model::TradesPage = serde_json::from_str(TRADES).unwrap();
        let trades: Vec<Trade> = page
            .trades
            .iter()
            .map(|t| match t {
                crate::wire::Lenient::Ok(t) => trade(t, "KXBTC15M-26MAY120715").unwrap(),
                crate::wire::Lenient::Bad { error, .. } => panic!("{error}"),
            })
            .collect();
        assert_eq!(trades[0].source_trade_id, "d91bc706-ee49-470d-82d8-11418bda6fed");
        assert_eq!(trades[0].outcome, Outcome::Yes);
        assert_eq!(trades[0].taker_side, TakerSide::Buy);
        assert_eq!(trades[0].price, Price::from_micros(480_000));
        assert_eq!(trades[0].size, Amount::from_units(12));
        assert_eq!(trades[0].event_id, "KXBTC15M-26MAY120715");
        assert_eq!(trades[0].executed_at.millis(), 1_778_584_051_412);
        assert_eq!(trades[1].outcome, Outcome::No);
        assert_eq!(trades[1].price, Price::from_micros(530_000), "the NO leg's price");
        assert_eq!(trades[1].size, Amount::from_units(3));

        let legacy: model::Trade = serde_json::from_str(
            r#"{"trade_id": "a", "ticker": "T", "count": 12, "yes_price": 48, "no_price": 52,
                "taker_side": "no", "created_time": "2025-12-01T14:07:31Z"}"#,
        )
        .unwrap();
        let t = trade(&legacy, "E").unwrap();
        assert_eq!(
            (t.outcome, t.price, t.size),
            (Outcome::No, Price::from_cents(52), Amount::from_units(12))
        );

        let book_side_only: model::Trade = serde_json::from_str(
            r#"{"trade_id": "b", "ticker": "T", "count_fp": "1.50", "yes_price_dollars": "0.4237",
                "taker_book_side": "ask", "ts_ms": 1778584051412}"#,
        )
        .unwrap();
        let t = trade(&book_side_only, "E").unwrap();
        assert_eq!(
            (t.outcome, t.price),
            (Outcome::No, p("0.5763")),
            "NO price from the YES leg"
        );
        assert_eq!(t.size, a("1.5"));

        let sideless: model::Trade =
            serde_json::from_str(r#"{"trade_id": "c", "ticker": "T", "count_fp": "1.00", "yes_price_dollars": "0.5"}"#)
                .unwrap();
        let err = trade(&sideless, "E").unwrap_err();
        assert!(
            matches!(&err, VenueError::Malformed { what, payload, .. } if what == "trade" && payload.contains("\"c\""))
        );
    }
}
