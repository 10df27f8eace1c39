//! `crossbook pairs add|list|remove|reject|unreject` against a real SQLite file: the overrides land in the store the scanner
//! reads, conflicts and unknown ids fail with exit code 1 and a one-line reason.

use std::process::{Command, Output};

use crossbook_core::{Exchange, Market, Timestamp};

fn run(db: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args(args)
        .env("CROSSBOOK_DATABASE_URL", db)
        .env("CROSSBOOK_LOG", "warn")
        .output()
        .expect("run crossbook")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test]
async fn pairs_add_list_remove() {
    let db = crossbook_store::testing::sqlite_database().await;
    let url = db.url.clone();

    let o = run(&url, &["pairs", "add", "KXELECT-26-YES", "0xabc", "--allow-unknown"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("paired venue_a KXELECT-26-YES with venue_b 0xabc"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not in the catalog yet"));

    // Either market already paired: refused, exit 1, the reason on the last line (after the database and
    // the notes).
    let o = run(&url, &["pairs", "add", "KXELECT-26-YES", "0xdef", "--allow-unknown"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.trim().lines().last().unwrap().contains("already in an override"),
        "{err}"
    );

    let o = run(&url, &["pairs", "list"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.starts_with("KXELECT-26-YES") && l.contains("0xabc")),
        "{out}"
    );

    let overrides = db.store.pair_overrides().await.unwrap();
    assert_eq!(overrides.len(), 1);
    assert_eq!(overrides[0].pair.venue_b_market_id, "0xabc");

    let o = run(&url, &["pairs", "remove", "0xabc"]);
    assert!(o.status.success(), "{o:?}");
    assert!(db.store.pair_overrides().await.unwrap().is_empty());
    let o = run(&url, &["pairs", "remove", "0xabc"]);
    assert_eq!(o.status.code(), Some(1));

    // Missing arguments are bad usage.
    let o = run(&url, &["pairs", "add", "ONLY-ONE"]);
    assert_eq!(o.status.code(), Some(2));
    db.cleanup().await;
}

#[tokio::test]
async fn pairs_reject_list_unreject() {
    let db = crossbook_store::testing::sqlite_database().await;
    let url = db.url.clone();
    let reject = [
        "pairs",
        "reject",
        "--venue-a",
        "KXNBAGAME-1-AUS",
        "--venue-b",
        "0xpor",
        "--allow-unknown",
    ];

    let o = run(
        &url,
        &[&reject[..], &["--reason", "YES backs different teams"]].concat(),
    );
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("rejected venue_a KXNBAGAME-1-AUS with venue_b 0xpor"));
    // Again: not an error, the reason is replaced.
    let o = run(&url, &[&reject[..], &["--reason", "inverted"]].concat());
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("already rejected"));
    let r = db.store.pair_rejections().await.unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (
            r[0].pair.venue_a_market_id.as_str(),
            r[0].pair.venue_b_market_id.as_str()
        ),
        ("KXNBAGAME-1-AUS", "0xpor")
    );
    assert_eq!(r[0].reason.as_deref(), Some("inverted"));

    let o = run(&url, &["pairs", "list"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.starts_with("KXNBAGAME-1-AUS") && l.contains("0xpor") && l.ends_with("inverted")),
        "{out}"
    );

    let unreject = [
        "pairs",
        "unreject",
        "--venue-a",
        "KXNBAGAME-1-AUS",
        "--venue-b",
        "0xpor",
    ];
    let o = run(&url, &unreject);
    assert!(o.status.success(), "{o:?}");
    assert!(db.store.pair_rejections().await.unwrap().is_empty());
    // Nothing left to lift: exit 1, the reason on the last line (after the database the command opened).
    let o = run(&url, &[&unreject[..], &["--allow-unknown"]].concat());
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.trim().lines().last().unwrap().ends_with("is not rejected"), "{err}");

    // Both ids are required: bad usage.
    let o = run(&url, &["pairs", "reject", "--venue-a", "KX-ONLY"]);
    assert_eq!(o.status.code(), Some(2));
    db.cleanup().await;
}

#[tokio::test]
async fn an_id_no_market_of_its_venue_has_is_bad_usage_unless_allowed() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let (a, b) = ("KXNBAGAME-1-AUS", "0xaus");
    db.store
        .upsert_markets(
            &[
                Market::new(Exchange::VenueA, a, "KXNBAGAME-1", "KXNBAGAME", "Austin?"),
                Market::new(Exchange::VenueB, b, "nba-1", "nba", "Austin?"),
            ],
            Timestamp::now(),
        )
        .await
        .unwrap();
    let url = db.url.clone();
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    // Each venue's id is looked up in that venue: a venue_b id given as the venue_a one is unknown too.
    for (args, id, venue) in [
        (vec!["pairs", "add", "null", "null"], "null", "venue_a"),
        (vec!["pairs", "add", a, "null"], "null", "venue_b"),
        (vec!["pairs", "add", b, a], b, "venue_a"),
        (
            vec!["pairs", "reject", "--venue-a", a, "--venue-b", "0xnope"],
            "0xnope",
            "venue_b",
        ),
        (
            vec!["pairs", "unreject", "--venue-a", "null", "--venue-b", b],
            "null",
            "venue_a",
        ),
    ] {
        let o = run(&url, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let last = stderr(&o).trim().lines().last().unwrap_or("").to_string();
        assert!(
            last.contains(&format!("no {venue} market has the id \"{id}\"")) && last.contains("--allow-unknown"),
            "{args:?}: {last}"
        );
    }
    assert!(db.store.pair_overrides().await.unwrap().is_empty());
    assert!(db.store.pair_rejections().await.unwrap().is_empty());

    // Known ids need no flag; an unknown one is stored with it, and a note says it waits for the catalog.
    let o = run(&url, &["pairs", "add", a, b]);
    assert!(o.status.success(), "{o:?}");
    assert!(!stderr(&o).contains("not in the catalog"), "{}", stderr(&o));
    let o = run(
        &url,
        &[
            "pairs",
            "reject",
            "--venue-a",
            "KX-SOON",
            "--venue-b",
            b,
            "--allow-unknown",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    assert!(
        stderr(&o).contains("KX-SOON is not in the catalog yet"),
        "{}",
        stderr(&o)
    );
    assert_eq!(db.store.pair_overrides().await.unwrap().len(), 1);
    assert_eq!(db.store.pair_rejections().await.unwrap().len(), 1);
    db.cleanup().await;
}
