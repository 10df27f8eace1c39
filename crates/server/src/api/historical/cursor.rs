//! The `pagination_key`: the position of a page's last row, bound by a hash to the query it belongs to.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ApiResult};

/// Where the next page starts: after the row at `pos` (a timestamp for latest reads, a bucket number for
/// range reads) of the book ranked `rank` (0 = YES / the only book, 1 = NO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub pos: i64,
    pub rank: u8,
}

const CURSOR_VERSION: u8 = 1;
const CURSOR_TAG_LEN: usize = 12;
const CURSOR_LEN: usize = 1 + 1 + 8 + CURSOR_TAG_LEN;

pub(super) fn cursor_tag(binding: &str, body: &[u8]) -> [u8; CURSOR_TAG_LEN] {
    let mut h = Sha256::new();
    h.update(b"crossbook historical cursor\0");
    h.update(binding.as_bytes());
    h.update([0u8]);
    h.update(body);
    let digest = h.finalize();
    let mut tag = [0u8; CURSOR_TAG_LEN];
    tag.copy_from_slice(&digest[..CURSOR_TAG_LEN]);
    tag
}

impl Cursor {
    /// The opaque key: version, rank and position, then a hash over them and the query they belong to.
    pub fn encode(self, binding: &str) -> String {
        let mut body = Vec::with_capacity(CURSOR_LEN);
        body.push(CURSOR_VERSION);
        body.push(self.rank);
        body.extend_from_slice(&self.pos.to_be_bytes());
        seal(body, binding)
    }

    /// Reads a key made by [`Cursor::encode`] for the same `binding`; anything else is a 400 naming
    /// `pagination_key`.
    pub fn decode(key: &str, binding: &str) -> ApiResult<Cursor> {
        let body = open(key, binding, CURSOR_VERSION, CURSOR_LEN)?;
        let rank = body[1];
        if rank > 1 {
            return Err(not_this_query());
        }
        let mut pos = [0u8; 8];
        pos.copy_from_slice(&body[2..10]);
        Ok(Cursor {
            pos: i64::from_be_bytes(pos),
            rank,
        })
    }
}

/// Where the next page of a trade tape starts: after the trade executed at `at` (Unix ms) with row id `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeKey {
    pub at: i64,
    pub id: i64,
}

const TRADE_KEY_VERSION: u8 = 2;
const TRADE_KEY_LEN: usize = 1 + 8 + 8 + CURSOR_TAG_LEN;

impl TradeKey {
    /// The opaque key: version, time and id, then a hash over them and the query they belong to.
    pub fn encode(self, binding: &str) -> String {
        let mut body = Vec::with_capacity(TRADE_KEY_LEN);
        body.push(TRADE_KEY_VERSION);
        body.extend_from_slice(&self.at.to_be_bytes());
        body.extend_from_slice(&self.id.to_be_bytes());
        seal(body, binding)
    }

    /// Reads a key made by [`TradeKey::encode`] for the same `binding`; anything else is a 400 naming
    /// `pagination_key`.
    pub fn decode(key: &str, binding: &str) -> ApiResult<TradeKey> {
        let body = open(key, binding, TRADE_KEY_VERSION, TRADE_KEY_LEN)?;
        let mut at = [0u8; 8];
        at.copy_from_slice(&body[1..9]);
        let mut id = [0u8; 8];
        id.copy_from_slice(&body[9..17]);
        Ok(TradeKey {
            at: i64::from_be_bytes(at),
            id: i64::from_be_bytes(id),
        })
    }
}

/// `body` (its version first) followed by its tag for `binding`, as URL-safe base64.
fn seal(mut body: Vec<u8>, binding: &str) -> String {
    let tag = cursor_tag(binding, &body);
    body.extend_from_slice(&tag);
    URL_SAFE_NO_PAD.encode(body)
}

/// The body of a key sealed by [`seal`] for `binding` with `version` and `len` bytes in all; anything else is a
/// 400 naming `pagination_key`.
fn open(key: &str, binding: &str, version: u8, len: usize) -> ApiResult<Vec<u8>> {
    let mut bytes = URL_SAFE_NO_PAD.decode(key.as_bytes()).map_err(|_| not_this_query())?;
    if bytes.len() != len || bytes[0] != version {
        return Err(not_this_query());
    }
    let tag = bytes.split_off(len - CURSOR_TAG_LEN);
    if !bool::from(cursor_tag(binding, &bytes).ct_eq(&tag)) {
        return Err(not_this_query());
    }
    Ok(bytes)
}

fn not_this_query() -> ApiError {
    ApiError::invalid(
        "pagination_key",
        "pagination_key is not a key of this query: pass the pagination_key of the previous page, with the same \
         parameters",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_other_queries() {
        let k = Cursor {
            pos: 1_763_752_500_000,
            rank: 1,
        };
        let key = k.encode("q1");
        assert_eq!(Cursor::decode(&key, "q1").unwrap(), k);
        for bad in [
            Cursor::decode(&key, "q2"),
            Cursor::decode("", "q1"),
            Cursor::decode("not base64!", "q1"),
            Cursor::decode(&URL_SAFE_NO_PAD.encode([1u8; CURSOR_LEN]), "q1"),
        ] {
            match bad.unwrap_err() {
                ApiError::InvalidParameter { param, .. } => assert_eq!(param.as_deref(), Some("pagination_key")),
                other => panic!("{other:?}"),
            }
        }
        let t = TradeKey {
            at: 1_763_752_500_123,
            id: 42,
        };
        let key_t = t.encode("q1");
        assert_eq!(TradeKey::decode(&key_t, "q1").unwrap(), t);
        assert!(TradeKey::decode(&key_t, "q2").is_err(), "bound to its query");
        assert!(
            TradeKey::decode(&key, "q1").is_err(),
            "a book cursor is not a trade key"
        );
        assert!(Cursor::decode(&key_t, "q1").is_err(), "nor the reverse");
        // Any edited byte breaks the key.
        let mut bytes = URL_SAFE_NO_PAD.decode(&key).unwrap();
        bytes[5] ^= 1;
        assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(&bytes), "q1").is_err());
    }
}
