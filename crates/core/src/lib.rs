//! Domain types and pure rules of crossbook.
//!
//! Nothing in this crate does I/O or knows a wire format or HTTP: the venues normalise into these types at
//! the edge, the store persists them, and the server renders them.
//!
//! # Layout
//! - [`money`]: exact fixed-point prices and quantities (micro-units), never `f64` arithmetic.
//! - [`time`]: the Unix-millisecond timestamp used everywhere, with ISO 8601 parsing and rendering.
//! - [`catalog`]: venues, statuses, interval codes, series, events, markets, tokens.
//! - [`book`]: order-book levels and snapshots; top of book, mid/spread rounding, derived asks, depth.
//! - [`history`]: granularity and bucket arithmetic of book history.
//! - [`trade`]: executed trades.
//! - [`candle`]: OHLCV candles of the last-trade price, their intervals and stored spans.
//! - [`plan`]: customer plans and what each one unlocks.
//! - [`whale`]: what a whale trade is, and the draw of the daily public pool.
//! - [`arb`]: fee model, pair pricing, depth walk, window pairing, scanner, episodes, preview masking.
#![forbid(unsafe_code)]

pub mod arb;
pub mod backtest;
pub mod book;
pub mod candle;
pub mod catalog;
pub mod history;
pub mod money;
pub mod plan;
pub mod time;
pub mod trade;
pub mod whale;

pub use book::{BookSnapshot, Level, TopOfBook};
pub use catalog::{Category, Event, Exchange, IntervalCode, Market, Outcome, Series, Status};
pub use money::{Amount, Price, Price4};
pub use plan::Plan;
pub use time::Timestamp;
pub use trade::{TakerSide, Trade};
