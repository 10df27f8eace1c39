//! `GET /v1/export/{books|trades}` over real sockets, on a seeded day of a venue_b market (two token books, a
//! gap, trades on the day and on both days around it): the CSV holds exactly the rows of the replay of the same
//! day, flattened one row per level; pyarrow (an independent Parquet reader) finds the same rows with typed
//! columns; an empty day is the header alone; bad requests get a 400 or 404 naming the parameter.

use std::{io::Read as _, path::Path};

use crossbook_core::{
    Amount, Exchange, Market, Outcome, Price, TakerSide, Timestamp, Trade,
    book::{BookChange, BookEvent, BookKey, GapCause, Level, LevelChange, Side},
};
use crossbook_server::config::Config;
use crossbook_store::{LogRun, Store, testing::sqlite_database};
use serde_json::Value;

use crate::util::{E_BTC_B, Keys, Server, client, create_keys, python_with, seed_catalog};

const MARKET: &str = "0xe0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0";
// Token ids as venue_b writes them: 78-digit numbers, which a reader that guesses types turns into floats.
const YES: &str = "106910590851636253114834732714300033157897034189854008233257546005768227417280";
const NO: &str = "100209039718960779866466454084941555628124129029212973118062762889883527081457";
const DAY_MS: i64 = 86_400_000;

fn level(cents: i64, size: i64) -> Level {
    Level {
        price: Price::from_cents(cents),
        size: Amount::from_units(size),
    }
}

fn event(seq: u64, at: i64, change: BookChange) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: Some(Timestamp::from_millis(at - 3)),
        received_at: Timestamp::from_millis(at),
        change,
    }
}

fn trade(id: &str, at: i64, outcome: Outcome, cents: i64) -> Trade {
    Trade {
        exchange: Exchange::VenueB,
        source_trade_id: id.into(),
        market_id: MARKET.into(),
        event_id: E_BTC_B.into(),
        executed_at: Timestamp::from_millis(at),
        taker_side: TakerSide::Buy,
        outcome,
        price: Price::from_cents(cents),
        size: Amount::from_micros(12_345_678),
    }
}

/// Seeds day `d0` (midnight, ms) of [`MARKET`]: the YES book from the day before, 100 changes, a gap, a new
/// snapshot and 10 changes; the NO book from its first snapshot at 00:00:05; three trades on the day and one
/// on each day around it. Returns the rows the books file must have.
async fn seed_day(store: &std::sync::Arc<dyn Store>, d0: i64) -> usize {
    let mut m = Market::new(Exchange::VenueB, MARKET, E_BTC_B, "btc-export", "Export test?");
    m.yes_token_id = Some(YES.into());
    m.no_token_id = Some(NO.into());
    store.upsert_markets(&[m], Timestamp::now()).await.unwrap();
    let books = [BookKey::venue_b(MARKET, YES), BookKey::venue_b(MARKET, NO)];
    let ids = store.register_log_books(&books).await.unwrap();

    let mut yes = vec![event(
        1,
        d0 - 60_000,
        BookChange::Snapshot {
            bids: vec![level(40, 10), level(39, 5)],
            asks: vec![level(42, 7)],
            no_bids: vec![],
        },
    )];
    for i in 0..100 {
        let change = if i == 50 {
            LevelChange {
                side: Side::Bid,
                price: Price::from_cents(39),
                size: Amount::ZERO,
            }
        } else {
            LevelChange {
                side: Side::Bid,
                price: Price::from_cents(40),
                size: Amount::from_units(11 + i),
            }
        };
        yes.push(event(
            yes.len() as u64 + 1,
            d0 + 1_000 + i * 1_000,
            BookChange::Delta(vec![change]),
        ));
    }
    yes.push(event(
        yes.len() as u64 + 1,
        d0 + 200_000,
        BookChange::Gap(GapCause::Disconnect),
    ));
    yes.push(event(
        yes.len() as u64 + 1,
        d0 + 260_000,
        BookChange::Snapshot {
            bids: vec![level(41, 3)],
            asks: vec![level(43, 4)],
            no_bids: vec![],
        },
    ));
    for i in 0..10 {
        yes.push(event(
            yes.len() as u64 + 1,
            d0 + 261_000 + i * 500,
            BookChange::Delta(vec![LevelChange {
                side: Side::Ask,
                price: Price::from_cents(43),
                size: Amount::from_micros(4_000_000 + i * 250_001),
            }]),
        ));
    }
    // The next day: not in the file.
    yes.push(event(
        yes.len() as u64 + 1,
        d0 + DAY_MS + 1_000,
        BookChange::Delta(vec![LevelChange {
            side: Side::Ask,
            price: Price::from_cents(44),
            size: Amount::from_units(1),
        }]),
    ));
    let no = vec![event(
        1,
        d0 + 5_000,
        BookChange::Snapshot {
            bids: vec![level(55, 2)],
            asks: vec![level(60, 1)],
            no_bids: vec![],
        },
    )];
    store
        .append_log(&[
            LogRun {
                book_id: ids[0].id,
                events: yes,
            },
            LogRun {
                book_id: ids[1].id,
                events: no,
            },
        ])
        .await
        .unwrap();
    store
        .insert_trades(&[
            trade("before", d0 - 1, Outcome::Yes, 40),
            trade("t1", d0 + 2_500, Outcome::Yes, 41),
            trade("t2, \"quoted\"", d0 + 7_000, Outcome::No, 59),
            trade("t3", d0 + DAY_MS - 1, Outcome::Yes, 44),
            trade("after", d0 + DAY_MS, Outcome::Yes, 45),
        ])
        .await
        .unwrap();
    // YES: 3 levels at midnight + 100 changes + the gap + 2 levels + 10 changes; NO: its 2 levels.
    3 + 100 + 1 + 2 + 10 + 2
}

fn date_of(d0: i64) -> String {
    Timestamp::from_millis(d0).to_iso()[..10].to_string()
}

async fn get(server: &Server, key: &str, path: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let r = client()
        .get(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.bytes().await.unwrap().to_vec())
}

fn gunzip(bytes: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .expect("a gzip file");
    text
}

/// A decimal JSON number (≤ 6 places) as the file writes a size: six decimals.
fn size6(v: &Value) -> String {
    let micros = (v.as_f64().unwrap() * 1e6).round() as i64;
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

fn text(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_default()
}

/// The replay's messages flattened into the rows of the books file (CSV text, fields in column order) and of
/// the trades file.
fn flatten(replay: &[Value]) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let (mut books, mut trades) = (Vec::new(), Vec::new());
    for m in replay {
        let head = |snapshot: bool| {
            vec![
                text(&m["exchange"]),
                text(&m["market_id"]),
                text(&m["asset_id"]),
                m["seq"].to_string(),
                text(&m["venue_ts"]),
                text(&m["received_at"]),
                snapshot.to_string(),
            ]
        };
        match m["type"].as_str().unwrap() {
            "book_snapshot" => {
                let mut any = false;
                for (side, name) in [("bids", "bid"), ("asks", "ask"), ("no_bids", "no_bid")] {
                    for l in m[side].as_array().unwrap() {
                        any = true;
                        let mut row = head(true);
                        row.extend([
                            name.into(),
                            text(&l["price"]),
                            size6(&l["size"]),
                            String::new(),
                            String::new(),
                        ]);
                        books.push(row);
                    }
                }
                if !any {
                    let mut row = head(true);
                    row.extend(vec![String::new(); 5]);
                    books.push(row);
                }
            }
            "book_change" => {
                for c in m["changes"].as_array().unwrap() {
                    let mut row = head(false);
                    row.extend([
                        text(&c["side"]),
                        text(&c["price"]),
                        size6(&c["size"]),
                        String::new(),
                        String::new(),
                    ]);
                    books.push(row);
                }
            }
            "gap" => {
                let mut row = head(false);
                row.extend([
                    String::new(),
                    String::new(),
                    String::new(),
                    text(&m["cause"]),
                    text(&m["end"]),
                ]);
                books.push(row);
            }
            "trade" => trades.push(vec![
                text(&m["exchange"]),
                text(&m["market_id"]),
                text(&m["asset_id"]),
                text(&m["trade_id"]),
                text(&m["received_at"]),
                text(&m["taker_side"]),
                text(&m["outcome"]),
                // A JSON number in the replay, a four-decimal string in CSV.
                m["price"].to_string().parse::<Price>().unwrap().to_string4(),
                size6(&m["size"]),
            ]),
            other => panic!("unexpected message {other}"),
        }
    }
    (books, trades)
}

/// CSV text into its header and rows (fields in double quotes may hold commas and doubled quotes).
fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header = lines.next().expect("a header").split(',').map(str::to_string).collect();
    let rows = lines
        .map(|line| {
            let mut fields = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match (c, quoted) {
                    ('"', true) if chars.peek() == Some(&'"') => {
                        field.push('"');
                        chars.next();
                    }
                    ('"', _) => quoted = !quoted,
                    (',', false) => fields.push(std::mem::take(&mut field)),
                    (c, _) => field.push(c),
                }
            }
            fields.push(field);
            fields
        })
        .collect();
    (header, rows)
}

/// pyarrow's reading of a Parquet file: column types, and rows written as the CSV writes them.
const READ_PARQUET: &str = r#"
import json, sys, decimal
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
def text(v):
    if v is None: return ""
    if isinstance(v, bool): return "true" if v else "false"
    if hasattr(v, "strftime"): return v.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (v.microsecond // 1000)
    return str(v)
rows = [[text(v) for v in r.values()] for r in t.to_pylist()]
print(json.dumps({"types": {f.name: str(f.type) for f in t.schema}, "nullable": {f.name: f.nullable for f in t.schema}, "rows": rows}))
"#;

fn read_parquet(dir: &Path, name: &str, bytes: &[u8]) -> Value {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new("python3")
        .args(["-c", READ_PARQUET, path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pyarrow could not read {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn start(keys_out: &mut Option<Keys>) -> (Server, i64, usize, crossbook_store::testing::TestDb) {
    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    seed_catalog(&db.store).await;
    *keys_out = Some(create_keys(&db.store).await);
    // Yesterday (UTC): a whole day, recent enough for retention, which is off anyway.
    let d0 = (Timestamp::now().millis() / DAY_MS - 1) * DAY_MS;
    let rows = seed_day(&db.store, d0).await;
    let config = Config {
        retention_days: 0,
        ..Config::for_tests(&db.url)
    };
    (Server::start(config).await, d0, rows, db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_files_hold_the_rows_of_the_replay_of_the_day() {
    let mut keys = None;
    let (server, d0, seeded_rows, db) = start(&mut keys).await;
    let key = keys.unwrap().free;
    let date = date_of(d0);
    let q = format!("exchange=venue_b&market_id={MARKET}&date={date}");

    // The replay of the same day, flattened, is what both files must hold.
    let (status, _, body) = get(
        &server,
        &key,
        &format!(
            "/v1/replay?exchange=venue_b&market_id={MARKET}&start_time={d0}&end_time={}",
            d0 + DAY_MS - 1
        ),
    )
    .await;
    assert_eq!(status, 200);
    let replay: Vec<Value> = String::from_utf8(body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (book_rows, trade_rows) = flatten(&replay);
    assert_eq!(book_rows.len(), seeded_rows, "the seeded day's level rows");
    assert_eq!(trade_rows.len(), 3, "only the day's trades");

    // CSV: gzip, named, the replay's rows.
    let (status, headers, body) = get(&server, &key, &format!("/v1/export/books?{q}")).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(headers["content-type"], "application/gzip");
    assert_eq!(
        headers["content-disposition"],
        format!("attachment; filename=\"venue_b_{MARKET}_{date}_books.csv.gz\"").as_str()
    );
    let (header, rows) = parse_csv(&gunzip(&body));
    assert_eq!(
        header,
        [
            "exchange",
            "market_id",
            "asset_id",
            "seq",
            "venue_ts",
            "received_at",
            "is_snapshot",
            "side",
            "price",
            "size",
            "gap",
            "gap_end"
        ]
    );
    assert_eq!(rows, book_rows);
    // The day opens with the YES book as it stood at midnight, from the day before.
    let midnight = Timestamp::from_millis(d0).to_iso();
    assert_eq!(
        rows[..3]
            .iter()
            .map(|r| (
                r[2].as_str(),
                r[5].as_str(),
                r[6].as_str(),
                r[7].as_str(),
                r[8].as_str(),
                r[9].as_str()
            ))
            .collect::<Vec<_>>(),
        [
            (YES, midnight.as_str(), "true", "bid", "0.4000", "10.000000"),
            (YES, midnight.as_str(), "true", "bid", "0.3900", "5.000000"),
            (YES, midnight.as_str(), "true", "ask", "0.4200", "7.000000"),
        ]
    );
    let gap = rows.iter().find(|r| !r[10].is_empty()).expect("a gap row");
    assert_eq!(
        (gap[5].as_str(), gap[7].as_str(), gap[10].as_str(), gap[11].as_str()),
        (
            Timestamp::from_millis(d0 + 200_000).to_iso().as_str(),
            "",
            "disconnect",
            Timestamp::from_millis(d0 + 260_000).to_iso().as_str()
        ),
        "the gap, with when the book was whole again"
    );
    let (status, headers, body) = get(&server, &key, &format!("/v1/export/trades?{q}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        headers["content-disposition"],
        format!("attachment; filename=\"venue_b_{MARKET}_{date}_trades.csv.gz\"").as_str()
    );
    let (header, rows) = parse_csv(&gunzip(&body));
    assert_eq!(header[3], "trade_id");
    assert_eq!(rows, trade_rows);
    assert_eq!(rows[1][3], "t2, \"quoted\"", "a field with a comma and quotes survives");
    assert_eq!(
        (rows[1][2].as_str(), rows[1][6].as_str()),
        (NO, "NO"),
        "a NO trade is on the NO token"
    );

    // Parquet, read by pyarrow: typed columns, the same rows.
    if python_with("pyarrow", "CI reads the Parquet files with pyarrow") {
        let dir = tempfile_dir();
        let (status, headers, body) = get(&server, &key, &format!("/v1/export/books?{q}&format=parquet")).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "application/vnd.apache.parquet");
        let read = read_parquet(&dir, "books.parquet", &body);
        let types = &read["types"];
        for (column, ty) in [
            ("exchange", "string"),
            ("asset_id", "string"),
            ("seq", "int64"),
            ("venue_ts", "timestamp[ms, tz=UTC]"),
            ("received_at", "timestamp[ms, tz=UTC]"),
            ("is_snapshot", "bool"),
            ("price", "decimal128(18, 4)"),
            ("size", "decimal128(18, 6)"),
            ("gap_end", "timestamp[ms, tz=UTC]"),
        ] {
            assert_eq!(types[column], ty, "{column}: {types}");
        }
        assert_eq!(read["nullable"]["received_at"], false);
        assert_eq!(read["nullable"]["price"], true, "gap rows have no price");
        let rows: Vec<Vec<String>> = serde_json::from_value(read["rows"].clone()).unwrap();
        assert_eq!(rows, book_rows, "pyarrow reads the rows of the log");

        let (_, _, body) = get(&server, &key, &format!("/v1/export/trades?{q}&format=parquet")).await;
        let read = read_parquet(&dir, "trades.parquet", &body);
        assert_eq!(read["types"]["executed_at"], "timestamp[ms, tz=UTC]");
        assert_eq!(read["types"]["price"], "decimal128(18, 4)");
        let rows: Vec<Vec<String>> = serde_json::from_value(read["rows"].clone()).unwrap();
        assert_eq!(rows, trade_rows);

        // A day with no data: the columns and no rows.
        let empty = format!("exchange=venue_b&market_id={MARKET}&date=2020-01-01&format=parquet");
        let (status, _, body) = get(&server, &key, &format!("/v1/export/books?{empty}")).await;
        assert_eq!(status, 200);
        let read = read_parquet(&dir, "empty.parquet", &body);
        assert_eq!(read["rows"].as_array().unwrap().len(), 0);
        assert_eq!(read["types"].as_object().unwrap().len(), 12, "every column");
        let _ = std::fs::remove_dir_all(&dir);
    }
    let (status, _, body) = get(
        &server,
        &key,
        &format!("/v1/export/trades?exchange=venue_b&market_id={MARKET}&date=2020-01-01"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        gunzip(&body),
        "exchange,market_id,asset_id,trade_id,executed_at,taker_side,outcome,price,size\n",
        "an empty day is the header alone"
    );

    server.stop().await.unwrap();
    db.cleanup().await;
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("crossbook-export-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn uuid_like() -> String {
    // Tests run in parallel in one process: a counter keeps their folders apart.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{}-{n}", std::process::id(), Timestamp::now().millis())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_export_requests_name_the_parameter() {
    let mut keys = None;
    let (server, d0, _, db) = start(&mut keys).await;
    let key = keys.unwrap().free;
    let date = date_of(d0);
    for (query, status, param) in [
        (
            format!("exchange=venue_b&market_id={MARKET}&date={date}&format=xlsx"),
            400,
            Some("format"),
        ),
        (
            format!("exchange=venue_b&market_id={MARKET}&date=2026-02-30"),
            400,
            Some("date"),
        ),
        (
            format!("exchange=venue_b&market_id={MARKET}&date=20261124"),
            400,
            Some("date"),
        ),
        (format!("exchange=venue_b&market_id={MARKET}"), 400, Some("date")),
        (
            format!("exchange=venue_c&market_id={MARKET}&date={date}"),
            400,
            Some("exchange"),
        ),
        (format!("market_id={MARKET}&date={date}"), 400, Some("exchange")),
        (format!("exchange=venue_b&market_id=0xnope&date={date}"), 404, None),
    ] {
        for table in ["books", "trades"] {
            let (got, headers, body) = get(&server, &key, &format!("/v1/export/{table}?{query}")).await;
            let body: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(got, status, "{table}?{query}: {body}");
            assert!(
                headers["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with("application/json")
            );
            if let Some(p) = param {
                assert_eq!(body["param"], p, "{table}?{query}: {body}");
            }
        }
    }
    let r = client()
        .get(server.url(&format!(
            "/v1/export/books?exchange=venue_b&market_id={MARKET}&date={date}"
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "exports need a key");
    server.stop().await.unwrap();
    db.cleanup().await;
}

/// The one-line loaders of the historical-data guide's block marked `<!-- examples: loaders -->`.
fn documented_loaders() -> Vec<String> {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/historical-data.md")).unwrap();
    let block = guide
        .split("<!-- examples: loaders -->")
        .nth(1)
        .expect("the guide's loaders block");
    let block = block.split("```").nth(1).expect("a fenced block after the marker");
    block
        .lines()
        .filter(|l| l.starts_with("python3 -c "))
        .map(str::to_string)
        .collect()
}

/// Every loader line of the historical-data guide, run on the seeded venue_b day's files (saved under the
/// names the guide gives them): the 78-digit token ids come back whole, as text, and the replay's gap is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_loaders_keep_venue_b_ids_as_text() {
    let why = "CI runs the documented data loaders";
    if !(python_with("pandas", why) & python_with("polars", why) & python_with("duckdb", why)) {
        return;
    }
    let loaders = documented_loaders();
    assert!(loaders.len() >= 5, "the loaders block: {loaders:?}");
    let mut keys = None;
    let (server, d0, _, db) = start(&mut keys).await;
    let key = keys.unwrap().free;
    let q = format!("exchange=venue_b&market_id={MARKET}&date={}", date_of(d0));
    let dir = tempfile_dir();
    for (name, path) in [
        ("books.csv.gz", format!("/v1/export/books?{q}")),
        ("trades.csv.gz", format!("/v1/export/trades?{q}")),
        ("books.parquet", format!("/v1/export/books?{q}&format=parquet")),
        (
            "replay.ndjson",
            format!(
                "/v1/replay?market_id=venue_b:{MARKET}&start_time={d0}&end_time={}",
                d0 + DAY_MS - 1
            ),
        ),
    ] {
        let (status, _, body) = get(&server, &key, &path).await;
        assert_eq!(status, 200, "{path}");
        std::fs::write(dir.join(name), body).unwrap();
    }

    for line in &loaders {
        let out = std::process::Command::new("sh")
            .args(["-c", line])
            .current_dir(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{line}\nfailed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if line.contains("asset_id") {
            assert!(stdout.contains(YES), "{line}\nlost the YES token id: {stdout}");
            assert!(!stdout.contains("e+"), "{line}\nread an id as a number: {stdout}");
        }
        if line.contains("trades.csv.gz") {
            assert!(stdout.contains(NO), "{line}\nlost the NO token id: {stdout}");
        }
        if line.contains("outcome") {
            assert!(
                stdout.contains("'NO'"),
                "{line}\nread outcome as other than text: {stdout}"
            );
        }
        if line.contains("read_ndjson") {
            // The seeded gap is past the first hundred lines: a schema guessed from them loses its fields.
            assert!(
                stdout.contains("'cause': 'disconnect'"),
                "{line}\nlost the gap: {stdout}"
            );
        }
    }

    let _ = std::fs::remove_dir_all(&dir);
    server.stop().await.unwrap();
    db.cleanup().await;
}
