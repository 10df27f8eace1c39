//! Free text: the rules of every free-text value ([`text_value`]), their schema keywords and the typed
//! parameter [`Text`].

use serde_json::Value;
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};

use super::{OptionalParam, Param, QueryMap, schema_of};
use crate::error::{ApiError, ApiResult};

/// Longest accepted free-text value (`q`, ids), in characters.
pub const MAX_TEXT_LEN: usize = 256;

/// At least one character that is not a space, and none that is a control character (U+0000–U+001F,
/// U+007F–U+009F): what [`text_value`] keeps.
pub const TEXT_PATTERN: &str = "^(?=.*\\S)[^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// The schema keywords of [`text_value`]'s rules: 1 to [`MAX_TEXT_LEN`] characters, not only spaces, and no
/// control characters.
pub fn text_keywords() -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("minLength".into(), Value::from(1));
    m.insert("maxLength".into(), Value::from(MAX_TEXT_LEN));
    m.insert("pattern".into(), Value::from(TEXT_PATTERN));
    m
}

/// A free-text value read by [`text_value`] (a body field; query parameters get the same keywords from the
/// document's pass over every free-text parameter).
pub struct TextValue;

impl PartialSchema for TextValue {
    fn schema() -> RefOr<Schema> {
        let mut m = text_keywords();
        m.insert("type".into(), Value::from("string"));
        schema_of(Value::Object(m))
    }
}

impl ToSchema for TextValue {}

/// Free text (a query or path parameter), trimmed: empty (or only spaces) is an error, as are control
/// characters and more than [`MAX_TEXT_LEN`] characters.
pub fn text_value(name: &str, raw: &str) -> ApiResult<String> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(ApiError::invalid(name, format!("{name} must not be empty")));
    }
    if t.chars().count() > MAX_TEXT_LEN {
        return Err(ApiError::invalid(
            name,
            format!("{name} must be at most {MAX_TEXT_LEN} characters"),
        ));
    }
    // NUL and other control characters cannot be stored or matched (PostgreSQL rejects NUL in text).
    if t.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            name,
            format!("{name} must not contain control characters"),
        ));
    }
    Ok(t.to_string())
}

/// Free text, as [`text_value`] keeps it: trimmed, 1 to [`MAX_TEXT_LEN`] characters, no control character.
/// Required as `Text`, optional as `Option<Text>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl Text {
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl OptionalParam for Text {
    fn read_given(q: &QueryMap, name: &str) -> ApiResult<Option<Self>> {
        Ok(q.text(name)?.map(Text))
    }
}

impl Param for Text {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        q.required_text(name).map(Text)
    }
}

impl PartialSchema for Text {
    fn schema() -> RefOr<Schema> {
        TextValue::schema()
    }
}

impl ToSchema for Text {}
