//! Examples of every successful JSON response, in the OpenAPI document.
//!
//! They are real answers, not hand-written ones: the integration test that checks every answer against the
//! document (`tests/it/openapi.rs`) records them from a server over the simulated venues when run with
//! `CROSSBOOK_WRITE_EXAMPLES=1`, with arrays cut to two items, into `examples.json`. The same test, run
//! normally, fails when a documented success response has no example or one its schema refuses, so a
//! changed response shape cannot leave a stale example behind.

use serde_json::Value;

/// `{"<METHOD> <path> <status>": <body>}`, as recorded.
const EXAMPLES: &str = include_str!("examples.json");

/// Sets the recorded example on each response it names that the document has.
pub(super) fn apply(doc: &mut Value) {
    let Ok(Value::Object(examples)) = serde_json::from_str::<Value>(EXAMPLES) else {
        return;
    };
    for (key, example) in examples {
        let mut parts = key.splitn(3, ' ');
        let (Some(method), Some(path), Some(status)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        // `get_mut`, not indexing: indexing would create the path of a stale key.
        let media = doc
            .get_mut("paths")
            .and_then(|p| p.get_mut(path))
            .and_then(|p| p.get_mut(method.to_lowercase()))
            .and_then(|o| o.get_mut("responses"))
            .and_then(|r| r.get_mut(status))
            .and_then(|r| r.get_mut("content"))
            .and_then(|c| c.get_mut("application/json"))
            .and_then(Value::as_object_mut);
        if let Some(media) = media {
            media.insert("example".into(), example);
        }
    }
}
