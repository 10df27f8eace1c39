//! The whale concern on both backends: watchlists, whale-trade reads (threshold edge, dates, paging, totals,
//! aggregates), per-target stats, event activity and the daily pool.

use crate::testing::for_each_backend;
use crossbook_core::{Amount, Event, Exchange, Market, Outcome, Plan, Price, Status, TakerSide, Timestamp, Trade};
use crossbook_store::{StoreError, WhaleQuery, WhaleTarget};

const A: Exchange = Exchange::VenueA;
const B: Exchange = Exchange::VenueB;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_millis(1_763_000_000_000 + secs * 1000)
}

fn usd(u: i64) -> Amount {
    Amount::from_units(u)
}

/// A trade at 0.50 whose notional is exactly `notional_usd` dollars.
fn trade(ex: Exchange, id: &str, event: &str, market: &str, secs: i64, notional_usd: i64) -> Trade {
    Trade {
        exchange: ex,
        source_trade_id: id.into(),
        market_id: market.into(),
        event_id: event.into(),
        executed_at: at(secs),
        taker_side: TakerSide::Buy,
        outcome: Outcome::Yes,
        price: Price::from_cents(50),
        size: usd(notional_usd * 2),
    }
}

fn target(ex: Exchange, event: &str, min: i64) -> WhaleTarget {
    WhaleTarget {
        exchange: ex,
        event_id: event.into(),
        min_notional: usd(min),
        market_id: None,
    }
}

fn query(targets: Vec<WhaleTarget>) -> WhaleQuery {
    WhaleQuery {
        targets,
        start: None,
        end: None,
        limit: 50,
        offset: 0,
        stats_since: at(0),
    }
}

#[tokio::test]
async fn watchlist_lifecycle() {
    for_each_backend(async |db| {
        let s = &db.store;
        let alice = s.create_key("alice", Plan::Free).await.unwrap().info.customer_id;
        let bob = s.create_key("bob", Plan::Trader).await.unwrap().info.customer_id;
        s.upsert_events(&[Event::new(A, "EV1", "SER", "Event one")], at(0))
            .await
            .unwrap();

        let id1 = s.add_watch(alice, A, "EV1", usd(1000), at(1)).await.unwrap();
        let id2 = s.add_watch(alice, B, "EV2", usd(250), at(2)).await.unwrap();
        assert!(matches!(
            s.add_watch(alice, A, "EV1", usd(5), at(3)).await,
            Err(StoreError::Conflict(_))
        ));
        // Another customer may track the same event.
        let id3 = s.add_watch(bob, A, "EV1", usd(1), at(3)).await.unwrap();

        s.insert_trades(&[
            trade(A, "t1", "EV1", "M1", 10, 1000),
            trade(A, "t2", "EV1", "M1", 11, 999),
            trade(A, "t3", "EV1", "M1", -10, 5000),
        ])
        .await
        .unwrap();

        let list = s.list_watch(alice, Some(at(0))).await.unwrap();
        assert_eq!(list.iter().map(|e| e.id).collect::<Vec<_>>(), [id1, id2]);
        assert_eq!(list[0].event_title.as_deref(), Some("Event one"));
        assert_eq!(list[0].threshold, usd(1000));
        assert_eq!(list[0].created_at, at(1));
        // t1 counts (equal to the threshold), t2 is below it, t3 is before `since`.
        assert_eq!(list[0].whale_count, 1);
        assert_eq!(list[1].event_title, None);
        assert_eq!(
            s.list_watch(alice, None).await.unwrap()[0].whale_count,
            0,
            "no counts asked"
        );
        assert_eq!(s.list_watch(bob, Some(at(0))).await.unwrap()[0].whale_count, 2);

        assert!(s.get_watch(bob, id1, at(0)).await.unwrap().is_none(), "not bob's");
        assert!(s.set_watch_threshold(alice, id1, usd(999)).await.unwrap());
        assert!(!s.set_watch_threshold(bob, id1, usd(1)).await.unwrap());
        let e = s.get_watch(alice, id1, at(0)).await.unwrap().unwrap();
        assert_eq!((e.threshold, e.whale_count), (usd(999), 2));
        assert_eq!(s.find_watch(alice, B, "EV2", at(0)).await.unwrap().unwrap().id, id2);

        let mut watched = s.watched_events().await.unwrap();
        watched.sort();
        assert_eq!(watched, [(A, "EV1".to_string()), (B, "EV2".to_string())]);

        assert_eq!(s.delete_watch(bob, id1).await.unwrap(), None);
        assert_eq!(s.delete_watch(alice, id1).await.unwrap(), Some((A, "EV1".to_string())));
        assert_eq!(s.delete_watch(alice, id1).await.unwrap(), None);
        assert_eq!(s.delete_watch_by_event(alice, B, "EV2").await.unwrap(), Some(id2));
        assert_eq!(s.delete_watch_by_event(alice, B, "EV2").await.unwrap(), None);
        assert!(s.list_watch(alice, Some(at(0))).await.unwrap().is_empty());
        assert_eq!(s.list_watch(bob, Some(at(0))).await.unwrap()[0].id, id3);
        // Re-adding after a delete works.
        s.add_watch(alice, A, "EV1", usd(1000), at(4)).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn whale_trades_filter_order_page_and_aggregate() {
    for_each_backend(async |db| {
        let s = &db.store;
        s.upsert_events(&[Event::new(A, "EV1", "SER", "Event one")], at(0))
            .await
            .unwrap();
        let mut m = Market::new(A, "M1", "EV1", "SER", "Question one?");
        m.title = Some("Market one".into());
        let mut mb = Market::new(B, "0xabc", "EV2", "SER", "Question two?");
        mb.slug = Some("question-two".into());
        s.upsert_markets(&[m, mb], at(0)).await.unwrap();
        s.insert_trades(&[
            trade(A, "a1", "EV1", "M1", 100, 1000),
            trade(A, "a2", "EV1", "M1", 200, 999),
            trade(A, "a3", "EV1", "M1", 300, 2500),
            trade(A, "a4", "EV1", "M1", 300, 1500),
            trade(B, "b1", "EV2", "0xabc", 150, 600),
            trade(B, "b2", "EV2", "0xabc", 250, 400),
            trade(A, "x1", "OTHER", "MX", 260, 90_000),
        ])
        .await
        .unwrap();

        let q = query(vec![target(A, "EV1", 1000), target(B, "EV2", 500)]);
        let page = s.whale_trades(&q).await.unwrap();
        let ids: Vec<&str> = page.trades.iter().map(|t| t.source_trade_id.as_str()).collect();
        // Newest first; the two trades at 300 s by id, newest (last inserted) first.
        assert_eq!(ids, ["a4", "a3", "b1", "a1"]);
        assert_eq!(page.total, 4);
        assert_eq!(page.recent.trade_count, 4);
        assert_eq!(page.recent.total_volume, usd(1500 + 2500 + 600 + 1000));
        assert_eq!(page.recent.average(), usd(1400));
        let a3 = &page.trades[1];
        assert_eq!(a3.notional, usd(2500));
        assert_eq!(a3.price, Price::from_cents(50));
        assert_eq!(a3.size, usd(5000));
        assert_eq!(a3.event_title.as_deref(), Some("Event one"));
        assert_eq!(a3.market_title.as_deref(), Some("Market one"));
        assert_eq!(a3.executed_at, at(300));
        let b1 = &page.trades[2];
        assert_eq!(b1.market_title.as_deref(), Some("Question two?"));
        assert_eq!(b1.market_slug.as_deref(), Some("question-two"));
        assert_eq!(b1.event_title, None);

        // A threshold one micro-dollar above 1000 drops a1; one at 999 takes a2.
        let mut q2 = query(vec![WhaleTarget {
            min_notional: Amount::from_micros(1_000_000_001),
            ..target(A, "EV1", 0)
        }]);
        assert_eq!(s.whale_trades(&q2).await.unwrap().total, 2);
        q2.targets[0].min_notional = usd(999);
        assert_eq!(s.whale_trades(&q2).await.unwrap().total, 4);

        // Dates are inclusive and affect the page and total, not the recent aggregate.
        let mut q3 = q.clone();
        q3.start = Some(at(150));
        q3.end = Some(at(300));
        q3.stats_since = at(200);
        let p3 = s.whale_trades(&q3).await.unwrap();
        assert_eq!(p3.total, 3);
        assert_eq!(p3.trades.len(), 3);
        assert_eq!(p3.recent.trade_count, 2);

        // Paging.
        let mut q4 = q.clone();
        q4.limit = 2;
        q4.offset = 1;
        let p4 = s.whale_trades(&q4).await.unwrap();
        assert_eq!(
            p4.trades.iter().map(|t| t.source_trade_id.as_str()).collect::<Vec<_>>(),
            ["a3", "b1"]
        );
        assert_eq!(p4.total, 4);
        assert!(s.whale_trades(&query(vec![])).await.unwrap().trades.is_empty());

        // Stats per target, all time and since a time.
        let stats = s
            .whale_stats(
                &[target(A, "EV1", 1000), target(B, "EV2", 500), target(A, "NONE", 1)],
                None,
            )
            .await
            .unwrap();
        assert_eq!(stats[0].whales.trade_count, 3);
        assert_eq!(stats[0].whales.total_volume, usd(5000));
        assert_eq!(stats[0].market_count, 1);
        assert_eq!(stats[1].whales.trade_count, 1);
        assert_eq!(stats[2].whales.trade_count, 0);
        let recent = s.whale_stats(&[target(A, "EV1", 1000)], Some(at(250))).await.unwrap();
        assert_eq!(recent[0].whales.trade_count, 2);

        // Activity counts every trade, and whales at the target's threshold.
        let act = s
            .event_activity(&[target(A, "EV1", 1000), target(B, "EV2", 500)], at(0))
            .await
            .unwrap();
        assert_eq!(act[0].trades.trade_count, 4);
        assert_eq!(act[0].trades.total_volume, usd(1000 + 999 + 2500 + 1500));
        assert_eq!(act[0].whale_trades, 3);
        assert_eq!(act[1].trades.trade_count, 2);
        assert_eq!(act[1].whale_trades, 1);
    })
    .await;
}

#[tokio::test]
async fn pool_is_written_once_per_day() {
    for_each_backend(async |db| {
        let s = &db.store;
        let mut closed = Event::new(A, "CLOSED", "SER", "Closed");
        closed.status = Status::Closed;
        closed.volume_24h = Some(usd(1_000_000));
        let mut big = Event::new(B, "BIG", "SER", "Big");
        big.volume_24h = Some(usd(5000));
        let small = Event::new(A, "SMALL", "SER", "Small");
        let by_markets = Event::new(A, "MKTS", "SER", "By markets");
        s.upsert_events(&[closed, big, small, by_markets], at(0)).await.unwrap();
        let mut m = Market::new(A, "MM", "MKTS", "SER", "q");
        m.volume_24h = usd(700);
        s.upsert_markets(&[m], at(0)).await.unwrap();

        let c = s.pool_candidates(10).await.unwrap();
        let ids: Vec<&str> = c.iter().map(|c| c.event_id.as_str()).collect();
        assert_eq!(ids, ["BIG", "MKTS", "SMALL"]);
        assert_eq!(c[1].volume_24h, usd(700));
        assert_eq!(s.pool_candidates(1).await.unwrap().len(), 1);

        assert!(s.pool("2026-11-21").await.unwrap().is_empty());
        let first = vec![(B, "BIG".to_string()), (A, "SMALL".to_string())];
        assert_eq!(s.save_pool("2026-11-21", &first).await.unwrap(), first);
        // A second drawer of the same day gets the stored pool.
        let other = vec![(A, "MKTS".to_string())];
        assert_eq!(s.save_pool("2026-11-21", &other).await.unwrap(), first);
        assert_eq!(s.save_pool("2026-11-22", &other).await.unwrap(), other);
        assert_eq!(s.pool("2026-11-21").await.unwrap(), first);
    })
    .await;
}

/// One market's trades in a time range, oldest first with ties by row id, read in pages from a cursor;
/// other markets and venues, and trades outside the range, are not read.
#[tokio::test]
async fn market_trades_read_one_market_in_time_order_by_pages() {
    for_each_backend(async |db| {
        let s = &db.store;
        let mut batch = Vec::new();
        for i in 0..10 {
            // Two trades a second, so pages cut through ties on the execution time.
            batch.push(trade(A, &format!("m{i}"), "E", "M", 10 + i / 2, 100));
        }
        batch.push(trade(A, "other-market", "E", "M2", 12, 100));
        batch.push(trade(B, "other-venue", "E", "M", 12, 100));
        batch.push(trade(A, "too-early", "E", "M", 1, 100));
        batch.push(trade(A, "too-late", "E", "M", 100, 100));
        s.insert_trades(&batch).await.unwrap();

        let mut got = Vec::new();
        let mut after = None;
        loop {
            let page = s.market_trades(A, "M", at(5), at(50), after, 3).await.unwrap();
            assert!(page.len() <= 3);
            let Some(last) = page.last() else { break };
            after = Some((last.trade.executed_at, last.id));
            got.extend(page);
        }
        let ids: Vec<&str> = got.iter().map(|t| t.trade.source_trade_id.as_str()).collect();
        let expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
        assert_eq!(ids, expected, "every trade of the market in range, once, in time order");
        assert!(
            got.windows(2)
                .all(|w| (w[0].trade.executed_at, w[0].id) < (w[1].trade.executed_at, w[1].id))
        );
        assert_eq!(got[0].trade, batch[0], "read back as written");
    })
    .await;
}

/// The trade tape: newest first without a range, paged from a cursor through ties on the execution time; one
/// outcome only when asked; a range read oldest first.
#[tokio::test]
async fn the_trade_tape_reads_newest_first_and_by_outcome() {
    use crossbook_store::TradeQuery;
    for_each_backend(async |db| {
        let s = &db.store;
        let mut batch = Vec::new();
        for i in 0..9 {
            let mut t = trade(A, &format!("t{i}"), "E", "M", 10 + i / 3, 100);
            t.outcome = if i % 3 == 2 { Outcome::Yes } else { Outcome::No };
            batch.push(t);
        }
        batch.push(trade(A, "other-market", "E", "M2", 30, 100));
        s.insert_trades(&batch).await.unwrap();
        let query = |after, outcome, range, newest_first| TradeQuery {
            exchange: A,
            market_id: "M",
            outcome,
            range,
            after,
            newest_first,
            limit: 2,
        };
        let walk = async |outcome, range, newest_first| {
            let mut ids = Vec::new();
            let mut after = None;
            loop {
                let page = s.trade_page(&query(after, outcome, range, newest_first)).await.unwrap();
                let Some(last) = page.last() else { break };
                after = Some((last.trade.executed_at, last.id));
                ids.extend(page.iter().map(|t| t.trade.source_trade_id.clone()));
            }
            ids
        };
        let newest: Vec<String> = (0..9).rev().map(|i| format!("t{i}")).collect();
        assert_eq!(walk(None, None, true).await, newest, "newest first, ties by row id");
        assert_eq!(walk(Some(Outcome::Yes), None, true).await, ["t8", "t5", "t2"]);
        assert_eq!(
            walk(None, Some((at(11), at(12))), false).await,
            ["t3", "t4", "t5", "t6", "t7", "t8"],
            "a range, oldest first"
        );
    })
    .await;
}

/// OHLCV aggregates follow the trades inserted, batch after batch: YES prices (a NO trade at p is 1 − p), open
/// and close by time with ties in insertion order, a late trade put in its place, a resent trade counted once,
/// and each span read back by range.
#[tokio::test]
async fn candles_are_aggregated_as_trades_are_inserted() {
    use crossbook_core::candle::Span;
    for_each_backend(async |db| {
        let s = &db.store;
        let day0 = 1_763_337_600_000; // 2025-11-17T00:00:00Z
        let t = |id: &str, ms: i64, outcome: Outcome, cents: i64, size: i64| Trade {
            exchange: B,
            source_trade_id: id.into(),
            market_id: "M".into(),
            event_id: "E".into(),
            executed_at: Timestamp::from_millis(day0 + ms),
            taker_side: TakerSide::Buy,
            outcome,
            price: Price::from_cents(cents),
            size: Amount::from_units(size),
        };
        // Minute 0: 0.40, then NO at 0.55 (YES 0.45) and YES 0.42 at the same millisecond.
        s.insert_trades(&[t("a", 1_000, Outcome::Yes, 40, 10), t("b", 30_000, Outcome::No, 55, 4)])
            .await
            .unwrap();
        // A second batch: the tie (inserted later, so the close), a resend of "a", minute 1, and the next day.
        s.insert_trades(&[
            t("c", 30_000, Outcome::Yes, 42, 1),
            t("a", 1_000, Outcome::Yes, 40, 10),
            t("d", 61_000, Outcome::Yes, 38, 2),
            t("e", 86_400_000 + 5, Outcome::Yes, 60, 1),
        ])
        .await
        .unwrap();
        // A late trade, earlier than minute 0's open: it becomes the open.
        s.insert_trades(&[t("late", 500, Outcome::Yes, 39, 1)]).await.unwrap();
        let read = async |span, from: i64, to: i64| {
            s.candles(
                B,
                "M",
                span,
                Timestamp::from_millis(day0 + from),
                Timestamp::from_millis(day0 + to),
            )
            .await
            .unwrap()
        };
        let minutes = read(Span::Minute, 0, 86_400_000).await;
        assert_eq!(minutes.len(), 2, "minute 0 and minute 1 of day 0");
        let m0 = minutes[0];
        assert_eq!(m0.start, Timestamp::from_millis(day0));
        assert_eq!(
            (m0.open, m0.high, m0.low, m0.close),
            (
                Price::from_cents(39),
                Price::from_cents(45),
                Price::from_cents(39),
                Price::from_cents(42)
            )
        );
        assert_eq!((m0.open_at.millis(), m0.close_at.millis()), (day0 + 500, day0 + 30_000));
        assert_eq!(m0.trades, 4, "the resent trade counts once");
        assert_eq!(m0.volume, Amount::from_units(16));
        // 0.39×1 + 0.40×10 + 0.55×4 + 0.42×1 dollars.
        assert_eq!(m0.notional, Amount::from_micros(7_010_000));
        assert_eq!((minutes[1].open, minutes[1].trades), (Price::from_cents(38), 1));
        let days = read(Span::Day, 0, 2 * 86_400_000).await;
        assert_eq!(days.len(), 2);
        assert_eq!(
            (
                days[0].open,
                days[0].close,
                days[0].trades,
                days[1].close,
                days[1].trades
            ),
            (
                Price::from_cents(39),
                Price::from_cents(38),
                5,
                Price::from_cents(60),
                1
            )
        );
        assert_eq!(read(Span::Hour, 0, 3_600_000).await.len(), 1);
        assert!(
            read(Span::Minute, 120_000, 86_400_000).await.is_empty(),
            "the range bounds the read"
        );
        assert!(
            s.candles(
                A,
                "M",
                Span::Day,
                Timestamp::from_millis(day0),
                Timestamp::from_millis(day0 + 86_400_000)
            )
            .await
            .unwrap()
            .is_empty(),
            "per venue"
        );
    })
    .await;
}
