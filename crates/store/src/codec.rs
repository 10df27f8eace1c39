//! Encodings shared by both backends: the compact ladder blob, typed column access, and the value decoders
//! every concern's rows use.
//!
//! # Ladder blob
//!
//! A book ladder is stored as bytes, not JSON, and a snapshot is written every second for every book, so this
//! is most of the database. Every integer is a zigzag LEB128 varint.
//!
//! - Version 2 (written): `2`, the level count, then (when there are levels) two scale digits `kp` and `ks`,
//!   the largest powers of ten (at most 10⁶) dividing every price and every size in micro-units, then for each
//!   level the price in units of `10^kp` micro-dollars as a difference from the previous level's, and the size
//!   in units of `10^ks`. Venue prices sit on a cent or tenth-of-a-cent grid and ladders are sorted, so a level
//!   costs two or three bytes: a 10-level ladder is about 30 bytes.
//! - Version 1 (still read): `1`, the level count, then each level's price and size in micro-units (7 bytes
//!   for a typical level).
//!
//! Differences use wrapping arithmetic, so any `i64` round-trips exactly.

use std::str::FromStr;

use crossbook_core::{
    Amount, BookSnapshot, Exchange, IntervalCode, Level, Outcome, Price, Status, TakerSide, Timestamp, Trade,
};
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::{StoreError, StoreResult};

const LADDER_V1: u8 = 1;
const LADDER_V2: u8 = 2;

pub(crate) fn put_varint(out: &mut Vec<u8>, v: i64) {
    // Zigzag so that small negative numbers (never expected, but representable) stay short.
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

pub(crate) fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<i64> {
    let mut z: u64 = 0;
    let mut shift = 0u32;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        if shift >= 64 {
            return None;
        }
        z |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    Some(((z >> 1) as i64) ^ -((z & 1) as i64))
}

/// The largest `k` ≤ 6 such that `10^k` divides every value.
fn common_scale(values: impl Iterator<Item = i64> + Clone) -> u32 {
    (1..=6u32)
        .rev()
        .find(|&k| values.clone().all(|v| v % 10i64.pow(k) == 0))
        .unwrap_or(0)
}

/// Encodes a ladder as a compact blob (version 2, see the module docs).
pub fn encode_ladder(levels: &[Level]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + levels.len() * 3);
    out.push(LADDER_V2);
    put_varint(&mut out, levels.len() as i64);
    if levels.is_empty() {
        return out;
    }
    let kp = common_scale(levels.iter().map(|l| l.price.micros()));
    let ks = common_scale(levels.iter().map(|l| l.size.micros()));
    out.push(kp as u8);
    out.push(ks as u8);
    let (dp, ds) = (10i64.pow(kp), 10i64.pow(ks));
    let mut prev = 0i64;
    for l in levels {
        let p = l.price.micros() / dp;
        put_varint(&mut out, p.wrapping_sub(prev));
        prev = p;
        put_varint(&mut out, l.size.micros() / ds);
    }
    out
}

/// Decodes a blob written by [`encode_ladder`] (either version). Fails on an unknown version or truncated
/// data rather than returning a partial ladder.
pub fn decode_ladder(bytes: &[u8]) -> StoreResult<Vec<Level>> {
    let bad = |why: &str| decode_error(format!("ladder blob: {why}"));
    let (&version, _) = bytes.split_first().ok_or_else(|| bad("empty"))?;
    if version != LADDER_V1 && version != LADDER_V2 {
        return Err(bad(&format!("unknown version {version}")));
    }
    let mut pos = 1;
    let n = get_varint(bytes, &mut pos).ok_or_else(|| bad("truncated count"))?;
    // Each level takes at least two bytes, so a count larger than that is corrupt; checking it first keeps
    // a corrupt count from reserving a huge vector.
    if n < 0 || n as usize > bytes.len() / 2 {
        return Err(bad("impossible level count"));
    }
    let mut levels = Vec::with_capacity(n as usize);
    let (mut dp, mut ds) = (1i64, 1i64);
    if version == LADDER_V2 && n > 0 {
        let scale = |pos: usize| match bytes.get(pos) {
            Some(&k) if k <= 6 => Ok(10i64.pow(u32::from(k))),
            Some(_) => Err(bad("impossible scale")),
            None => Err(bad("truncated scale")),
        };
        (dp, ds) = (scale(pos)?, scale(pos + 1)?);
        pos += 2;
    }
    let mut prev = 0i64;
    for _ in 0..n {
        let mut price = get_varint(bytes, &mut pos).ok_or_else(|| bad("truncated price"))?;
        let mut size = get_varint(bytes, &mut pos).ok_or_else(|| bad("truncated size"))?;
        if version == LADDER_V2 {
            prev = prev.wrapping_add(price);
            price = prev.checked_mul(dp).ok_or_else(|| bad("price out of range"))?;
            size = size.checked_mul(ds).ok_or_else(|| bad("size out of range"))?;
        }
        levels.push(Level {
            price: Price::from_micros(price),
            size: Amount::from_micros(size),
        });
    }
    if pos != bytes.len() {
        return Err(bad("trailing bytes"));
    }
    Ok(levels)
}

/// A stored value that does not parse back into a domain type (a corrupt row or a newer writer).
pub(crate) fn decode_error(msg: String) -> StoreError {
    StoreError::Db(sqlx::Error::Decode(msg.into()))
}

fn parse<T: FromStr>(what: &str, s: &str) -> StoreResult<T> {
    s.parse()
        .map_err(|_| decode_error(format!("unexpected {what} {s:?} in the database")))
}

pub(crate) fn exchange(s: &str) -> StoreResult<Exchange> {
    parse("exchange", s)
}
pub(crate) fn status(s: &str) -> StoreResult<Status> {
    parse("status", s)
}
pub(crate) fn interval(s: Option<String>) -> StoreResult<Option<IntervalCode>> {
    s.map(|s| parse("interval code", &s)).transpose()
}

/// Typed column access for rows of either backend, with sqlx errors turned into [`StoreError`].
///
/// One blanket implementation covers `SqliteRow` and `PgRow`, so the row-to-domain code below is written once.
pub(crate) trait Cols {
    fn text(&self, col: &str) -> StoreResult<String>;
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>>;
    fn int(&self, col: &str) -> StoreResult<i64>;
    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>>;
    fn bytes(&self, col: &str) -> StoreResult<Vec<u8>>;
    fn opt_bytes(&self, col: &str) -> StoreResult<Option<Vec<u8>>>;
}

impl<R> Cols for R
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<Vec<u8>>: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, col: &str) -> StoreResult<String> {
        Ok(self.try_get::<String, _>(col)?)
    }
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
        Ok(self.try_get::<Option<String>, _>(col)?)
    }
    fn int(&self, col: &str) -> StoreResult<i64> {
        Ok(self.try_get::<i64, _>(col)?)
    }
    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>> {
        Ok(self.try_get::<Option<i64>, _>(col)?)
    }
    fn bytes(&self, col: &str) -> StoreResult<Vec<u8>> {
        Ok(self.try_get::<Vec<u8>, _>(col)?)
    }
    fn opt_bytes(&self, col: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self.try_get::<Option<Vec<u8>>, _>(col)?)
    }
}

/// Rebuilds a snapshot from a `book_snapshots` row (`ts`, `bids`, `asks`, `no_bids`) of a known book.
pub(crate) fn snapshot_row(
    r: &impl Cols,
    exchange: Exchange,
    market_id: &str,
    asset_id: Option<&str>,
) -> StoreResult<BookSnapshot> {
    Ok(BookSnapshot {
        exchange,
        market_id: market_id.to_string(),
        asset_id: asset_id.map(str::to_string),
        timestamp: Timestamp::from_millis(r.int("ts")?),
        bids: decode_ladder(&r.bytes("bids")?)?,
        asks: decode_ladder(&r.bytes("asks")?)?,
        no_bids: decode_ladder(&r.bytes("no_bids")?)?,
    })
}

/// The stored form of a snapshot's `asset_id`: venue_a books have none and are stored under `''`, which keeps
/// the primary key a plain equality on every backend.
pub(crate) fn asset_key(asset_id: Option<&str>) -> &str {
    asset_id.unwrap_or("")
}

/// The notional stored beside each trade, so whale filters can compare integers in SQL.
pub(crate) fn trade_notional(t: &Trade) -> i64 {
    t.notional().micros()
}

pub(crate) fn side_str(s: TakerSide) -> &'static str {
    s.as_str()
}

pub(crate) fn outcome_str(o: Outcome) -> &'static str {
    o.as_str()
}

/// The taker side of a stored trade.
pub(crate) fn taker_side(s: &str) -> StoreResult<TakerSide> {
    match s {
        "buy" => Ok(TakerSide::Buy),
        "sell" => Ok(TakerSide::Sell),
        other => Err(decode_error(format!("unexpected taker side {other:?} in the database"))),
    }
}

/// The outcome of a stored trade.
pub(crate) fn outcome(s: &str) -> StoreResult<Outcome> {
    match s {
        "YES" => Ok(Outcome::Yes),
        "NO" => Ok(Outcome::No),
        other => Err(decode_error(format!("unexpected outcome {other:?} in the database"))),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn lv(p: i64, s: i64) -> Level {
        Level {
            price: Price::from_micros(p),
            size: Amount::from_micros(s),
        }
    }

    #[test]
    fn ladder_round_trips_and_is_compact() {
        let ladder = vec![lv(530_000, 120_000_000), lv(520_000, 5_500_000), lv(1, 0)];
        let blob = encode_ladder(&ladder);
        assert_eq!(decode_ladder(&blob).unwrap(), ladder);
        // version + count + scales + 3 levels; far below the ~90 bytes of the JSON form.
        assert!(blob.len() <= 20, "{} bytes", blob.len());
        assert_eq!(decode_ladder(&encode_ladder(&[])).unwrap(), vec![]);
        assert_eq!(encode_ladder(&[]), [LADDER_V2, 0]);
    }

    #[test]
    fn a_ten_level_cent_ladder_takes_about_three_bytes_a_level() {
        // Cents from 0.55 down, whole contracts up to a few thousand: the common venue_a / venue_b shape.
        let ladder: Vec<Level> = (0..10)
            .map(|i| lv(550_000 - i * 10_000, (100 + i * 350) * 1_000_000))
            .collect();
        let blob = encode_ladder(&ladder);
        assert_eq!(decode_ladder(&blob).unwrap(), ladder);
        assert!(blob.len() <= 4 + 10 * 3, "{} bytes", blob.len());
    }

    #[test]
    fn version_1_blobs_are_still_read() {
        // 1 level: 0.53 dollar (530000 → zigzag 1060000), 120 contracts (120000000 → zigzag 240000000).
        let mut v1 = vec![LADDER_V1];
        put_varint(&mut v1, 1);
        put_varint(&mut v1, 530_000);
        put_varint(&mut v1, 120_000_000);
        assert_eq!(decode_ladder(&v1).unwrap(), vec![lv(530_000, 120_000_000)]);
    }

    #[test]
    fn corrupt_blobs_are_errors_not_partial_ladders() {
        let blob = encode_ladder(&[lv(530_000, 120_000_000)]);
        for bad in [
            &[][..],
            &[9, 0][..],
            &blob[..blob.len() - 1],
            &[1, 0x7f][..],
            &[2, 2, 7, 0, 2, 2, 2, 2][..],
        ] {
            assert!(decode_ladder(bad).is_err(), "{bad:?}");
        }
        let mut trailing = blob.clone();
        trailing.push(0);
        assert!(decode_ladder(&trailing).is_err());
    }

    proptest! {
        #[test]
        fn any_ladder_round_trips(levels in proptest::collection::vec((any::<i64>(), any::<i64>()), 0..40)) {
            let ladder: Vec<Level> = levels.into_iter().map(|(p, s)| lv(p, s)).collect();
            prop_assert_eq!(decode_ladder(&encode_ladder(&ladder)).unwrap(), ladder);
        }
    }
}
