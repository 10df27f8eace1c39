//! [`publish`]: one feed update, from a socket or a REST poll, applied to memory, the bus and the writers,
//! in that order.

use std::sync::Arc;

use crossbook_core::{Exchange, Timestamp, book::GapCause};
use tracing::debug;

use crate::{
    error::report_malformed,
    venue::{FeedUpdate, Venue},
};
use crossbook_live::{BookChanged, BookKey, DomainEvent};

use super::{Ctx, Runtime, book_writer::BookInput};

/// Applies a feed update: malformed parts counted and skipped, stale books hidden, changed books into
/// memory, onto the bus and to the snapshot writer, trades to the trade writer, hints to their workers.
pub(super) async fn publish<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, update: &mut FeedUpdate) {
    let ex = V::EXCHANGE;
    if !update.malformed.is_empty() {
        let n = update.malformed.len() as u64;
        for e in update.malformed.drain(..) {
            report_malformed(&e);
        }
        ctx.health.update(ex, |h| h.malformed += n);
    }
    let received_at = Timestamp::now();
    if !update.stale.is_empty() {
        let stale = std::mem::take(&mut update.stale);
        // The log and the bus record each loss with its cause and number (one gap per book; a book already
        // stale is not marked again).
        for cause in GapCause::ALL {
            let lost = ctx
                .live
                .mark_stale(stale.iter().filter(|(_, c)| *c == cause).map(|(k, _)| k));
            lose(ctx, ex, lost, cause, received_at).await;
        }
    }
    // Every book of the frame goes live and onto the bus first, then to the writer: a full writer queue
    // holds up the reading of the next frame, never the live plane's view of this one.
    let mut inputs = Vec::with_capacity(update.books.len());
    for update in update.books.drain(..) {
        let Some(numbered) = ctx.live.upsert_numbered(update.book.clone()) else {
            continue;
        };
        ctx.bus.publish(DomainEvent::BookUpdated(Arc::new(BookChanged {
            key: BookKey::of(&update.book),
            book_seq: numbered.seq,
            timestamp: update.book.timestamp,
            change: update.change.clone(),
            venue_ts: update.venue_ts,
            received_at,
        })));
        inputs.push(BookInput::Update {
            update,
            received_at,
            seq: numbered.seq,
            restart_gap: numbered.restart_gap,
        });
    }
    for input in inputs {
        // Waits when the writer's queue is full rather than dropping a change the log would then miss.
        if ctx.books.send(input).await.is_err() {
            debug!(venue = %ex, "book writer gone; shutting down");
            break;
        }
    }
    if !update.trades.is_empty() {
        let trades = std::mem::take(&mut update.trades);
        rt.note_trades(&trades);
        if ctx.trades.send(trades).await.is_err() {
            debug!(venue = %ex, "trade writer gone; shutting down");
        }
    }
    if update.backfill_trades {
        rt.trades_now.notify_one();
    }
    if !update.catalog.is_empty() {
        rt.note_catalog(std::mem::take(&mut update.catalog));
    }
}

/// Publishes the gaps of books that lost continuity (each with its number) and hands them to the book writer.
pub(super) async fn lose(ctx: &Ctx, exchange: Exchange, lost: Vec<(BookKey, u64)>, cause: GapCause, at: Timestamp) {
    if lost.is_empty() {
        return;
    }
    let (keys, book_seqs) = lost.iter().cloned().unzip();
    ctx.bus.publish(DomainEvent::BooksStale {
        exchange,
        keys,
        book_seqs,
        cause,
        at,
    });
    if ctx
        .books
        .send(BookInput::Lost { books: lost, cause, at })
        .await
        .is_err()
    {
        debug!("book writer gone; shutting down");
    }
}
