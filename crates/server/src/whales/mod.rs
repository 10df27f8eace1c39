//! The whale service (spec §2.13, §4.4, §6.1; contracts §7): what the whale routes and the whale tracker
//! worker share, so that neither imports the other.
//!
//! - [`pool`]: the public daily pool ([`daily_pool`]), drawn once per UTC day and shared by every replica.
//! - [`watchlist`]: the watchlist rules ([`add_watch`]: follow an unknown event, refuse a closed one, one
//!   entry per event), with a domain error ([`WatchError`]) the routes map to HTTP.
//! - [`entry`]: the `whale.entry` webhook data ([`whale_entry_data`]) and the market ticker both it and the
//!   feeds show.
//! - [`threshold`]: which threshold a view of one event or market applies ([`view_threshold`]), and the
//!   default of a new watchlist entry.

pub mod entry;
pub mod pool;
pub mod threshold;
pub mod watchlist;

use crossbook_core::Timestamp;

pub use entry::{market_ticker, whale_entry_data};
pub use pool::daily_pool;
pub use threshold::{ThresholdSource, ViewThreshold, default_threshold, view_threshold};
pub use watchlist::{WatchError, add_watch};

pub use crossbook_core::time::DAY_MS;

/// `now` minus one day: the start of the 24h whale counts of watchlist entries and pool events.
pub fn day_ago(now: Timestamp) -> Timestamp {
    Timestamp::from_millis(now.millis() - DAY_MS)
}
