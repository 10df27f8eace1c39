//! Nothing the book writer has stored is lost on `kill -9` (issue 11), on both backends.
//!
//! The real `crossbook serve --simulate` writes the book event log; while it runs, a separate connection reads
//! what the writer has committed; then the process is killed with SIGKILL (no shutdown, no final flush) and
//! the database is opened again. Three times per database, restarting on the same database each time:
//!
//! - SQLite passes `PRAGMA integrity_check` (the first connection after the kill recovers the WAL).
//! - Every book read before the kill still holds every event up to the seq read then, and its events read
//!   back through `BookLogStore::log_events` decode (no corrupt chunk) with seqs 1..=n, no hole.
//! - After the restart, a book that changes continues its numbering: a `restart` gap at the stored last seq
//!   + 1, received at the time of the stored last event, then a keyframe.
//!
//! Each kill is aimed at a write in progress: the test waits (briefly) until the process has a write
//! transaction open on the database, then kills it, so kills land in or near a flush rather than just after
//! one (observing a commit and then killing would always land between two flushes).
//! - The markets, events and trades committed before the kill are all still there (counted before and after).
//!
//! Compaction is not covered: it merges only chunks two minutes old, every 30 s, and neither is configurable.

use std::{collections::BTreeMap, str::FromStr, time::Duration};

use crate::common::Proc;
use crossbook_core::{
    Exchange, Timestamp,
    book::{BookChange, BookEvent, BookKey, GapCause},
};
use crossbook_store::testing::{self, TestDb};
use sqlx::{
    ConnectOptions as _, Connection as _, PgConnection, Row as _, SqliteConnection, sqlite::SqliteConnectOptions,
};

/// Kills (and restarts) per database.
const KILLS: usize = 3;
/// Books the log must hold events of before a kill.
const BOOKS: usize = 3;
/// Deadline of every wait: generous, for a loaded machine.
const WAIT: Duration = Duration::from_secs(30);
/// How long a kill waits for a write in progress before it is made anyway: flushes come every 500 ms.
const AIM: Duration = Duration::from_secs(10);

/// What the chunk rows of one book held when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stored {
    /// The highest seq of its chunks.
    last_seq: u64,
    /// How many events its chunks hold.
    events: u64,
}

/// Per book, what its chunk rows hold: one query, so one consistent snapshot on both backends even while the
/// writer appends. Read on a connection of its own, closed afterwards.
async fn stored(db: &TestDb) -> BTreeMap<BookKey, Stored> {
    const SQL: &str = "SELECT b.exchange, b.market_id, b.asset_id, \
         CAST(MAX(c.last_seq) AS BIGINT) AS last_seq, CAST(SUM(c.last_seq - c.first_seq + 1) AS BIGINT) AS events \
         FROM log_books b JOIN book_chunks c ON c.book = b.id \
         GROUP BY b.id, b.exchange, b.market_id, b.asset_id";
    macro_rules! rows {
        ($conn:ty) => {{
            let mut c = <$conn>::connect(&db.url).await.unwrap();
            let rows = sqlx::query(SQL).fetch_all(&mut c).await.unwrap();
            c.close().await.unwrap();
            rows.iter()
                .map(|r| {
                    let asset: String = r.get("asset_id");
                    let key = BookKey {
                        exchange: r.get::<String, _>("exchange").parse::<Exchange>().unwrap(),
                        market_id: r.get("market_id"),
                        asset_id: (!asset.is_empty()).then_some(asset),
                    };
                    let at = Stored {
                        last_seq: r.get::<i64, _>("last_seq") as u64,
                        events: r.get::<i64, _>("events") as u64,
                    };
                    (key, at)
                })
                .collect()
        }};
    }
    match db.backend() {
        "sqlite" => rows!(SqliteConnection),
        _ => rows!(PgConnection),
    }
}

/// Committed rows of the other tables ingestion writes (markets, events, trades), in that order: none may be
/// missing after a kill.
async fn row_counts(db: &TestDb) -> [i64; 3] {
    const SQL: &str = "SELECT (SELECT COUNT(*) FROM markets), (SELECT COUNT(*) FROM events), \
         (SELECT COUNT(*) FROM trades)";
    macro_rules! counts {
        ($conn:ty) => {{
            let mut c = <$conn>::connect(&db.url).await.unwrap();
            let r = sqlx::query(SQL).fetch_one(&mut c).await.unwrap();
            c.close().await.unwrap();
            [r.get::<i64, _>(0), r.get::<i64, _>(1), r.get::<i64, _>(2)]
        }};
    }
    match db.backend() {
        "sqlite" => counts!(SqliteConnection),
        _ => counts!(PgConnection),
    }
}

/// Every stored event of `book`, read back through the store's own API; fails on a corrupt chunk.
async fn events_of(store: &dyn crossbook_store::Store, book: &BookKey) -> Vec<BookEvent> {
    // Far enough ahead for any receive time the writer gives (the wall clock).
    let to = Timestamp::from_millis(Timestamp::now().millis() + 86_400_000);
    let read = store.log_events(book, Timestamp::from_millis(0), to).await.unwrap();
    assert!(read.corrupt.is_empty(), "{book:?}: corrupt chunks {:?}", read.corrupt);
    read.events
}

/// Waits until the log holds events of at least `BOOKS` books and, after a restart, until at least `BOOKS` of
/// the books stored before it (all of them when fewer) have continued past their restart gap; returns what
/// the log holds then.
async fn until_written(db: &TestDb, serve: &mut Proc, before: &BTreeMap<BookKey, Stored>) -> BTreeMap<BookKey, Stored> {
    let continued_wanted = BOOKS.min(before.len());
    testing::eventually_seen("the writer stores events of several books", WAIT, async || {
        serve.assert_running();
        let now = stored(db).await;
        let continued = before
            .iter()
            .filter(|(k, b)| now.get(*k).is_some_and(|n| n.last_seq > b.last_seq + 1))
            .count();
        if now.len() >= BOOKS && continued >= continued_wanted {
            return Ok(now);
        }
        Err(format!(
            "{} books, {continued} of {} continued\n{}",
            now.len(),
            before.len(),
            serve.log()
        ))
    })
    .await
}

/// Kills `serve` with SIGKILL, aimed at a write in progress: first waits until it is inside a write
/// transaction on `db`, up to [`AIM`] (polling without pause: a flush's transaction lasts milliseconds).
/// Whether it saw one.
///
/// SQLite: an immediate transaction of the test's own, with no busy timeout, is refused while the writer holds
/// the write lock (when it is not, it is rolled back at once; the writer's busy timeout covers that instant).
/// The probe is closed before the kill, so that the killed process is the last to hold the database and the
/// next connection recovers the WAL it left, as after a crash in production (one process uses a SQLite file).
/// PostgreSQL: a session of the database with a transaction open on the book log; killed at once.
async fn kill_mid_write(db: &TestDb, serve: &mut Proc) -> bool {
    let deadline = std::time::Instant::now() + AIM;
    let mut seen = false;
    if db.backend() == "sqlite" {
        let mut c = SqliteConnectOptions::from_str(&db.url)
            .unwrap()
            .busy_timeout(Duration::ZERO)
            .connect()
            .await
            .unwrap();
        while !seen && std::time::Instant::now() < deadline {
            match sqlx::raw_sql("BEGIN IMMEDIATE").execute(&mut c).await {
                Ok(_) => {
                    sqlx::raw_sql("ROLLBACK").execute(&mut c).await.unwrap();
                }
                Err(sqlx::Error::Database(e)) if e.message().contains("database is locked") => seen = true,
                Err(e) => panic!("probing the write lock: {e}"),
            }
        }
        c.close().await.unwrap();
        serve.kill();
    } else {
        const SQL: &str = "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND state <> 'idle' \
             AND query LIKE '%book_chunks%')";
        let mut c = PgConnection::connect(&db.url).await.unwrap();
        while !seen && std::time::Instant::now() < deadline {
            seen = sqlx::query_scalar(SQL).fetch_one(&mut c).await.unwrap();
        }
        serve.kill();
        // The killed process's connections end on PostgreSQL's side only when their backends notice: a
        // COMMIT it sent just before dying may still land. The checks read the database once it has let go of
        // all of them, so that what they compare is settled.
        const OTHERS: &str = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid()";
        testing::eventually_seen(
            "the killed process's connections gone",
            Duration::from_secs(30),
            async || {
                let others: i64 = sqlx::query_scalar(OTHERS)
                    .fetch_one(&mut c)
                    .await
                    .map_err(|e| e.to_string())?;
                (others == 0).then_some(()).ok_or(format!("{others} still open"))
            },
        )
        .await;
        c.close().await.unwrap();
    }
    seen
}

/// The checks after a kill: SQLite's integrity, then every book stored before the kill still whole. Returns
/// what the log holds now.
async fn check_after_kill(db: &TestDb, before: &BTreeMap<BookKey, Stored>) -> BTreeMap<BookKey, Stored> {
    if db.backend() == "sqlite" {
        // The first connection since the kill: it recovers the WAL the killed writer left.
        let mut c = SqliteConnection::connect(&db.url).await.unwrap();
        let result: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
        assert_eq!(result, ["ok"], "integrity_check after kill -9");
    }
    let after = stored(db).await;
    let store = crossbook_store::open(&db.url).await.unwrap();
    for (book, b) in before {
        let a = after
            .get(book)
            .unwrap_or_else(|| panic!("{book:?}: its events are gone"));
        assert!(
            a.last_seq >= b.last_seq,
            "{book:?}: stored up to {b:?} before the kill, {a:?} after"
        );
    }
    for (book, a) in &after {
        let events = events_of(store.as_ref(), book).await;
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        let want: Vec<u64> = (1..=a.last_seq).collect();
        assert_eq!(seqs, want, "{book:?}: seqs read back");
        assert_eq!(a.events, a.last_seq, "{book:?}: chunks hold each seq once");
        assert!(
            matches!(events[0].change, BookChange::Snapshot { .. }),
            "{book:?}: the log opens with a keyframe: {:?}",
            events[0]
        );
    }
    store.close().await;
    after
}

/// The books that changed since the restart continue their numbering: a `restart` gap right after the last
/// event stored before it, received at that event's time, then a keyframe, and no other restart gap.
async fn check_restart(db: &TestDb, before: &BTreeMap<BookKey, Stored>, now: &BTreeMap<BookKey, Stored>) {
    let store = crossbook_store::open(&db.url).await.unwrap();
    for (book, b) in before {
        if now.get(book).is_none_or(|n| n.last_seq == b.last_seq) {
            continue; // not changed since the restart: no gap yet
        }
        let events = events_of(store.as_ref(), book).await;
        let at = |seq: u64| &events[seq as usize - 1];
        let (last, gap) = (at(b.last_seq), at(b.last_seq + 1));
        assert_eq!(
            gap.change,
            BookChange::Gap(GapCause::Restart),
            "{book:?}: after seq {}",
            b.last_seq
        );
        assert_eq!(
            gap.received_at, last.received_at,
            "{book:?}: the gap starts at the last stored event"
        );
        let next = events.get(b.last_seq as usize + 1);
        assert!(
            next.is_some_and(|e| matches!(e.change, BookChange::Snapshot { .. })),
            "{book:?}: a keyframe after the restart gap: {next:?}"
        );
        let restarts = events[b.last_seq as usize..]
            .iter()
            .filter(|e| e.change == BookChange::Gap(GapCause::Restart))
            .count();
        assert_eq!(restarts, 1, "{book:?}: restart gaps since seq {}", b.last_seq);
    }
    store.close().await;
}

/// Kills `serve` [`KILLS`] times on `db`, checking the log after each kill and after each restart.
async fn kill_and_check(db: TestDb) {
    db.store.migrate().await.unwrap();
    // Only the process under test holds the database while it is killed, so the next open recovers what it
    // left rather than sharing a live WAL index with the test.
    db.store.close().await;
    let started = std::time::Instant::now();
    let mut before = BTreeMap::new();
    for round in 1..=KILLS {
        let mut serve = Proc::serve("serve", &db.url, &[]);
        let written = until_written(&db, &mut serve, &before).await;
        check_restart(&db, &before, &written).await;
        let rows = row_counts(&db).await;
        let mid_write = kill_mid_write(&db, &mut serve).await;
        eprintln!(
            "{}: kill {round} (mid-write: {mid_write}) with {} books, {} events stored before it",
            db.backend(),
            written.len(),
            written.values().map(|s| s.events).sum::<u64>()
        );
        before = check_after_kill(&db, &written).await;
        let after = row_counts(&db).await;
        assert!(
            after.iter().zip(rows).all(|(a, b)| *a >= b),
            "markets, events, trades: {rows:?} committed before the kill, {after:?} after"
        );
        eprintln!(
            "{}: markets, events, trades before the kill {rows:?}, after {after:?}",
            db.backend()
        );
    }
    eprintln!("{}: {KILLS} kills in {:?}", db.backend(), started.elapsed());
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_log_survives_kill_9() {
    kill_and_check(testing::sqlite_database().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_log_survives_kill_9() {
    if let Some(db) = testing::postgres_database().await {
        kill_and_check(db).await;
    }
}
