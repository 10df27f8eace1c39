//! The daily public pool: the events the public feed follows on a date, chosen once a day from the most active.

use crossbook_core::{Amount, Exchange};

use super::PoolCandidate;
use crate::{
    StoreResult,
    backend::Exec,
    codec::{self, Cols},
    sql::Sql,
};

pub(super) async fn pool<E: Exec>(ex: &E, date: &str) -> StoreResult<Vec<(Exchange, String)>> {
    let mut s = Sql::new("SELECT exchange, event_id FROM whale_pool WHERE pool_date = ");
    s.text(date).push(" ORDER BY rank");
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| Ok((codec::exchange(&r.text("exchange")?)?, r.text("event_id")?)))
        .collect()
}

pub(super) async fn save_pool<E: Exec>(
    ex: &E,
    date: &str,
    events: &[(Exchange, String)],
) -> StoreResult<Vec<(Exchange, String)>> {
    if !events.is_empty() {
        // One statement: a concurrent drawer's rows conflict from the first rank on, so one pool wins whole.
        let mut s = Sql::new("INSERT INTO whale_pool (pool_date, rank, exchange, event_id) VALUES ");
        for (i, (exchange, event_id)) in events.iter().enumerate() {
            if i > 0 {
                s.push(", ");
            }
            s.push("(")
                .text(date)
                .push(", ")
                .int(i as i64)
                .push(", ")
                .text(exchange.as_str())
                .push(", ")
                .text(event_id)
                .push(")");
        }
        s.push(" ON CONFLICT (pool_date, rank) DO NOTHING");
        ex.exec(&s).await?;
    }
    pool(ex, date).await
}

pub(super) async fn pool_candidates<E: Exec>(ex: &E, limit: u32) -> StoreResult<Vec<PoolCandidate>> {
    let mut s = Sql::new(
        "SELECT e.exchange, e.event_id, coalesce(e.volume_24h, (SELECT CAST(coalesce(sum(m.volume_24h), 0) AS BIGINT) \
         FROM markets m WHERE m.exchange = e.exchange AND m.event_id = e.event_id)) AS volume \
         FROM events e WHERE e.status = 'active' ORDER BY volume DESC, e.exchange, e.event_id LIMIT ",
    );
    s.int(i64::from(limit));
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| {
            Ok(PoolCandidate {
                exchange: codec::exchange(&r.text("exchange")?)?,
                event_id: r.text("event_id")?,
                volume_24h: Amount::from_micros(r.int("volume")?),
            })
        })
        .collect()
}
