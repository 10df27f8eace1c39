//! The whale tracker (spec 6.1, contracts §7): turns every ingested trade at or above the platform threshold
//! (`whale_platform_threshold_usd`, 1,000 USD by default, inclusive) into a [`WhaleEntry`] on the bus (the
//! trade with its catalog market; consumers render it); and draws the day's public pool at start
//! and at every 00:00 UTC, so the first request of a day finds it drawn.
//!
//! Trades are published once each by ingestion ([`DomainEvent::TradeIngested`]), so each whale is published
//! once. The market's ticker and title come from the catalog (one indexed lookup per whale, not per trade).
//! A tracker that falls more than the bus capacity behind loses the oldest events: it logs and counts them
//! (`crossbook_whale_tracker_lagged_total`) and carries on with the newest.

use std::{sync::Arc, time::Duration};

use crossbook_core::{
    Amount, Timestamp,
    time::DAY_MS,
    whale::{WhaleEntry, is_whale, utc_day},
};
use crossbook_live::DomainEvent;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, warn};

use crate::{AppState, whales::daily_pool};

/// Starts the tracker. It subscribes to the bus before returning, so no trade published afterwards is missed.
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    // Trades only: book changes would make it fall behind and skip trades.
    let rx = state.bus.subscribe_except_books();
    let state = state.clone();
    let cancel = cancel.clone();
    tracker.spawn(async move { run(state, rx, cancel).await });
}

/// The tracker loop over an already subscribed receiver (tests and the bench call it directly).
pub async fn run(state: AppState, mut rx: Receiver<DomainEvent>, cancel: CancellationToken) {
    let threshold = Amount::from_units(i64::try_from(state.config.whale_platform_threshold_usd).unwrap_or(i64::MAX));
    draw_today(&state).await;
    loop {
        let until_midnight = next_midnight_in(Timestamp::now());
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(until_midnight) => draw_today(&state).await,
            ev = rx.recv() => match ev {
                Ok(DomainEvent::TradeIngested(trade)) if is_whale(&trade, threshold) => {
                    // A catalog miss or outage still publishes: consumers fall back to the market id.
                    let market = match state.store.get_market(trade.exchange, &trade.market_id).await {
                        Ok(m) => m.map(|m| m.market),
                        Err(e) => {
                            warn!(error = %e, market = %trade.market_id, "whale tracker: market lookup failed");
                            None
                        }
                    };
                    let event_title = match state.store.get_event(trade.exchange, &trade.event_id).await {
                        Ok(e) => e.map(|e| e.event.title),
                        Err(e) => {
                            warn!(error = %e, event = %trade.event_id, "whale tracker: event lookup failed");
                            None
                        }
                    };
                    metrics::counter!("crossbook_whale_entries_total", "venue" => trade.exchange.as_str()).increment(1);
                    tracing::info!(
                        venue = %trade.exchange,
                        market = %trade.market_id,
                        // venue_b markets have a question and no title.
                        title = market.as_ref().map(|m| m.title.as_deref().unwrap_or(&m.question)).unwrap_or(""),
                        outcome = ?trade.outcome,
                        taker = ?trade.taker_side,
                        price = %trade.price,
                        size = %trade.size,
                        notional_usd = %trade.notional(),
                        "whale trade"
                    );
                    state.bus.publish(DomainEvent::WhaleEntry(Arc::new(WhaleEntry { trade, market, event_title })));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    warn!(skipped = n, "whale tracker fell behind the bus; skipped events");
                    metrics::counter!("crossbook_whale_tracker_lagged_total").increment(n);
                }
                Err(RecvError::Closed) => return,
            },
        }
    }
}

/// Draws (or reads) today's pool; a failure is logged and left to the next request or midnight.
async fn draw_today(state: &AppState) {
    let day = utc_day(Timestamp::now());
    match daily_pool(&*state.store, state.config.whale_pool_size, &day).await {
        Ok(pool) => debug!(day, events = pool.len(), "whale pool ready"),
        Err(e) => warn!(day, error = %e, "drawing the whale pool failed"),
    }
}

/// Time from `now` to the next 00:00 UTC (a little after it, so the new day has begun).
fn next_midnight_in(now: Timestamp) -> Duration {
    let ms = now.millis();
    let next = (ms.div_euclid(DAY_MS) + 1) * DAY_MS;
    Duration::from_millis((next - ms) as u64 + 50)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midnight_is_the_next_utc_day() {
        let t = Timestamp::parse_iso("2026-11-21T23:59:00Z").unwrap();
        assert_eq!(next_midnight_in(t), Duration::from_millis(60_050));
        let t = Timestamp::parse_iso("2026-11-22T00:00:00Z").unwrap();
        assert_eq!(next_midnight_in(t), Duration::from_millis(86_400_050));
    }
}
