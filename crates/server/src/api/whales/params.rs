//! Query parameters and request bodies of the whale routes, each parsed field by field so an error names its
//! field.

use crossbook_core::{Amount, Exchange, Timestamp};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::{
    IntoParams, PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};

use super::{FeedLimit, MAX_THRESHOLD_USD};
use crate::{
    config::Config,
    error::{ApiError, ApiResult},
    params::{
        AmountQuery, Defaulted, FromQuery, Offset, ParamDefault, ParamEnum, QueryMap, Text, TextValue, TimestampQuery,
        check_order, text_value, with_keywords,
    },
    whales::DAY_MS,
};

// ------------------------------------------------------------------------------------------------ parameters

/// Period of `/whales/user/stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum StatsPeriod {
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "7d")]
    D7,
    #[serde(rename = "all")]
    All,
}

impl ParamEnum for StatsPeriod {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("24h", StatsPeriod::H24),
        ("7d", StatsPeriod::D7),
        ("all", StatsPeriod::All),
    ];
}

/// `period` when absent.
impl ParamDefault for StatsPeriod {
    const DEFAULT: Self = StatsPeriod::H24;
}

impl StatsPeriod {
    pub(super) fn since(self, now: Timestamp) -> Option<Timestamp> {
        match self {
            StatsPeriod::H24 => Some(Timestamp::from_millis(now.millis() - DAY_MS)),
            StatsPeriod::D7 => Some(Timestamp::from_millis(now.millis() - 7 * DAY_MS)),
            StatsPeriod::All => None,
        }
    }
}

/// The paging and filters both whale feeds take: listed first in each feed's parameters
/// (`params(FeedFilter, UserFeedParams)`).
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeedFilter {
    /// Page size.
    #[param(inline, required = false)]
    pub limit: FeedLimit,
    /// Trades to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
    /// Only trades executed at or after this time (ISO 8601, or a date).
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub start_date: Option<Timestamp>,
    /// Only trades executed at or before this time (ISO 8601, or a date).
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub end_date: Option<Timestamp>,
    /// Only this venue.
    #[param(inline)]
    pub platform: Option<Exchange>,
}

impl FromQuery for FeedFilter {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let f = FeedFilter {
            limit: q.get("limit")?,
            offset: q.get("offset")?,
            start_date: q.timestamp("start_date")?,
            end_date: q.timestamp("end_date")?,
            platform: q.one_of("platform")?,
        };
        check_order("start_date", f.start_date, "end_date", f.end_date)?;
        Ok(f)
    }
}

/// Parameters of `/whales/user/feed`, besides [`FeedFilter`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserFeedParams {
    #[param(ignore)]
    pub filter: FeedFilter,
    /// Only this watchlist event (the venue's event id).
    #[param(inline)]
    pub event_id: Option<Text>,
    /// Minimum notional in dollars for every event, instead of each event's own threshold.
    #[param(value_type = Option<ThresholdQuery>, inline)]
    pub min_trade_size: Option<Amount>,
}

impl FromQuery for UserFeedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(UserFeedParams {
            filter: FeedFilter::from_query(q)?,
            event_id: q.get("event_id")?,
            min_trade_size: threshold_param(q, "min_trade_size")?,
        })
    }
}

/// Parameters of `/v1/whales/public/feed`, besides [`FeedFilter`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PublicFeedParams {
    #[param(ignore)]
    pub filter: FeedFilter,
    /// Minimum notional in dollars, `abs(price × size)`; at least the platform minimum (500 by default),
    /// which is also the default.
    #[param(value_type = Option<PublicThresholdQuery>, inline)]
    pub min_trade_size: Option<Amount>,
}

impl FromQuery for PublicFeedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(PublicFeedParams {
            filter: FeedFilter::from_query(q)?,
            min_trade_size: threshold_param(q, "min_trade_size")?,
        })
    }
}

/// Parameters of `/whales/user/stats`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatsParams {
    /// The period the stats cover.
    #[param(inline, required = false)]
    pub period: Defaulted<StatsPeriod>,
}

impl FromQuery for StatsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(StatsParams {
            period: q.get("period")?,
        })
    }
}

/// Parameters of `/v1/whales/public/events`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CatalogParams {
    /// Only events of this venue.
    #[param(inline)]
    pub platform: Option<Exchange>,
}

impl FromQuery for CatalogParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(CatalogParams {
            platform: q.one_of("platform")?,
        })
    }
}

/// A dollar threshold query parameter ([`threshold_param`]): an amount ([`AmountQuery`]) of at most
/// [`MAX_THRESHOLD_USD`].
pub struct ThresholdQuery;

impl PartialSchema for ThresholdQuery {
    fn schema() -> RefOr<Schema> {
        with_keywords(AmountQuery::schema(), json!({"maximum": MAX_THRESHOLD_USD}))
    }
}

impl ToSchema for ThresholdQuery {}

/// `min_trade_size` of the public feed: a [`ThresholdQuery`] of at least the platform minimum, which is also its
/// default. The minimum is a setting (`whale_public_min_usd`); the document states its default value.
pub struct PublicThresholdQuery;

impl PartialSchema for PublicThresholdQuery {
    fn schema() -> RefOr<Schema> {
        let min = Config::default().whale_public_min_usd;
        with_keywords(ThresholdQuery::schema(), json!({"minimum": min, "default": min}))
    }
}

impl ToSchema for PublicThresholdQuery {}

/// A dollar threshold query parameter: a non-negative decimal, at most [`MAX_THRESHOLD_USD`].
pub(super) fn threshold_param(q: &QueryMap, name: &str) -> ApiResult<Option<Amount>> {
    let v = q.non_negative_amount(name)?;
    if v.is_some_and(|a| a > Amount::from_units(MAX_THRESHOLD_USD)) {
        return Err(ApiError::invalid(
            name,
            format!("{name} must be at most {MAX_THRESHOLD_USD}"),
        ));
    }
    Ok(v)
}

// ------------------------------------------------------------------------------------------------ bodies

/// Body of `POST /whales/user/events/by-ticker`.
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)] // Documentation of the body; it is parsed field by field so errors can name the field.
pub struct AddEventIn {
    /// `venue_a` or `venue_b`.
    exchange: Exchange,
    /// The venue's event id (venue_a event ticker; venue_b event id or slug).
    #[schema(value_type = TextValue)]
    event_ticker: String,
    /// Notional in dollars at or above which a trade is a whale; default 1000.
    #[schema(minimum = 0)]
    whale_threshold_usd: Option<f64>,
}

/// Body of `PATCH /whales/user/events/{id}`.
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)] // Documentation of the body; it is parsed field by field so errors can name the field.
pub struct PatchEventIn {
    /// The new threshold in dollars.
    #[schema(minimum = 0)]
    whale_threshold_usd: f64,
}

pub(super) use crate::api::common::body_object;

/// A dollar amount in a body: a JSON number (or a numeric string) read exactly, never through `f64` arithmetic.
pub(super) fn body_threshold(obj: &serde_json::Map<String, Value>, name: &str) -> ApiResult<Option<Amount>> {
    let bad = || {
        ApiError::invalid(
            name,
            format!(
                "{name} must be a non-negative number of dollars with at most 6 decimals, at most {MAX_THRESHOLD_USD}"
            ),
        )
    };
    let text = match obj.get(name) {
        // The schema allows null: it means the default, as an absent field does.
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(bad()),
    };
    // `1000.0` is how JSON writers often render a whole number.
    let text = text.strip_suffix(".0").unwrap_or(&text);
    match text.parse::<Amount>() {
        Ok(a) if a >= Amount::ZERO && a <= Amount::from_units(MAX_THRESHOLD_USD) => Ok(Some(a)),
        _ => Err(bad()),
    }
}

pub(super) fn body_exchange(obj: &serde_json::Map<String, Value>) -> ApiResult<Exchange> {
    match obj.get("exchange") {
        None | Some(Value::Null) => Err(ApiError::missing("exchange")),
        Some(Value::String(s)) => parse_exchange("exchange", s),
        Some(_) => Err(ApiError::invalid(
            "exchange",
            "exchange must be one of venue_a or venue_b",
        )),
    }
}

pub(super) fn parse_exchange(name: &str, s: &str) -> ApiResult<Exchange> {
    Exchange::VALUES
        .iter()
        .find(|(spelling, _)| *spelling == s)
        .map(|(_, e)| *e)
        .ok_or_else(|| ApiError::invalid(name, format!("{name} must be one of {}", Exchange::listing())))
}

pub(super) fn body_text(obj: &serde_json::Map<String, Value>, name: &str) -> ApiResult<String> {
    match obj.get(name) {
        None | Some(Value::Null) => Err(ApiError::missing(name)),
        Some(Value::String(s)) => text_value(name, s),
        Some(_) => Err(ApiError::invalid(name, format!("{name} must be a string"))),
    }
}

/// A watchlist id path segment ([`watch_id`]): a positive integer.
pub struct WatchId;

impl PartialSchema for WatchId {
    fn schema() -> RefOr<Schema> {
        serde_json::from_value(json!({"type": "integer", "format": "int64", "minimum": 1}))
            .expect("a parameter schema is a valid schema")
    }
}

impl ToSchema for WatchId {}

/// A watchlist id path segment: a positive integer.
pub(super) fn watch_id(raw: &str) -> ApiResult<i64> {
    match raw.parse::<i64>() {
        Ok(id) if id > 0 && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(id),
        _ => Err(ApiError::invalid("id", "id must be a positive integer watchlist id")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::tests::assert_spellings_match_serde;
    use serde_json::json;

    #[test]
    fn period_spellings_match_their_schema() {
        assert_spellings_match_serde::<StatsPeriod>();
    }

    #[test]
    fn body_thresholds_are_exact() {
        let obj = |v: Value| v.as_object().unwrap().clone();
        let t = |v: Value| body_threshold(&obj(json!({ "x": v })), "x");
        assert_eq!(t(json!(1000)).unwrap(), Some(Amount::from_units(1000)));
        assert_eq!(t(json!(1000.0)).unwrap(), Some(Amount::from_units(1000)));
        assert_eq!(t(json!(2500.25)).unwrap(), Some(Amount::from_micros(2_500_250_000)));
        assert_eq!(t(json!("0.5")).unwrap(), Some(Amount::from_micros(500_000)));
        assert_eq!(t(json!(0)).unwrap(), Some(Amount::ZERO));
        for bad in [json!(-1), json!("x"), json!(true), json!(1e300), json!(0.1234567)] {
            assert!(t(bad.clone()).is_err(), "{bad}");
        }
        assert_eq!(body_threshold(&obj(json!({})), "x").unwrap(), None);
        assert_eq!(t(Value::Null).unwrap(), None);
    }

    #[test]
    fn watch_ids_are_positive_integers() {
        assert_eq!(watch_id("65").unwrap(), 65);
        for bad in ["0", "-1", "+1", "x", "", "1.5", "99999999999999999999"] {
            assert!(watch_id(bad).is_err(), "{bad}");
        }
    }
}
