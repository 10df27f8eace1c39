//! Enums: the spellings of an enum parameter ([`ParamEnum`]), its schema, and its default ([`Defaulted`]).

use serde_json::json;
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};

use super::{OptionalParam, Param, QueryMap, schema_of, with_keywords};
use crate::error::ApiResult;

/// An enum accepted as a query parameter: its wire spellings, in the order they are listed in messages.
pub trait ParamEnum: Copy + 'static {
    const VALUES: &'static [(&'static str, Self)];

    /// `a, b or c`, for messages.
    fn listing() -> String {
        let names: Vec<&str> = Self::VALUES.iter().map(|(n, _)| *n).collect();
        match names.as_slice() {
            [] => String::new(),
            [one] => (*one).to_string(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        }
    }
}

/// The schema of an enum parameter that has no schema of its own: a string, one of its spellings.
pub fn enum_schema<T: ParamEnum>() -> RefOr<Schema> {
    let names: Vec<&str> = T::VALUES.iter().map(|(n, _)| *n).collect();
    schema_of(json!({"type": "string", "enum": names}))
}

/// [`enum_schema`] described by its spellings: "`a` or `b`.", for an enum whose type has no documentation of
/// its own.
pub fn listed_enum_schema<T: ParamEnum>() -> RefOr<Schema> {
    let names: Vec<String> = T::VALUES.iter().map(|(n, _)| format!("`{n}`")).collect();
    let listing = match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    with_keywords(enum_schema::<T>(), json!({"description": format!("{listing}.")}))
}

/// An enum parameter without a default: one of its spellings, exactly.
impl<T: ParamEnum> OptionalParam for T {
    fn read_given(q: &QueryMap, name: &str) -> ApiResult<Option<Self>> {
        q.one_of(name)
    }
}

/// The value an enum parameter takes when absent, the same on every route that takes it.
pub trait ParamDefault: ParamEnum + PartialEq {
    const DEFAULT: Self;

    /// The wire spelling of [`ParamDefault::DEFAULT`].
    fn default_spelling() -> &'static str {
        Self::VALUES
            .iter()
            .find(|(_, v)| *v == Self::DEFAULT)
            .map(|(s, _)| *s)
            .expect("the default of an enum parameter is one of its values")
    }
}

/// An enum parameter with a default ([`ParamDefault`]): documented with the enum's own schema (its values) and
/// that default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaulted<T>(pub T);

impl<T: ParamDefault> Param for Defaulted<T> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        Ok(Defaulted(q.one_of(name)?.unwrap_or(T::DEFAULT)))
    }
}

// utoipa documents a field of a generic type through `ComposeSchema` (what its own derive emits for generic
// types, and what gives `PartialSchema`); the enum's schema is taken whole, so the generic argument utoipa
// passes is not needed.
impl<T: ParamDefault + PartialSchema> utoipa::__dev::ComposeSchema for Defaulted<T> {
    fn compose(_generics: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        with_keywords(T::schema(), json!({"default": T::default_spelling()}))
    }
}

impl<T: ParamDefault + ToSchema> ToSchema for Defaulted<T> {}
