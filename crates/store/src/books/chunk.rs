//! The chunk codec: a run of one book's events as compact bytes, the at-rest form of the event log.
//!
//! A chunk holds consecutive events of one book (a keyframe first, when the run has one). Deltas are most of
//! the log, a book changing ten times a second makes 864,000 a day, so the format spends bytes only on what
//! changes. Every integer is a zigzag LEB128 varint.
//!
//! ```text
//! chunk  = version(=1) count first_seq first_received kp ks event*
//! event  = head [seq_skip] received_delta [venue_seq_delta] [venue_ts_offset] body
//! head   = kind (bits 0-1: 0 snapshot, 1 delta, 2 gap) | 4 if the seq is not the previous + 1
//!          | 8 if a venue seq follows | 16 if a venue timestamp follows
//! body   = snapshot: for bids, asks, no_bids: n, then n × (price step, size)
//!          delta:    n, then n × (price step × 4 + side, size)
//!          gap:      cause code
//! ```
//!
//! Prices and sizes are written in units of `10^kp` and `10^ks` micro-units, the largest powers of ten (at most
//! 10⁶) that divide every price and size of the chunk: venue prices sit on a cent or tenth-of-a-cent grid, so a
//! price is one or two bytes. Each price is written as the step from the previous price of the chunk, so levels
//! near each other cost one byte. Times are steps from the previous event's (milliseconds), the venue's sequence
//! the step from the previous one's successor (0 when it counts up by one), the venue's timestamp an offset from
//! the receive time. A delta of two levels with both venue fields costs about thirteen bytes.
//!
//! The book a chunk leaves behind (its `last_book` column) has a form of its own, [`encode_book`]:
//!
//! ```text
//! book   = 0                                  (no book: the chunk ends in a gap)
//!        | 1 kp ks ladder ladder ladder       (bids, asks, no_bids; as a snapshot's body)
//! ```
//!
//! Decoding never panics: a truncated or corrupt chunk is an error naming what was wrong, and the caller skips
//! the chunk and reports it.

use crossbook_core::{
    Amount, Price, Timestamp,
    book::{BookChange, BookEvent, GapCause, Ladders, Level, LevelChange, Side},
};

use crate::codec::{get_varint, put_varint};

const VERSION: u8 = 1;
const KIND_SNAPSHOT: u8 = 0;
const KIND_DELTA: u8 = 1;
const KIND_GAP: u8 = 2;
const SEQ_SKIP: u8 = 4;
const HAS_VENUE_SEQ: u8 = 8;
const HAS_VENUE_TS: u8 = 16;

/// Why a chunk could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corrupt chunk: {0}")]
pub struct ChunkError(&'static str);

impl ChunkError {
    pub(crate) const fn new(what: &'static str) -> Self {
        ChunkError(what)
    }
}

/// A cursor over the bytes of a chunk.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, ChunkError> {
        let b = *self.bytes.get(self.pos).ok_or(ChunkError("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn int(&mut self) -> Result<i64, ChunkError> {
        get_varint(self.bytes, &mut self.pos).ok_or(ChunkError("truncated varint"))
    }

    /// A count, bounded by the bytes left (every counted item takes at least one byte), so a corrupt count
    /// cannot make the decoder reserve gigabytes.
    fn count(&mut self) -> Result<usize, ChunkError> {
        let n = self.int()?;
        let left = self.bytes.len() - self.pos;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or(ChunkError("count out of range"))
    }
}

/// The largest `k` ≤ 6 such that `10^k` divides every value seen, narrowed one value at a time.
#[derive(Clone, Copy)]
struct Scale(u32);

impl Scale {
    fn see(&mut self, v: i64) {
        while self.0 > 0 && v % 10i64.pow(self.0) != 0 {
            self.0 -= 1;
        }
    }
}

/// The price and size scales of a run of events.
fn scales(events: &[BookEvent]) -> (u32, u32) {
    let (mut kp, mut ks) = (Scale(6), Scale(6));
    let mut see = |l_price: Price, l_size: Amount| {
        kp.see(l_price.micros());
        ks.see(l_size.micros());
    };
    for e in events {
        match &e.change {
            BookChange::Snapshot { bids, asks, no_bids } => {
                for l in bids.iter().chain(asks).chain(no_bids) {
                    see(l.price, l.size);
                }
            }
            BookChange::Delta(cs) => {
                for c in cs {
                    see(c.price, c.size);
                }
            }
            BookChange::Gap(_) => {}
        }
    }
    (kp.0, ks.0)
}

/// Units of `10^kp` and `10^ks` micro-units, from the scales read from a chunk (each at most 6).
fn read_units(r: &mut Reader<'_>) -> Result<(i64, i64), ChunkError> {
    let (kp, ks) = (r.int()?, r.int()?);
    if !(0..=6).contains(&kp) || !(0..=6).contains(&ks) {
        return Err(ChunkError("scale out of range"));
    }
    Ok((10i64.pow(kp as u32), 10i64.pow(ks as u32)))
}

/// `v` units of `unit` micro-units, or an error when that overflows.
fn scaled(v: i64, unit: i64) -> Result<i64, ChunkError> {
    v.checked_mul(unit).ok_or(ChunkError("value out of range"))
}

/// Writes three ladders (bids, asks, no_bids) as a snapshot's body: prices as steps from `price`, which is
/// left at the last one written.
fn write_ladders(out: &mut Vec<u8>, ladders: [&[Level]; 3], (up, us): (i64, i64), price: &mut i64) {
    for ladder in ladders {
        put_varint(out, ladder.len() as i64);
        for l in ladder {
            let p = l.price.micros() / up;
            put_varint(out, p.wrapping_sub(*price));
            *price = p;
            put_varint(out, l.size.micros() / us);
        }
    }
}

/// Reads what [`write_ladders`] wrote.
fn read_ladders(r: &mut Reader<'_>, (up, us): (i64, i64), price: &mut i64) -> Result<[Vec<Level>; 3], ChunkError> {
    let mut ladders: [Vec<Level>; 3] = Default::default();
    for ladder in &mut ladders {
        let len = r.count()?;
        ladder.reserve(len);
        for _ in 0..len {
            *price = price.wrapping_add(r.int()?);
            ladder.push(Level {
                price: Price::from_micros(scaled(*price, up)?),
                size: Amount::from_micros(scaled(r.int()?, us)?),
            });
        }
    }
    Ok(ladders)
}

/// Encodes a run of one book's events (see the module docs). Events are written in the order given.
pub fn encode(events: &[BookEvent]) -> Vec<u8> {
    let (kp, ks) = scales(events);
    let (up, us) = (10i64.pow(kp), 10i64.pow(ks));

    let mut out = Vec::with_capacity(16 + events.len() * 12);
    out.push(VERSION);
    put_varint(&mut out, events.len() as i64);
    let first = events.first();
    let first_seq = first.map_or(0, |e| e.seq as i64);
    let first_received = first.map_or(0, |e| e.received_at.millis());
    put_varint(&mut out, first_seq);
    put_varint(&mut out, first_received);
    put_varint(&mut out, i64::from(kp));
    put_varint(&mut out, i64::from(ks));

    let (mut seq, mut received, mut venue_seq, mut price) = (first_seq.wrapping_sub(1), first_received, 0i64, 0i64);
    for e in events {
        let mut head = match e.change {
            BookChange::Snapshot { .. } => KIND_SNAPSHOT,
            BookChange::Delta(_) => KIND_DELTA,
            BookChange::Gap(_) => KIND_GAP,
        };
        let skip = (e.seq as i64).wrapping_sub(seq.wrapping_add(1));
        if skip != 0 {
            head |= SEQ_SKIP;
        }
        if e.venue_seq.is_some() {
            head |= HAS_VENUE_SEQ;
        }
        if e.venue_ts.is_some() {
            head |= HAS_VENUE_TS;
        }
        out.push(head);
        if skip != 0 {
            put_varint(&mut out, skip);
        }
        seq = e.seq as i64;
        put_varint(&mut out, e.received_at.millis().wrapping_sub(received));
        received = e.received_at.millis();
        if let Some(v) = e.venue_seq {
            put_varint(&mut out, v.wrapping_sub(venue_seq.wrapping_add(1)));
            venue_seq = v;
        }
        if let Some(ts) = e.venue_ts {
            put_varint(&mut out, ts.millis().wrapping_sub(received));
        }
        match &e.change {
            BookChange::Snapshot { bids, asks, no_bids } => {
                write_ladders(&mut out, [bids, asks, no_bids], (up, us), &mut price);
            }
            BookChange::Delta(changes) => {
                put_varint(&mut out, changes.len() as i64);
                for c in changes {
                    let p = c.price.micros() / up;
                    // The step's zigzag form times four plus the side: one byte for a nearby level.
                    let step = p.wrapping_sub(price);
                    let z = ((step << 1) ^ (step >> 63)) as u64;
                    put_varint(&mut out, (z.wrapping_mul(4) | u64::from(c.side.code())) as i64);
                    price = p;
                    put_varint(&mut out, c.size.micros() / us);
                }
            }
            BookChange::Gap(cause) => {
                put_varint(&mut out, i64::from(cause.code()));
            }
        }
    }
    out
}

/// Decodes a chunk written by [`encode`].
pub fn decode(bytes: &[u8]) -> Result<Vec<BookEvent>, ChunkError> {
    let mut r = Reader { bytes, pos: 0 };
    if r.byte()? != VERSION {
        return Err(ChunkError("unknown version"));
    }
    let n = r.count()?;
    let first_seq = r.int()?;
    let mut received = r.int()?;
    let (up, us) = read_units(&mut r)?;

    let mut events = Vec::with_capacity(n);
    let (mut seq, mut venue_seq, mut price) = (first_seq.wrapping_sub(1), 0i64, 0i64);
    for _ in 0..n {
        let head = r.byte()?;
        if head >= 32 {
            return Err(ChunkError("unknown event flags"));
        }
        let skip = if head & SEQ_SKIP != 0 { r.int()? } else { 0 };
        seq = seq.wrapping_add(1).wrapping_add(skip);
        received = received.wrapping_add(r.int()?);
        let venue_seq_now = if head & HAS_VENUE_SEQ != 0 {
            venue_seq = venue_seq.wrapping_add(1).wrapping_add(r.int()?);
            Some(venue_seq)
        } else {
            None
        };
        let venue_ts = if head & HAS_VENUE_TS != 0 {
            Some(Timestamp::from_millis(received.wrapping_add(r.int()?)))
        } else {
            None
        };
        let change = match head & 3 {
            KIND_SNAPSHOT => {
                let [bids, asks, no_bids] = read_ladders(&mut r, (up, us), &mut price)?;
                BookChange::Snapshot { bids, asks, no_bids }
            }
            KIND_DELTA => {
                let len = r.count()?;
                let mut changes = Vec::with_capacity(len);
                for _ in 0..len {
                    let packed = r.int()? as u64;
                    let side = Side::from_code((packed & 3) as u8).ok_or(ChunkError("unknown side"))?;
                    let z = packed >> 2;
                    let step = ((z >> 1) as i64) ^ -((z & 1) as i64);
                    price = price.wrapping_add(step);
                    changes.push(LevelChange {
                        side,
                        price: Price::from_micros(scaled(price, up)?),
                        size: Amount::from_micros(scaled(r.int()?, us)?),
                    });
                }
                BookChange::Delta(changes)
            }
            KIND_GAP => {
                let cause = u8::try_from(r.int()?).ok().and_then(GapCause::from_code);
                BookChange::Gap(cause.ok_or(ChunkError("unknown gap cause"))?)
            }
            _ => return Err(ChunkError("unknown event kind")),
        };
        events.push(BookEvent {
            seq: seq as u64,
            venue_seq: venue_seq_now,
            venue_ts,
            received_at: Timestamp::from_millis(received),
            change,
        });
    }
    if r.pos != bytes.len() {
        return Err(ChunkError("trailing bytes"));
    }
    Ok(events)
}

/// Encodes the book a chunk leaves: `None` when it ends in a gap (see the module docs).
pub fn encode_book(book: Option<&Ladders>) -> Vec<u8> {
    let Some(l) = book else { return vec![0] };
    let (mut kp, mut ks) = (Scale(6), Scale(6));
    for level in l.bids.iter().chain(&l.asks).chain(&l.no_bids) {
        kp.see(level.price.micros());
        ks.see(level.size.micros());
    }
    let (up, us) = (10i64.pow(kp.0), 10i64.pow(ks.0));
    let mut out = Vec::with_capacity(4 + 3 * (l.bids.len() + l.asks.len() + l.no_bids.len()));
    out.push(1);
    put_varint(&mut out, i64::from(kp.0));
    put_varint(&mut out, i64::from(ks.0));
    write_ladders(&mut out, [&l.bids, &l.asks, &l.no_bids], (up, us), &mut 0);
    out
}

/// Decodes what [`encode_book`] wrote.
pub fn decode_book(bytes: &[u8]) -> Result<Option<Ladders>, ChunkError> {
    let mut r = Reader { bytes, pos: 0 };
    match r.byte()? {
        0 if bytes.len() == 1 => return Ok(None),
        1 => {}
        _ => return Err(ChunkError("unknown book form")),
    }
    let units = read_units(&mut r)?;
    let ladders = read_ladders(&mut r, units, &mut 0)?;
    if r.pos != bytes.len() {
        return Err(ChunkError("trailing bytes"));
    }
    let [bids, asks, no_bids] = ladders;
    Ok(Some(Ladders { bids, asks, no_bids }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so the test needs no extra crate and fails the same way every run.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, n: u64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) % n) as i64
        }
    }

    /// A realistic run: a 10-level keyframe, then deltas of 1–3 levels on a cent grid ten times a second, with
    /// venue sequence numbers counting up and a gap followed by a new keyframe.
    fn run(rng: &mut Lcg, n: usize) -> Vec<BookEvent> {
        let lvl = |c: i64, s: i64| Level {
            price: Price::from_cents(c),
            size: Amount::from_micros(s * 10_000),
        };
        let snapshot = BookChange::Snapshot {
            bids: (0..10).map(|i| lvl(45 - i, 100 + i * 37)).collect(),
            asks: (0..10).map(|i| lvl(47 + i, 90 + i * 41)).collect(),
            no_bids: vec![],
        };
        let t0 = 1_795_287_600_000i64;
        let mut out = vec![BookEvent {
            seq: 41,
            venue_seq: Some(7),
            venue_ts: Some(Timestamp::from_millis(t0 - 3)),
            received_at: Timestamp::from_millis(t0),
            change: snapshot.clone(),
        }];
        for i in 1..n as u64 {
            let at = t0 + i as i64 * 100 + rng.next(40);
            let change = if i == n as u64 / 2 {
                BookChange::Gap(GapCause::SequenceGap)
            } else if i == n as u64 / 2 + 1 {
                snapshot.clone()
            } else {
                let k = 1 + rng.next(3) as usize;
                BookChange::Delta(
                    (0..k)
                        .map(|_| {
                            let side = if rng.next(2) == 0 { Side::Bid } else { Side::Ask };
                            let base = if side == Side::Bid { 36 } else { 47 };
                            LevelChange {
                                side,
                                price: Price::from_cents(base + rng.next(10)),
                                size: Amount::from_micros(rng.next(3) * rng.next(50_000) * 10_000),
                            }
                        })
                        .collect(),
                )
            };
            out.push(BookEvent {
                seq: 41 + i,
                venue_seq: Some(7 + i as i64 + i64::from(i == 300)),
                venue_ts: Some(Timestamp::from_millis(at - rng.next(20))),
                received_at: Timestamp::from_millis(at),
                change,
            });
        }
        out
    }

    #[test]
    fn events_round_trip_exactly() {
        let mut rng = Lcg(7);
        let events = run(&mut rng, 2_000);
        assert_eq!(decode(&encode(&events)).unwrap(), events);
        assert_eq!(decode(&encode(&[])).unwrap(), []);
        // Odd values: off-grid prices, a skipped seq, no venue fields, negative steps everywhere.
        let odd = vec![
            BookEvent {
                seq: u64::MAX - 1,
                venue_seq: None,
                venue_ts: None,
                received_at: Timestamp::from_millis(5),
                change: BookChange::Delta(vec![LevelChange {
                    side: Side::NoBid,
                    price: Price::from_micros(123_457),
                    size: Amount::from_micros(1),
                }]),
            },
            BookEvent {
                seq: 3,
                venue_seq: Some(i64::MIN),
                venue_ts: Some(Timestamp::from_millis(i64::MAX)),
                received_at: Timestamp::from_millis(1),
                change: BookChange::Gap(GapCause::Restart),
            },
        ];
        assert_eq!(decode(&encode(&odd)).unwrap(), odd);
    }

    #[test]
    fn a_typical_delta_costs_under_fourteen_bytes() {
        // The at-rest goal is 16 bytes per delta counting the table and its indexes; a chunk row's own cost
        // is spread over hundreds of events, so the events themselves must stay well under it.
        let mut rng = Lcg(11);
        let events = run(&mut rng, 10_000);
        let bytes = encode(&events).len() as f64 / events.len() as f64;
        assert!(bytes < 14.0, "{bytes:.1} bytes per event");
    }

    #[test]
    fn books_round_trip_and_corrupt_ones_are_errors() {
        let mut state = crossbook_core::book::BookState::default();
        let mut rng = Lcg(5);
        for e in run(&mut rng, 300) {
            let _ = state.apply(&e.change);
            let bytes = encode_book(state.ladders());
            assert_eq!(decode_book(&bytes).unwrap().as_ref(), state.ladders());
        }
        let book = encode_book(state.ladders());
        assert!(book.len() < 64, "{} bytes for a 20-level book", book.len());
        for cut in 0..book.len() {
            assert!(decode_book(&book[..cut]).is_err(), "truncated at {cut}");
        }
        assert_eq!(decode_book(&[0, 0]), Err(ChunkError("unknown book form")));
        assert_eq!(decode_book(&[7]), Err(ChunkError("unknown book form")));
    }

    #[test]
    fn corrupt_chunks_are_errors_never_panics() {
        let mut rng = Lcg(3);
        let good = encode(&run(&mut rng, 200));
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "truncated at {cut}");
        }
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                let _ = decode(&bad);
            }
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(decode(&trailing), Err(ChunkError("trailing bytes")));
        assert_eq!(decode(&[9]), Err(ChunkError("unknown version")));
    }
}
