//! Query parameters of the historical routes, validated into [`Common`] plus each route's own.

use crossbook_core::{Exchange, Timestamp, history};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::{
    error::{ApiError, ApiResult},
    params::{
        Defaulted, FromQuery, InstantQuery, ParamDefault, ParamEnum, QueryMap, Text, check_order, check_together,
    },
};

use super::HistoryLimit;

/// Bucket size of range reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum Granularity {
    #[serde(rename = "1s")]
    S1,
    #[serde(rename = "10s")]
    S10,
    #[serde(rename = "1m")]
    M1,
    #[serde(rename = "5m")]
    M5,
    #[serde(rename = "1h")]
    H1,
}

impl ParamEnum for Granularity {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("1s", Granularity::S1),
        ("10s", Granularity::S10),
        ("1m", Granularity::M1),
        ("5m", Granularity::M5),
        ("1h", Granularity::H1),
    ];
}

impl From<Granularity> for history::Granularity {
    fn from(g: Granularity) -> Self {
        match g {
            Granularity::S1 => history::Granularity::S1,
            Granularity::S10 => history::Granularity::S10,
            Granularity::M1 => history::Granularity::M1,
            Granularity::M5 => history::Granularity::M5,
            Granularity::H1 => history::Granularity::H1,
        }
    }
}

/// `granularity` when absent.
impl ParamDefault for Granularity {
    const DEFAULT: Self = Granularity::M1;
}

/// Row format of the unified route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatName {
    Interval,
    Unified,
}

impl ParamEnum for FormatName {
    const VALUES: &'static [(&'static str, Self)] =
        &[("interval", FormatName::Interval), ("unified", FormatName::Unified)];
}

/// The parameters every historical route shares, validated.
#[derive(Debug, Clone)]
pub(super) struct Common {
    pub(super) market_id: String,
    pub(super) range: Option<(Timestamp, Timestamp)>,
    pub(super) granularity: Granularity,
    pub(super) limit: u32,
    pub(super) pagination_key: Option<String>,
}

impl Common {
    pub(super) fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let market_id = q.required_text("market_id")?;
        Ok(Common {
            market_id,
            range: range_of(q)?,
            granularity: q.get::<Defaulted<Granularity>>("granularity")?.0,
            limit: q.get::<HistoryLimit>("limit")?.get(),
            pagination_key: q.text("pagination_key")?,
        })
    }
}

/// `start_time` and `end_time` (inclusive; see [`QueryMap::instant`]), set together and in order, or neither.
pub(super) fn range_of(q: &QueryMap) -> ApiResult<Option<(Timestamp, Timestamp)>> {
    let start = q.instant("start_time")?;
    let end = q.instant("end_time")?;
    check_together("start_time", &start, "end_time", &end)?;
    check_order("start_time", start, "end_time", end)?;
    Ok(start.zip(end))
}

/// The range and paging parameters every historical route takes, for the document: listed after each route's
/// own parameters (`params(VenueAParams, RangeParams, GranularityParams)`) and read into [`Common`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Documentation only; `Common::from_query` parses these so errors can name the field.
pub struct RangeParams {
    /// Range start (inclusive): Unix milliseconds (from 2001; a smaller number is refused as Unix seconds), an
    /// RFC 3339 time (no offset means UTC) or a bare date (midnight UTC). Must be set together with `end_time`.
    #[param(value_type = Option<InstantQuery>, inline)]
    start_time: Option<String>,
    /// Range end (inclusive), written as `start_time`; must be set together with `start_time`, not before it. `end_time` without `start_time` is refused.
    #[param(value_type = Option<InstantQuery>, inline)]
    end_time: Option<String>,
    /// Maximum rows per page.
    #[param(inline, required = false)]
    limit: HistoryLimit,
    /// Cursor from the previous response's `pagination.pagination_key`, with otherwise the same parameters.
    // On the unified route this goes beyond the spec's table: the envelope of contracts §5 carries one.
    #[param(inline)]
    pagination_key: Option<Text>,
}

/// The bucket size of the order-book routes' range reads, for the document (read into [`Common`]).
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Documentation only, as `RangeParams`.
pub struct GranularityParams {
    /// Bucket size of range reads (one row per bucket: its last snapshot).
    #[param(inline, required = false)]
    granularity: Defaulted<Granularity>,
}

/// Parameters of `/v1/historical/venue_a/orderbook`, besides [`RangeParams`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenueAParams {
    /// Market ticker.
    #[param(inline)]
    pub market_id: Text,
    #[param(ignore)]
    pub(super) common: Common,
}

impl FromQuery for VenueAParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let common = Common::from_query(q)?;
        Ok(VenueAParams {
            market_id: Text(common.market_id.clone()),
            common,
        })
    }
}

/// Parameters of `/v1/historical/venue_b/orderbook`, besides [`RangeParams`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenueBParams {
    /// Condition id (`0x…`) or the numeric source market id.
    #[param(inline)]
    pub market_id: Text,
    /// Token id: only this token's rows. Omit for both the YES and the NO token (both count toward `limit`).
    #[param(inline)]
    pub asset_id: Option<Text>,
    #[param(ignore)]
    pub(super) common: Common,
}

impl FromQuery for VenueBParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let common = Common::from_query(q)?;
        Ok(VenueBParams {
            market_id: Text(common.market_id.clone()),
            asset_id: q.get("asset_id")?,
            common,
        })
    }
}

/// Parameters of `/v1/historical/orderbook`, besides [`RangeParams`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UnifiedParams {
    /// The venue of `market_id`.
    #[param(inline)]
    pub exchange: Exchange,
    /// Venue-native market id: venue_a ticker, venue_b condition id or numeric source id.
    #[param(inline)]
    pub market_id: Text,
    /// Row format. Default: `interval` for markets with an interval code, else `unified`.
    #[param(inline)]
    pub format: Option<FormatName>,
    #[param(ignore)]
    pub(super) common: Common,
}

impl FromQuery for UnifiedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let exchange = q.one_of("exchange")?.ok_or_else(|| ApiError::missing("exchange"))?;
        let common = Common::from_query(q)?;
        Ok(UnifiedParams {
            exchange,
            market_id: Text(common.market_id.clone()),
            format: q.one_of("format")?,
            common,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::tests::assert_spellings_match_serde;

    #[test]
    fn wire_enums() {
        assert_spellings_match_serde::<Granularity>();
        assert_spellings_match_serde::<FormatName>();
    }
}
