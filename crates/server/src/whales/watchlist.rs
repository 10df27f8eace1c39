//! The watchlist rules of adding an event: an event the store does not know is followed through running
//! ingestion ([`crossbook_venues::IngestHandle::follow_event`]; without ingestion, `--role api`, it is
//! unknown), a closed event is refused, and an event is on a customer's watchlist at most once.

use crossbook_core::{Amount, Exchange, Status, Timestamp};
use crossbook_store::{Store, StoreError, WatchEntry};
use crossbook_venues::{FollowError, IngestHandle};

use super::day_ago;

/// Why an event could not be added to a watchlist.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// Neither the store nor the venue (through ingestion) knows the event.
    #[error("no {exchange} event {ticker:?}")]
    UnknownEvent { exchange: Exchange, ticker: String },
    /// The event is closed.
    #[error("{exchange} event {ticker:?} is closed")]
    Closed { exchange: Exchange, ticker: String },
    /// The event is already on the customer's watchlist.
    #[error("{exchange} event {event_id:?} is already on your watchlist")]
    AlreadyWatched { exchange: Exchange, event_id: String },
    /// Following the event failed at the venue.
    #[error("following {exchange} event {ticker}: {cause}")]
    FollowFailed {
        exchange: Exchange,
        ticker: String,
        cause: String,
    },
    /// The entry was inserted but could not be read back.
    #[error("watchlist entry {0} vanished after insert")]
    Vanished(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Adds `exchange`'s event `ticker` to `customer`'s watchlist at `threshold` (see the module docs), and
/// returns the entry with its whale count since a day before `now`. `ingest` is this process's running
/// ingestion, if any.
pub async fn add_watch(
    store: &dyn Store,
    ingest: Option<IngestHandle>,
    customer: i64,
    exchange: Exchange,
    ticker: &str,
    threshold: Amount,
    now: Timestamp,
) -> Result<WatchEntry, WatchError> {
    let (event_id, status) = match store.get_event(exchange, ticker).await? {
        Some(e) => (e.event.event_id, e.event.status),
        None => {
            let unknown = || WatchError::UnknownEvent {
                exchange,
                ticker: ticker.to_string(),
            };
            let Some(ingest) = ingest else {
                return Err(unknown());
            };
            match ingest.follow_event(exchange, ticker).await {
                Ok(Some(e)) => (e.event_id, e.status),
                Ok(None) | Err(FollowError::NotRunning(_)) => return Err(unknown()),
                Err(FollowError::Store(e)) => return Err(e.into()),
                Err(e @ FollowError::Venue(_)) => {
                    return Err(WatchError::FollowFailed {
                        exchange,
                        ticker: ticker.to_string(),
                        cause: e.to_string(),
                    });
                }
            }
        }
    };
    if status == Status::Closed {
        return Err(WatchError::Closed {
            exchange,
            ticker: ticker.to_string(),
        });
    }
    let id = match store.add_watch(customer, exchange, &event_id, threshold, now).await {
        Ok(id) => id,
        Err(StoreError::Conflict(_)) => return Err(WatchError::AlreadyWatched { exchange, event_id }),
        Err(e) => return Err(e.into()),
    };
    store
        .get_watch(customer, id, day_ago(now))
        .await?
        .ok_or(WatchError::Vanished(id))
}
