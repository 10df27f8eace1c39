//! Storage of the arbitrage concern on both backends: episodes (insert, extension in place, restart
//! restore), the history filters and paging, pair overrides and the scanner's catalog view.

use crate::testing::{self, for_each_backend};
use crossbook_core::{
    Amount, Category, Event, Exchange, IntervalCode, Market, Price, Status, Timestamp,
    arb::{
        BookSide, Episode, EpisodeBook, ExecutionLeg, ListingKind, MarketType, MicroUsd, Opportunity, PairOverride,
        Roi, SettlementBasis, VenueALeg, VenueBLeg,
    },
};
use crossbook_store::{ArbitrageStore, HistoryQuery};

const T0: i64 = 1_795_287_600_000; // 2026-11-21T19:00:00Z

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_millis(T0 + secs * 1000)
}

/// An opportunity with the given identity and net edge (micro-dollars).
fn opp(event_id: &str, interval: Option<IntervalCode>, net: i64, at: Timestamp) -> Opportunity {
    let category = if interval.is_some() {
        Category::Crypto
    } else {
        Category::Sports
    };
    Opportunity {
        event_id: event_id.into(),
        event_title: format!("Title of {event_id}"),
        outcome_key: if interval.is_some() { "up" } else { "yes" }.into(),
        label: "Up".into(),
        timestamp: at,
        market_type: MarketType::Binary,
        category,
        interval_code: interval,
        resolution_time: Some(ts(900)),
        venue_a_event_ticker: Some("EV-A".into()),
        venue_b_event_slug: Some("slug-b".into()),
        settlement_basis: SettlementBasis::Identical,
        venue_a: VenueALeg {
            market_ticker: "KX-A".into(),
            yes_ask: Some(Price(450_000)),
            no_ask: Some(Price(560_000)),
            volume: Amount::from_units(10),
            volume_24h: Amount::from_units(5),
            open_interest: Amount::from_units(3),
        },
        venue_b: VenueBLeg {
            condition_id: "0xb".into(),
            yes_token_id: "111".into(),
            no_token_id: "222".into(),
            yes_ask: Some(Price(400_000)),
            no_ask: Some(Price(500_000)),
            volume: Amount::from_units(7),
            liquidity: Amount::from_units(9),
        },
        buy_yes_market: Exchange::VenueA,
        buy_no_market: Exchange::VenueB,
        gross: MicroUsd(net + 37_500),
        fee: MicroUsd(37_500),
        net: MicroUsd(net),
        roi: Roi(127),
        executable_size: Amount::from_units(12),
        max_profit: MicroUsd(net * 12),
        peak_net: MicroUsd(net),
        yes_leg: ExecutionLeg {
            market: Exchange::VenueA,
            identifier: "KX-A".into(),
            book_side: BookSide::Bid,
            fee: MicroUsd(20_000),
        },
        no_leg: ExecutionLeg {
            market: Exchange::VenueB,
            identifier: "222".into(),
            book_side: BookSide::Bid,
            fee: MicroUsd(17_500),
        },
        orderbook: None,
        fee_model: format!("venue_a:0.07;venue_b:{}=0.07", category.as_str()),
    }
}

fn episodes_of(book: &mut EpisodeBook, opps: &[Opportunity], at: Timestamp) -> Vec<Episode> {
    book.observe(opps, at).iter().map(|c| c.episode().clone()).collect()
}

fn page(limit: u32, offset: u32) -> HistoryQuery {
    HistoryQuery {
        limit,
        offset,
        ..HistoryQuery::default()
    }
}

#[tokio::test]
async fn episodes_extend_in_place_and_a_gap_opens_a_new_one() {
    for_each_backend(async |db| {
        let s = &db.store;
        let mut book = EpisodeBook::new();
        let id = "BTC-15M-2026-11-21T19:00Z";
        s.record_episodes(&episodes_of(
            &mut book,
            &[opp(id, Some(IntervalCode::M15), 12_500, ts(0))],
            ts(0),
        ))
        .await
        .unwrap();
        s.record_episodes(&episodes_of(
            &mut book,
            &[opp(id, Some(IntervalCode::M15), 30_000, ts(1))],
            ts(1),
        ))
        .await
        .unwrap();
        // The operator lowered the crypto rate in between: the extension records the new label.
        let relabelled = |mut o: Opportunity| {
            o.fee_model = "venue_a:0.07;venue_b:crypto=0.02".into();
            o
        };
        s.record_episodes(&episodes_of(
            &mut book,
            &[relabelled(opp(id, Some(IntervalCode::M15), 5_000, ts(2)))],
            ts(2),
        ))
        .await
        .unwrap();
        let h = s.episode_history(&page(50, 0)).await.unwrap();
        assert_eq!(h.total, 1, "repeated detections extend one episode");
        let e = &h.items[0];
        assert_eq!((e.first_seen_at, e.last_seen_at), (ts(0), ts(2)));
        assert_eq!(e.opportunity.net, MicroUsd(5_000), "the latest observation");
        assert_eq!(e.opportunity.peak_net, MicroUsd(30_000), "the peak");
        assert_eq!(e.opportunity.timestamp, ts(2));
        assert_eq!(e.key.event_id, id);
        assert_eq!(e.opportunity.fee_model, "venue_a:0.07;venue_b:crypto=0.02");
        assert_eq!(e.opportunity, {
            let mut o = relabelled(opp(id, Some(IntervalCode::M15), 5_000, ts(2)));
            o.peak_net = MicroUsd(30_000);
            o
        });

        // More than 120 s later: a new episode.
        s.record_episodes(&episodes_of(
            &mut book,
            &[opp(id, Some(IntervalCode::M15), 7_000, ts(200))],
            ts(200),
        ))
        .await
        .unwrap();
        let h = s.episode_history(&page(50, 0)).await.unwrap();
        assert_eq!(h.total, 2);
        assert_eq!(h.items[0].first_seen_at, ts(200));
        assert_eq!(h.items[0].opportunity.peak_net, MicroUsd(7_000));
        assert_eq!(h.items[1].last_seen_at, ts(2));

        // A restart resumes the open episode from the store.
        let recent = s.recent_episodes(ts(200 - 120)).await.unwrap();
        assert_eq!(recent.len(), 1);
        let mut resumed = EpisodeBook::new();
        resumed.restore(recent);
        let c = episodes_of(
            &mut resumed,
            &[opp(id, Some(IntervalCode::M15), 1_000, ts(210))],
            ts(210),
        );
        assert_eq!(c[0].first_seen_at, ts(200));
        s.record_episodes(&c).await.unwrap();
        let h = s.episode_history(&page(50, 0)).await.unwrap();
        assert_eq!(h.total, 2);
        assert_eq!(h.items[0].last_seen_at, ts(210));
        assert_eq!(h.items[0].opportunity.peak_net, MicroUsd(7_000));

        // An empty batch is fine; an older write never moves last_seen_at back nor lowers the peak.
        s.record_episodes(&[]).await.unwrap();
        let mut stale = h.items[0].clone();
        stale.last_seen_at = ts(205);
        stale.opportunity.peak_net = MicroUsd(1);
        s.record_episodes(&[stale]).await.unwrap();
        let h = s.episode_history(&page(50, 0)).await.unwrap();
        assert_eq!(h.items[0].last_seen_at, ts(210));
        assert_eq!(h.items[0].opportunity.peak_net, MicroUsd(7_000));
    })
    .await;
}

/// Builds a history: 30 BTC window episodes (15m and 1h alternating, net 1..=30 thousand micro-dollars) one
/// minute apart, plus 5 sports episodes; each episode seen for 30 s.
async fn build_history(s: &dyn ArbitrageStore) {
    let mut all = Vec::new();
    for i in 0..30 {
        let interval = if i % 2 == 0 {
            IntervalCode::M15
        } else {
            IntervalCode::H1
        };
        let id = format!("BTC-{}-{i:02}", interval.as_str());
        let o = opp(&id, Some(interval), (i + 1) * 1_000, ts(i * 60));
        all.push(Episode {
            key: o.episode_key(),
            first_seen_at: ts(i * 60),
            last_seen_at: ts(i * 60 + 30),
            opportunity: o,
        });
    }
    for i in 0..5 {
        let o = opp(&format!("PAIR-GAME-{i}"), None, 50_000 + i, ts(i * 60 + 10));
        all.push(Episode {
            key: o.episode_key(),
            first_seen_at: ts(i * 60 + 10),
            last_seen_at: ts(i * 60 + 40),
            opportunity: o,
        });
    }
    s.record_episodes(&all).await.unwrap();
}

#[tokio::test]
async fn history_filters_and_paging() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        build_history(s).await;

        let h = s.episode_history(&page(10, 0)).await.unwrap();
        assert_eq!(h.total, 35);
        assert_eq!(h.items.len(), 10);
        assert!(
            h.items.windows(2).all(|w| w[0].last_seen_at >= w[1].last_seen_at),
            "newest first"
        );
        assert_eq!(h.items[0].key.event_id, "BTC-1h-29");

        // Paging walks every row exactly once.
        let mut seen = Vec::new();
        for off in (0..40).step_by(10) {
            let p = s.episode_history(&page(10, off)).await.unwrap();
            assert_eq!(p.total, 35);
            seen.extend(p.items.into_iter().map(|e| e.key.event_id));
        }
        assert_eq!(seen.len(), 35);
        let mut uniq = seen.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), 35);
        assert!(s.episode_history(&page(10, 100)).await.unwrap().items.is_empty());

        let q = |f: fn(&mut HistoryQuery)| {
            let mut q = page(100, 0);
            f(&mut q);
            q
        };
        let h = s
            .episode_history(&q(|q| q.interval_code = Some(IntervalCode::M15)))
            .await
            .unwrap();
        assert_eq!(h.total, 15);
        assert!(
            h.items
                .iter()
                .all(|e| e.opportunity.interval_code == Some(IntervalCode::M15))
        );

        let h = s
            .episode_history(&q(|q| q.category = Some(Category::Sports)))
            .await
            .unwrap();
        assert_eq!(h.total, 5);
        assert!(h.items.iter().all(|e| e.key.event_id.starts_with("PAIR-")));
        let h = s
            .episode_history(&q(|q| q.category = Some(Category::Crypto)))
            .await
            .unwrap();
        assert_eq!(h.total, 30);

        // min_net is inclusive, over the whole history.
        let h = s
            .episode_history(&q(|q| q.min_net = Some(MicroUsd(25_000))))
            .await
            .unwrap();
        assert_eq!(h.total, 6 + 5);
        assert!(h.items.iter().all(|e| e.opportunity.net >= MicroUsd(25_000)));

        // from: last seen at or after; to: first seen at or before (both inclusive).
        let h = s
            .episode_history(&q(|q| q.from = Some(ts(29 * 60 + 30))))
            .await
            .unwrap();
        assert_eq!(h.total, 1);
        let h = s.episode_history(&q(|q| q.to = Some(ts(0)))).await.unwrap();
        assert_eq!(h.total, 1);
        assert_eq!(h.items[0].key.event_id, "BTC-15m-00");
        let h = s
            .episode_history(&q(|q| {
                q.from = Some(ts(60 + 30));
                q.to = Some(ts(3 * 60));
                q.interval_code = Some(IntervalCode::H1);
            }))
            .await
            .unwrap();
        let ids: Vec<_> = h.items.iter().map(|e| e.key.event_id.as_str()).collect();
        assert_eq!(ids, ["BTC-1h-03", "BTC-1h-01"]);
        assert_eq!(h.total, 2);
    })
    .await;
}

/// A row an older version wrote (no `fee_model` column value, no label in its JSON) reads with the spec
/// rates' label for its category: that version priced at them.
#[tokio::test]
async fn episodes_without_a_fee_model_read_as_the_spec_rates() {
    use sqlx::Connection;
    for_each_backend(async |db| {
        let o = opp("OLD", None, 12_500, ts(0));
        let mut json = serde_json::to_value(&o).unwrap();
        json.as_object_mut().unwrap().remove("fee_model");
        // The columns an older version wrote, in its statement (without fee_model).
        const SQL: &str = "INSERT INTO arb_episodes (event_id, outcome_key, buy_yes_market, buy_no_market, \
             first_seen_at, last_seen_at, interval_code, category, net_micros, peak_micros, opportunity) \
             VALUES ('OLD', 'yes', 'venue_a', 'venue_b', $1, $2, NULL, 'sports', 12500, 12500, $3)";
        macro_rules! insert {
            ($conn:ty) => {{
                let mut c = <$conn>::connect(&db.url).await.unwrap();
                sqlx::query(SQL)
                    .bind(ts(0).millis())
                    .bind(ts(1).millis())
                    .bind(json.to_string())
                    .execute(&mut c)
                    .await
                    .unwrap();
            }};
        }
        match db.backend() {
            "sqlite" => insert!(sqlx::SqliteConnection),
            _ => insert!(sqlx::PgConnection),
        }
        let h = db.store.episode_history(&page(50, 0)).await.unwrap();
        assert_eq!(h.items.len(), 1);
        let read = &h.items[0].opportunity;
        assert_eq!(read.fee_model, "venue_a:0.07;venue_b:sports=0.07");
        assert_eq!(read, &o, "everything else as written");
    })
    .await;
}

#[tokio::test]
async fn history_filters_use_indexes_on_sqlite() {
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let url = db.url.clone();
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    for (filter, index) in [
        ("", "arb_episodes_last_seen"),
        ("WHERE interval_code = '15m'", "arb_episodes_interval"),
        ("WHERE category = 'sports'", "arb_episodes_category"),
    ] {
        let sql = format!(
            "EXPLAIN QUERY PLAN SELECT * FROM arb_episodes {filter} ORDER BY last_seen_at DESC, id DESC LIMIT 50"
        );
        let rows: Vec<(i64, i64, i64, String)> =
            sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(&pool).await.unwrap();
        let plan: Vec<_> = rows.into_iter().map(|r| r.3).collect();
        assert!(
            plan.iter().any(|p| p.contains(index)) && !plan.iter().any(|p| p.contains("TEMP B-TREE")),
            "{filter}: {plan:?}"
        );
    }
    pool.close().await;
    db.cleanup().await;
}

#[tokio::test]
async fn pair_rejections_reject_list_unreject() {
    for_each_backend(async |db| {
        let s = &db.store;
        let p = |a: &str, b: &str| PairOverride {
            venue_a_market_id: a.into(),
            venue_b_market_id: b.into(),
        };
        assert!(s.pair_rejections().await.unwrap().is_empty());
        assert!(
            s.reject_pair(&p("KX-1", "0x1"), Some("different sources"), ts(0))
                .await
                .unwrap()
        );
        assert!(s.reject_pair(&p("KX-2", "0x2"), None, ts(1)).await.unwrap());
        // The same market in another pair is its own rejection (the key is the pair, not a market).
        assert!(s.reject_pair(&p("KX-1", "0x9"), None, ts(2)).await.unwrap());
        // Rejecting again: not new, the reason is replaced, the first time kept.
        assert!(!s.reject_pair(&p("KX-1", "0x1"), Some("inverted"), ts(5)).await.unwrap());
        let list = s.pair_rejections().await.unwrap();
        assert_eq!(
            list.iter().map(|r| r.pair.clone()).collect::<Vec<_>>(),
            [p("KX-1", "0x1"), p("KX-2", "0x2"), p("KX-1", "0x9")]
        );
        assert_eq!(list[0].reason.as_deref(), Some("inverted"));
        assert_eq!(list[0].created_at, ts(0));
        assert_eq!(list[1].reason, None);
        assert_eq!(s.unreject_pair(&p("KX-1", "0x1")).await.unwrap(), 1);
        assert_eq!(s.unreject_pair(&p("KX-1", "0x1")).await.unwrap(), 0);
        assert_eq!(s.pair_rejections().await.unwrap().len(), 2);
    })
    .await;
}

#[tokio::test]
async fn pair_overrides_add_list_remove() {
    for_each_backend(async |db| {
        let s = &db.store;
        let p = |a: &str, b: &str| PairOverride {
            venue_a_market_id: a.into(),
            venue_b_market_id: b.into(),
        };
        assert!(s.pair_overrides().await.unwrap().is_empty());
        assert!(s.add_pair_override(&p("KX-1", "0x1"), ts(0)).await.unwrap());
        assert!(s.add_pair_override(&p("KX-2", "0x2"), ts(1)).await.unwrap());
        // Either market already paired: refused.
        assert!(!s.add_pair_override(&p("KX-1", "0x9"), ts(2)).await.unwrap());
        assert!(!s.add_pair_override(&p("KX-9", "0x2"), ts(2)).await.unwrap());
        let list = s.pair_overrides().await.unwrap();
        assert_eq!(
            list.iter().map(|o| o.pair.clone()).collect::<Vec<_>>(),
            [p("KX-1", "0x1"), p("KX-2", "0x2")]
        );
        assert_eq!(list[1].created_at, ts(1));
        // Removed by either id.
        assert_eq!(s.remove_pair_override("0x1").await.unwrap(), 1);
        assert_eq!(s.remove_pair_override("KX-2").await.unwrap(), 1);
        assert_eq!(s.remove_pair_override("KX-2").await.unwrap(), 0);
        assert!(s.pair_overrides().await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn listings_carry_the_event_title_and_slug() {
    for_each_backend(async |db| {
        let s = &db.store;
        let window = |ex: Exchange, id: &str, ev: &str| Market {
            interval_code: Some(IntervalCode::M15),
            window_start: Some(ts(0)),
            window_end: Some(ts(900)),
            slug: Some(format!("{id}-slug")),
            ..Market::new(ex, id, ev, "KXBTC15M", "Bitcoin up or down?")
        };
        let closed = Market {
            status: Status::Closed,
            ..window(Exchange::VenueA, "KXBTC15M-OLD", "EV-A")
        };
        s.upsert_events(
            &[
                Event {
                    slug: Some("btc-updown-15m".into()),
                    ..Event::new(Exchange::VenueB, "EV-B", "SER", "Bitcoin Up or Down 19:00")
                },
                Event::new(Exchange::VenueA, "EV-A", "KXBTC15M", "BTC 15 min"),
            ],
            ts(0),
        )
        .await
        .unwrap();
        s.upsert_markets(
            &[
                window(Exchange::VenueA, "KXBTC15M-1", "EV-A"),
                window(Exchange::VenueB, "0xb1", "EV-B"),
                window(Exchange::VenueB, "0xb2", "EV-NONE"),
                closed,
            ],
            ts(0),
        )
        .await
        .unwrap();
        let l = s.arbitrage_listings().await.unwrap();
        let ids: Vec<_> = l.iter().map(|l| l.market.market_id.as_str()).collect();
        assert_eq!(ids, ["KXBTC15M-1", "0xb1", "0xb2"]);
        assert_eq!(l[0].event_title, "BTC 15 min");
        assert_eq!(l[0].event_slug, None);
        assert_eq!(l[1].event_title, "Bitcoin Up or Down 19:00");
        assert_eq!(l[1].event_slug.as_deref(), Some("btc-updown-15m"));
        assert_eq!(
            l[2].event_title, "Bitcoin up or down?",
            "no event: the market's own text"
        );
        assert!(matches!(l[0].kind, ListingKind::UpDown { .. }));
        assert_eq!(l[0].market.resolution_source, None);

        // The resolution source is stored as the venue states it, replaced by a later sync, and cleared when
        // the venue stops stating one.
        let sourced = |src: Option<&str>| Market {
            resolution_source: src.map(str::to_string),
            ..window(Exchange::VenueB, "0xb1", "EV-B")
        };
        let source_of = async |id: &str| {
            let l = s.arbitrage_listings().await.unwrap();
            let from_listing = l
                .iter()
                .find(|l| l.market.market_id == id)
                .unwrap()
                .market
                .resolution_source
                .clone();
            let from_catalog = s
                .get_market(Exchange::VenueB, id)
                .await
                .unwrap()
                .unwrap()
                .market
                .resolution_source;
            assert_eq!(from_listing, from_catalog);
            from_listing
        };
        s.upsert_markets(&[sourced(Some("https://data.chain.link/btc-usd"))], ts(1))
            .await
            .unwrap();
        assert_eq!(
            source_of("0xb1").await.as_deref(),
            Some("https://data.chain.link/btc-usd")
        );
        s.upsert_markets(&[sourced(None)], ts(2)).await.unwrap();
        assert_eq!(source_of("0xb1").await, None);
    })
    .await;
}
