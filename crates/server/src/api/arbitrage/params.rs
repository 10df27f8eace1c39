//! The parameters of the arbitrage routes: each route's parameter struct and the types that read and document
//! its fields.

use crossbook_core::{Category, IntervalCode, Timestamp, arb::MicroUsd};
use serde::Serialize;
use serde_json::json;
use utoipa::{
    IntoParams, PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};

use crate::{
    arbitrage::{DEFAULT_MAX_STALENESS_SECONDS, DEFAULT_WINDOW_TOLERANCE_SECONDS},
    error::ApiResult,
    params::{
        CentsQuery, Flag, FromQuery, Int, Limit, Offset, ParamEnum, QueryMap, TimestampQuery, listed_enum_schema,
        with_keywords,
    },
};

/// `limit` of the routes.
pub type ArbLimit = Limit<50, 100>;
/// `max_staleness_seconds`: 1 s to a day.
pub type StalenessSeconds = Int<1, 86_400, { DEFAULT_MAX_STALENESS_SECONDS }>;
/// `window_tolerance_seconds`: up to an hour.
pub type ToleranceSeconds = Int<0, 3_600, { DEFAULT_WINDOW_TOLERANCE_SECONDS }>;
/// `minutes` of the spread route: up to a year, 10,000 by default.
pub type Minutes = Int<1, 525_600, 10_000>;
/// `min_net_cents` of the current route when absent: every opportunity that nets anything.
pub const DEFAULT_MIN_NET: MicroUsd = MicroUsd::ZERO;
/// `orderbook`, off when absent: the ladders are opt-in because they make each row several times larger.
pub type OrderbookFlag = Flag<false>;

/// `min_net_cents`, read by [`crate::params::QueryMap::cents_ceil`]: cents ([`CentsQuery`]), documented with the
/// floor that applies when absent ([`DEFAULT_MIN_NET`]; the history route has no floor, which filters alike).
pub struct MinNetCentsQuery;

impl PartialSchema for MinNetCentsQuery {
    fn schema() -> RefOr<Schema> {
        let whole_cents = DEFAULT_MIN_NET.micros() / MicroUsd::from_cents(1).micros();
        with_keywords(CentsQuery::schema(), json!({"default": whole_cents}))
    }
}

impl ToSchema for MinNetCentsQuery {}

/// `window` or `matched`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PairKindName {
    Window,
    Matched,
}

impl ParamEnum for PairKindName {
    const VALUES: &'static [(&'static str, Self)] =
        &[("window", PairKindName::Window), ("matched", PairKindName::Matched)];
}

/// Parameters of `/v1/arbitrage/pairs`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PairsParams {
    /// Only pairs of this kind.
    #[param(inline)]
    pub kind: Option<PairKindName>,
    /// Only window pairs of this interval.
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Page size.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
    /// Zero-based offset.
    #[param(inline, required = false)]
    pub offset: Offset,
}

impl FromQuery for PairsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(PairsParams {
            kind: q.one_of("kind")?,
            interval_code: q.one_of("interval_code")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
        })
    }
}

/// As a parameter, a category is one the scan prices: `crypto` or `sports` (core's spellings), never `other`.
impl ParamEnum for Category {
    const VALUES: &'static [(&'static str, Self)] = &[
        (Category::Crypto.as_str(), Category::Crypto),
        (Category::Sports.as_str(), Category::Sports),
    ];
}

/// The schema of a [`Category`] parameter: its spellings ([`ParamEnum`]).
pub struct CategoryQuery;

impl PartialSchema for CategoryQuery {
    fn schema() -> RefOr<Schema> {
        listed_enum_schema::<Category>()
    }
}

impl ToSchema for CategoryQuery {}

/// Parameters of `/v1/arbitrage/current`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CurrentParams {
    /// Minimum net profit after fees, cents (inclusive).
    #[param(value_type = Option<MinNetCentsQuery>, inline)]
    pub min_net_cents: Option<MicroUsd>,
    /// Only windows of this interval (matched pairs have none).
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Attach the top 5 ask levels per leg under `orderbook`.
    #[param(inline, required = false)]
    pub orderbook: OrderbookFlag,
    /// Pairs are dropped when either book is older than this.
    #[param(inline, required = false)]
    pub max_staleness_seconds: StalenessSeconds,
    /// Maximum start/end skew when pairing windows.
    #[param(inline, required = false)]
    pub window_tolerance_seconds: ToleranceSeconds,
    /// Maximum rows.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
}

impl FromQuery for CurrentParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(CurrentParams {
            min_net_cents: q.cents_ceil("min_net_cents")?,
            interval_code: q.one_of("interval_code")?,
            orderbook: q.get("orderbook")?,
            max_staleness_seconds: q.get("max_staleness_seconds")?,
            window_tolerance_seconds: q.get("window_tolerance_seconds")?,
            limit: q.get("limit")?,
        })
    }
}

/// Parameters of `/v1/arbitrage/current/difference`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DifferenceParams {
    /// Snapshot lookback in minutes: books older than this are ignored.
    #[param(inline, required = false)]
    pub minutes: Minutes,
    /// Only windows of this interval.
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Maximum rows.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
}

impl FromQuery for DifferenceParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(DifferenceParams {
            minutes: q.get("minutes")?,
            interval_code: q.one_of("interval_code")?,
            limit: q.get("limit")?,
        })
    }
}

/// Parameters of `/v1/arbitrage/history`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryParams {
    /// Page size.
    #[param(inline, required = false)]
    pub limit: ArbLimit,
    /// Zero-based offset.
    #[param(inline, required = false)]
    pub offset: Offset,
    /// Only windows of this interval.
    #[param(inline)]
    pub interval_code: Option<IntervalCode>,
    /// Only this category.
    #[param(value_type = Option<CategoryQuery>, inline)]
    pub category: Option<Category>,
    /// Minimum `net_cents` of the episode's latest observation (inclusive), over the full history.
    #[param(value_type = Option<MinNetCentsQuery>, inline)]
    pub min_net_cents: Option<MicroUsd>,
    /// ISO 8601; keep episodes last seen at or after this time.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub from: Option<Timestamp>,
    /// ISO 8601; keep episodes first seen at or before this time.
    #[param(value_type = Option<TimestampQuery>, inline)]
    pub to: Option<Timestamp>,
}

impl FromQuery for HistoryParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(HistoryParams {
            limit: q.get("limit")?,
            offset: q.get("offset")?,
            interval_code: q.one_of("interval_code")?,
            category: q.one_of("category")?,
            min_net_cents: q.cents_ceil("min_net_cents")?,
            from: q.timestamp("from")?,
            to: q.timestamp("to")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_net_cents_is_exact_and_strict() {
        let parse = |v: &str| {
            QueryMap::parse(&format!("min_net_cents={v}"))
                .unwrap()
                .cents_ceil("min_net_cents")
        };
        assert_eq!(parse("0").unwrap(), Some(MicroUsd::ZERO));
        assert_eq!(parse("1.25").unwrap(), Some(MicroUsd(12_500)));
        assert_eq!(parse("0.00001").unwrap(), Some(MicroUsd(1)));
        // The exponent form is the plain form, exactly.
        assert_eq!(parse("1e3").unwrap(), parse("1000").unwrap());
        assert_eq!(parse("1.25E-2").unwrap(), parse("0.0125").unwrap());
        for bad in [
            "",
            "-1",
            "abc",
            "1e",
            "1.2.3",
            "+1",
            " 1",
            "nan",
            "99999999999999999999",
        ] {
            let e = parse(&url::form_urlencoded::byte_serialize(bad.as_bytes()).collect::<String>()).unwrap_err();
            assert_eq!(e.body().param.as_deref(), Some("min_net_cents"), "{bad}");
        }
    }
}
