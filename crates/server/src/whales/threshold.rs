//! Which threshold a whale view of one event or market applies: the request's `min_trade_size` when given,
//! else the caller's watchlist threshold for the event, else the default threshold of a new watchlist entry
//! (`whale_default_threshold_usd`). Every view says which applied and where it came from.

use crossbook_core::{Amount, Exchange, Timestamp};
use crossbook_store::{Store, StoreResult};
use serde::Serialize;
use utoipa::ToSchema;

use crate::config::Config;

/// Where a view's threshold came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdSource {
    /// The request's `min_trade_size`.
    Request,
    /// The caller's watchlist entry for the event.
    Watchlist,
    /// The default threshold of a new watchlist entry.
    Default,
}

/// The threshold a view applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewThreshold {
    /// Notional at or above which a trade counts.
    pub min: Amount,
    pub source: ThresholdSource,
    /// Whether the event is on the caller's watchlist.
    pub on_watchlist: bool,
}

/// The threshold of a new watchlist entry that names none (`whale_default_threshold_usd`).
pub fn default_threshold(config: &Config) -> Amount {
    Amount::from_units(config.whale_default_threshold_usd as i64)
}

/// The rule of the module: the asked threshold, else the watched one, else the default.
pub fn choose(asked: Option<Amount>, watched: Option<Amount>, default: Amount) -> (Amount, ThresholdSource) {
    match (asked, watched) {
        (Some(a), _) => (a, ThresholdSource::Request),
        (None, Some(w)) => (w, ThresholdSource::Watchlist),
        (None, None) => (default, ThresholdSource::Default),
    }
}

/// The threshold `customer`'s view of `exchange`'s event `event_id` applies, `asked` being the request's
/// `min_trade_size`.
pub async fn view_threshold(
    store: &dyn Store,
    default: Amount,
    customer: i64,
    exchange: Exchange,
    event_id: &str,
    asked: Option<Amount>,
) -> StoreResult<ViewThreshold> {
    let watch = store.find_watch(customer, exchange, event_id, Timestamp::now()).await?;
    let (min, source) = choose(asked, watch.as_ref().map(|w| w.threshold), default);
    Ok(ViewThreshold {
        min,
        source,
        on_watchlist: watch.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_then_the_watchlist_then_the_default() {
        let (asked, watched, default) = (Amount::from_units(5), Amount::from_units(50), Amount::from_units(1000));
        assert_eq!(
            choose(Some(asked), Some(watched), default),
            (asked, ThresholdSource::Request)
        );
        assert_eq!(choose(Some(asked), None, default), (asked, ThresholdSource::Request));
        assert_eq!(
            choose(None, Some(watched), default),
            (watched, ThresholdSource::Watchlist)
        );
        assert_eq!(choose(None, None, default), (default, ThresholdSource::Default));
        assert_eq!(default_threshold(&Config::default()), Amount::from_units(1000));
    }
}
