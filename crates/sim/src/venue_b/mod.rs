//! Simulated venue_b (Polymarket). The venue spreads its public surface over four hosts; the simulator
//! serves them on one port under path prefixes:
//!
//! | venue host | simulator |
//! |---|---|
//! | Gamma `https://gamma-api.polymarket.com` | `http://HOST:PORT/gamma` |
//! | CLOB `https://clob.polymarket.com` | `http://HOST:PORT/clob` |
//! | Data API `https://data-api.polymarket.com` | `http://HOST:PORT/data` (v1 `/trades`, v2 `/v2/trades`) |
//! | market WS `wss://ws-subscriptions-clob.polymarket.com/ws/market` | `ws://HOST:PORT/ws/market` |

mod clob;
mod gamma;
pub(crate) mod json;
mod prices;
mod ws;

use std::sync::Arc;

use axum::{
    Router, middleware,
    routing::{get, post},
};
use crossbook_core::Exchange;

use crate::http::{Shared, rest_faults};

/// Every venue_b route on one router.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let faults = middleware::from_fn_with_state((shared.faults.clone(), Exchange::VenueB), rest_faults);
    let gamma = Router::new()
        .route("/events", get(gamma::list_events))
        .route("/events/keyset", get(gamma::keyset_events))
        .route("/events/slug/{slug}", get(gamma::get_event_by_slug))
        .route("/events/{id}", get(gamma::get_event))
        .route("/markets", get(gamma::list_markets))
        .route("/markets/keyset", get(gamma::keyset_markets))
        .route("/markets/slug/{slug}", get(gamma::get_market_by_slug))
        .route("/markets/{id}", get(gamma::get_market))
        .route("/series", get(gamma::list_series))
        .route("/series/{id}", get(gamma::get_series));
    let clob = Router::new()
        .route("/", get(prices::ok))
        .route("/ok", get(prices::ok))
        .route("/time", get(prices::time))
        .route("/book", get(clob::book))
        .route("/books", post(clob::books))
        .route("/price", get(prices::price))
        .route("/prices", get(prices::prices).post(prices::prices))
        .route("/midpoint", get(prices::midpoint))
        .route("/midpoints", get(prices::midpoints).post(prices::midpoints))
        .route("/spread", get(prices::spread_one))
        .route("/spreads", get(prices::spreads).post(prices::spreads))
        .route("/last-trade-price", get(prices::last_trade_price))
        .route(
            "/last-trades-prices",
            get(prices::last_trades_prices).post(prices::last_trades_prices),
        )
        .route("/tick-size", get(prices::tick_size))
        .route("/neg-risk", get(prices::neg_risk))
        .route("/fee-rate", get(prices::fee_rate))
        .route("/fee-rate/{token_id}", get(prices::fee_rate_path))
        .route("/markets", get(prices::markets))
        .route("/markets/{condition_id}", get(prices::market));
    let data = Router::new()
        .route("/trades", get(clob::trades))
        .route("/v2/trades", get(clob::trades_v2));
    let rest = Router::new()
        // The venue's clients call the CLOB's root with a trailing slash.
        .route("/clob/", get(prices::ok))
        .nest("/gamma", gamma)
        .nest("/clob", clob)
        .nest("/data", data)
        .layer(faults);
    Router::new()
        .merge(rest)
        .route("/ws/market", get(ws::upgrade))
        .with_state(shared)
}
