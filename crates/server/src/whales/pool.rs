//! The daily pool: drawn by [`crossbook_core::whale::draw_pool`] from the active events with the most 24h
//! volume and stored under its UTC day, first writer wins, so every replica serves the same pool all day. The
//! first request of a day or the whale tracker at 00:00 UTC draws it, whichever comes first.

use crossbook_core::{
    Exchange,
    whale::{POOL_CANDIDATE_FACTOR, draw_pool},
};
use crossbook_store::{Store, StoreResult};

/// The public pool of `day` (`YYYY-MM-DD`), in unlock order: the stored one, or drawn now from the current
/// candidates and stored (the first writer wins, so concurrent replicas agree), `size` events at most. Empty
/// only when no event is active.
pub async fn daily_pool(store: &dyn Store, size: u32, day: &str) -> StoreResult<Vec<(Exchange, String)>> {
    let stored = store.pool(day).await?;
    if !stored.is_empty() {
        return Ok(stored);
    }
    let size = size as usize;
    let want = u32::try_from(size.saturating_mul(POOL_CANDIDATE_FACTOR)).unwrap_or(u32::MAX);
    let candidates: Vec<(Exchange, String)> = store
        .pool_candidates(want)
        .await?
        .into_iter()
        .map(|c| (c.exchange, c.event_id))
        .collect();
    let drawn = draw_pool(day, &candidates, size);
    if drawn.is_empty() {
        return Ok(drawn);
    }
    let saved = store.save_pool(day, &drawn).await;
    store.write_health().report(crossbook_store::WriteKind::Whales, saved)
}
