//! The storage conformance suite: every test body runs against SQLite (a fresh file) and PostgreSQL (a fresh
//! database on the server named by `CROSSBOOK_TEST_DATABASE_URL`; skipped with a message when unset, a failure
//! when `CI=true`).
//!
//! The harness is the library's `testing` module, included by path so that the suite runs with or without the
//! `testing` feature.

use std::{sync::Arc, time::Instant};

use crate::testing::{self, TestDb, for_each_backend};
use crossbook_core::{
    Amount, BookSnapshot, Event, Exchange, IntervalCode, Level, Market, Outcome, Plan, Price, Series, Status,
    TakerSide, Timestamp, Trade,
};
use crossbook_store::{
    BookHistoryQuery, EventQuery, EventSort, HistoryWindow, MarketQuery, MarketSort, RecentQuery, SeriesQuery,
    SeriesSort, Store, StoreError, StoredMarket, accounts::hash_key, postgres::PgStore, sqlite::SqliteStore,
};
use sqlx::Connection as _;

const A: Exchange = Exchange::VenueA;
const B: Exchange = Exchange::VenueB;

/// A fixed origin so tests do not depend on the clock.
fn at(secs: i64) -> Timestamp {
    Timestamp::from_millis(1_763_000_000_000 + secs * 1000)
}

fn units(u: i64) -> Amount {
    Amount::from_units(u)
}

fn market(ex: Exchange, id: &str, event: &str, question: &str) -> Market {
    Market::new(ex, id, event, "SER", question)
}

fn titled(ex: Exchange, id: &str, title: &str, volume: i64) -> Market {
    Market {
        title: Some(title.into()),
        volume: units(volume),
        ..market(ex, id, "EV", &format!("Question {id}"))
    }
}

/// A market search with the server's defaults: status active, relevance when `q` is set, newest otherwise.
fn mq(q: Option<&str>) -> MarketQuery {
    MarketQuery {
        q: q.map(str::to_string),
        series_id: None,
        event_id: None,
        exchange: None,
        category: None,
        status: Status::Active,
        min_volume: None,
        min_liquidity: None,
        discovered_after: None,
        settled_after: None,
        settled_before: None,
        sort: if q.is_some() {
            MarketSort::Relevance
        } else {
            MarketSort::Newest
        },
        limit: 100,
        offset: 0,
    }
}

fn eq(q: Option<&str>) -> EventQuery {
    EventQuery {
        q: q.map(str::to_string),
        series_id: None,
        exchange: None,
        category: None,
        status: Status::Active,
        min_volume: None,
        discovered_after: None,
        sort: if q.is_some() {
            EventSort::Relevance
        } else {
            EventSort::Newest
        },
        limit: 100,
        offset: 0,
    }
}

fn sq(q: Option<&str>) -> SeriesQuery {
    SeriesQuery {
        q: q.map(str::to_string),
        exchange: None,
        category: None,
        status: Status::Active,
        sort: SeriesSort::Title,
        limit: 100,
        offset: 0,
    }
}

fn ids(v: &[StoredMarket]) -> Vec<&str> {
    v.iter().map(|m| m.market.market_id.as_str()).collect()
}

async fn search(db: &TestDb, q: &MarketQuery) -> Vec<String> {
    let found = db
        .store
        .search_markets(q)
        .await
        .unwrap_or_else(|e| panic!("{} search {q:?}: {e}", db.backend()));
    ids(&found).into_iter().map(str::to_string).collect()
}

#[tokio::test]
async fn migrations_apply_on_an_empty_database_and_again_without_harm() {
    for db in testing::empty_test_databases().await {
        db.store.migrate().await.unwrap();
        db.store.migrate().await.unwrap();
        db.store.ping().await.unwrap();
        // Every table exists and is empty.
        assert!(db.store.list_keys().await.unwrap().is_empty());
        assert!(db.store.search_markets(&mq(Some("anything"))).await.unwrap().is_empty());
        assert!(db.store.search_events(&eq(Some("x"))).await.unwrap().is_empty());
        assert!(db.store.search_series(&sq(None)).await.unwrap().is_empty());
        assert!(db.store.insert_trades(&[]).await.unwrap().is_empty());
        db.store.insert_snapshots(&[]).await.unwrap();
        db.cleanup().await;
    }
}

#[tokio::test]
async fn market_fields_round_trip_and_venue_b_ids_stay_strings() {
    for_each_backend(async |db| {
        let token = "71321045679252212594626385532706912750332728571942532289631379312455583992563";
        let m = Market {
            title: Some("BTC above 100k".into()),
            subtitle: Some("Dec 31".into()),
            description: Some("Resolves YES if …".into()),
            slug: Some("btc-above-100k".into()),
            url: Some("https://example.com/m".into()),
            category: Some("crypto".into()),
            interval_code: Some(IntervalCode::H1),
            window_start: Some(at(0)),
            window_end: Some(at(3600)),
            volume: Amount::from_micros(123_456_789),
            volume_24h: units(7),
            liquidity: units(8),
            open_interest: units(9),
            last_yes_price: Some(Price::from_micros(530_000)),
            last_no_price: Some(Price::from_micros(470_001)),
            source_id: Some("516710".into()),
            yes_token_id: Some(token.into()),
            no_token_id: Some(format!("{token}9")),
            ..market(B, "0xabc", "ev-1", "Will BTC close above 100k?")
        };
        db.store.upsert_markets(std::slice::from_ref(&m), at(5)).await.unwrap();
        let got = db.store.get_market(B, "0xabc").await.unwrap().expect("by condition id");
        assert_eq!(got.market, m);
        assert_eq!(got.discovered_at, at(5));
        let by_source = db
            .store
            .get_market(B, "516710")
            .await
            .unwrap()
            .expect("by numeric source id");
        assert_eq!(by_source.market.market_id, "0xabc");
        assert!(db.store.get_market(A, "0xabc").await.unwrap().is_none());
        assert_eq!(db.store.active_markets().await.unwrap(), vec![m]);
    })
    .await;
}

#[tokio::test]
async fn upserts_keep_discovered_at_and_follow_everything_else() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        s.upsert_series(&[Series::new(A, "SER", "First title")], at(1))
            .await
            .unwrap();
        s.upsert_events(&[Event::new(A, "EV", "SER", "Event v1")], at(1))
            .await
            .unwrap();
        s.upsert_markets(&[titled(A, "M1", "Old title", 1)], at(1))
            .await
            .unwrap();

        let closed = Market {
            status: Status::Closed,
            settled_at: Some(at(90)),
            title: Some("New title".into()),
            volume: units(42),
            ..titled(A, "M1", "", 0)
        };
        s.upsert_series(
            &[Series {
                status: Status::Closed,
                ..Series::new(A, "SER", "Second title")
            }],
            at(2),
        )
        .await
        .unwrap();
        s.upsert_events(
            &[Event {
                status: Status::Closed,
                ..Event::new(A, "EV", "SER", "Event v2")
            }],
            at(2),
        )
        .await
        .unwrap();
        s.upsert_markets(std::slice::from_ref(&closed), at(2)).await.unwrap();

        let m = s.get_market(A, "M1").await.unwrap().unwrap();
        assert_eq!(m.discovered_at, at(1), "discovered_at is the first sighting");
        assert_eq!(m.market, closed, "every other field follows the latest upsert");

        // And back to active: settled_at follows too (the venue cleared it).
        s.upsert_markets(&[titled(A, "M1", "Reopened", 3)], at(3))
            .await
            .unwrap();
        let m = s.get_market(A, "M1").await.unwrap().unwrap();
        assert_eq!(
            (m.market.status, m.market.settled_at, m.discovered_at),
            (Status::Active, None, at(1))
        );

        let e = s.get_event(A, "EV").await.unwrap().unwrap();
        assert_eq!(
            (e.event.title.as_str(), e.event.status, e.discovered_at),
            ("Event v2", Status::Closed, at(1))
        );
        let series = s
            .search_series(&SeriesQuery {
                status: Status::Closed,
                ..sq(None)
            })
            .await
            .unwrap();
        assert_eq!(series.len(), 1);
        assert_eq!(
            (series[0].series.title.as_str(), series[0].discovered_at),
            ("Second title", at(1))
        );

        // Text search follows renamed fields (the text index is kept in sync).
        assert!(search(db, &mq(Some("old title"))).await.is_empty());
        assert_eq!(search(db, &mq(Some("reopen"))).await, ["M1"]);

        // A batch naming a market twice keeps its last state.
        s.upsert_markets(&[titled(A, "M2", "first", 1), titled(A, "M2", "second", 2)], at(4))
            .await
            .unwrap();
        assert_eq!(
            s.get_market(A, "M2").await.unwrap().unwrap().market.title.as_deref(),
            Some("second")
        );
    })
    .await;
}

/// Markets for the relevance cases, with `q = "btcx"`.
fn relevance_fixture() -> Vec<Market> {
    vec![
        Market {
            volume: units(1),
            ..market(A, "btcX", "EV", "Something else")
        }, // exact id (case-insensitive)
        titled(A, "P-LOW", "Btcx rally", 5),     // title prefix
        titled(A, "P-HIGH", "btcx to 100k", 50), // title prefix, more volume
        Market {
            volume: units(3),
            ..market(B, "0xq", "EV", "BTCX up or down?")
        }, // no title: question is the headline
        titled(A, "S-B", "Will BTCX rise", 100), // title substring, volume tie…
        titled(B, "S-A", "Will btcx fall", 100), // …broken by id
        Market {
            description: Some("mentions btcx".into()),
            ..titled(A, "O-DESC", "Unrelated", 1000)
        },
        Market {
            slug: Some("the-btcx-slug".into()),
            ..titled(A, "O-SLUG", "Unrelated", 10)
        },
        Market {
            subtitle: Some("BTCX".into()),
            ..titled(B, "O-SUB", "Unrelated", 10)
        },
        titled(A, "NONE", "nothing here", 10_000),
    ]
}

#[tokio::test]
async fn market_relevance_is_exact_id_then_prefix_then_substring_then_other_field() {
    for_each_backend(async |db| {
        db.store.upsert_markets(&relevance_fixture(), at(0)).await.unwrap();
        let expected = [
            "btcX", "P-HIGH", "P-LOW", "0xq", "S-A", "S-B", "O-DESC", "O-SLUG", "O-SUB",
        ];
        assert_eq!(search(db, &mq(Some("btcx"))).await, expected);
        // Case-insensitive everywhere, the exact id included.
        assert_eq!(search(db, &mq(Some("BTCX"))).await, expected);
        // A market id matched only as a substring is an "other field" match.
        assert_eq!(search(db, &mq(Some("o-des"))).await, ["O-DESC"]);
        // Short needles take the scan path and rank the same way.
        assert_eq!(search(db, &mq(Some("0X"))).await, ["0xq"]);
    })
    .await;
}

#[tokio::test]
async fn several_words_match_each_word_and_rank_the_whole_phrase_first() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        s.upsert_markets(
            &[
                Market {
                    interval_code: Some(IntervalCode::M15),
                    ..titled(A, "BTC-WORDS", "BTC up or down in 15 minutes", 10)
                },
                titled(A, "BTC-PHRASE", "Will btc 15m close up?", 1),
                titled(A, "NBA", "Boston Celtics vs Phoenix Suns", 100),
                titled(A, "RATES-HEAD", "Fed rates hike", 1),
                Market {
                    description: Some("About fed rates.".into()),
                    ..titled(A, "RATES-DESC", "Unrelated", 5)
                },
                Market {
                    subtitle: Some("Will rates rise?".into()),
                    ..titled(A, "RATES-WORDS", "Fed decision", 50)
                },
                titled(A, "FED-ONLY", "Fed chair", 500),
            ],
            at(0),
        )
        .await
        .unwrap();
        // Every word matches somewhere, in any order and field; the interval code counts for a word.
        assert_eq!(search(db, &mq(Some("btc 15m"))).await, ["BTC-PHRASE", "BTC-WORDS"]);
        assert_eq!(search(db, &mq(Some("boston phoenix"))).await, ["NBA"]);
        assert_eq!(search(db, &mq(Some("  Phoenix   BOSTON "))).await, ["NBA"]);
        assert!(search(db, &mq(Some("boston lakers"))).await.is_empty());
        // Whole-phrase matches (headline prefix, other field) before rows holding only the separate words.
        assert_eq!(
            search(db, &mq(Some("fed rates"))).await,
            ["RATES-HEAD", "RATES-DESC", "RATES-WORDS"]
        );
        // Words of 1–2 characters, which trigrams cannot index, match as substrings too.
        assert_eq!(search(db, &mq(Some("celtics vs"))).await, ["NBA"]);
        assert_eq!(search(db, &mq(Some("vs su"))).await, ["NBA"]);
        // The other sorts apply to the same matches.
        assert_eq!(
            search(
                db,
                &MarketQuery {
                    sort: MarketSort::Volume,
                    ..mq(Some("fed rates"))
                }
            )
            .await,
            ["RATES-WORDS", "RATES-DESC", "RATES-HEAD"]
        );

        s.upsert_events(
            &[
                Event {
                    subtitle: Some("Rates in December".into()),
                    ..Event::new(A, "FED-DEC", "FED", "Fed decision")
                },
                Event::new(A, "FED-RATES", "FED", "Fed rates in 2026"),
                Event::new(A, "NBA-1", "NBA", "Celtics game"),
            ],
            at(1),
        )
        .await
        .unwrap();
        s.upsert_markets(&[market(A, "NBA-1-BOS", "NBA-1", "Will Boston win?")], at(1))
            .await
            .unwrap();
        let events = async |q: &str| -> Vec<String> {
            s.search_events(&eq(Some(q)))
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.event.event_id)
                .collect()
        };
        assert_eq!(events("fed rates").await, ["FED-RATES", "FED-DEC"]);
        // One word in the title, the other in a market's question.
        assert_eq!(events("celtics boston").await, ["NBA-1"]);
        assert_eq!(events("game bo").await, ["NBA-1"]);
        assert!(events("fed lakers").await.is_empty());

        s.upsert_series(&[Series::new(A, "KXBTC15M", "Bitcoin 15 minute")], at(1))
            .await
            .unwrap();
        let series = s.search_series(&sq(Some("bitcoin 15"))).await.unwrap();
        assert_eq!(series.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn market_sorts_and_pagination() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        for (i, m) in relevance_fixture().into_iter().enumerate() {
            let m = Market {
                liquidity: units(100 - i as i64),
                ..m
            };
            s.upsert_markets(&[m], at(i as i64)).await.unwrap();
        }
        let q = mq(Some("btcx"));
        let by = |sort| MarketQuery { sort, ..q.clone() };
        assert_eq!(
            search(db, &by(MarketSort::Newest)).await,
            [
                "O-SUB", "O-SLUG", "O-DESC", "S-A", "S-B", "0xq", "P-HIGH", "P-LOW", "btcX"
            ]
        );
        assert_eq!(
            search(db, &by(MarketSort::Volume)).await,
            [
                "O-DESC", "S-A", "S-B", "P-HIGH", "O-SLUG", "O-SUB", "P-LOW", "0xq", "btcX"
            ]
        );
        assert_eq!(
            search(db, &by(MarketSort::Liquidity)).await,
            [
                "btcX", "P-LOW", "P-HIGH", "0xq", "S-B", "S-A", "O-DESC", "O-SLUG", "O-SUB"
            ]
        );
        // Pages are slices of the full order.
        let full = search(db, &q).await;
        let mut paged = Vec::new();
        for offset in (0..12).step_by(4) {
            paged.extend(
                search(
                    db,
                    &MarketQuery {
                        limit: 4,
                        offset,
                        ..q.clone()
                    },
                )
                .await,
            );
        }
        assert_eq!(paged, full);
        assert!(search(db, &MarketQuery { offset: 9, ..q.clone() }).await.is_empty());
        // Without q: newest first.
        let all = search(
            db,
            &MarketQuery {
                series_id: Some("SER".into()),
                ..mq(None)
            },
        )
        .await;
        assert_eq!(all.first().map(String::as_str), Some("NONE"));
        assert_eq!(all.len(), 10);
    })
    .await;
}

#[tokio::test]
async fn market_filters() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let base = |id: &str| Market {
            title: Some(format!("Filter case {id}")),
            ..market(A, id, "EV", "q")
        };
        s.upsert_markets(
            &[
                Market {
                    category: Some("crypto".into()),
                    volume: units(10),
                    liquidity: units(1),
                    ..base("A1")
                },
                Market {
                    exchange: B,
                    category: Some("sports".into()),
                    volume: units(20),
                    liquidity: units(5),
                    ..base("B1")
                },
                Market {
                    status: Status::Closed,
                    settled_at: Some(at(100)),
                    series_id: "OTHER".into(),
                    event_id: "EV2".into(),
                    ..base("C1")
                },
                Market {
                    status: Status::Closed,
                    settled_at: Some(at(200)),
                    ..base("C2")
                },
                Market {
                    status: Status::Closed,
                    ..base("C3")
                },
            ],
            at(10),
        )
        .await
        .unwrap();
        s.upsert_markets(
            &[Market {
                volume: units(30),
                ..base("LATE")
            }],
            at(50),
        )
        .await
        .unwrap();

        let q = MarketQuery {
            sort: MarketSort::Volume,
            ..mq(Some("filter case"))
        };
        let check = async |q: MarketQuery, expected: &[&str]| assert_eq!(search(db, &q).await, expected, "{q:?}");
        check(q.clone(), &["LATE", "B1", "A1"]).await;
        check(
            MarketQuery {
                exchange: Some(B),
                ..q.clone()
            },
            &["B1"],
        )
        .await;
        check(
            MarketQuery {
                category: Some("crypto".into()),
                ..q.clone()
            },
            &["A1"],
        )
        .await;
        check(
            MarketQuery {
                category: Some("Crypto".into()),
                ..q.clone()
            },
            &[],
        )
        .await;
        check(
            MarketQuery {
                min_volume: Some(units(20)),
                ..q.clone()
            },
            &["LATE", "B1"],
        )
        .await;
        check(
            MarketQuery {
                min_liquidity: Some(units(5)),
                ..q.clone()
            },
            &["B1"],
        )
        .await;
        check(
            MarketQuery {
                discovered_after: Some(at(50)),
                ..q.clone()
            },
            &["LATE"],
        )
        .await;
        let closed = MarketQuery {
            status: Status::Closed,
            sort: MarketSort::Newest,
            ..q.clone()
        };
        check(closed.clone(), &["C1", "C2", "C3"]).await;
        check(
            MarketQuery {
                settled_after: Some(at(100)),
                ..closed.clone()
            },
            &["C1", "C2"],
        )
        .await;
        check(
            MarketQuery {
                settled_after: Some(at(101)),
                ..closed.clone()
            },
            &["C2"],
        )
        .await;
        check(
            MarketQuery {
                settled_before: Some(at(100)),
                ..closed.clone()
            },
            &["C1"],
        )
        .await;
        check(
            MarketQuery {
                series_id: Some("OTHER".into()),
                ..closed.clone()
            },
            &["C1"],
        )
        .await;
        check(
            MarketQuery {
                event_id: Some("EV2".into()),
                ..closed.clone()
            },
            &["C1"],
        )
        .await;
        check(
            MarketQuery {
                event_id: Some("EV".into()),
                q: None,
                ..closed.clone()
            },
            &["C2", "C3"],
        )
        .await;
        // interval_code equals q exactly (case-insensitively); "15m" is also long enough for the text index.
        s.upsert_markets(
            &[Market {
                interval_code: Some(IntervalCode::M15),
                ..base("I15")
            }],
            at(60),
        )
        .await
        .unwrap();
        s.upsert_markets(
            &[Market {
                interval_code: Some(IntervalCode::M5),
                ..base("I5")
            }],
            at(60),
        )
        .await
        .unwrap();
        check(mq(Some("15M")), &["I15"]).await;
        check(mq(Some("5m")), &["I5"]).await;
    })
    .await;
}

#[tokio::test]
async fn like_metacharacters_in_q_are_literal() {
    for_each_backend(async |db| {
        db.store
            .upsert_markets(
                &[
                    titled(A, "PCT", "Up 5% today", 1),
                    titled(A, "NOPCT", "Up 5 today and 500 more", 2),
                    titled(A, "UND", "a_c b", 3),
                    titled(A, "NOUND", "abc b", 4),
                    titled(A, "BSL", r"back\slash", 5),
                    titled(A, "QUOTE", r#"say "hi" now"#, 6),
                ],
                at(0),
            )
            .await
            .unwrap();
        for (q, expected) in [
            ("5%", vec!["PCT"]),
            ("5% t", vec!["PCT"]),
            ("%", vec!["PCT"]),
            ("_", vec!["UND"]),
            ("a_c", vec!["UND"]),
            (r"k\s", vec!["BSL"]),
            (r"\", vec!["BSL"]),
            (r#""hi""#, vec!["QUOTE"]),
            (r#"""#, vec!["QUOTE"]),
        ] {
            let q = MarketQuery {
                sort: MarketSort::Volume,
                ..mq(Some(q))
            };
            assert_eq!(search(db, &q).await, expected, "{} q={:?}", db.backend(), q.q);
        }
        // A NUL cannot be stored (PostgreSQL refuses it); such a needle simply matches nothing.
        assert!(search(db, &mq(Some("5\0%"))).await.is_empty());
        assert!(search(db, &mq(Some("\0"))).await.is_empty());
    })
    .await;
}

/// Enough matches that SQLite leaves the "rank every candidate" path. Each needle gives the four relevance tiers
/// a different shape (few or many rows in the headline-prefix, headline and other-field indexes), so that every
/// way SQLite reads a tier (from its index, or walking the volume index) is exercised. Every page must be the
/// slice of a complete ranking computed here; PostgreSQL runs the same cases through its single statement.
#[tokio::test]
async fn dense_matches_rank_exactly_like_a_full_sort() {
    for_each_backend(async |db| {
        let mut all: Vec<(Market, Timestamp)> = Vec::new();
        let mut add = |id: String, title: Option<String>, question: Option<String>, description: Option<&str>| {
            let i = all.len();
            let m = Market {
                title,
                description: description.map(str::to_string),
                volume: units(((i * 7919) % 500) as i64),
                liquidity: units(((i * 104_729) % 300) as i64),
                status: if i.is_multiple_of(7) {
                    Status::Closed
                } else {
                    Status::Active
                },
                ..market(
                    if i.is_multiple_of(2) { A } else { B },
                    &id,
                    "EV",
                    &question.unwrap_or_else(|| format!("Q{i}")),
                )
            };
            all.push((m, at((i % 10) as i64)));
        };
        // (needle, headline prefix, headline substring, other field only)
        let groups: [(&str, usize, usize, usize); 4] = [
            ("common", 60, 2_100, 2_100),
            ("alpha", 15, 2_050, 40),
            ("omega", 2_050, 30, 2_100),
            ("zeta", 50, 100, 2_100),
        ];
        // Ids never contain a needle (except the one exact-id row per group), so each index sees the intended shape.
        for (g, (needle, prefix, substring, other)) in groups.into_iter().enumerate() {
            for k in 0..prefix {
                add(format!("G{g}P{k:05}"), Some(format!("{needle} prefix {k}")), None, None);
            }
            for k in 0..substring {
                add(
                    format!("G{g}C{k:05}"),
                    Some(format!("Will {needle} thing {k} happen")),
                    None,
                    None,
                );
            }
            for k in 0..other {
                add(
                    format!("G{g}O{k:05}"),
                    Some(format!("Other {k}")),
                    None,
                    Some(&format!("mentions {needle}")),
                );
            }
            // venue_b style: no title, the question is the headline.
            for k in 0..20 {
                add(
                    format!("G{g}Q{k:05}"),
                    None,
                    Some(format!("{needle} as a question {k}?")),
                    None,
                );
            }
            add(needle.to_uppercase(), Some("zzz".into()), None, None);
        }
        for k in 0..300 {
            add(format!("N{k:05}"), Some(format!("Nothing {k}")), None, None);
        }
        for secs in 0..10 {
            let batch: Vec<Market> = all
                .iter()
                .filter(|(_, t)| *t == at(secs))
                .map(|(m, _)| m.clone())
                .collect();
            db.store.upsert_markets(&batch, at(secs)).await.unwrap();
        }

        let tier = |m: &Market, needle: &str| {
            let head = m
                .title
                .clone()
                .unwrap_or_else(|| m.question.clone())
                .to_ascii_lowercase();
            if m.market_id.eq_ignore_ascii_case(needle) {
                0
            } else if head.starts_with(needle) {
                1
            } else if head.contains(needle) {
                2
            } else {
                3
            }
        };
        let matches = |m: &Market, needle: &str| {
            [
                Some(&m.market_id),
                m.title.as_ref(),
                Some(&m.question),
                m.description.as_ref(),
            ]
            .into_iter()
            .flatten()
            .any(|s| s.to_ascii_lowercase().contains(needle))
        };
        // The full ranking of `q` (before paging).
        let reference = |q: &MarketQuery| -> Vec<(usize, String)> {
            let needle = q.q.clone().unwrap_or_default();
            let mut rows: Vec<&(Market, Timestamp)> = all
                .iter()
                .filter(|(m, _)| {
                    m.status == q.status && q.exchange.is_none_or(|x| m.exchange == x) && matches(m, &needle)
                })
                .collect();
            rows.sort_by(|(a, ta), (b, tb)| {
                let key = match q.sort {
                    MarketSort::Relevance => tier(a, &needle).cmp(&tier(b, &needle)).then(b.volume.cmp(&a.volume)),
                    MarketSort::Volume => b.volume.cmp(&a.volume),
                    MarketSort::Liquidity => b.liquidity.cmp(&a.liquidity),
                    MarketSort::Newest => tb.cmp(ta),
                };
                key.then(a.market_id.cmp(&b.market_id))
                    .then(a.exchange.cmp(&b.exchange))
            });
            rows.iter()
                .map(|(m, _)| (tier(m, &needle), m.market_id.clone()))
                .collect()
        };

        for (needle, ..) in groups {
            let q = mq(Some(needle));
            let mut cases = Vec::new();
            for base in [
                q.clone(),
                MarketQuery {
                    exchange: Some(B),
                    ..q.clone()
                },
                MarketQuery {
                    status: Status::Closed,
                    ..q.clone()
                },
            ] {
                // Pages straddling every tier boundary, and the end of the list.
                let full = reference(&base);
                let mut offsets = vec![0, full.len().saturating_sub(15), full.len() + 5];
                for w in full.windows(2) {
                    if w[0].0 != w[1].0 {
                        offsets.push(full.iter().position(|r| r.1 == w[1].1).unwrap_or(0).saturating_sub(10));
                    }
                }
                for offset in offsets {
                    cases.push(MarketQuery {
                        offset: offset as u32,
                        limit: 30,
                        ..base.clone()
                    });
                }
            }
            for sort in [MarketSort::Volume, MarketSort::Liquidity, MarketSort::Newest] {
                cases.push(MarketQuery {
                    sort,
                    limit: 50,
                    ..q.clone()
                });
                cases.push(MarketQuery {
                    sort,
                    offset: 1_000,
                    limit: 50,
                    ..q.clone()
                });
            }
            for case in cases {
                let expected: Vec<String> = reference(&case)
                    .into_iter()
                    .skip(case.offset as usize)
                    .take(case.limit as usize)
                    .map(|(_, id)| id)
                    .collect();
                let got = search(db, &case).await;
                assert!(
                    got == expected,
                    "{} {case:?}\n got {got:?}\nwant {expected:?}",
                    db.backend()
                );
            }
        }
        // A rarer needle (one word: several words are ranked in one statement) in the same catalog takes the
        // candidate path.
        let rare = search(
            db,
            &MarketQuery {
                sort: MarketSort::Volume,
                ..mq(Some("0c02099"))
            },
        )
        .await;
        assert_eq!(rare, ["G0C02099"]);
    })
    .await;
}

#[tokio::test]
async fn events_search_aggregates_filters_and_sorts() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let ev = |ex, id: &str, title: &str| Event {
            category: Some("macro".into()),
            ..Event::new(ex, id, "FED", title)
        };
        s.upsert_events(
            &[
                Event {
                    subtitle: Some("Rates in December".into()),
                    ..ev(A, "FED-DEC", "Fed decision")
                },
                ev(A, "FED-JAN", "Fed decision January"),
                ev(B, "fed-2", "Will the Fed cut?"),
                Event {
                    category: Some("crypto".into()),
                    series_id: "BTC".into(),
                    ..ev(A, "BTC-1", "Bitcoin above")
                },
                Event {
                    status: Status::Closed,
                    ..ev(A, "FED-OLD", "Fed decision 2020")
                },
            ],
            at(1),
        )
        .await
        .unwrap();
        s.upsert_events(&[ev(B, "late", "Late event")], at(9)).await.unwrap();
        let m = |ex, id: &str, event: &str, q: &str, vol: i64, liq: i64| Market {
            volume: units(vol),
            liquidity: units(liq),
            ..market(ex, id, event, q)
        };
        s.upsert_markets(
            &[
                m(A, "FED-DEC-HOLD", "FED-DEC", "Will the Fed hold?", 100, 1),
                m(A, "FED-DEC-CUT", "FED-DEC", "Will the Fed cut 25bp?", 50, 2),
                m(A, "FED-JAN-CUT", "FED-JAN", "Will the Fed cut in January?", 10, 30),
                m(B, "0x1", "fed-2", "Fed cut by March?", 70, 4),
                m(B, "0x2", "fed-2", "Fed cut by June?", 70, 4),
                m(B, "0x3", "fed-2", "Fed cut by Sept?", 70, 4),
                m(A, "BTC-1-M", "BTC-1", "Hold above 100k?", 5, 5),
                m(B, "0xlate", "late", "Late question", 1, 1),
            ],
            at(2),
        )
        .await
        .unwrap();

        let names = async |q: EventQuery| -> Vec<String> {
            s.search_events(&q)
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.event.event_id)
                .collect()
        };
        // Aggregates and questions (ordered by market id).
        let dec = s.search_events(&eq(Some("fed-dec"))).await.unwrap();
        assert_eq!(dec.len(), 1);
        assert_eq!(
            (dec[0].market_count, dec[0].total_volume, dec[0].total_liquidity),
            (2, units(150), units(3))
        );
        assert_eq!(
            dec[0].market_questions,
            ["Will the Fed cut 25bp?", "Will the Fed hold?"]
        );
        assert_eq!(dec[0].discovered_at, at(1));

        // Relevance: exact id, title prefix, title substring, other field (subtitle, question); ties by volume.
        assert_eq!(names(eq(Some("fed-2"))).await, ["fed-2"]);
        assert_eq!(names(eq(Some("FED"))).await, ["FED-DEC", "FED-JAN", "fed-2"]);
        assert_eq!(names(eq(Some("decision"))).await, ["FED-DEC", "FED-JAN"]);
        assert_eq!(names(eq(Some("hold"))).await, ["FED-DEC", "BTC-1"]);
        assert_eq!(names(eq(Some("december"))).await, ["FED-DEC"]);
        assert_eq!(names(eq(Some("cut"))).await, ["fed-2", "FED-DEC", "FED-JAN"]);
        assert_eq!(
            names(eq(Some("ut"))).await,
            ["fed-2", "FED-DEC", "FED-JAN"],
            "short needle"
        );

        // Filters.
        let fed = eq(Some("fed"));
        assert_eq!(
            names(EventQuery {
                exchange: Some(B),
                ..fed.clone()
            })
            .await,
            ["fed-2"]
        );
        assert_eq!(
            names(EventQuery {
                min_volume: Some(units(150)),
                ..fed.clone()
            })
            .await,
            ["FED-DEC", "fed-2"]
        );
        assert_eq!(
            names(EventQuery {
                min_volume: Some(units(151)),
                ..fed.clone()
            })
            .await,
            ["fed-2"]
        );
        assert_eq!(
            names(EventQuery {
                status: Status::Closed,
                ..fed.clone()
            })
            .await,
            ["FED-OLD"]
        );
        assert_eq!(
            names(EventQuery {
                category: Some("crypto".into()),
                ..eq(Some("above"))
            })
            .await,
            ["BTC-1"]
        );
        assert!(
            names(EventQuery {
                category: Some("macro".into()),
                ..eq(Some("above"))
            })
            .await
            .is_empty()
        );
        assert_eq!(
            names(EventQuery {
                discovered_after: Some(at(5)),
                ..eq(Some("late"))
            })
            .await,
            ["late"]
        );
        assert!(
            names(EventQuery {
                discovered_after: Some(at(10)),
                ..eq(Some("late"))
            })
            .await
            .is_empty()
        );
        let series = EventQuery {
            series_id: Some("BTC".into()),
            ..eq(None)
        };
        assert_eq!(names(series).await, ["BTC-1"]);

        // Sorts.
        let all = EventQuery {
            series_id: Some("FED".into()),
            ..eq(None)
        };
        assert_eq!(
            names(all.clone()).await,
            ["late", "FED-DEC", "FED-JAN", "fed-2"],
            "newest, then id"
        );
        assert_eq!(
            names(EventQuery {
                sort: EventSort::Markets,
                ..all.clone()
            })
            .await,
            ["fed-2", "FED-DEC", "FED-JAN", "late"]
        );
        assert_eq!(
            names(EventQuery {
                sort: EventSort::Volume,
                ..all.clone()
            })
            .await,
            ["fed-2", "FED-DEC", "FED-JAN", "late"]
        );
        assert_eq!(
            names(EventQuery {
                sort: EventSort::Liquidity,
                ..all.clone()
            })
            .await,
            ["FED-JAN", "fed-2", "FED-DEC", "late"]
        );
        // Pagination.
        assert_eq!(
            names(EventQuery {
                limit: 2,
                offset: 1,
                ..all.clone()
            })
            .await,
            ["FED-DEC", "FED-JAN"]
        );

        // Lookups and the recent route.
        let got = s.get_event(B, "fed-2").await.unwrap().unwrap();
        assert_eq!((got.market_count, got.total_volume), (3, units(210)));
        assert!(s.get_event(A, "fed-2").await.unwrap().is_none());
        assert_eq!(s.find_event("fed-2").await.unwrap().unwrap().event.exchange, B);
        assert!(s.find_event("nope").await.unwrap().is_none());
        let recent = s
            .recent_events(&RecentQuery {
                exchange: None,
                status: Status::Active,
                limit: 2,
                offset: 0,
            })
            .await
            .unwrap();
        assert_eq!(
            recent.iter().map(|e| e.event.event_id.as_str()).collect::<Vec<_>>(),
            ["late", "BTC-1"]
        );
        assert_eq!(recent[0].market_questions, ["Late question"]);
        let recent_b = s
            .recent_events(&RecentQuery {
                exchange: Some(B),
                status: Status::Active,
                limit: 5,
                offset: 1,
            })
            .await
            .unwrap();
        assert_eq!(
            recent_b.iter().map(|e| e.event.event_id.as_str()).collect::<Vec<_>>(),
            ["fed-2"]
        );
    })
    .await;
}

#[tokio::test]
async fn series_search_aggregates_filters_and_sorts() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        s.upsert_series(
            &[
                Series {
                    category: Some("crypto".into()),
                    ..Series::new(A, "KXBTC15M", "Bitcoin 15 minute")
                },
                Series {
                    category: Some("crypto".into()),
                    ..Series::new(B, "btc-daily", "bitcoin daily")
                },
                Series::new(A, "AARD", "aardvark"),
                Series {
                    status: Status::Closed,
                    ..Series::new(A, "APPL", "Apple")
                },
            ],
            at(1),
        )
        .await
        .unwrap();
        s.upsert_series(&[Series::new(B, "zeta", "Zeta late")], at(5))
            .await
            .unwrap();
        let w = |id: &str, start: i64, end: i64, status| Event {
            window_start: Some(at(start)),
            window_end: Some(at(end)),
            status,
            ..Event::new(A, id, "KXBTC15M", id)
        };
        s.upsert_events(
            &[
                w("W1", 100, 1000, Status::Closed),
                w("W2", 1000, 1900, Status::Active),
                w("W3", 1900, 2800, Status::Active),
                Event::new(B, "other-venue", "KXBTC15M", "same series id, other venue"),
            ],
            at(2),
        )
        .await
        .unwrap();

        let names = async |q: SeriesQuery| -> Vec<String> {
            s.search_series(&q)
                .await
                .unwrap()
                .into_iter()
                .map(|x| x.series.series_id)
                .collect()
        };
        assert_eq!(
            names(sq(None)).await,
            ["AARD", "KXBTC15M", "btc-daily", "zeta"],
            "title, case-insensitive"
        );
        assert_eq!(
            names(SeriesQuery {
                sort: SeriesSort::Newest,
                ..sq(None)
            })
            .await[0],
            "zeta"
        );
        assert_eq!(names(sq(Some("BITCOIN"))).await, ["KXBTC15M", "btc-daily"]);
        assert_eq!(
            names(sq(Some("btc15"))).await,
            ["KXBTC15M"],
            "series_id, case-insensitive"
        );
        assert_eq!(names(sq(Some("aa"))).await, ["AARD"], "short needle");
        assert_eq!(
            names(SeriesQuery {
                exchange: Some(B),
                ..sq(Some("bitcoin"))
            })
            .await,
            ["btc-daily"]
        );
        assert_eq!(
            names(SeriesQuery {
                category: Some("crypto".into()),
                ..sq(None)
            })
            .await,
            ["KXBTC15M", "btc-daily"]
        );
        assert_eq!(
            names(SeriesQuery {
                status: Status::Closed,
                ..sq(None)
            })
            .await,
            ["APPL"]
        );
        assert_eq!(
            names(SeriesQuery {
                limit: 2,
                offset: 1,
                ..sq(None)
            })
            .await,
            ["KXBTC15M", "btc-daily"]
        );

        let btc = s.search_series(&sq(Some("KXBTC15M"))).await.unwrap();
        let x = &btc[0];
        assert_eq!((x.n_events_total, x.n_events_active), (3, 2));
        assert_eq!(
            (x.earliest_event_at, x.latest_event_at),
            (Some(at(100)), Some(at(2800)))
        );
        assert_eq!(x.discovered_at, at(1));
        let empty = &s.search_series(&sq(Some("aardvark"))).await.unwrap()[0];
        assert_eq!(
            (empty.n_events_total, empty.n_events_active, empty.earliest_event_at),
            (0, 0, None)
        );
    })
    .await;
}

#[tokio::test]
async fn recent_markets_newest_first() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        for (i, id) in ["R1", "R2", "R3", "R4"].iter().enumerate() {
            let ex = if i % 2 == 0 { A } else { B };
            s.upsert_markets(&[market(ex, id, "EV", "q")], at(i as i64))
                .await
                .unwrap();
        }
        s.upsert_markets(
            &[Market {
                status: Status::Closed,
                ..market(A, "R5", "EV", "q")
            }],
            at(9),
        )
        .await
        .unwrap();
        let recent = async |exchange, status, limit, offset| -> Vec<String> {
            let q = RecentQuery {
                exchange,
                status,
                limit,
                offset,
            };
            ids(&s.recent_markets(&q).await.unwrap())
                .into_iter()
                .map(str::to_string)
                .collect()
        };
        assert_eq!(recent(None, Status::Active, 10, 0).await, ["R4", "R3", "R2", "R1"]);
        assert_eq!(recent(None, Status::Active, 2, 1).await, ["R3", "R2"]);
        assert_eq!(recent(Some(A), Status::Active, 10, 0).await, ["R3", "R1"]);
        assert_eq!(recent(None, Status::Closed, 10, 0).await, ["R5"]);
        let got = s
            .recent_markets(&RecentQuery {
                exchange: None,
                status: Status::Active,
                limit: 1,
                offset: 0,
            })
            .await
            .unwrap();
        assert_eq!(got[0].discovered_at, at(3));
    })
    .await;
}

#[tokio::test]
async fn api_keys_create_find_list_revoke() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let k1 = s.create_key("acme", Plan::Builder).await.unwrap();
        let k2 = s.create_key("acme", Plan::Trader).await.unwrap();
        let k3 = s.create_key("other", Plan::Free).await.unwrap();
        assert!(k1.key.starts_with("cbk_") && k1.key.len() == 36);
        assert_eq!(k1.info.prefix, &k1.key[..12]);
        assert_eq!(k1.info.customer_id, k2.info.customer_id, "same name, same customer");
        assert_ne!(k1.info.customer_id, k3.info.customer_id);

        let owner = s.find_key(&hash_key(&k2.key)).await.unwrap().expect("valid key");
        assert_eq!(
            (owner.key_id, owner.customer_id, owner.plan),
            (k2.info.id, k2.info.customer_id, Plan::Trader)
        );
        assert!(s.find_key(&hash_key("cbk_unknown")).await.unwrap().is_none());

        let list = s.list_keys().await.unwrap();
        assert_eq!(list.len(), 3);
        let listed = list.iter().find(|k| k.id == k1.info.id).unwrap();
        assert_eq!(listed, &k1.info, "list shows what create returned");
        assert!(
            list.iter().all(|k| k.created_at >= list.last().unwrap().created_at),
            "newest first"
        );

        assert_eq!(s.revoke_key("").await.unwrap(), 0, "an empty prefix revokes nothing");
        assert_eq!(s.revoke_key("cbk_zzzzzzzzzzzz").await.unwrap(), 0);
        assert_eq!(s.revoke_key(&k1.info.prefix).await.unwrap(), 1);
        assert!(
            s.find_key(&hash_key(&k1.key)).await.unwrap().is_none(),
            "revoked keys are not found"
        );
        assert!(s.find_key(&hash_key(&k2.key)).await.unwrap().is_some());
        assert_eq!(s.revoke_key(&k1.info.prefix).await.unwrap(), 0, "already revoked");
        let revoked = s
            .list_keys()
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.id == k1.info.id)
            .unwrap();
        assert!(revoked.revoked_at.is_some());
        // A shorter prefix revokes every key it starts; here "cbk_" matches the two live ones.
        assert_eq!(s.revoke_key("cbk_").await.unwrap(), 2);
        assert!(s.find_key(&hash_key(&k3.key)).await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn trades_are_stored_once_and_only_new_ones_are_returned() {
    for_each_backend(async |db| {
        let t = |id: &str, ex: Exchange| Trade {
            exchange: ex,
            source_trade_id: id.into(),
            market_id: "M".into(),
            event_id: "E".into(),
            executed_at: at(1),
            taker_side: TakerSide::Buy,
            outcome: Outcome::Yes,
            price: Price::from_micros(470_000),
            size: units(2500),
        };
        let first = db
            .store
            .insert_trades(&[t("1", A), t("2", A), t("1", A), t("1", B)])
            .await
            .unwrap();
        assert_eq!(
            first,
            vec![t("1", A), t("2", A), t("1", B)],
            "input order, duplicates once, ids per venue"
        );
        let second = db
            .store
            .insert_trades(&[t("2", A), t("3", A), t("1", B)])
            .await
            .unwrap();
        assert_eq!(second, vec![t("3", A)]);
        assert!(db.store.insert_trades(&[t("3", A)]).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn snapshots_are_stored_and_read_back() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let lv = |p: i64, q: i64| Level {
            price: Price::from_micros(p),
            size: units(q),
        };
        let snap = |asset: Option<&str>, secs: i64, p: i64| BookSnapshot {
            exchange: if asset.is_some() { B } else { A },
            market_id: "MKT".into(),
            asset_id: asset.map(str::to_string),
            timestamp: at(secs),
            bids: vec![lv(p, 10), lv(p - 10_000, 20)],
            asks: if asset.is_some() {
                vec![lv(p + 20_000, 5)]
            } else {
                vec![]
            },
            no_bids: if asset.is_some() {
                vec![]
            } else {
                vec![lv(1_000_000 - p - 20_000, 7)]
            },
        };
        // venue_a every 20 s for 5 minutes; one venue_b token at the same times.
        let mut batch = Vec::new();
        for i in 0..15 {
            batch.push(snap(None, i * 20, 400_000 + i * 1000));
            batch.push(snap(Some("123456789012345678901234567890"), i * 20, 500_000 + i * 1000));
        }
        s.insert_snapshots(&batch).await.unwrap();
        // Same book and millisecond again: replaced.
        s.insert_snapshots(&[snap(None, 280, 111_000)]).await.unwrap();

        let read = async |asset: Option<&str>, window, limit| {
            let ex = if asset.is_some() { B } else { A };
            let q = BookHistoryQuery {
                exchange: ex,
                market_id: "MKT".into(),
                asset_id: asset.map(str::to_string),
                window,
                limit,
            };
            s.snapshots(&q).await.unwrap()
        };
        let times = |v: &[BookSnapshot]| {
            v.iter()
                .map(|x| (x.timestamp.millis() - at(0).millis()) / 1000)
                .collect::<Vec<_>>()
        };

        let latest = read(None, HistoryWindow::Latest { before: None }, 3).await;
        assert_eq!(times(&latest), [280, 260, 240]);
        assert_eq!(latest[0], snap(None, 280, 111_000), "ladders round-trip exactly");
        let next = read(
            None,
            HistoryWindow::Latest {
                before: Some(latest[2].timestamp),
            },
            3,
        )
        .await;
        assert_eq!(times(&next), [220, 200, 180]);

        let token = Some("123456789012345678901234567890");
        let tok = read(token, HistoryWindow::Latest { before: None }, 1).await;
        assert_eq!(tok[0], snap(token, 280, 514_000));

        // One per minute, the last of each bucket, oldest first, inside [30 s, 250 s].
        let range = |after| HistoryWindow::Range {
            start: at(30),
            end: at(250),
            bucket_ms: 60_000,
            after,
        };
        // Buckets are aligned to the epoch, not to at(0): compute the expected ones the same way.
        let mut expected: Vec<i64> = Vec::new();
        for secs in (0..15).map(|i| i * 20).filter(|s| (30..=250).contains(s)) {
            let bucket = at(secs).millis() / 60_000;
            match expected.last_mut() {
                Some(last) if at(*last).millis() / 60_000 == bucket => *last = secs,
                _ => expected.push(secs),
            }
        }
        let page1 = read(None, range(None), 2).await;
        assert_eq!(times(&page1), expected[..2]);
        let page2 = read(None, range(Some(page1[1].timestamp)), 10).await;
        assert_eq!(times(&page2), expected[2..]);

        assert_eq!(s.delete_snapshots_before(at(100)).await.unwrap(), 10);
        let left = read(None, HistoryWindow::Latest { before: None }, 100).await;
        assert_eq!(left.len(), 10);
        assert_eq!(*times(&left).last().unwrap(), 100);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_and_readers_do_not_fail() {
    for_each_backend(async |db| {
        let mut tasks = Vec::new();
        for w in 0..6 {
            let store: Arc<dyn Store> = db.store.clone();
            tasks.push(tokio::spawn(async move {
                for b in 0..10 {
                    let batch: Vec<Market> = (0..20)
                        .map(|i| titled(A, &format!("W{w}-{b}-{i}"), &format!("Concurrent {w} {b} {i}"), i))
                        .collect();
                    store.upsert_markets(&batch, at(b)).await?;
                    store.insert_trades(&[]).await?;
                }
                Ok::<_, StoreError>(())
            }));
            let store: Arc<dyn Store> = db.store.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..20 {
                    store.search_markets(&mq(Some("concurrent"))).await?;
                    store.list_keys().await?;
                }
                Ok(())
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let all = db
            .store
            .search_markets(&MarketQuery {
                limit: 100,
                offset: 1100,
                ..mq(Some("concurrent"))
            })
            .await;
        assert_eq!(all.unwrap().len(), 100, "all 1200 markets were written");
    })
    .await;
}

/// The market search is served by the text index, not a scan of the table.
#[tokio::test]
async fn market_search_uses_the_text_index() {
    for_each_backend(async |db| {
        // Enough rows that the planner of PostgreSQL prefers the trigram indexes to reading a btree in full.
        // A distinct word per market (base-26 letters), so the needle's trigrams are selective as in real titles.
        let word = |mut i: i64| {
            let mut w = String::new();
            for _ in 0..4 {
                w.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
            }
            w
        };
        let batch: Vec<Market> = (0..20_000)
            .map(|i| {
                titled(
                    A,
                    &format!("IDX{i:05}"),
                    &format!("Will team {} win the {} cup?", i % 37, word(i)),
                    i,
                )
            })
            .collect();
        for chunk in batch.chunks(5_000) {
            db.store.upsert_markets(chunk, at(0)).await.unwrap();
        }
        let q = mq(Some(&format!("the {} cup", word(12_345))));
        assert_eq!(search(db, &q).await, ["IDX12345"]);
        let plan = match db.backend() {
            "sqlite" => SqliteStore::open(&db.url)
                .await
                .unwrap()
                .explain_market_search(&q)
                .await
                .unwrap(),
            _ => {
                let pg = PgStore::open(&db.url).await.unwrap();
                sqlx::raw_sql("ANALYZE markets")
                    .execute(&mut sqlx::postgres::PgConnection::connect(&db.url).await.unwrap())
                    .await
                    .unwrap();
                pg.explain_market_search(&q).await.unwrap()
            }
        };
        let text = plan.join("\n");
        match db.backend() {
            "sqlite" => assert!(text.contains("markets_head_fts VIRTUAL TABLE"), "plan:\n{text}"),
            _ => assert!(text.contains("Bitmap Index Scan on markets_trgm"), "plan:\n{text}"),
        }
    })
    .await;
}

#[tokio::test]
async fn sqlite_creates_its_folder_and_works_in_memory() {
    let dir = std::env::temp_dir().join(format!("crossbook-test-dir-{}", uuid::Uuid::new_v4().simple()));
    let url = format!("sqlite://{}/nested/crossbook.db", dir.display());
    let store = crossbook_store::open(&url).await.unwrap();
    store.migrate().await.unwrap();
    store
        .upsert_markets(&[titled(A, "M", "Persisted title", 1)], at(0))
        .await
        .unwrap();
    store.close().await;
    assert!(dir.join("nested/crossbook.db").exists());
    let reopened = crossbook_store::open(&url).await.unwrap();
    reopened.migrate().await.unwrap();
    assert_eq!(
        ids(&reopened.search_markets(&mq(Some("persisted"))).await.unwrap()),
        ["M"]
    );
    reopened.close().await;
    let _ = std::fs::remove_dir_all(&dir);

    let mem = crossbook_store::open("sqlite::memory:").await.unwrap();
    mem.migrate().await.unwrap();
    mem.upsert_markets(&[titled(A, "M", "In memory", 1)], at(0))
        .await
        .unwrap();
    assert_eq!(ids(&mem.search_markets(&mq(Some("memory"))).await.unwrap()), ["M"]);
    assert_eq!(mem.backend(), "sqlite");
    mem.close().await;
}

#[tokio::test]
async fn unreachable_postgres_is_unavailable_quickly() {
    let started = Instant::now();
    // Port 1 on loopback: nothing listens, the connection is refused.
    let err = crossbook_store::open("postgres://postgres:secret@127.0.0.1:1/none")
        .await
        .err()
        .expect("no server");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    assert!(started.elapsed().as_secs() < 8, "took {:?}", started.elapsed());
    assert!(!err.to_string().contains("secret"));
    let bad = crossbook_store::open("mysql://x").await.err().expect("unsupported");
    assert!(matches!(bad, StoreError::Config(_)));
}

/// A full disk on SQLite (the database capped at its current size): every write fails as `Unavailable` (a
/// 503 to API callers), a failed transaction never leaves the writer connection inside it (which used to make
/// every later write fail with "non-zero transaction depth" until a restart), and writes resume on the same
/// store once there is room again.
#[tokio::test]
async fn sqlite_writes_fail_as_unavailable_when_full_and_resume_when_room_returns() {
    use crossbook_store::{AccountStore, TradeStore};
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let store = SqliteStore::open(&db.url).await.unwrap();
    let trade = |i: usize| Trade {
        exchange: A,
        source_trade_id: format!("t{i}"),
        market_id: "M".into(),
        event_id: "E".into(),
        executed_at: at(i as i64),
        taker_side: TakerSide::Buy,
        outcome: Outcome::Yes,
        price: Price::from_micros(470_000),
        size: units(2500),
    };
    let batch = |from: usize| (from..from + 500).map(trade).collect::<Vec<_>>();
    store.insert_trades(&batch(0)).await.unwrap();
    store
        .set_page_limit(Some(store.page_count().await.unwrap()))
        .await
        .unwrap();

    // Fill what room is left; the write that finds none fails as unavailable.
    let mut next = 500;
    let err = loop {
        match store.insert_trades(&batch(next)).await {
            Ok(_) => next += 500,
            Err(e) => break e,
        }
        assert!(next < 500_000, "a capped database kept taking writes");
    };
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    // Later writes of any kind fail the same way once they find no room (a small one may still fit in a
    // page with space left), never with a transaction left open.
    let mut keys = 0;
    let e = loop {
        match store.create_key("full", Plan::Free).await {
            Ok(_) => keys += 1,
            Err(e) => break e,
        }
        assert!(keys < 100_000, "a capped database kept taking keys");
    };
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    for _ in 0..3 {
        let e = store.insert_trades(&batch(next)).await.unwrap_err();
        assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    }

    // Room again: the same store writes, without a restart.
    store.set_page_limit(None).await.unwrap();
    let stored = store.insert_trades(&batch(next)).await.unwrap();
    assert_eq!(stored.len(), 500);
    store.create_key("room again", Plan::Free).await.unwrap();
    store.close().await;
    db.cleanup().await;
}
