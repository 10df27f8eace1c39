//! Catalog sync and follow requests: keeps the venue's series, events and markets in the store and
//! publishes the followed [`MarketSet`] the feed and trade workers read.
//!
//! A full sync runs every `catalog_sync_seconds`, never more often. Between syncs the feed's
//! [`CatalogNotice`]s are applied to just the market concerned: a listed market of a followed series or
//! event is read from the venue (one lookup per event, however many of its markets were announced, within
//! the venue's request rate) and followed; a resolved market is closed in the store and dropped from the
//! feed. A venue announces every market it has, so the feed passes on only those of followed markets;
//! lookups left waiting when the next full sync starts are dropped, as the sync reads every listing anyway.

use std::{
    collections::{BTreeMap, BTreeSet, HashSet},
    sync::Arc,
};

use crossbook_core::{Event, Market, Price, Status, Timestamp};
use crossbook_store::{Store, StoreError, WriteKind};
use tokio::{sync::mpsc, time::Instant};
use tracing::{debug, info, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    health::Part,
    venue::{CatalogBatch, CatalogNotice, MarketSet, Venue},
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

/// Events waiting for a lookup, at most; announcements past it are left to the next full sync.
const MAX_PENDING_LOOKUPS: usize = 1_000;
/// Event lookups between two looks at the clock (the venue's request rate spaces them further).
const LOOKUPS_PER_ROUND: usize = 10;

/// Catalog notices from the feed, waiting for the catalog worker.
#[derive(Debug, Default)]
pub(super) struct Notices {
    /// Events to read (id, or slug), each once however many of its markets were announced.
    listed: BTreeSet<String>,
    /// Followed markets resolved: market id → (winning token, when).
    resolved: BTreeMap<String, (Option<String>, Timestamp)>,
}

impl Notices {
    /// Queues `notices`; returns how many listings were left to the next full sync for want of room.
    pub(super) fn add(&mut self, notices: Vec<CatalogNotice>) -> usize {
        let mut overflow = 0;
        for n in notices {
            match n {
                CatalogNotice::Listed { event, .. } => {
                    if self.listed.len() < MAX_PENDING_LOOKUPS || self.listed.contains(&event) {
                        self.listed.insert(event);
                    } else {
                        overflow += 1;
                    }
                }
                CatalogNotice::Resolved { market_id, winner, at } => {
                    self.resolved.insert(market_id, (winner, at));
                }
            }
        }
        overflow
    }
}

fn count(ex: crossbook_core::Exchange, kind: &'static str, n: usize) {
    metrics::counter!("crossbook_venue_catalog_notices_total", "venue" => ex.as_str(), "kind" => kind)
        .increment(n as u64);
}

pub(super) async fn catalog_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    let mut backoff = Backoff::new(BackoffPolicy::RECONNECT);
    let mut next_sync = Instant::now();
    loop {
        if Instant::now() >= next_sync {
            // The sync reads every listing: the lookups waiting so far are covered by it.
            rt.notices().listed.clear();
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
            next_sync = Instant::now() + delay;
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => return,
            _ = tokio::time::sleep_until(next_sync) => {}
            _ = rt.catalog_now.notified() => {
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return,
                    _ = apply_notices(&rt, &ctx, next_sync) => {}
                }
            }
        }
    }
}

/// Applies the waiting notices, lookups a few at a time, until none is left or the next full sync is due.
async fn apply_notices<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, next_sync: Instant) {
    loop {
        let (resolved, listed) = {
            let mut n = rt.notices();
            let listed: Vec<String> = std::iter::from_fn(|| n.listed.pop_first())
                .take(LOOKUPS_PER_ROUND)
                .collect();
            (std::mem::take(&mut n.resolved), listed)
        };
        if resolved.is_empty() && listed.is_empty() {
            return;
        }
        close_resolved(rt, ctx, resolved).await;
        for event in listed {
            follow_listed(rt, ctx, &event).await;
        }
        if Instant::now() >= next_sync {
            return;
        }
    }
}

/// Closes followed markets the venue resolved: stored closed (settled at the venue's time, the winner
/// priced 1) and dropped from the feed, as the next full sync would.
async fn close_resolved<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, resolved: BTreeMap<String, (Option<String>, Timestamp)>) {
    if resolved.is_empty() {
        return;
    }
    let ex = V::EXCHANGE;
    let current = rt.markets.borrow().clone();
    let closed: Vec<Market> = resolved
        .into_iter()
        .filter_map(|(id, (winner, at))| {
            let m = current.get(&id)?;
            let yes_won = match winner {
                Some(w) if m.yes_token_id.as_ref() == Some(&w) => Some(true),
                Some(w) if m.no_token_id.as_ref() == Some(&w) => Some(false),
                _ => None,
            };
            let last_yes = yes_won.map(|y| if y { Price::ONE } else { Price::ZERO });
            Some(Market {
                status: Status::Closed,
                settled_at: Some(at),
                last_yes_price: last_yes.or(m.last_yes_price),
                last_no_price: last_yes.map(Price::complement).or(m.last_no_price),
                ..m.clone()
            })
        })
        .collect();
    if closed.is_empty() {
        return;
    }
    let result = ctx.store.upsert_markets(&closed, Timestamp::now()).await;
    if let Err(e) = ctx.store.write_health().report(WriteKind::Catalog, result) {
        warn!(venue = %ex, error = %e, markets = closed.len(), "cannot store resolved markets; the next catalog sync will");
    }
    rt.markets.send_modify(|set| {
        let mut next = (**set).clone();
        for m in &closed {
            next.remove(&m.market_id);
        }
        *set = Arc::new(next);
    });
    let set = rt.markets.borrow().clone();
    ctx.live.retain_markets(ex, |id| set.contains_key(id));
    count(ex, "resolved", closed.len());
    info!(venue = %ex, markets = closed.len(), "resolved markets closed and unfollowed");
}

/// Reads one event the feed announced a market of and follows its new open markets that belong to what is
/// followed: a followed series or event, or anything when the venue follows everything. The feed's
/// filter is by slug family, so the series is checked here before anything is stored.
async fn follow_listed<V: Venue>(rt: &Runtime<V>, ctx: &Ctx, event: &str) {
    let ex = V::EXCHANGE;
    let batch = match rt.venue.fetch_event(event).await {
        Ok(Some(b)) => b,
        Ok(None) => return,
        Err(e) => {
            warn!(venue = %ex, %event, error = %e, "cannot read a newly listed event; the next catalog sync will");
            return;
        }
    };
    let current = rt.markets.borrow().clone();
    let followed = rt.followed();
    let series: HashSet<&str> = current.values().map(|m| m.series_id.as_str()).collect();
    let events: HashSet<&str> = current.values().map(|m| m.event_id.as_str()).collect();
    let wanted = |m: &Market| {
        m.status == Status::Active
            && !current.contains_key(&m.market_id)
            && (rt.venue.follows_everything()
                || series.contains(m.series_id.as_str())
                || events.contains(m.event_id.as_str())
                || followed.contains(&m.event_id))
    };
    let markets: Vec<Market> = batch.markets.iter().filter(|m| wanted(m)).cloned().collect();
    if markets.is_empty() {
        debug!(venue = %ex, %event, "a listed event outside what is followed");
        return;
    }
    let targeted = CatalogBatch {
        series: batch
            .series
            .into_iter()
            .filter(|s| markets.iter().any(|m| m.series_id == s.series_id))
            .collect(),
        events: batch
            .events
            .into_iter()
            .filter(|e| markets.iter().any(|m| m.event_id == e.event_id))
            .collect(),
        markets,
    };
    let result = upsert(ctx.store.as_ref(), &targeted, Timestamp::now()).await;
    if let Err(e) = ctx.store.write_health().report(WriteKind::Catalog, result) {
        warn!(venue = %ex, %event, error = %e, "cannot store a newly listed market; the next catalog sync will");
        return;
    }
    rt.markets.send_modify(|set| {
        let mut next = (**set).clone();
        next.extend(active_markets(&targeted.markets));
        *set = Arc::new(next);
    });
    count(ex, "listed", targeted.markets.len());
    info!(venue = %ex, %event, markets = targeted.markets.len(), "newly listed markets followed");
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
