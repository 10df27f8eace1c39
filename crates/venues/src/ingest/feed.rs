//! The feed: the WebSocket session with its reconnect backoff and silence watchdog (or the REST polling
//! fallback), and [`publish`], which applies every feed update to memory, the bus and the writers.

use std::{sync::Arc, time::Duration};

use crossbook_core::{Exchange, Timestamp, book::GapCause};
use futures_util::{SinkExt, StreamExt};
use tokio::{sync::watch, time::Instant};
use tokio_tungstenite::tungstenite::Message;
use tracing::{debug, error, info, warn};

use crate::{
    backoff::Backoff,
    error::{VenueError, report_malformed},
    health::{FeedMode, Part},
    venue::{FeedSession, FeedUpdate, MarketSet, Venue},
};
use crossbook_live::{BookChanged, BookKey, DomainEvent};

use super::polling::poll_books_worker;
use super::{Ctx, Runtime, book_writer::BookInput};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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
        // Waits when the writer's queue is full rather than dropping a change the log would then miss.
        let input = BookInput::Update {
            update,
            received_at,
            seq: numbered.seq,
            restart_gap: numbered.restart_gap,
        };
        if ctx.books.send(input).await.is_err() {
            debug!(venue = %ex, "book writer gone; shutting down");
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
async fn lose(ctx: &Ctx, exchange: Exchange, lost: Vec<(BookKey, u64)>, cause: GapCause, at: Timestamp) {
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

/// Seeds the live numbering with the log's heads of the venue's books, so numbers continue from what is
/// stored. Until the heads are read no book is ingested: numbering from 0 would hand out numbers the log
/// already holds. A failure shows on the venue's books part (`/readyz`) and is retried with the reconnect
/// backoff. `false` when cancelled first.
async fn seed_numbering(ctx: &Ctx, ex: Exchange) -> bool {
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    loop {
        match ctx.store.log_heads(ex).await {
            Ok(heads) => {
                let n = heads.len();
                ctx.live.seed(heads.into_iter().map(|h| (h.book, h.last_seq)));
                debug!(venue = %ex, books = n, "book numbering continues from the log");
                return true;
            }
            Err(e) => {
                let delay = backoff.next_delay();
                let reason = format!("cannot read the book log's last numbers, books wait for them: {e}");
                error!(venue = %ex, error = %e, delay_ms = delay.as_millis() as u64, "reading the book log's heads failed; retrying");
                ctx.health
                    .update(ex, |h| h.part_failed(Part::Books, reason.clone(), Timestamp::now()));
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return false,
                    _ = tokio::time::sleep(delay) => {}
                }
            }
        }
    }
}

/// How a WebSocket session ended.
enum SessionEnd {
    /// Shutdown requested.
    Cancelled,
    /// The connection ended (closed by the venue, silent feed): reconnect.
    Ended(String, GapCause),
}

pub(super) async fn feed_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    if !seed_numbering(&ctx, ex).await {
        return;
    }
    match rt.venue.ws_request() {
        Ok(Some(_)) => {}
        Ok(None) => return poll_books_worker(rt, ctx).await,
        Err(e) => {
            error!(venue = %ex, error = %e, "cannot build the WebSocket request; books will not be ingested");
            ctx.health
                .update(ex, |h| h.part_failed(Part::Books, e.to_string(), Timestamp::now()));
            return;
        }
    }
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    let mut markets_rx = rt.markets.subscribe();
    loop {
        let (reason, cause) = match ws_session(&rt, &ctx, &mut markets_rx, &mut backoff).await {
            Ok(SessionEnd::Cancelled) => break,
            Ok(SessionEnd::Ended(reason, cause)) => (reason, cause),
            Err(e) => (e.to_string(), GapCause::Disconnect),
        };
        if ctx.cancel.is_cancelled() {
            break;
        }
        // The books are marked before the venue shows disconnected, so a reader that sees it disconnected
        // also sees its books stale.
        let stale = ctx.live.mark_exchange_stale(ex);
        ctx.health.update(ex, |h| {
            h.connected = false;
            h.reconnects += 1;
            h.part_failed(Part::Books, reason.clone(), Timestamp::now());
        });
        lose(&ctx, ex, stale, cause, Timestamp::now()).await;
        metrics::counter!("crossbook_venue_reconnects_total", "venue" => ex.as_str()).increment(1);
        let delay = backoff.next_delay();
        warn!(venue = %ex, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, reason = %reason, "feed disconnected; reconnecting");
        tokio::select! {
            _ = ctx.cancel.cancelled() => break,
            _ = tokio::time::sleep(delay) => {}
        }
    }
    ctx.health.update(ex, |h| h.connected = false);
}

/// How often the watchdog looks: a quarter of the silence limit, between 100 ms and 5 s.
fn watchdog_period(silence: Duration) -> Duration {
    (silence / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
}

async fn ws_session<V: Venue>(
    rt: &Runtime<V>,
    ctx: &Ctx,
    markets_rx: &mut watch::Receiver<Arc<MarketSet>>,
    backoff: &mut Backoff,
) -> Result<SessionEnd, VenueError> {
    let ex = V::EXCHANGE;
    let ws_err = |reason: String| VenueError::WebSocket { exchange: ex, reason };
    let Some(request) = rt.venue.ws_request()? else {
        return Err(ws_err("no WebSocket request".into()));
    };
    let url = request.uri().to_string();
    let connect = tokio::time::timeout(CONNECT_TIMEOUT, tokio_tungstenite::connect_async(request));
    let (ws, _) = tokio::select! {
        _ = ctx.cancel.cancelled() => return Ok(SessionEnd::Cancelled),
        r = connect => r
            .map_err(|_| ws_err(format!("connect to {url} timed out")))?
            .map_err(|e| ws_err(format!("connect to {url}: {e}")))?,
    };
    let (mut sink, mut stream) = ws.split();
    let mut session = rt.venue.new_session();

    let set = markets_rx.borrow_and_update().clone();
    let mut update = session.sync_markets(&set);
    for frame in update.send.drain(..) {
        sink.send(Message::Text(frame.into()))
            .await
            .map_err(|e| ws_err(format!("send: {e}")))?;
    }
    publish(rt, ctx, &mut update).await;
    ctx.health.update(ex, |h| {
        h.mode = FeedMode::WebSocket;
        h.connected = true;
    });
    info!(venue = %ex, url = %url, markets = set.len(), "feed connected and subscribed");
    // Trades executed while we were away come from the REST tape.
    rt.trades_now.notify_one();

    let silence = ctx.settings.feed_silence;
    let period = watchdog_period(silence);
    let mut watchdog = tokio::time::interval_at(Instant::now() + period, period);
    let keepalive_every = rt.venue.keepalive_interval();
    let ka_period = keepalive_every.unwrap_or(Duration::from_secs(3600));
    let mut keepalive = tokio::time::interval_at(Instant::now() + ka_period, ka_period);
    // Data or a keepalive: what the watchdog waits for. A quiet market sends only keepalives (venue_b's
    // `PONG`, venue_a's heartbeat pings) and is not silent; its books stay valid.
    let mut last_alive = Instant::now();
    let mut resubscribed = false;
    let mut got_data = false;

    loop {
        let mut update = tokio::select! {
            _ = ctx.cancel.cancelled() => {
                let _ = sink.send(Message::Close(None)).await;
                return Ok(SessionEnd::Cancelled);
            }
            frame = stream.next() => {
                let text = match frame {
                    Some(Ok(Message::Text(t))) => t.to_string(),
                    Some(Ok(Message::Binary(b))) => String::from_utf8_lossy(&b).into_owned(),
                    Some(Ok(Message::Close(f))) => {
                        return Ok(SessionEnd::Ended(format!("closed by the venue ({f:?})"), GapCause::Disconnect));
                    }
                    // The venue's heartbeat pings (answered by tungstenite itself) and pongs: alive.
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {
                        last_alive = Instant::now();
                        ctx.health.alive(ex, Timestamp::now());
                        continue;
                    }
                    // Raw frames carry nothing.
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(ws_err(format!("read: {e}"))),
                    None => return Ok(SessionEnd::Ended("connection ended".into(), GapCause::Disconnect)),
                };
                let update = session.on_text(&text, Timestamp::now());
                if update.data {
                    last_alive = Instant::now();
                    resubscribed = false;
                    ctx.health.touch(ex, Timestamp::now());
                    if !got_data {
                        // Connected and receiving: the next failure starts the schedule over.
                        got_data = true;
                        backoff.reset();
                    }
                } else if update.alive {
                    last_alive = Instant::now();
                    ctx.health.alive(ex, Timestamp::now());
                }
                update
            }
            changed = markets_rx.changed() => {
                if changed.is_err() {
                    return Ok(SessionEnd::Cancelled);
                }
                let set = markets_rx.borrow_and_update().clone();
                session.sync_markets(&set)
            }
            _ = keepalive.tick(), if keepalive_every.is_some() => {
                match session.keepalive() {
                    Some(ping) => FeedUpdate::sending(vec![ping]),
                    None => FeedUpdate::default(),
                }
            }
            _ = watchdog.tick() => {
                if last_alive.elapsed() < silence {
                    session.on_tick(Timestamp::now())
                } else if resubscribed {
                    return Ok(SessionEnd::Ended(
                        format!(
                            "no data or keepalive for {} ms even after resubscribing",
                            last_alive.elapsed().as_millis()
                        ),
                        GapCause::Silence,
                    ));
                } else {
                    warn!(venue = %ex, silent_ms = last_alive.elapsed().as_millis() as u64, "feed silent (no data, no keepalive); resubscribing");
                    metrics::counter!("crossbook_venue_watchdog_resubscribes_total", "venue" => ex.as_str())
                        .increment(1);
                    resubscribed = true;
                    last_alive = Instant::now();
                    session.resubscribe(GapCause::Silence)
                }
            }
        };
        for frame in update.send.drain(..) {
            sink.send(Message::Text(frame.into()))
                .await
                .map_err(|e| ws_err(format!("send: {e}")))?;
        }
        publish(rt, ctx, &mut update).await;
    }
}
