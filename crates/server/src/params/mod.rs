//! Strict query and path parameters (contracts §1).
//!
//! axum's `Query<T>` rejects with a message that does not name the parameter, so every route parses the raw
//! query string into a [`QueryMap`] and reads each parameter through one of its typed accessors. The rules,
//! the same on every route:
//!
//! - Unknown parameters are ignored; a parameter given twice is an error.
//! - A parameter given empty (`?limit=`) is an error, never "absent".
//! - Values are validated against their range or enum and never clamped.
//! - Numbers are written as JSON writes them, without a sign: digits with at most one point, optionally with an
//!   exponent (`1e3`, `2.5E-1`), read exactly (never through `f64`) as the plain form (`1000`, `0.25`) would
//!   be. An integer parameter takes any such number whose value is whole (`1.5e1` is 15).
//! - Money thresholds (`min_*`) are non-negative decimals parsed exactly into micro-units, never `f64`.
//! - Timestamps are ISO 8601 / RFC 3339 (or a bare date), or Unix milliseconds (from 2001 on) where the spec says so.
//! - Every error is 400 with `param` naming the parameter and a `detail` such as
//!   "limit must be an integer from 1 to 100".
//!
//! A route declares its parameters as a struct that implements [`FromQuery`] (the validated values) and
//! `utoipa::IntoParams` (their documentation), and takes it with the [`ValidQuery`] extractor. Each field's type
//! is a typed parameter ([`Limit`], [`Offset`], [`Int`], [`Flag`], [`Text`], an enum or [`Defaulted`] enum) that
//! both reads the parameter ([`Param`], through [`QueryMap::get`]) and documents it (`PartialSchema`), so a rule
//! is written once. A value read by one of the typed readers of [`QueryMap`] (amounts, cents, times) is
//! documented with that reader's schema type (`#[param(value_type = Option<AmountQuery>, inline)]` for
//! [`QueryMap::non_negative_amount`], ...), declared beside the rules of its kind.
//!
//! By kind: `query.rs` (the query map, its readers, the extractors and the checks between two parameters),
//! `numbers.rs` (bounds, the reading of a number, amounts, cents, times, `Limit`, `Offset`, `Int`, `Flag`),
//! `text.rs` (free text and `Text`) and `enums.rs` (`ParamEnum`, `Defaulted`); this module holds what they
//! share: the [`Param`] traits and the schema helpers.

mod enums;
mod numbers;
mod query;
#[cfg(test)]
mod tests;
mod text;

use serde_json::Value;
use utoipa::openapi::{RefOr, Schema};

pub use self::{enums::*, numbers::*, query::*, text::*};
use crate::error::ApiResult;

// ------------------------------------------------------------------------------------------------ schemas
//
// Each typed reader's documented form (for `#[param(value_type = Option<..>, inline)]`) states in schema
// keywords what its reader accepts, from the constants the reader uses; these build them.

fn schema_of(v: Value) -> RefOr<Schema> {
    serde_json::from_value(v).expect("a parameter schema is a valid schema")
}

/// `schema` with `keywords` (a JSON object) added or replaced: a narrower rule over a reader's schema, such as
/// a maximum over [`AmountQuery`] or a default over an enum's values.
pub fn with_keywords(schema: RefOr<Schema>, keywords: Value) -> RefOr<Schema> {
    let mut v = serde_json::to_value(schema).expect("a schema serialises");
    if let (Some(m), Value::Object(k)) = (v.as_object_mut(), keywords) {
        m.extend(k);
    }
    schema_of(v)
}

// ------------------------------------------------------------------------------------------------ typed parameters
//
// One type per kind of parameter, carrying its bounds, default and spellings: it reads the parameter
// ([`Param`]) and documents it (`PartialSchema`) from the same constants, so a route states each rule once, in
// the type of a field of its parameters struct:
//
//     /// Page size.
//     #[param(inline, required = false)]
//     pub limit: Limit<30, 100>,
//
// read in its `FromQuery` with `limit: q.get("limit")?`. `inline` puts the type's schema in the parameter (not
// a `$ref`); `required = false` marks a parameter with a default, which utoipa cannot tell from a field that
// is never `None`.

/// A value read from one query parameter ([`QueryMap::get`]).
pub trait Param: Sized {
    /// Parameter `name` of `q`: its value, its default when absent, or the 400 naming it.
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self>;
}

/// An optional parameter: `None` when absent.
impl<T: OptionalParam> Param for Option<T> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        T::read_given(q, name)
    }
}

/// A parameter without a default: absent is `None` as an [`Option`], and 400 `missing_parameter` otherwise.
pub trait OptionalParam: Sized {
    /// `None` when `name` is absent.
    fn read_given(q: &QueryMap, name: &str) -> ApiResult<Option<Self>>;
}
