//! Simulated venue_a (Kalshi Trade API v2) and venue_b (Polymarket Gamma, CLOB, Data API and market
//! WebSocket) on loopback, fed by a seeded market model, with fault injection.
//!
//! The simulator is an independent implementation of the venues' *public* protocols as
//! `shared/venues/PROTOCOLS.md` documents them (current shapes), written without the connectors' wire types
//! so that a misreading in a connector is not mirrored here. `serve --simulate`, `crossbook simulate`, the
//! connector tests and the end-to-end tests all run against it.
//!
//! # Using it
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::time::Duration;
//! use crossbook_core::{Exchange, IntervalCode, Timestamp};
//! use crossbook_sim::{SimClock, SimConfig, Simulator};
//!
//! // Manual clock: model time moves only when the test says so.
//! let cfg = SimConfig::new(7, SimClock::Manual { start: Timestamp::from_secs(1_778_584_000) });
//! let sim = Simulator::start(cfg).await?;
//! println!("{}", sim.venue_a_rest_url()); // http://127.0.0.1:PORT/trade-api/v2
//! sim.advance(Duration::from_secs(60)); // a minute of books and trades, published to every socket
//! sim.faults().skip_next_seq(); // the next venue_a delta leaves a gap
//! let (ticker, condition_id) = sim.force_cross(IntervalCode::M15, Exchange::VenueA, Duration::from_secs(30)).unwrap();
//! let book = sim.book(Exchange::VenueA, &ticker);
//! sim.shutdown().await;
//! # let _ = (condition_id, book); Ok(()) }
//! ```
//!
//! Public API: [`Simulator::start`] → [`SimHandle`] (base URLs, demo credentials, [`SimHandle::faults`],
//! read access to the model: [`SimHandle::book`], [`SimHandle::markets`], [`SimHandle::trades`],
//! [`SimHandle::with_model`]; forced events: [`SimHandle::inject_trade`], [`SimHandle::force_cross`];
//! [`SimHandle::advance`] for the manual clock; [`SimHandle::shutdown`], or stop on drop), and
//! [`run_standalone`] for `crossbook simulate`.
//!
//! # URLs
//!
//! Each venue has its own port. venue_b's four hosts share its port under path prefixes:
//!
//! | setting | simulator | live venue |
//! |---|---|---|
//! | `venue_a_rest_url` | `http://A/trade-api/v2` | `https://external-api.kalshi.com/trade-api/v2` |
//! | `venue_a_ws_url` | `ws://A/trade-api/ws/v2` | `wss://external-api-ws.kalshi.com/trade-api/ws/v2` |
//! | `venue_b_gamma_url` | `http://B/gamma` | `https://gamma-api.polymarket.com` |
//! | `venue_b_clob_url` | `http://B/clob` | `https://clob.polymarket.com` |
//! | `venue_b_data_url` | `http://B/data` | `https://data-api.polymarket.com` |
//! | `venue_b_ws_url` | `ws://B/ws/market` | `wss://ws-subscriptions-clob.polymarket.com/ws/market` |
//!
//! venue_a REST: `/series`, `/series/{t}`, `/events`, `/events/{t}`, `/markets`, `/markets/{t}`,
//! `/markets/{t}/orderbook`, `/markets/orderbooks`, `/markets/trades`, `/exchange/status`. venue_b Gamma:
//! `/events`, `/events/keyset`, `/events/{id}`, `/events/slug/{s}`, `/markets`, `/markets/keyset`,
//! `/markets/{id}`, `/markets/slug/{s}`, `/series`, `/series/{id}`; CLOB `GET /book`, `POST /books` and the
//! read routes of the venue's clients (`/price(s)`, `/midpoint(s)`, `/spread(s)`, `/last-trade-price`,
//! `/last-trades-prices`, `/tick-size`, `/neg-risk`, `/fee-rate`, `/markets`, `/ok`, `/time`); Data
//! `/trades`. The venue_a WebSocket needs the signed handshake with the demo key
//! ([`venue_a::auth::DEMO_KEY_ID`], private key in `fixtures/venue_a_demo_key.pem`); 401 otherwise.
//!
//! # What is listed
//!
//! - BTC up/down windows for every interval code on both venues, current and next, rolling with time. The
//!   venue_a series are `KXBTC5M`, `KXBTC15M`, `KXBTC1H`, `KXBTC24H`, `KXBTCW` (only `KXBTC15M` exists on the
//!   live venue; the rest are invented in its grammar): event `SERIES-YYMONDDHHMM` with the ET close time,
//!   market `EVENT-MM`. venue_b series slugs `btc-up-or-down-5m`, `-15m`, `-hourly`, `-daily`, `-weekly`;
//!   event/market slugs `btc-updown-5m-<unix start>`, `btc-updown-15m-<unix start>`,
//!   `bitcoin-up-or-down-<month>-<day>-<year>-<h><am|pm>-et`, `bitcoin-up-or-down-on-<month>-<day>-<year>`
//!   and (invented) `btc-updown-1w-<unix start>`. 24h windows run 16:00 to 16:00 UTC (noon ET in daylight
//!   time), 1w windows Friday 21:00 to Friday 21:00 UTC, so every window is exactly its interval long.
//!   venue_b's window times are shifted 1–4 s from venue_a's (names stay on the grid).
//! - Games of two fictional leagues on both venues, titled in each venue's style: venue_a with one
//!   market per team (`KXNBAGAME-26MAY12DENAUS` "Denver at Austin", markets `…-DEN` and `…-AUS`, "Denver at
//!   Austin Winner?"), venue_b with one two-outcome market (`nba-den-aus-2026-05-12`, "Denver vs.
//!   Austin", outcomes `["Denver", "Austin"]`). Same teams by the same city names (so the service's game
//!   matcher pairs them), same ET date, same team abbreviations in ticker and slug; the venue_b
//!   description names city and nickname.
//! - Markets on one venue only: ETH 15m windows and politics/culture questions on venue_b, economics and
//!   weather questions on venue_a.
//!
//! # Scale
//!
//! [`SimConfig::scale`] is [`SimScale::Demo`] by default: the catalog above. [`SimScale::Full`] adds a bulk
//! catalog the size of a real venue (at least 5,000 venue_a markets and 20,000 venue_b tokens: rolling
//! windows, games, long-dated question groups) whose books change at [`SimRates`] (averages, bursts, quiet
//! books, multi-level matches); see `model::scale`.
//!
//! # Layout
//!
//! - [`model`]: the seeded market model ([`model::Model::step`] takes `now`; no clock, no I/O).
//! - `venue_a`, `venue_b`: routers, wire rendering and WebSocket protocols of each venue.
//! - `socket`: the WebSocket session loop both venues share (heartbeats, faults, shutdown).
//! - `http`: shared state, query parameters, the REST fault middleware.
//! - [`faults`]: the fault switches.
//! - `calendar`, `ids`, `render`: US Eastern time and window grids, deterministic ids, exact decimal text.
#![forbid(unsafe_code)]
// The venues' objects have ~60 fields; `serde_json::json!` recurses once per field.
#![recursion_limit = "256"]

mod calendar;
pub mod faults;
mod http;
mod ids;
pub mod model;
mod render;
mod runtime;
mod socket;
pub mod venue_a;
mod venue_b;

pub use faults::Faults;
pub use model::{
    Model, SimRates, SimScale,
    book::YesBook,
    types::{Phase, SimEvent, SimMarket, SimSeries, SimTrade, Update},
};
pub use runtime::{SimClock, SimConfig, SimHandle, SimUrls, Simulator, TourIds, run_standalone};
