//! Catalog sync and follow requests: keeps the venue's series, events and markets in the store and
//! publishes the followed [`MarketSet`] the feed and trade workers read.

use std::{
    collections::{BTreeSet, HashSet},
    sync::Arc,
    time::Duration,
};

use crossbook_core::{Event, Market, Status, Timestamp};
use crossbook_store::{Store, StoreError, WriteKind};
use tokio::{sync::mpsc, time::Instant};
use tracing::{debug, info, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    health::Part,
    venue::{CatalogBatch, MarketSet, Venue},
};
use crossbook_live::DomainEvent;

use super::{Ctx, FollowError, FollowRequest, Runtime};

/// Upserts a batch in parent-first order, all with `seen_at`.
async fn upsert(store: &dyn Store, batch: &CatalogBatch, seen_at: Timestamp) -> Result<(), StoreError> {
    store.upsert_series(&batch.series, seen_at).await?;
    store.upsert_events(&batch.events, seen_at).await?;
    store.upsert_markets(&batch.markets, seen_at).await
}

fn active_markets(markets: &[Market]) -> impl Iterator<Item = (String, Market)> + '_ {
    markets
        .iter()
        .filter(|m| m.status == Status::Active)
        .map(|m| (m.market_id.clone(), m.clone()))
}

/// One catalog sync; returns the number of followed markets.
async fn sync_catalog_once<V: Venue>(rt: &Runtime<V>, ctx: &Ctx) -> Result<usize, String> {
    let ex = V::EXCHANGE;
    let followed = rt.followed();
    let followed_list: Vec<String> = followed.iter().cloned().collect();
    let mut batch = rt.venue.sync_catalog(&followed_list).await.map_err(|e| e.to_string())?;
    // Markets we followed that left the listings: read their final state (closed, settled).
    let previous = rt.markets.borrow().clone();
    let listed: HashSet<String> = batch.markets.iter().map(|m| m.market_id.clone()).collect();
    let missing: Vec<Market> = previous
        .values()
        .filter(|m| !listed.contains(&m.market_id))
        .cloned()
        .collect();
    if !missing.is_empty() {
        match rt.venue.refresh_markets(&missing).await {
            Ok(ms) => batch.markets.extend(ms),
            Err(e) => {
                warn!(venue = %ex, error = %e, markets = missing.len(), "cannot refresh markets that left the listings")
            }
        }
    }
    let now = Timestamp::now();
    let health = ctx.store.write_health();
    health
        .report(WriteKind::Catalog, upsert(ctx.store.as_ref(), &batch, now).await)
        .map_err(|e| format!("store: {e}"))?;

    let mut set: MarketSet = active_markets(&batch.markets).collect();
    // Events followed while this sync ran are not in `batch` yet: keep their markets.
    let added_meanwhile: BTreeSet<String> = rt.followed().difference(&followed).cloned().collect();
    if !added_meanwhile.is_empty() {
        for m in rt.markets.borrow().values() {
            if added_meanwhile.contains(&m.event_id) {
                set.entry(m.market_id.clone()).or_insert_with(|| m.clone());
            }
        }
    }
    let n = set.len();
    ctx.live.retain_markets(ex, |id| set.contains_key(id));
    rt.markets.send_replace(Arc::new(set));
    ctx.health.update(ex, |h| {
        h.last_catalog_sync_at = Some(now);
        h.part_ok(Part::Catalog, now);
    });
    ctx.bus.publish(DomainEvent::CatalogSynced {
        exchange: ex,
        markets: n,
    });
    info!(
        venue = %ex,
        series = batch.series.len(),
        events = batch.events.len(),
        markets = batch.markets.len(),
        followed_markets = n,
        "catalog synced"
    );
    Ok(n)
}

/// The shortest time between two catalog syncs when the feed keeps hinting at changes.
const MIN_CATALOG_SPACING: Duration = Duration::from_secs(5);

pub(super) async fn catalog_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    let mut backoff = Backoff::new(BackoffPolicy::RECONNECT);
    loop {
        let started = Instant::now();
        let result = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = sync_catalog_once(&rt, &ctx) => r,
        };
        let delay = match result {
            Ok(_) => {
                backoff.reset();
                ctx.settings.catalog_sync
            }
            Err(e) => {
                let delay = backoff.next_delay().min(ctx.settings.catalog_sync);
                warn!(venue = %ex, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, "catalog sync failed");
                ctx.health
                    .update(ex, |h| h.part_failed(Part::Catalog, e, Timestamp::now()));
                delay
            }
        };
        tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
            _ = rt.catalog_now.notified() => {
                debug!(venue = %ex, "catalog sync requested by the feed");
                // Hints can come in bursts (one per resolved market): keep syncs spaced.
                let spacing = MIN_CATALOG_SPACING.min(ctx.settings.catalog_sync);
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return,
                    _ = tokio::time::sleep_until(started + spacing) => {}
                }
            }
        }
    }
}

async fn follow_one<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, event_id: &str) -> Result<Option<Event>, FollowError> {
    let Some(batch) = rt.venue.fetch_event(event_id).await? else {
        return Ok(None);
    };
    let Some(event) = batch
        .events
        .iter()
        .find(|e| e.event_id == event_id || e.slug.as_deref() == Some(event_id))
        .or(batch.events.first())
        .cloned()
    else {
        return Ok(None);
    };
    upsert(ctx.store.as_ref(), &batch, Timestamp::now()).await?;
    rt.followed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(event.event_id.clone());
    rt.markets.send_modify(|set| {
        let mut next = (**set).clone();
        next.extend(active_markets(&batch.markets));
        *set = Arc::new(next);
    });
    info!(venue = %V::EXCHANGE, event = %event.event_id, markets = batch.markets.len(), "following event");
    Ok(Some(event))
}

pub(super) async fn follow_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx, mut rx: mpsc::Receiver<FollowRequest>) {
    loop {
        let req = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = rx.recv() => match r {
                Some(r) => r,
                None => return,
            },
        };
        let result = tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            r = follow_one(&rt, &ctx, &req.event_id) => r,
        };
        // The caller may have given up waiting; nothing to do then.
        let _ = req.reply.send(result);
    }
}
