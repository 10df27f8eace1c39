//! The trade tape: REST reads while the socket has no trade ids or is down, and backfills after reconnects
//! or trade-sequence gaps.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use crossbook_core::{Exchange, Timestamp};
use tracing::{debug, warn};

use crate::{
    health::{FeedMode, Part, VenueHealth},
    venue::Venue,
};

use super::{Ctx, Runtime};

/// Re-read overlap of the trade tape: trades can appear on the tape a little after their execution time.
const TRADE_OVERLAP: Duration = Duration::from_secs(60);

/// Whether a venue's WebSocket is up (so its trades arrive on it).
fn ws_up(health: &VenueHealth, ex: Exchange) -> bool {
    health
        .get(ex)
        .is_some_and(|h| h.mode == FeedMode::WebSocket && h.connected)
}

pub(super) async fn trade_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    let mut first = true;
    loop {
        if !first {
            let poll = tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                _ = rt.trades_now.notified() => true,
                _ = tokio::time::sleep(ctx.settings.trade_poll) => {
                    rt.venue.polls_trades_with_ws() || !ws_up(&ctx.health, ex)
                }
            };
            if !poll {
                continue;
            }
        }
        let set = rt.markets.borrow().clone();
        if set.is_empty() {
            // Nothing followed yet: wait for the first catalog instead of reading an empty tape.
            let mut rx = rt.markets.subscribe();
            tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                _ = rx.changed() => {}
            }
            continue;
        }
        first = false;
        let now = Timestamp::now().millis();
        let floor = now - ctx.settings.trade_backfill.as_millis() as i64;
        let latest = rt.latest_trade_ms.load(Ordering::Relaxed);
        let since = Timestamp::from_millis(floor.max(latest - TRADE_OVERLAP.as_millis() as i64));
        let result = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = rt.venue.fetch_trades(&set, since) => r,
        };
        match result {
            Ok(trades) => {
                ctx.health.update(ex, |h| h.part_ok(Part::Trades, Timestamp::now()));
                if !trades.is_empty() {
                    debug!(venue = %ex, trades = trades.len(), since = %since, "trades read from the tape");
                    rt.note_trades(&trades);
                    if ctx.trades.send(trades).await.is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                warn!(venue = %ex, error = %e, "trade tape read failed");
                // `/readyz` names the failing part: a venue whose books are fresh but whose tape keeps failing
                // is degraded, not fresh.
                ctx.health
                    .update(ex, |h| h.part_failed(Part::Trades, e.to_string(), Timestamp::now()));
            }
        }
    }
}
