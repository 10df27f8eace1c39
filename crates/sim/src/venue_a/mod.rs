//! Simulated venue_a (Kalshi Trade API v2): REST under `/trade-api/v2`, WebSocket at `/trade-api/ws/v2`.

pub mod auth;
pub(crate) mod json;
mod rest;
mod ws;

use std::sync::Arc;

use axum::{Router, middleware, routing::get};
use crossbook_core::Exchange;

use crate::http::{Shared, rest_faults};

/// Every venue_a route on one router (REST base `/trade-api/v2`, WS `/trade-api/ws/v2`).
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let rest = Router::new()
        .route("/series", get(rest::list_series))
        .route("/series/{ticker}", get(rest::get_series))
        .route("/events", get(rest::list_events))
        .route("/events/{ticker}", get(rest::get_event))
        .route("/markets", get(rest::list_markets))
        .route("/markets/trades", get(rest::trades))
        .route("/markets/orderbooks", get(rest::orderbooks))
        .route("/markets/{ticker}", get(rest::get_market))
        .route("/markets/{ticker}/orderbook", get(rest::orderbook))
        .route("/exchange/status", get(rest::exchange_status))
        .layer(middleware::from_fn_with_state(
            (shared.faults.clone(), Exchange::VenueA),
            rest_faults,
        ));
    Router::new()
        .nest("/trade-api/v2", rest)
        .route("/trade-api/ws/v2", get(ws::upgrade))
        .with_state(shared)
}
