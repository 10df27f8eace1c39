//! REST book polling: the feed of a venue without a WebSocket, within the venue's rate limit.

use std::sync::Arc;

use crossbook_core::{Market, Timestamp, book::GapCause};
use tokio::time::Instant;
use tracing::{info, warn};

use crate::{
    backoff::Backoff,
    health::{FeedMode, Part},
    venue::{BookUpdate, FeedUpdate, Venue},
};
use crossbook_live::BookKey;

use super::publish::publish;
use super::{Ctx, Runtime};

/// Markets per REST book-polling request round.
const POLL_CHUNK: usize = 10;

/// The REST fallback of the feed: every `book_poll` (or as fast as the venue's rate limit allows), read the
/// book of every followed market.
pub(super) async fn poll_books_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    info!(venue = %ex, "feed: polling REST order books (no WebSocket)");
    ctx.health.update(ex, |h| h.mode = FeedMode::Polling);
    let mut markets_rx = rt.markets.subscribe();
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    loop {
        let round_start = Instant::now();
        let markets: Vec<Market> = markets_rx.borrow_and_update().values().cloned().collect();
        for chunk in markets.chunks(POLL_CHUNK) {
            let result = tokio::select! {
                _ = ctx.cancel.cancelled() => return,
                r = rt.venue.fetch_books(chunk) => r,
            };
            match result {
                Ok(books) => {
                    backoff.reset();
                    ctx.health.touch(ex, Timestamp::now());
                    let mut update = FeedUpdate {
                        books: books.into_iter().map(|b| BookUpdate::snapshot(b, None, None)).collect(),
                        data: true,
                        ..Default::default()
                    };
                    publish(&rt, &ctx, &mut update).await;
                }
                Err(e) => {
                    // The books of this chunk are not followed until a read succeeds: a gap for each.
                    let cause = if e.is_rate_limited() {
                        GapCause::RateLimited
                    } else {
                        GapCause::Disconnect
                    };
                    let mut update = FeedUpdate {
                        stale: chunk
                            .iter()
                            .flat_map(|m| BookKey::of_market(m).into_iter().map(|k| (k, cause)))
                            .collect(),
                        ..Default::default()
                    };
                    publish(&rt, &ctx, &mut update).await;
                    let delay = backoff.next_delay();
                    warn!(venue = %ex, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, "book poll failed");
                    ctx.health.update(ex, |h| {
                        h.connected = false;
                        h.part_failed(Part::Books, e.to_string(), Timestamp::now());
                    });
                    tokio::select! {
                        _ = ctx.cancel.cancelled() => return,
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
            }
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            _ = tokio::time::sleep_until(round_start + ctx.settings.book_poll) => {}
            changed = markets_rx.changed() => if changed.is_err() { return },
        }
    }
}
