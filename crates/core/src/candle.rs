//! OHLCV candles of a market's last-trade price.
//!
//! A candle is always of the YES price: a trade of the NO outcome at `p` counts at `1 − p`, so both tokens of
//! a venue_b market, and both sides of a venue_a market, fall on one price path.
//!
//! Candles are kept as stored aggregates at three spans (minute, hour, UTC day), updated as trades are
//! inserted, so a year of daily candles is 365 stored rows, not a scan of every trade. Each interval a client
//! asks for is the stored span it divides ([`Interval::span`]) rolled up ([`roll_up`]): 5m from minutes, 6h
//! from hours, 1w (Monday 00:00 UTC) from days.
//!
//! Open and close follow insertion order on a tie: a trade replaces the open only when strictly earlier, and
//! the close when at the same millisecond or later, so the open is the first trade inserted at the earliest
//! time and the close the last inserted at the latest (the order the trade tape lists them in).

use crate::{Amount, Exchange, Outcome, Price, Timestamp, Trade};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;
const WEEK: i64 = 7 * DAY;
/// 1970-01-05, the first Monday after the Unix epoch (a Thursday): weeks start on Mondays.
const FIRST_MONDAY: i64 = 4 * DAY;

/// A stored aggregate's span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Span {
    Minute,
    Hour,
    Day,
}

impl Span {
    pub const ALL: [Span; 3] = [Span::Minute, Span::Hour, Span::Day];

    pub const fn millis(self) -> i64 {
        match self {
            Span::Minute => MINUTE,
            Span::Hour => HOUR,
            Span::Day => DAY,
        }
    }

    /// The start of the span holding `t` (epoch-aligned, which for these spans is UTC-aligned).
    pub fn start_of(self, t: Timestamp) -> Timestamp {
        Timestamp::from_millis(t.millis().div_euclid(self.millis()) * self.millis())
    }
}

/// A candle interval a client may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interval {
    M1,
    M5,
    H1,
    H6,
    D1,
    W1,
}

impl Interval {
    pub const ALL: [Interval; 6] = [
        Interval::M1,
        Interval::M5,
        Interval::H1,
        Interval::H6,
        Interval::D1,
        Interval::W1,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Interval::M1 => "1m",
            Interval::M5 => "5m",
            Interval::H1 => "1h",
            Interval::H6 => "6h",
            Interval::D1 => "1d",
            Interval::W1 => "1w",
        }
    }

    pub const fn millis(self) -> i64 {
        match self {
            Interval::M1 => MINUTE,
            Interval::M5 => 5 * MINUTE,
            Interval::H1 => HOUR,
            Interval::H6 => 6 * HOUR,
            Interval::D1 => DAY,
            Interval::W1 => WEEK,
        }
    }

    /// The stored span this interval is rolled up from: the longest that divides it.
    pub const fn span(self) -> Span {
        match self {
            Interval::M1 | Interval::M5 => Span::Minute,
            Interval::H1 | Interval::H6 => Span::Hour,
            Interval::D1 | Interval::W1 => Span::Day,
        }
    }

    /// The start of the interval holding `t`: UTC-aligned, weeks from Monday 00:00 UTC.
    pub fn start_of(self, t: Timestamp) -> Timestamp {
        let offset = if self == Interval::W1 { FIRST_MONDAY } else { 0 };
        let m = self.millis();
        Timestamp::from_millis((t.millis() - offset).div_euclid(m) * m + offset)
    }
}

/// The YES price a trade stands for: its own price on YES, the complement on NO.
pub fn yes_price(outcome: Outcome, price: Price) -> Price {
    match outcome {
        Outcome::Yes => price,
        Outcome::No => price.complement(),
    }
}

/// The aggregate of the trades of one market over one stretch of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candle {
    /// Start of the stretch (a span's or an interval's).
    pub start: Timestamp,
    pub open: Price,
    pub open_at: Timestamp,
    pub high: Price,
    pub low: Price,
    pub close: Price,
    pub close_at: Timestamp,
    /// Contracts traded.
    pub volume: Amount,
    /// Dollars traded: the sum of each trade's `price × size` (micro-dollars).
    pub notional: Amount,
    pub trades: i64,
}

impl Candle {
    /// The candle of one trade, in the span or interval starting at `start`.
    pub fn of_trade(start: Timestamp, t: &Trade) -> Candle {
        let p = yes_price(t.outcome, t.price);
        Candle {
            start,
            open: p,
            open_at: t.executed_at,
            high: p,
            low: p,
            close: p,
            close_at: t.executed_at,
            volume: t.size,
            notional: t.notional(),
            trades: 1,
        }
    }

    /// Folds `later` (trades inserted after, or a stretch that follows) into `self`.
    pub fn merge(&mut self, later: &Candle) {
        if later.open_at < self.open_at {
            self.open = later.open;
            self.open_at = later.open_at;
        }
        if later.close_at >= self.close_at {
            self.close = later.close;
            self.close_at = later.close_at;
        }
        self.high = self.high.max(later.high);
        self.low = self.low.min(later.low);
        self.volume = self.volume.saturating_add(later.volume);
        self.notional = self.notional.saturating_add(later.notional);
        self.trades = self.trades.saturating_add(later.trades);
    }
}

/// Where one stored aggregate belongs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CandleKey {
    pub exchange: Exchange,
    pub market_id: String,
    pub span: Span,
    pub start: Timestamp,
}

/// The stored aggregates a batch of new trades adds to, one per market, span and span start, in key order
/// (so concurrent writers take row locks in one order). Trades fold in batch order, which is insertion order.
pub fn aggregate(trades: &[Trade]) -> Vec<(CandleKey, Candle)> {
    let mut out: std::collections::BTreeMap<CandleKey, Candle> = std::collections::BTreeMap::new();
    for t in trades {
        for span in Span::ALL {
            let start = span.start_of(t.executed_at);
            let c = Candle::of_trade(start, t);
            let key = CandleKey {
                exchange: t.exchange,
                market_id: t.market_id.clone(),
                span,
                start,
            };
            out.entry(key).and_modify(|have| have.merge(&c)).or_insert(c);
        }
    }
    out.into_iter().collect()
}

/// Stored aggregates of one span (oldest first) rolled up into `interval`'s candles, oldest first.
pub fn roll_up(rows: &[Candle], interval: Interval) -> Vec<Candle> {
    let mut out: Vec<Candle> = Vec::new();
    for r in rows {
        let start = interval.start_of(r.start);
        match out.last_mut() {
            Some(last) if last.start == start => last.merge(r),
            _ => out.push(Candle { start, ..*r }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TakerSide;

    fn trade(id: &str, at: i64, outcome: Outcome, price: i64, size: i64) -> Trade {
        Trade {
            exchange: Exchange::VenueB,
            source_trade_id: id.into(),
            market_id: "m".into(),
            event_id: "e".into(),
            executed_at: Timestamp::from_millis(at),
            taker_side: TakerSide::Buy,
            outcome,
            price: Price::from_cents(price),
            size: Amount::from_units(size),
        }
    }

    #[test]
    fn intervals_align_to_utc_and_weeks_to_mondays() {
        // 2026-11-25T13:47:12.345Z is a Wednesday.
        let t = Timestamp::parse_iso("2026-11-25T13:47:12.345Z").unwrap();
        let at = |i: Interval| i.start_of(t).to_iso();
        assert_eq!(at(Interval::M1), "2026-11-25T13:47:00.000Z");
        assert_eq!(at(Interval::M5), "2026-11-25T13:45:00.000Z");
        assert_eq!(at(Interval::H1), "2026-11-25T13:00:00.000Z");
        assert_eq!(at(Interval::H6), "2026-11-25T12:00:00.000Z");
        assert_eq!(at(Interval::D1), "2026-11-25T00:00:00.000Z");
        assert_eq!(at(Interval::W1), "2026-11-23T00:00:00.000Z");
        // A Monday midnight starts its own week; the Sunday before belongs to the week before.
        let monday = Timestamp::parse_iso("2026-11-23T00:00:00Z").unwrap();
        assert_eq!(Interval::W1.start_of(monday), monday);
        let sunday = Timestamp::from_millis(monday.millis() - 1);
        assert_eq!(Interval::W1.start_of(sunday).to_iso(), "2026-11-16T00:00:00.000Z");
        for i in Interval::ALL {
            assert_eq!(i.millis() % i.span().millis(), 0, "{} rolls up whole spans", i.as_str());
        }
    }

    #[test]
    fn a_batch_aggregates_per_span_in_yes_prices() {
        let base = Timestamp::parse_iso("2026-11-25T10:00:00Z").unwrap().millis();
        let trades = [
            trade("a", base + 5_000, Outcome::Yes, 40, 10),
            // NO at 0.55 is YES at 0.45.
            trade("b", base + 30_000, Outcome::No, 55, 4),
            // Same millisecond as "b": inserted later, so it is the close.
            trade("c", base + 30_000, Outcome::Yes, 42, 1),
            // The next minute.
            trade("d", base + 61_000, Outcome::Yes, 38, 2),
        ];
        let rows = aggregate(&trades);
        let minute: Vec<&Candle> = rows
            .iter()
            .filter(|(k, _)| k.span == Span::Minute)
            .map(|(_, c)| c)
            .collect();
        assert_eq!(minute.len(), 2);
        let first = minute[0];
        assert_eq!(first.open, Price::from_cents(40));
        assert_eq!(first.high, Price::from_cents(45));
        assert_eq!(first.low, Price::from_cents(40));
        assert_eq!(first.close, Price::from_cents(42));
        assert_eq!(first.volume, Amount::from_units(15));
        // 0.40×10 + 0.55×4 + 0.42×1 dollars.
        assert_eq!(first.notional, Amount::from_micros(6_620_000));
        assert_eq!(first.trades, 3);
        let (_, hour) = rows.iter().find(|(k, _)| k.span == Span::Hour).unwrap();
        assert_eq!(
            (hour.open, hour.close, hour.low, hour.trades),
            (Price::from_cents(40), Price::from_cents(38), Price::from_cents(38), 4)
        );
        assert_eq!(rows.len(), 4, "two minutes, one hour, one day");
    }

    #[test]
    fn rolling_up_keeps_the_first_open_and_last_close() {
        let base = Timestamp::parse_iso("2026-11-23T00:00:00Z").unwrap().millis();
        // Days of one week and the next, in order.
        let day = |d: i64, open: i64, close: i64| {
            let mut c = Candle::of_trade(
                Timestamp::from_millis(base + d * DAY),
                &trade("x", base + d * DAY + 1, Outcome::Yes, open, 1),
            );
            c.merge(&Candle::of_trade(
                c.start,
                &trade("y", base + d * DAY + 2, Outcome::Yes, close, 1),
            ));
            c
        };
        let rows = [day(0, 50, 52), day(3, 52, 60), day(6, 61, 49), day(7, 49, 48)];
        let weeks = roll_up(&rows, Interval::W1);
        assert_eq!(weeks.len(), 2);
        assert_eq!(weeks[0].start, Timestamp::from_millis(base));
        assert_eq!(
            (
                weeks[0].open,
                weeks[0].high,
                weeks[0].low,
                weeks[0].close,
                weeks[0].trades
            ),
            (
                Price::from_cents(50),
                Price::from_cents(61),
                Price::from_cents(49),
                Price::from_cents(49),
                6
            )
        );
        assert_eq!(weeks[1].start, Timestamp::from_millis(base + WEEK));
        assert_eq!(weeks[1].close, Price::from_cents(48));
    }
}
