//! `crossbook pairs add|list|remove|reject|unreject` against a real SQLite file: the overrides land in the store the scanner
//! reads, conflicts and unknown ids fail with exit code 1 and a one-line reason.

use std::process::{Command, Output};

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

    let o = run(&url, &["pairs", "add", "KXELECT-26-YES", "0xabc"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("paired venue_a KXELECT-26-YES with venue_b 0xabc"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not in the catalog yet"));

    // Either market already paired: refused, exit 1, one line.
    let o = run(&url, &["pairs", "add", "KXELECT-26-YES", "0xdef"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1);

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
    let reject = ["pairs", "reject", "--venue-a", "KXNBAGAME-1-AUS", "--venue-b", "0xpor"];

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
    let o = run(&url, &unreject);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.trim().lines().last().unwrap().ends_with("is not rejected"), "{err}");

    // Both ids are required: bad usage.
    let o = run(&url, &["pairs", "reject", "--venue-a", "KX-ONLY"]);
    assert_eq!(o.status.code(), Some(2));
    db.cleanup().await;
}
