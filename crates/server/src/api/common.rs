//! Shared by several API areas: the query-parameter spellings of core's wire enums (their OpenAPI schemas come
//! from core's `openapi` feature) and the renderers of contracts §1 (times, prices, amounts).

use crate::{
    AppState,
    error::ApiResult,
    params::{ParamDefault, ParamEnum},
};
use crossbook_core::{Amount, Exchange, IntervalCode, Market, Price, Status, Timestamp};

impl ParamEnum for Exchange {
    const VALUES: &'static [(&'static str, Self)] = &[("venue_a", Exchange::VenueA), ("venue_b", Exchange::VenueB)];
}

impl ParamEnum for Status {
    const VALUES: &'static [(&'static str, Self)] = &[("active", Status::Active), ("closed", Status::Closed)];
}

/// The status a search or listing shows when none is asked for.
impl ParamDefault for Status {
    const DEFAULT: Self = Status::Active;
}

impl ParamEnum for IntervalCode {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("5m", IntervalCode::M5),
        ("15m", IntervalCode::M15),
        ("1h", IntervalCode::H1),
        ("24h", IntervalCode::H24),
        ("1w", IntervalCode::W1),
    ];
}

/// A market by id on `exchange`, or on venue_a then venue_b when none is named (venue_b by condition id or
/// numeric id): the lookup of the routes that take a bare market id.
pub async fn find_market(state: &AppState, id: &str, exchange: Option<Exchange>) -> ApiResult<Option<Market>> {
    let venues: &[Exchange] = match exchange {
        Some(ref e) => std::slice::from_ref(e),
        None => &Exchange::ALL,
    };
    for &ex in venues {
        if let Some(m) = state.store.get_market(ex, id).await? {
            return Ok(Some(m.market));
        }
    }
    Ok(None)
}

/// A time in a JSON body: ISO 8601 UTC with milliseconds (`2026-11-21T19:15:00.000Z`).
/// A request body as a JSON object (400 when it is anything else); its fields are then read one by one, so
/// an error can name the field.
pub(crate) fn body_object(
    body: &serde_json::Value,
) -> crate::error::ApiResult<&serde_json::Map<String, serde_json::Value>> {
    body.as_object()
        .ok_or_else(|| crate::error::ApiError::invalid_request("the body must be a JSON object"))
}

pub fn iso(t: Timestamp) -> String {
    t.to_iso()
}

/// An optional time in a JSON body.
pub fn iso_opt(t: Option<Timestamp>) -> Option<String> {
    t.map(Timestamp::to_iso)
}

/// A ladder price or a `last_*_price` in a JSON body: a 4-decimal string (`"0.5300"`). Every other price is a
/// JSON number, [`Price::to_f64_4`].
pub fn price4(p: Option<Price>) -> Option<String> {
    p.map(Price::to_string4)
}

/// Dollars (volume, liquidity, notional) as a JSON number rounded half-up to 2 decimals.
pub fn dollars(a: Amount) -> f64 {
    a.to_f64(2)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every query spelling of a wire enum is also its JSON spelling, and every value is listed once.
    pub(crate) fn assert_spellings_match_serde<T: ParamEnum + serde::Serialize + PartialEq + std::fmt::Debug>() {
        for (spelling, value) in T::VALUES {
            assert_eq!(serde_json::to_value(value).unwrap(), *spelling, "{value:?}");
            assert_eq!(
                T::VALUES.iter().filter(|(_, v)| v == value).count(),
                1,
                "{value:?} listed twice"
            );
        }
    }

    #[test]
    fn wire_enums_match_core() {
        assert_spellings_match_serde::<Exchange>();
        assert_spellings_match_serde::<Status>();
        assert_spellings_match_serde::<IntervalCode>();
        for e in Exchange::ALL {
            assert_eq!(serde_json::to_value(e).unwrap(), e.as_str());
        }
        for s in [Status::Active, Status::Closed] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for c in IntervalCode::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert_eq!(IntervalCode::VALUES.len(), IntervalCode::ALL.len());
    }

    #[test]
    fn renderers() {
        assert_eq!(price4(Some(Price::from_micros(530_000))).as_deref(), Some("0.5300"));
        assert_eq!(dollars(Amount::from_micros(1_234_565)), 1.23);
        assert_eq!(dollars(Amount::from_micros(1_235_000)), 1.24);
        assert_eq!(iso(Timestamp::from_millis(0)), "1970-01-01T00:00:00.000Z");
    }
}
