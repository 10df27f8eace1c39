//! Historical order books in storage, on both backends: downsampling against a hand-built series (bucket
//! edges, empty buckets, 1m and 5m), cursors over a series that grows during the walk, as-of reads, and
//! retention (batched deletes on SQLite, dropped daily partitions on PostgreSQL).

use crate::testing::{TestDb, for_each_backend};
use crossbook_core::{Amount, BookSnapshot, Exchange, Level, Price, Timestamp};
use crossbook_store::{BookHistoryQuery, DAY_MS, HistoryWindow, Store};
use sqlx::{Connection as _, Row as _};

const A: Exchange = Exchange::VenueA;
const B: Exchange = Exchange::VenueB;

/// A time aligned to 5 minutes (and so to 1 minute): bucket edges fall on whole offsets from it.
const BASE: i64 = 1_763_000_100_000;
const MIN: i64 = 60_000;

fn ts(offset_ms: i64) -> Timestamp {
    Timestamp::from_millis(BASE + offset_ms)
}

/// A venue_a snapshot of `market` whose YES bid encodes its time, so rows are told apart by content too.
fn snap(market: &str, offset_ms: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: A,
        market_id: market.into(),
        asset_id: None,
        timestamp: ts(offset_ms),
        bids: vec![Level {
            price: Price::from_micros(100_000 + offset_ms.rem_euclid(800_000)),
            size: Amount::from_units(10),
        }],
        asks: vec![],
        no_bids: vec![Level {
            price: Price::from_micros(400_000),
            size: Amount::from_units(3),
        }],
    }
}

fn token_snap(asset: &str, offset_ms: i64, bid: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: B,
        market_id: "0xcond".into(),
        asset_id: Some(asset.into()),
        timestamp: ts(offset_ms),
        bids: vec![Level {
            price: Price::from_micros(bid),
            size: Amount::from_units(5),
        }],
        asks: vec![Level {
            price: Price::from_micros(bid + 20_000),
            size: Amount::from_units(6),
        }],
        no_bids: vec![],
    }
}

async fn read(s: &dyn Store, market: &str, window: HistoryWindow, limit: u32) -> Vec<BookSnapshot> {
    s.snapshots(&BookHistoryQuery {
        exchange: A,
        market_id: market.into(),
        asset_id: None,
        window,
        limit,
    })
    .await
    .unwrap()
}

fn offsets(v: &[BookSnapshot]) -> Vec<i64> {
    v.iter().map(|s| s.timestamp.millis() - BASE).collect()
}

fn range(start: i64, end: i64, bucket: i64, after: Option<i64>) -> HistoryWindow {
    HistoryWindow::Range {
        start: ts(start),
        end: ts(end),
        bucket_ms: bucket,
        after: after.map(ts),
    }
}

/// Reads every page of a range query with `limit`, each page resuming after the previous page's last row.
async fn walk(s: &dyn Store, market: &str, start: i64, end: i64, bucket: i64, limit: u32) -> Vec<i64> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let page = read(s, market, range(start, end, bucket, after), limit).await;
        out.extend(offsets(&page));
        match page.last() {
            Some(last) if page.len() == limit as usize => after = Some(last.timestamp.millis() - BASE),
            _ => return out,
        }
    }
}

/// The hand-built series (offsets in ms from `BASE`): minute 0 has snapshots at its first and last
/// millisecond and in between; minute 2 and minutes 6–9 and 11 are empty; 299 999 is the last millisecond of
/// the first 5-minute bucket and 300 000 the first of the second.
const SERIES: &[i64] = &[
    0, 10_000, 59_999, 60_000, 185_000, 240_000, 299_999, 300_000, 600_500, 725_000,
];

async fn seed_series(s: &dyn Store) {
    let mut batch: Vec<BookSnapshot> = SERIES.iter().map(|o| snap("M", *o)).collect();
    // Neighbouring books that must never leak into M's rows: another market, and a venue_b token with the
    // same market id.
    batch.extend((0..30).map(|i| snap("M2", i * 20_000 + 7)));
    batch.push(BookSnapshot {
        exchange: B,
        market_id: "M".into(),
        asset_id: Some("1".into()),
        ..snap("M", 61_000)
    });
    s.insert_snapshots(&batch).await.unwrap();
}

#[tokio::test]
async fn downsampling_matches_a_hand_built_series() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        seed_series(s).await;
        let hour = 60 * MIN;

        // 1m: the last snapshot of each non-empty minute, with its own timestamp, oldest first.
        let one = read(s, "M", range(0, hour, MIN, None), 200).await;
        assert_eq!(
            offsets(&one),
            [59_999, 60_000, 185_000, 299_999, 300_000, 600_500, 725_000]
        );
        assert_eq!(one[0], snap("M", 59_999), "rows carry their own ladders");
        // 5m.
        let five = read(s, "M", range(0, hour, 5 * MIN, None), 200).await;
        assert_eq!(offsets(&five), [299_999, 300_000, 725_000]);

        // Range bounds are inclusive, and a bucket cut by the range keeps its last snapshot inside the range.
        let cut = read(s, "M", range(10_000, 300_000, MIN, None), 200).await;
        assert_eq!(offsets(&cut), [59_999, 60_000, 185_000, 299_999, 300_000]);
        let cut5 = read(s, "M", range(10_000, 299_998, 5 * MIN, None), 200).await;
        assert_eq!(offsets(&cut5), [240_000]);
        let single = read(s, "M", range(60_000, 60_000, MIN, None), 200).await;
        assert_eq!(offsets(&single), [60_000]);
        // A range with nothing in it, and one entirely in a gap.
        assert!(read(s, "M", range(-hour, -1, MIN, None), 200).await.is_empty());
        assert!(read(s, "M", range(120_000, 179_999, MIN, None), 200).await.is_empty());

        // Paging: any page size walks the same rows, each once.
        for limit in [1, 2, 3, 7] {
            assert_eq!(
                walk(s, "M", 0, hour, MIN, limit).await,
                offsets(&one),
                "1m, limit {limit}"
            );
            assert_eq!(
                walk(s, "M", 0, hour, 5 * MIN, limit).await,
                offsets(&five),
                "5m, limit {limit}"
            );
        }

        // Latest: newest first, paged by `before`.
        let latest = read(s, "M", HistoryWindow::Latest { before: None }, 3).await;
        assert_eq!(offsets(&latest), [725_000, 600_500, 300_000]);
        let next = read(
            s,
            "M",
            HistoryWindow::Latest {
                before: Some(latest[2].timestamp),
            },
            3,
        )
        .await;
        assert_eq!(offsets(&next), [299_999, 240_000, 185_000]);
    })
    .await;
}

#[tokio::test]
async fn cursors_survive_a_series_that_grows_during_the_walk() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        // One snapshot a second for the first 90 s.
        let second = |i: i64| snap("G", i * 1000);
        s.insert_snapshots(&(0..=90).map(second).collect::<Vec<_>>())
            .await
            .unwrap();

        // Range, 1m: page 1 ends in minute 1, which is still filling up.
        let end = 10 * MIN;
        let p1 = read(s, "G", range(0, end, MIN, None), 2).await;
        assert_eq!(offsets(&p1), [59_000, 90_000]);
        // More snapshots arrive, some in minute 1 (after the cursor row) and later minutes.
        s.insert_snapshots(&(91..=200).map(second).collect::<Vec<_>>())
            .await
            .unwrap();
        let p2 = read(s, "G", range(0, end, MIN, Some(90_000)), 2).await;
        assert_eq!(offsets(&p2), [179_000, 200_000], "minute 1 is not repeated");

        // Latest: rows arriving above the cursor never shift later pages.
        let mut seen = Vec::new();
        let mut before = None;
        let mut next = 201;
        loop {
            let page = read(s, "G", HistoryWindow::Latest { before }, 50).await;
            seen.extend(offsets(&page));
            // New snapshots land between pages.
            s.insert_snapshots(&[second(next), second(next + 1)]).await.unwrap();
            next += 2;
            match page.last() {
                Some(last) if page.len() == 50 => before = Some(last.timestamp),
                _ => break,
            }
        }
        let expected: Vec<i64> = (0..=200).rev().map(|i| i * 1000).collect();
        assert_eq!(seen, expected, "every row of the walk's start once, newest first");
    })
    .await;
}

#[tokio::test]
async fn as_of_reads_pair_each_time_with_the_latest_snapshot_before_it() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        s.insert_snapshots(&[
            token_snap("no", 1_000, 400_000),
            token_snap("no", 5_000, 410_000),
            token_snap("yes", 2_000, 550_000),
        ])
        .await
        .unwrap();
        let got = s
            .snapshots_as_of(
                B,
                "0xcond",
                Some("no"),
                &[ts(500), ts(1_000), ts(4_999), ts(9_000), ts(1_000)],
            )
            .await
            .unwrap();
        let bids: Vec<Option<i64>> = got
            .iter()
            .map(|g| g.as_ref().map(|x| x.bids[0].price.micros()))
            .collect();
        assert_eq!(bids, [None, Some(400_000), Some(400_000), Some(410_000), Some(400_000)]);
        assert_eq!(got[3].as_ref().unwrap(), &token_snap("no", 5_000, 410_000));
        assert!(
            s.snapshots_as_of(B, "0xcond", Some("no"), &[])
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            s.snapshots_as_of(B, "0xother", Some("no"), &[ts(9_000)]).await.unwrap(),
            [None]
        );
    })
    .await;
}

/// The snapshot partitions attached on PostgreSQL, by day.
async fn pg_partitions(db: &TestDb) -> Vec<i64> {
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let rows = sqlx::query(
        "SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = 'book_snapshots'::regclass",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    let mut days: Vec<i64> = rows
        .iter()
        .map(|r| {
            let name: String = r.get("name");
            name.strip_prefix("book_snapshots_d").unwrap().parse().unwrap()
        })
        .collect();
    days.sort();
    days
}

#[tokio::test]
async fn retention_deletes_in_batches_or_drops_whole_days() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        // Days d0..d3 (d0 oldest); three snapshots in each, at 1 h, 12 h and 23 h.
        let d0 = BASE.div_euclid(DAY_MS) - 3;
        let at = |day: i64, hour: i64| Timestamp::from_millis((d0 + day) * DAY_MS + hour * 3_600_000);
        let mut batch = Vec::new();
        for day in 0..4 {
            for hour in [1, 12, 23] {
                batch.push(BookSnapshot {
                    timestamp: at(day, hour),
                    ..snap("R", 0)
                });
            }
        }
        s.insert_snapshots(&batch).await.unwrap();
        let cutoff = at(2, 6);
        let remaining = async || {
            let all = read(s, "R", HistoryWindow::Latest { before: None }, 100).await;
            all.iter().map(|x| x.timestamp).rev().collect::<Vec<_>>()
        };

        if db.backend() == "postgres" {
            assert_eq!(pg_partitions(db).await, [d0, d0 + 1, d0 + 2, d0 + 3]);
            let p = s.prune_snapshots(cutoff, 2).await.unwrap();
            assert!(p.done);
            assert_eq!(p.partitions, 2, "the two days that ended before the cutoff");
            assert_eq!(pg_partitions(db).await, [d0 + 2, d0 + 3]);
            // The day holding the cutoff is kept whole until it has passed.
            let expected: Vec<Timestamp> = (2..4).flat_map(|d| [1, 12, 23].map(|h| at(d, h))).collect();
            assert_eq!(remaining().await, expected);
            // Idempotent; then the next day goes once it has fully passed.
            assert_eq!(s.prune_snapshots(cutoff, 2).await.unwrap().partitions, 0);
            assert_eq!(s.prune_snapshots(at(3, 0), 2).await.unwrap().partitions, 1);
            assert_eq!(remaining().await, [at(3, 1), at(3, 12), at(3, 23)]);
        } else {
            // Small batches: each call deletes at most 2 rows, oldest first, until done.
            let mut calls = 0;
            let mut deleted = 0;
            loop {
                let p = s.prune_snapshots(cutoff, 2).await.unwrap();
                assert!(p.rows <= 2);
                deleted += p.rows;
                calls += 1;
                if p.done {
                    break;
                }
                assert!(calls < 100, "retention never finished");
            }
            assert_eq!(deleted, 7, "everything before day 2, 06:00");
            assert!(calls >= 4);
            let expected: Vec<Timestamp> = [(2, 12), (2, 23), (3, 1), (3, 12), (3, 23)]
                .map(|(d, h)| at(d, h))
                .to_vec();
            assert_eq!(remaining().await, expected);
        }
    })
    .await;
}

#[tokio::test]
async fn snapshots_of_any_day_are_accepted() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let today = BASE.div_euclid(DAY_MS);
        s.prepare_snapshots(Timestamp::from_millis(BASE), Timestamp::from_millis(BASE + 2 * DAY_MS))
            .await
            .unwrap();
        if db.backend() == "postgres" {
            assert_eq!(pg_partitions(db).await, [today, today + 1, today + 2]);
        }
        // A backfill of a day with no partition yet, and a batch spanning several days, in one statement each.
        let far = snap("P", -400 * DAY_MS);
        s.insert_snapshots(std::slice::from_ref(&far)).await.unwrap();
        let spread: Vec<BookSnapshot> = (0..5).map(|d| snap("P", d * DAY_MS + 5)).collect();
        s.insert_snapshots(&spread).await.unwrap();
        let all = read(s, "P", HistoryWindow::Latest { before: None }, 100).await;
        assert_eq!(all.len(), 6);
        assert_eq!(all.last().unwrap(), &far);
        if db.backend() == "postgres" {
            let days = pg_partitions(db).await;
            assert!(days.contains(&(today - 400)) && days.contains(&(today + 4)), "{days:?}");
        }
    })
    .await;
}
