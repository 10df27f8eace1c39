//! The book event log in storage, on both backends: heads and registration, appends split into chunks at
//! keyframes, reads that start at the keyframe before the asked instant, compaction that keeps every event,
//! corrupt chunks reported and skipped, and retention.

use crate::testing::{TestDb, for_each_backend};
use crossbook_core::{
    Amount, Exchange, Price, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, GapCause, Level, LevelChange, Side},
};
use crossbook_store::{BookLogStore, Compacted, DAY_MS, LogRun, StoredGap};
use sqlx::{Connection as _, PgConnection, Row as _, SqliteConnection};

const BASE: i64 = 1_763_000_100_000;

fn at(offset_ms: i64) -> Timestamp {
    Timestamp::from_millis(BASE + offset_ms)
}

fn level(cents: i64, size: i64) -> Level {
    Level {
        price: Price::from_micros(cents * 10_000),
        size: Amount::from_units(size),
    }
}

fn snapshot(seq: u64, offset_ms: i64, bid: i64) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: Some(seq as i64 * 2),
        venue_ts: Some(at(offset_ms - 3)),
        received_at: at(offset_ms),
        change: BookChange::Snapshot {
            bids: vec![level(bid, 10), level(bid - 1, 20)],
            asks: vec![],
            no_bids: vec![level(100 - bid - 2, 5)],
        },
    }
}

fn delta(seq: u64, offset_ms: i64, bid: i64, size: i64) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: Some(seq as i64 * 2),
        venue_ts: None,
        received_at: at(offset_ms),
        change: BookChange::Delta(vec![LevelChange {
            side: Side::Bid,
            price: Price::from_micros(bid * 10_000),
            size: Amount::from_units(size),
        }]),
    }
}

fn gap(seq: u64, offset_ms: i64, cause: GapCause) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: None,
        received_at: at(offset_ms),
        change: BookChange::Gap(cause),
    }
}

fn book(market: &str) -> BookKey {
    BookKey::venue_a(market)
}

/// A book's history: a keyframe, deltas every 100 ms, a second keyframe at 10 s, a gap at 20 s and a
/// resnapshot at 25 s, then more deltas; `n` events in all.
fn history(n: u64) -> Vec<BookEvent> {
    (1..=n)
        .map(|seq| {
            let t = seq as i64 * 100;
            match seq {
                1 | 100 | 250 => snapshot(seq, t, 40 + (seq % 7) as i64),
                200 => gap(seq, t, GapCause::Disconnect),
                201..250 => delta(seq, t, 30, seq as i64),
                _ => delta(seq, t, 30 + (seq % 5) as i64, (seq % 3) as i64),
            }
        })
        .collect()
}

/// Compacts chunks older than `older_than` in steps of `max_chunks`; returns the steps' sums.
async fn compact_all(s: &dyn BookLogStore, older_than: Timestamp, max_chunks: u32) -> (Compacted, u32) {
    let (mut sum, mut steps, mut after) = (Compacted::default(), 0, 0);
    loop {
        let step = s.compact_log(older_than, after, max_chunks).await.unwrap();
        sum.chunks_in += step.chunks_in;
        sum.chunks_out += step.chunks_out;
        sum.corrupt += step.corrupt;
        steps += 1;
        assert!(steps < 100, "compaction does not end");
        match step.next {
            Some(next) => after = next,
            None => return (sum, steps),
        }
    }
}

/// Appends `events` in runs of `per_flush`, as the writer's flushes would.
async fn append_in_flushes(s: &dyn BookLogStore, id: i64, events: &[BookEvent], per_flush: usize) {
    for part in events.chunks(per_flush) {
        s.append_log(&[LogRun {
            book_id: id,
            events: part.to_vec(),
        }])
        .await
        .unwrap();
    }
}

/// Every chunk row as (first seq, last seq, keyframe, compacted), in seq order.
async fn chunk_rows(db: &TestDb) -> Vec<(i64, i64, i64, i64)> {
    const SQL: &str = "SELECT CAST(first_seq AS BIGINT) AS f, CAST(last_seq AS BIGINT) AS l, \
         CAST(keyframe AS BIGINT) AS k, CAST(compacted AS BIGINT) AS c FROM book_chunks ORDER BY first_seq";
    macro_rules! rows {
        ($conn:ty) => {{
            let mut c = <$conn>::connect(&db.url).await.unwrap();
            sqlx::query(SQL)
                .fetch_all(&mut c)
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get("f"), r.get("l"), r.get("k"), r.get("c")))
                .collect()
        }};
    }
    match db.backend() {
        "sqlite" => rows!(SqliteConnection),
        _ => rows!(PgConnection),
    }
}

/// Overwrites the bytes of the chunk starting at `first_seq`.
async fn corrupt_chunk(db: &TestDb, first_seq: i64, bytes: Vec<u8>) {
    const SQL: &str = "UPDATE book_chunks SET data = $1 WHERE first_seq = $2";
    let n = match db.backend() {
        "sqlite" => {
            let mut c = SqliteConnection::connect(&db.url).await.unwrap();
            sqlx::query(SQL)
                .bind(bytes)
                .bind(first_seq)
                .execute(&mut c)
                .await
                .unwrap()
                .rows_affected()
        }
        _ => {
            let mut c = PgConnection::connect(&db.url).await.unwrap();
            sqlx::query(SQL)
                .bind(bytes)
                .bind(first_seq)
                .execute(&mut c)
                .await
                .unwrap()
                .rows_affected()
        }
    };
    assert_eq!(n, 1);
}

/// The book as of `t`, rebuilt from `events` (all of them, in order).
fn state_at(events: &[BookEvent], t: Timestamp) -> Option<crossbook_core::book::Ladders> {
    let mut s = BookState::default();
    for e in events.iter().filter(|e| e.received_at <= t) {
        let _ = s.apply(&e.change);
    }
    s.ladders().cloned()
}

#[tokio::test]
async fn appended_events_read_back_from_the_keyframe_before_the_instant() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let heads = s.register_log_books(&[book("A"), book("B")]).await.unwrap();
        assert_eq!(heads.len(), 2);
        assert_eq!(
            (heads[0].book.clone(), heads[0].last_seq, heads[0].last_ts),
            (book("A"), 0, None)
        );
        assert_ne!(heads[0].id, heads[1].id);
        let all = history(400);
        append_in_flushes(s, heads[0].id, &all, 7).await;
        // Another book's events never mix in.
        append_in_flushes(s, heads[1].id, &history(30), 30).await;

        let read = s.log_events(&book("A"), at(0), at(1_000_000)).await.unwrap();
        assert!(read.corrupt.is_empty());
        assert_eq!(read.events, all);

        // From an instant after the second keyframe: the read starts at that keyframe (seq 100, 10 s).
        let read = s.log_events(&book("A"), at(12_345), at(15_000)).await.unwrap();
        assert_eq!(read.events.first().map(|e| e.seq), Some(100));
        assert_eq!(read.events.last().map(|e| e.seq), Some(150));
        assert_eq!(state_at(&read.events, at(12_345)), state_at(&all, at(12_345)));
        // Inside the gap (20 s to 25 s) the book has no state; after the resnapshot it has one again.
        let read = s.log_events(&book("A"), at(22_000), at(22_000)).await.unwrap();
        assert_eq!(state_at(&read.events, at(22_000)), None);
        let read = s.log_events(&book("A"), at(30_000), at(30_000)).await.unwrap();
        assert_eq!(read.events.first().map(|e| e.seq), Some(250));
        assert_eq!(state_at(&read.events, at(30_000)), state_at(&all, at(30_000)));
        // Before the book's first event, nothing; an unknown book, nothing.
        assert!(
            s.log_events(&book("A"), at(-5_000), at(50))
                .await
                .unwrap()
                .events
                .is_empty()
        );
        assert!(
            s.log_events(&book("Z"), at(0), at(1_000_000))
                .await
                .unwrap()
                .events
                .is_empty()
        );

        // Keyframes always open a chunk, and only chunks they open are marked as keyframes.
        let rows = chunk_rows(db).await;
        let starts: Vec<i64> = rows.iter().map(|r| r.0).collect();
        for r in &rows {
            assert_eq!(r.2 == 1, [1, 100, 250].contains(&r.0), "chunk {r:?}");
        }
        assert!([1, 100, 250].iter().all(|k| starts.contains(k)), "{starts:?}");

        // The gap from 20 s to the resnapshot at 25 s, seen from any range it overlaps.
        let stored = StoredGap {
            seq: 200,
            start: at(20_000),
            end: Some(at(25_000)),
            cause: GapCause::Disconnect,
        };
        assert_eq!(s.log_gaps(&book("A"), at(0), at(1_000_000)).await.unwrap(), [stored]);
        assert_eq!(s.log_gaps(&book("A"), at(21_000), at(22_000)).await.unwrap(), [stored]);
        assert_eq!(s.log_gaps(&book("A"), at(25_000), at(30_000)).await.unwrap(), [stored]);
        assert!(s.log_gaps(&book("A"), at(25_001), at(30_000)).await.unwrap().is_empty());
        assert!(s.log_gaps(&book("A"), at(0), at(19_999)).await.unwrap().is_empty());
        assert!(s.log_gaps(&book("B"), at(0), at(1_000_000)).await.unwrap().is_empty());

        // Registering again gives the same ids and the heads of what is stored.
        let again = s.register_log_books(&[book("B"), book("A")]).await.unwrap();
        assert_eq!(again[1].id, heads[0].id);
        assert_eq!((again[1].last_seq, again[1].last_ts), (400, Some(at(40_000))));
        assert_eq!((again[0].last_seq, again[0].last_ts), (30, Some(at(3_000))));

        // A gap not followed by a keyframe yet is open.
        s.append_log(&[LogRun {
            book_id: heads[0].id,
            events: vec![gap(401, 50_000, GapCause::Silence)],
        }])
        .await
        .unwrap();
        let gaps = s.log_gaps(&book("A"), at(45_000), at(60_000)).await.unwrap();
        assert_eq!(
            gaps,
            [StoredGap {
                seq: 401,
                start: at(50_000),
                end: None,
                cause: GapCause::Silence
            }]
        );
    })
    .await;
}

#[tokio::test]
async fn the_heads_of_a_venue_are_read_in_bulk_without_registering() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        assert!(s.log_heads(Exchange::VenueA).await.unwrap().is_empty());
        let b_key = BookKey {
            exchange: Exchange::VenueB,
            market_id: "0xcond".into(),
            asset_id: Some("123".into()),
        };
        let heads = s
            .register_log_books(&[book("A"), book("B"), book("EMPTY"), b_key.clone()])
            .await
            .unwrap();
        append_in_flushes(s, heads[0].id, &history(260), 50).await;
        append_in_flushes(s, heads[1].id, &history(12), 5).await;
        append_in_flushes(s, heads[3].id, &history(7), 7).await;

        let a = s.log_heads(Exchange::VenueA).await.unwrap();
        let got: Vec<(BookKey, i64, u64, Option<Timestamp>)> = a
            .iter()
            .map(|h| (h.book.clone(), h.id, h.last_seq, h.last_ts))
            .collect();
        // A registered book with no events is left out; the other venue's books too.
        assert_eq!(
            got,
            [
                (book("A"), heads[0].id, 260, Some(at(26_000))),
                (book("B"), heads[1].id, 12, Some(at(1_200))),
            ]
        );
        let b = s.log_heads(Exchange::VenueB).await.unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!((&b[0].book, b[0].last_seq), (&b_key, 7), "the token id is kept");
        // They agree with what registering reads.
        let again = s.register_log_books(&[book("A")]).await.unwrap();
        assert_eq!(again[0], a[0]);
    })
    .await;
}

#[tokio::test]
async fn compaction_merges_small_chunks_and_keeps_every_event() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let id = s.register_log_books(&[book("A")]).await.unwrap()[0].id;
        let all = history(400);
        append_in_flushes(s, id, &all, 3).await;
        let before = chunk_rows(db).await.len();
        assert!(before > 130, "{before} small chunks");

        // Only chunks older than the cutoff are merged.
        let (first, _) = compact_all(s, at(5_000), 50).await;
        assert_eq!((first.chunks_in, first.chunks_out), (16, 1), "{first:?}");
        // The rest in steps of at most 50 chunks.
        let (rest, steps) = compact_all(s, at(1_000_000), 50).await;
        assert!(steps >= 3, "{steps} steps");
        assert_eq!(rest.chunks_in as usize, before - 16);
        let rows = chunk_rows(db).await;
        // Compacted chunks break at the keyframes (seq 100, 250) and where a step stopped: a handful.
        assert!(rows.len() <= 7, "{rows:?}");
        assert!(rows.iter().all(|r| r.3 == 1), "{rows:?}");
        let read = s.log_events(&book("A"), at(0), at(1_000_000)).await.unwrap();
        assert_eq!(read.events, all);
        // Reads of an instant still start at its keyframe.
        let read = s.log_events(&book("A"), at(12_345), at(12_345)).await.unwrap();
        assert_eq!(read.events.first().map(|e| e.seq), Some(100));
        // Nothing left to do.
        let idle = s.compact_log(at(1_000_000), 0, 50).await.unwrap();
        assert_eq!((idle.chunks_in, idle.next), (0, None));
    })
    .await;
}

#[tokio::test]
async fn a_corrupt_chunk_is_reported_by_name_and_skipped() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let id = s.register_log_books(&[book("A")]).await.unwrap()[0].id;
        let all = history(60);
        append_in_flushes(s, id, &all, 20).await;
        corrupt_chunk(db, 21, vec![1, 200, 200, 200]).await;
        let read = s.log_events(&book("A"), at(0), at(1_000_000)).await.unwrap();
        assert_eq!(read.corrupt.len(), 1);
        assert_eq!(read.corrupt[0].name, format!("book {id} seq 21-40"));
        let seqs: Vec<u64> = read.events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=20).chain(41..=60).collect::<Vec<_>>());
        // Compaction keeps the corrupt chunk as it is and merges around it.
        let (sum, _) = compact_all(s, at(1_000_000), 1_000).await;
        assert_eq!(sum.corrupt, 1);
        let read = s.log_events(&book("A"), at(0), at(1_000_000)).await.unwrap();
        assert_eq!(read.corrupt.len(), 1);
        assert_eq!(read.events.len(), 40);
    })
    .await;
}

#[tokio::test]
async fn retention_removes_old_chunks_or_whole_days() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let id = s.register_log_books(&[book("A")]).await.unwrap()[0].id;
        // Keyframes at 1 h of four days d0..d3.
        let d0 = BASE.div_euclid(DAY_MS) - 3;
        let events: Vec<BookEvent> = (0..4)
            .map(|day| BookEvent {
                received_at: Timestamp::from_millis((d0 + day) * DAY_MS + 3_600_000),
                ..snapshot(day as u64 + 1, 0, 50)
            })
            .collect();
        s.append_log(&[LogRun { book_id: id, events }]).await.unwrap();
        let cutoff = Timestamp::from_millis((d0 + 2) * DAY_MS + 7_200_000);
        loop {
            if s.prune_log(cutoff, 1).await.unwrap().done {
                break;
            }
        }
        let left: Vec<i64> = chunk_rows(db).await.iter().map(|r| r.0).collect();
        match db.backend() {
            // Chunks ending before the cutoff go one by one.
            "sqlite" => assert_eq!(left, [4]),
            // Whole days that ended by the cutoff go; day d2 stays until it has passed.
            _ => assert_eq!(left, [3, 4]),
        }
        let read = s
            .log_events(
                &book("A"),
                Timestamp::from_millis(0),
                Timestamp::from_millis(i64::MAX / 2),
            )
            .await
            .unwrap();
        assert_eq!(read.events.len(), left.len());
    })
    .await;
}

#[tokio::test]
async fn compaction_merges_book_by_book_when_many_books_interleave() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let keys: Vec<BookKey> = (0..30).map(|i| book(&format!("M{i:02}"))).collect();
        let heads = s.register_log_books(&keys).await.unwrap();
        let all = history(60);
        // Twenty flushes, each with three events of every book: rows interleave book by book in time.
        for part in all.chunks(3) {
            let runs: Vec<LogRun> = heads
                .iter()
                .map(|h| LogRun {
                    book_id: h.id,
                    events: part.to_vec(),
                })
                .collect();
            s.append_log(&runs).await.unwrap();
        }
        assert_eq!(chunk_rows(db).await.len(), 30 * 20);
        let (sum, _) = compact_all(s, at(1_000_000), 25).await;
        assert_eq!(sum.chunks_in, 600);
        // Each book's twenty chunks merge into one, or two where a step's limit cut the book.
        assert!(sum.chunks_out <= 60, "{sum:?}");
        for k in &keys {
            let read = s.log_events(k, at(0), at(1_000_000)).await.unwrap();
            assert_eq!(read.events, all, "{k:?}");
        }
    })
    .await;
}

/// A long, irregular history: changes 0–40 ms apart (several in one millisecond at times), keyframes every 50
/// changes, and three gaps each followed by a resnapshot some seconds later.
fn irregular_history() -> Vec<BookEvent> {
    let mut rng: u64 = 7;
    let mut next = |n: u64| {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (rng >> 33) % n
    };
    let (mut events, mut t) = (Vec::new(), 0i64);
    for seq in 1..=3_000u64 {
        t += next(40) as i64;
        let e = match seq {
            1 => snapshot(seq, t, 40),
            s if [700, 1_500, 2_300].contains(&s) => {
                t += 1;
                gap(seq, t, GapCause::Silence)
            }
            s if [701, 1_501, 2_301].contains(&s) => {
                t += 5_000 + next(3_000) as i64;
                snapshot(seq, t, 45)
            }
            s if s % 50 == 0 => snapshot(seq, t, 30 + next(10) as i64),
            _ => delta(seq, t, 30 + next(10) as i64, next(4) as i64),
        };
        events.push(e);
    }
    events
}

/// The reference: every row a read could give, from all events in order. `bucket` groups rows per bucket (the
/// last event of each); `None` gives one row per millisecond.
fn reference_rows(events: &[BookEvent], bucket: Option<i64>) -> Vec<(i64, crossbook_core::book::Ladders, bool)> {
    let key = |t: i64| bucket.map_or(t, |b| t.div_euclid(b));
    let mut state = BookState::default();
    let (mut rows, mut gap) = (Vec::new(), false);
    for (i, e) in events.iter().enumerate() {
        if state.apply(&e.change).is_err() || matches!(e.change, BookChange::Gap(_)) {
            gap = true;
            continue;
        }
        let t = e.received_at.millis();
        let last = events.get(i + 1).is_none_or(|n| key(n.received_at.millis()) != key(t));
        if let (true, Some(l)) = (last, state.ladders()) {
            rows.push((t, l.clone(), !gap));
            gap = false;
        }
    }
    rows
}

#[tokio::test]
async fn history_rows_from_the_log_match_a_full_replay() {
    use crossbook_store::{HistoryWindow, books::history::log_history};
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let id = s.register_log_books(&[book("H")]).await.unwrap()[0].id;
        let all = irregular_history();
        append_in_flushes(s, id, &all, 37).await;
        // Half compacted, half small chunks: reads must not care.
        compact_all(s, all[1_400].received_at, 100).await;
        let end = all.last().unwrap().received_at.millis();

        // Latest: pages of 100 walked back with `before`, against the reference newest first.
        let mut want = reference_rows(&all, None);
        want.reverse();
        let mut got = Vec::new();
        let mut before = None;
        loop {
            let page = log_history(s, &book("H"), HistoryWindow::Latest { before }, 100)
                .await
                .unwrap();
            assert!(page.corrupt.is_empty());
            let Some(last) = page.rows.last() else { break };
            before = Some(last.at);
            got.extend(
                page.rows
                    .into_iter()
                    .map(|r| (r.at.millis() - BASE, r.ladders, r.continuous)),
            );
            assert!(got.len() <= want.len(), "more rows than the reference");
        }
        let want_rel: Vec<_> = want.iter().map(|(t, l, c)| (t - BASE, l.clone(), *c)).collect();
        assert_eq!(got.len(), want_rel.len());
        assert_eq!(got, want_rel);
        assert_eq!(
            got.iter().filter(|r| !r.2).count(),
            3,
            "one discontinuity after each gap"
        );

        // Ranges at 1 s, 10 s and 60 s buckets, paged with `after`, against the reference per bucket.
        for (bucket, limit) in [(1_000, 50u32), (10_000, 7), (60_000, 200)] {
            let want: Vec<_> = reference_rows(&all, Some(bucket))
                .into_iter()
                .map(|(t, l, c)| (t - BASE, l, c))
                .collect();
            let mut got = Vec::new();
            let mut after = None;
            loop {
                let window = HistoryWindow::Range {
                    start: at(0),
                    end: Timestamp::from_millis(end),
                    bucket_ms: bucket,
                    after,
                };
                let page = log_history(s, &book("H"), window, limit).await.unwrap();
                let Some(last) = page.rows.last() else { break };
                after = Some(last.at);
                got.extend(
                    page.rows
                        .into_iter()
                        .map(|r| (r.at.millis() - BASE, r.ladders, r.continuous)),
                );
                assert!(got.len() <= want.len(), "{bucket}: more rows than the reference");
            }
            assert_eq!(got, want, "buckets of {bucket} ms");
        }
    })
    .await;
}

#[tokio::test]
async fn a_page_that_starts_on_a_resnapshot_knows_the_gap_before_it() {
    use crossbook_store::{HistoryWindow, books::history::log_history};
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let id = s.register_log_books(&[book("R")]).await.unwrap()[0].id;
        // The resnapshot lands exactly on the second bucket's start.
        let events = vec![
            snapshot(1, 0, 40),
            delta(2, 100, 40, 3),
            gap(3, 200, GapCause::Disconnect),
            snapshot(4, 60_000, 41),
            delta(5, 60_100, 41, 2),
        ];
        s.append_log(&[LogRun { book_id: id, events }]).await.unwrap();
        let page = |after| HistoryWindow::Range {
            start: at(0),
            end: at(119_999),
            bucket_ms: 60_000,
            after,
        };
        // The first bucket ends with the gap, so it has no row; the page reads on into the second bucket, whose
        // read starts at the resnapshot and must still see the gap before it.
        let rows = log_history(s, &book("R"), page(None), 1).await.unwrap().rows;
        let rows: Vec<_> = rows.iter().map(|r| (r.at, r.continuous)).collect();
        assert_eq!(rows, [(at(60_100), false)]);
        let rows = log_history(s, &book("R"), HistoryWindow::Latest { before: None }, 10)
            .await
            .unwrap()
            .rows;
        let rows: Vec<_> = rows.iter().map(|r| (r.at, r.continuous)).collect();
        assert_eq!(
            rows,
            [(at(60_100), true), (at(60_000), false), (at(100), true), (at(0), true)]
        );
        // The same with the resnapshot starting a chunk of its own: a latest read starts at that keyframe
        // and learns from the chunk before it (read in the same statement) that a gap came first.
        let id = s.register_log_books(&[book("S")]).await.unwrap()[0].id;
        let (before, after) = (
            vec![
                snapshot(1, 0, 40),
                delta(2, 100, 40, 3),
                gap(3, 200, GapCause::Disconnect),
            ],
            vec![snapshot(4, 60_000, 41), delta(5, 60_100, 41, 2)],
        );
        s.append_log(&[LogRun {
            book_id: id,
            events: before,
        }])
        .await
        .unwrap();
        s.append_log(&[LogRun {
            book_id: id,
            events: after,
        }])
        .await
        .unwrap();
        let read = s.log_events(&book("S"), at(70_000), at(70_000)).await.unwrap();
        assert_eq!(read.events.first().map(|e| e.seq), Some(4));
        assert!(read.after_gap);
        let rows = log_history(s, &book("S"), HistoryWindow::Latest { before: None }, 2)
            .await
            .unwrap()
            .rows;
        let rows: Vec<_> = rows.iter().map(|r| (r.at, r.continuous)).collect();
        assert_eq!(rows, [(at(60_100), true), (at(60_000), false)]);
    })
    .await;
}

/// Ninety minutes of a book: changes 50–1,000 ms apart, keyframes every 400 changes, gaps whose resnapshot
/// comes in the same minute, in a later minute, and exactly on a minute's start (the gap ending its minute).
fn long_history() -> Vec<BookEvent> {
    let mut rng: u64 = 11;
    let mut next = |n: u64| {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (rng >> 33) % n
    };
    let (mut events, mut t) = (vec![snapshot(0, 0, 40)], 0i64);
    while t < 90 * 60_000 {
        t += 50 + next(950) as i64;
        match events.len() {
            // A gap and its resnapshot in the same minute.
            2_000 => {
                events.push(gap(0, t, GapCause::SequenceGap));
                t += 2_000;
                events.push(snapshot(0, t, 44));
            }
            // A gap lasting minutes.
            4_000 => {
                events.push(gap(0, t, GapCause::Disconnect));
                t += 150_000;
                events.push(snapshot(0, t, 41));
            }
            // A gap as a minute's last event, the resnapshot exactly on the next minute's start.
            6_000 => {
                t = (t / 60_000 + 1) * 60_000 - 1;
                events.push(gap(0, t, GapCause::Silence));
                t += 1;
                events.push(snapshot(0, t, 43));
            }
            n if n % 400 == 0 => events.push(snapshot(0, t, 30 + next(10) as i64)),
            _ => events.push(delta(0, t, 30 + next(10) as i64, next(4) as i64)),
        }
    }
    for (i, e) in events.iter_mut().enumerate() {
        e.seq = i as u64 + 1;
    }
    events
}

#[tokio::test]
async fn minute_buckets_read_from_chunk_ends_match_a_full_replay() {
    use crossbook_store::{HistoryWindow, books::history::log_history};
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let id = s.register_log_books(&[book("M")]).await.unwrap()[0].id;
        let all = long_history();
        append_in_flushes(s, id, &all, 5).await;
        let last = all.last().unwrap().received_at.millis() - BASE;
        let check = async |label: &str| {
            for (bucket, limit) in [(60_000, 7u32), (300_000, 4), (3_600_000, 1)] {
                // Whole range, an unaligned start, and an end inside a bucket.
                for (start, end) in [(0, last), (37_123, last - 12_345), (600_000, 3_000_000)] {
                    let (start, end) = (BASE + start, BASE + end);
                    // The reference over a window: the last event of each bucket up to `end`, from `start` on.
                    let upto: Vec<BookEvent> = all.iter().filter(|e| e.received_at.millis() <= end).cloned().collect();
                    let want: Vec<_> = reference_rows(&upto, Some(bucket))
                        .into_iter()
                        .filter(|(t, _, _)| *t >= start)
                        .map(|(t, l, c)| (t - BASE, l, c))
                        .collect();
                    assert!(
                        want.len() > 1 || bucket == 3_600_000,
                        "{label}: a window too small to test"
                    );
                    let mut got = Vec::new();
                    let mut after = None;
                    loop {
                        let window = HistoryWindow::Range {
                            start: Timestamp::from_millis(start),
                            end: Timestamp::from_millis(end),
                            bucket_ms: bucket,
                            after,
                        };
                        let page = log_history(s, &book("M"), window, limit).await.unwrap();
                        assert!(page.corrupt.is_empty());
                        let Some(row) = page.rows.last() else { break };
                        after = Some(row.at);
                        got.extend(
                            page.rows
                                .into_iter()
                                .map(|r| (r.at.millis() - BASE, r.ladders, r.continuous)),
                        );
                        assert!(
                            got.len() <= want.len() + 1,
                            "{label} {bucket}: more rows than the reference"
                        );
                    }
                    // The first row's continuity looks before the window, which the filtered reference cannot
                    // see when the window starts inside a bucket; compare it apart.
                    assert_eq!(got.len(), want.len(), "{label}: buckets of {bucket} ms from {start}");
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!((g.0, &g.1), (w.0, &w.1), "{label}: buckets of {bucket} ms from {start}");
                    }
                    assert_eq!(
                        got.iter().skip(1).map(|r| r.2).collect::<Vec<_>>(),
                        want.iter().skip(1).map(|r| r.2).collect::<Vec<_>>(),
                        "{label}: continuity, buckets of {bucket} ms from {start}"
                    );
                    if (start, bucket) == (BASE, 60_000) {
                        assert_eq!(
                            got.iter().filter(|r| !r.2).count(),
                            3,
                            "{label}: one discontinuity per gap"
                        );
                    }
                }
            }
        };
        // Nothing compacted: every bucket replays.
        check("hot").await;
        // Compacted up to the middle: the older buckets read chunk ends, the newer replay.
        compact_all(s, at(45 * 60_000), 300).await;
        check("half compacted").await;
        compact_all(s, at(100 * 60_000), 300).await;
        check("compacted").await;
        // Compacted minutes carry their ends.
        let outline = s
            .log_outline(&book("M"), at(10 * 60_000), at(20 * 60_000 - 1), true)
            .await
            .unwrap();
        assert!(outline.chunks.len() >= 10);
        assert!(outline.chunks.iter().all(|c| c.end_known));
        assert_eq!(outline.ends.len(), outline.chunks.len());
        for (c, e) in outline.chunks.iter().zip(&outline.ends) {
            let upto: Vec<BookEvent> = all.iter().filter(|x| x.seq <= c.last_seq).cloned().collect();
            let mut state = BookState::default();
            for x in &upto {
                let _ = state.apply(&x.change);
            }
            let want = match state.ladders() {
                Some(l) => crossbook_store::EndState::Book(l.clone()),
                None => crossbook_store::EndState::Gap,
            };
            assert_eq!((e.last_seq, &e.state), (c.last_seq, &want));
        }
        assert!(
            outline
                .chunks
                .iter()
                .all(|c| c.first_ts.millis().div_euclid(60_000) == c.last_ts.millis().div_euclid(60_000))
        );
    })
    .await;
}

/// `log_after` walks a range in pages of chunks from where the last page ended, with every event once, in
/// `seq` order, nothing past `to`; a corrupt chunk is reported once and stepped over.
#[tokio::test]
async fn log_after_walks_a_range_page_by_page_and_steps_over_corrupt_chunks() {
    for_each_backend(async |db| {
        let s: &dyn BookLogStore = db.store.as_ref();
        let key = book("KX-AFTER");
        let id = s.register_log_books(std::slice::from_ref(&key)).await.unwrap()[0].id;
        let events = history(400);
        append_in_flushes(s, id, &events, 25).await;

        let walk = async |after_seq: u64, to: Timestamp, max_chunks: u32| {
            let (mut got, mut corrupt, mut reads) = (Vec::new(), 0, 0);
            let (mut seq, mut ts) = (after_seq, at(0));
            loop {
                let page = s.log_after(&key, seq, ts, to, max_chunks).await.unwrap();
                reads += 1;
                assert!(reads < 1_000, "the walk does not end");
                corrupt += page.corrupt.len();
                got.extend(page.events);
                match page.next {
                    Some((s2, t2)) => (seq, ts) = (s2, t2),
                    None => return (got, corrupt, reads),
                }
            }
        };
        // The whole log, two chunks a read: every event once, in order.
        let (all, corrupt, reads) = walk(0, at(1_000_000), 2).await;
        assert_eq!(corrupt, 0);
        assert_eq!(all, events);
        assert!(reads > 5, "{reads} reads for 16 chunks of 25 events, two a read");
        // From the middle of a chunk, to an instant: only later events, none after `to`.
        let (mid, _, _) = walk(130, at(300 * 100), 3).await;
        assert_eq!(mid, events[130..300].to_vec());

        corrupt_chunk(db, 101, vec![1, 2, 3]).await;
        let (left, corrupt, _) = walk(0, at(1_000_000), 2).await;
        assert_eq!(corrupt, 1, "the corrupt chunk is reported once");
        let expected: Vec<BookEvent> = events
            .iter()
            .filter(|e| !(101..=125).contains(&e.seq))
            .cloned()
            .collect();
        assert_eq!(left, expected);
    })
    .await;
}
