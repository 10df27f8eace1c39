//! The error type of the venue layer.
//!
//! Callers branch on the variant (retry a 429, treat a 404 as "no such event", skip a malformed message and
//! go on), so this is a concrete enum rather than a boxed error. Every variant that comes from a venue
//! payload carries that payload, truncated, so that a schema change shows up in the log with the exact
//! message that broke the parser.

use crossbook_core::Exchange;

/// How much of a payload an error keeps. Enough to see the shape of a message, not enough to flood a log
/// line with a 5 MB catalog page.
pub const PAYLOAD_PREVIEW_BYTES: usize = 512;

/// Returns at most [`PAYLOAD_PREVIEW_BYTES`] of `payload`, cut on a character boundary, with a marker when
/// something was cut.
pub fn truncate_payload(payload: &str) -> String {
    if payload.len() <= PAYLOAD_PREVIEW_BYTES {
        return payload.to_string();
    }
    let mut end = PAYLOAD_PREVIEW_BYTES;
    while !payload.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &payload[..end], payload.len())
}

/// Errors of the venue connectors.
#[derive(Debug, thiserror::Error)]
pub enum VenueError {
    /// The venue answered with a non-success status.
    #[error("{exchange}: HTTP {status} from {url}: {body}")]
    Http {
        exchange: Exchange,
        status: u16,
        url: String,
        /// The response body, truncated.
        body: String,
    },
    /// The request did not get an answer (connect error, timeout, reset).
    #[error("{exchange}: request to {url} failed: {source}")]
    Transport {
        exchange: Exchange,
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// A payload that does not parse, or parses into something that cannot be normalised (a price that is
    /// not a decimal, a book level that is not a pair). Counted and skipped by the feed.
    #[error("{exchange}: malformed {what}: {reason}; payload: {payload}")]
    Malformed {
        exchange: Exchange,
        /// Which message or response kind (`"orderbook_delta"`, `"GET /events"`).
        what: String,
        reason: String,
        /// The offending payload, truncated.
        payload: String,
    },
    /// The WebSocket failed (handshake refused, reset, protocol error).
    #[error("{exchange}: websocket: {reason}")]
    WebSocket { exchange: Exchange, reason: String },
    /// Credentials are configured but unusable (unreadable key file, bad PEM).
    #[error("{exchange}: credentials: {reason}")]
    Credentials { exchange: Exchange, reason: String },
    /// Configuration that cannot work (an unparsable base URL).
    #[error("{exchange}: configuration: {reason}")]
    Config { exchange: Exchange, reason: String },
}

impl VenueError {
    /// A malformed-payload error; the payload is truncated here so call sites pass it whole.
    pub fn malformed(
        exchange: Exchange,
        what: impl Into<String>,
        reason: impl std::fmt::Display,
        payload: &str,
    ) -> Self {
        VenueError::Malformed {
            exchange,
            what: what.into(),
            reason: reason.to_string(),
            payload: truncate_payload(payload),
        }
    }

    /// Whether trying the same request again later can succeed: rate limits, server errors and
    /// transport failures. Client errors and malformed answers will fail the same way again.
    pub fn is_retryable(&self) -> bool {
        match self {
            VenueError::Http { status, .. } => *status == 429 || *status >= 500,
            VenueError::Transport { .. } | VenueError::WebSocket { .. } => true,
            VenueError::Malformed { .. } | VenueError::Credentials { .. } | VenueError::Config { .. } => false,
        }
    }

    /// Whether the venue said "too many requests".
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, VenueError::Http { status: 429, .. })
    }

    /// Whether the venue said the thing asked for does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, VenueError::Http { status: 404, .. })
    }

    /// Whether this error is about a venue payload (to be counted as malformed and skipped).
    pub fn is_malformed(&self) -> bool {
        matches!(self, VenueError::Malformed { .. })
    }
}

/// Logs a malformed payload with the payload itself and counts it in
/// `crossbook_venue_malformed_total{venue}`. The caller then skips the payload and goes on.
pub fn report_malformed(err: &VenueError) {
    if let VenueError::Malformed {
        exchange,
        what,
        reason,
        payload,
    } = err
    {
        metrics::counter!("crossbook_venue_malformed_total", "venue" => exchange.as_str()).increment(1);
        tracing::warn!(venue = %exchange, what = %what, reason = %reason, payload = %payload, "malformed venue payload skipped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_short_payloads_and_cuts_on_char_boundaries() {
        assert_eq!(truncate_payload("{}"), "{}");
        let long = "é".repeat(PAYLOAD_PREVIEW_BYTES);
        let cut = truncate_payload(&long);
        assert!(cut.len() < long.len());
        assert!(cut.contains("bytes in all"));
    }

    #[test]
    fn retryable_classification() {
        let http = |status| VenueError::Http {
            exchange: Exchange::VenueA,
            status,
            url: "u".into(),
            body: String::new(),
        };
        assert!(http(429).is_retryable());
        assert!(http(503).is_retryable());
        assert!(!http(404).is_retryable());
        assert!(http(404).is_not_found());
        assert!(!VenueError::malformed(Exchange::VenueB, "book", "x", "{").is_retryable());
    }
}
