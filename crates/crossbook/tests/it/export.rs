//! `crossbook export` against a seeded SQLite file: it writes the day's file under the name asked for (and
//! nothing under a `.partial` name), the same rows the export route serves; a bad date is a usage error naming
//! `--date`; an unknown market names the market and leaves no file.

use std::{io::Read as _, process::Command};

use crossbook_core::{
    Amount, Exchange, Market, Outcome, Price, TakerSide, Timestamp, Trade,
    book::{BookChange, BookEvent, BookKey, Level},
};
use crossbook_store::LogRun;

const MARKET: &str = "KXEXPORT-26NOV24-T1";
const DAY_MS: i64 = 86_400_000;

fn crossbook(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args(args)
        .env_remove("CROSSBOOK_DATABASE_URL")
        .env_remove("CROSSBOOK_LOG")
        .output()
        .expect("run crossbook")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_the_days_file_from_the_database() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let d0 = (Timestamp::now().millis() / DAY_MS - 1) * DAY_MS;
    let date = Timestamp::from_millis(d0).to_iso()[..10].to_string();
    db.store
        .upsert_markets(
            &[Market::new(
                Exchange::VenueA,
                MARKET,
                "KXEXPORT-26NOV24",
                "KXEXPORT",
                "Export?",
            )],
            Timestamp::now(),
        )
        .await
        .unwrap();
    let key = BookKey::venue_a(MARKET);
    let id = db.store.register_log_books(std::slice::from_ref(&key)).await.unwrap()[0].id;
    let level = |cents, units| Level {
        price: Price::from_cents(cents),
        size: Amount::from_units(units),
    };
    db.store
        .append_log(&[LogRun {
            book_id: id,
            events: vec![BookEvent {
                seq: 1,
                venue_seq: None,
                venue_ts: None,
                received_at: Timestamp::from_millis(d0 + 1_000),
                change: BookChange::Snapshot {
                    bids: vec![level(40, 10)],
                    asks: vec![],
                    no_bids: vec![level(55, 3), level(54, 1)],
                },
            }],
        }])
        .await
        .unwrap();
    let trade = |id: &str, at: i64| Trade {
        exchange: Exchange::VenueA,
        source_trade_id: id.into(),
        market_id: MARKET.into(),
        event_id: "KXEXPORT-26NOV24".into(),
        executed_at: Timestamp::from_millis(at),
        taker_side: TakerSide::Sell,
        outcome: Outcome::Yes,
        price: Price::from_cents(40),
        size: Amount::from_units(2),
    };
    db.store
        .insert_trades(&[trade("a", d0 + 10), trade("b", d0 + 20), trade("next-day", d0 + DAY_MS)])
        .await
        .unwrap();

    let dir = std::env::temp_dir().join(format!("crossbook-export-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("trades.csv.gz");
    let o = crossbook(&[
        "export",
        "--data",
        "trades",
        "--exchange",
        "venue_a",
        "--market",
        MARKET,
        "--date",
        &date,
        "--out",
        out.to_str().unwrap(),
        "--database-url",
        &db.url,
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&o.stdout).starts_with(&format!("wrote {}", out.display())));
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&out).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let iso = |ms: i64| Timestamp::from_millis(ms).to_iso();
    assert_eq!(
        text,
        format!(
            "exchange,market_id,asset_id,trade_id,executed_at,taker_side,outcome,price,size\n\
             venue_a,{MARKET},,a,{},sell,YES,0.4000,2.000000\n\
             venue_a,{MARKET},,b,{},sell,YES,0.4000,2.000000\n",
            iso(d0 + 10),
            iso(d0 + 20)
        )
    );

    // Books to Parquet, under the default name in the working directory.
    let o = Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args([
            "export",
            "--exchange",
            "venue_a",
            "--market",
            MARKET,
            "--date",
            &date,
            "--format",
            "parquet",
            "--database-url",
            &db.url,
        ])
        .env_remove("CROSSBOOK_DATABASE_URL")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = dir.join(format!("venue_a_{MARKET}_{date}_books.parquet"));
    let bytes = std::fs::read(&file).unwrap();
    assert!(
        bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "a whole Parquet file"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".partial")), "{names:?}");

    // Mistakes: a date that is not a day (usage, exit 2), a market not in the catalog (exit 1, no file).
    let o = crossbook(&[
        "export",
        "--exchange",
        "venue_a",
        "--market",
        MARKET,
        "--date",
        "2026-13-01",
        "--database-url",
        &db.url,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--date"));
    let missing = dir.join("missing.csv.gz");
    let o = crossbook(&[
        "export",
        "--exchange",
        "venue_a",
        "--market",
        "KXNOPE",
        "--date",
        &date,
        "--out",
        missing.to_str().unwrap(),
        "--database-url",
        &db.url,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no market KXNOPE on venue_a"), "{e}");
    assert!(!missing.exists() && !dir.join("missing.csv.gz.partial").exists());
    let _ = std::fs::remove_dir_all(&dir);
    db.cleanup().await;
}
