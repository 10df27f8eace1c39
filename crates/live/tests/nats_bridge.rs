//! The bridge over a real `nats-server` (started per test on a free port, JetStream in a temporary folder):
//! a leader's books and events reach a mirror, holes and garbage are handled, a NATS outage is visible and
//! recovers alone, a new leader term makes the books stale until the new leader's keyframes, and books the
//! leader drops leave the mirror.

use std::{sync::Arc, time::Duration};

use crossbook_core::{
    Amount, BookSnapshot, Exchange, Price, Timestamp,
    book::{BookChange, BookKey, Level, LevelChange, Side},
};
use crossbook_live::{
    BookChanged, Bus, DomainEvent, LiveBooks,
    nats::{
        BusSettings, connect, mirror, publisher, subject,
        wire::{Body, Envelope, VERSION},
    },
    testing::{NatsServer, nats_binary},
};
use crossbook_store::testing::eventually;
use tokio_util::sync::CancellationToken;

fn lv(cents: i64, size: i64) -> Level {
    Level {
        price: Price::from_cents(cents),
        size: Amount::from_units(size),
    }
}

fn book(id: &str, bid: i64, ts: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: id.into(),
        asset_id: None,
        timestamp: Timestamp(ts),
        bids: vec![lv(bid, 10)],
        asks: vec![],
        no_bids: vec![lv(40, 5)],
    }
}

/// What ingestion does: the live map first, then the bus.
fn ingest(live: &LiveBooks, bus: &Bus, b: BookSnapshot, change: BookChange) {
    let seq = live.upsert(b.clone()).expect("a change");
    bus.publish(DomainEvent::BookUpdated(Arc::new(BookChanged {
        key: BookKey::of(&b),
        book_seq: seq,
        timestamp: b.timestamp,
        change,
        venue_ts: None,
        received_at: b.timestamp,
    })));
}

/// Waits (at most 15 s) until `f` holds.
async fn until(what: &str, mut f: impl FnMut() -> bool) {
    eventually(what, Duration::from_secs(15), async || f().then_some(())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_follows_the_leader_and_survives_holes_garbage_and_outages() {
    let Some(bin) = nats_binary() else { return };
    let mut nats = NatsServer::start(bin);
    let settings = BusSettings {
        url: nats.url(),
        window: Duration::from_secs(300),
    };
    let cancel = CancellationToken::new();

    // The leader: a book known before the mirror starts (it must come from the keyframe stream).
    let (live, bus) = (LiveBooks::new(), Bus::default());
    let rx = bus.subscribe();
    let conn = connect(&settings, "leader", false).await.unwrap();
    tokio::spawn(publisher::run(
        settings.clone(),
        conn,
        live.clone(),
        rx,
        publisher::PublisherStatus::default(),
        cancel.clone(),
    ));
    let a = BookKey::venue_a("KX.A");
    let first = book("KX.A", 50, 1);
    ingest(
        &live,
        &bus,
        first.clone(),
        BookChange::Snapshot {
            bids: first.bids.clone(),
            asks: vec![],
            no_bids: first.no_bids.clone(),
        },
    );
    // Wait until the keyframe is stored.
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    eventually("a stored keyframe", Duration::from_secs(15), async || {
        let mut s = js.get_stream(crossbook_live::nats::KEYFRAMES_STREAM).await.ok()?;
        (s.info().await.ok()?.state.messages >= 1).then_some(())
    })
    .await;

    // The mirror.
    let (m_live, m_bus) = (LiveBooks::new(), Bus::default());
    let mut m_rx = m_bus.subscribe();
    let status = mirror::MirrorStatus::default();
    let conn = connect(&settings, "mirror", true).await.unwrap();
    tokio::spawn(mirror::run(
        conn,
        m_live.clone(),
        m_bus.clone(),
        status.clone(),
        cancel.clone(),
    ));
    until("the mirror to load the book", || m_live.get(&a) == Some(first.clone())).await;
    assert_eq!(m_live.entry(&a).unwrap().seq, live.entry(&a).unwrap().seq);
    assert!(status.serving());

    // A change follows, with the leader's sequence, and reaches the mirror's bus.
    let mut second = first.clone();
    second.bids = vec![lv(52, 10)];
    second.timestamp = Timestamp(2);
    ingest(
        &live,
        &bus,
        second.clone(),
        BookChange::Delta(vec![
            LevelChange {
                side: Side::Bid,
                price: Price::from_cents(50),
                size: Amount::from_units(0),
            },
            LevelChange {
                side: Side::Bid,
                price: Price::from_cents(52),
                size: Amount::from_units(10),
            },
        ]),
    );
    until("the change", || m_live.get(&a).is_some_and(|b| b.bids == second.bids)).await;
    assert_eq!(m_live.entry(&a).unwrap().seq, live.entry(&a).unwrap().seq);
    let mut saw_change = false;
    while let Ok(ev) = m_rx.try_recv() {
        if let DomainEvent::BookUpdated(c) = ev
            && c.book_seq == 2
            && matches!(c.change, BookChange::Delta(_))
        {
            saw_change = true;
        }
    }
    assert!(saw_change, "the change is on the mirror's bus");

    // Other events pass through.
    bus.publish(DomainEvent::CatalogSynced {
        exchange: Exchange::VenueB,
        markets: 3,
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let ev = tokio::time::timeout_at(deadline, m_rx.recv())
            .await
            .expect("catalog event")
            .unwrap();
        if matches!(ev, DomainEvent::CatalogSynced { markets: 3, .. }) {
            break;
        }
    }

    // Garbage on a subject is counted and skipped; the mirror goes on.
    let raw = async_nats::connect(nats.url()).await.unwrap();
    raw.publish("crossbook.book.venue_a.KX%2EA._", "not json".into())
        .await
        .unwrap();
    raw.flush().await.unwrap();
    until("the malformed count", || status.read().malformed == 1).await;
    assert!(m_live.get(&a).is_some(), "the book stays fresh");

    // A hole in the book's sequence: stale at once, repaired by the keyframe the mirror asks for.
    live.upsert(book("KX.A", 53, 3)); // seq 3 never published
    let mut fourth = book("KX.A", 54, 4);
    fourth.bids = vec![lv(54, 10)];
    ingest(
        &live,
        &bus,
        fourth.clone(),
        BookChange::Delta(vec![LevelChange {
            side: Side::Bid,
            price: Price::from_cents(54),
            size: Amount::from_units(10),
        }]),
    );
    until("the repair after the hole", || {
        m_live.get(&a).is_some_and(|b| b.bids == fourth.bids) && status.read().holes >= 1
    })
    .await;
    assert_eq!(m_live.entry(&a).unwrap().seq, 4);

    // NATS goes away: the mirror's books turn stale and it says it is not serving.
    nats.stop();
    until("stale on loss", || {
        !status.serving() && m_live.entry(&a).is_some_and(|e| e.stale)
    })
    .await;
    let mut saw_stale = false;
    while let Ok(ev) = m_rx.try_recv() {
        saw_stale |= matches!(
            ev,
            DomainEvent::BooksStale {
                cause: crossbook_core::book::GapCause::Disconnect,
                ..
            }
        );
    }
    assert!(saw_stale, "the loss is on the mirror's bus");
    // The leader's capture goes on meanwhile.
    let fifth = book("KX.A", 55, 5);
    ingest(
        &live,
        &bus,
        fifth.clone(),
        BookChange::Snapshot {
            bids: fifth.bids.clone(),
            asks: vec![],
            no_bids: fifth.no_bids.clone(),
        },
    );
    // Back: the mirror recovers alone, at the leader's current book.
    nats.restart();
    until("recovery", || status.serving() && m_live.get(&a) == live.get(&a)).await;
    assert_eq!(m_live.entry(&a).unwrap().seq, live.entry(&a).unwrap().seq);
    cancel.cancel();
}

/// A leader's publisher on its own token, with its status.
async fn start_leader(
    settings: &BusSettings,
    live: &LiveBooks,
    bus: &Bus,
    cancel: &CancellationToken,
) -> publisher::PublisherStatus {
    let status = publisher::PublisherStatus::default();
    let conn = connect(settings, "leader", false).await.unwrap();
    tokio::spawn(publisher::run(
        settings.clone(),
        conn,
        live.clone(),
        bus.subscribe(),
        status.clone(),
        cancel.clone(),
    ));
    status
}

fn snapshot_of(b: &BookSnapshot) -> BookChange {
    BookChange::Snapshot {
        bids: b.bids.clone(),
        asks: b.asks.clone(),
        no_bids: b.no_bids.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_leader_term_restarts_the_books_and_dropped_books_leave_the_mirror() {
    let Some(bin) = nats_binary() else { return };
    let nats = NatsServer::start(bin);
    let settings = BusSettings {
        url: nats.url(),
        window: Duration::from_secs(300),
    };
    let cancel = CancellationToken::new();

    // The first leader holds two books.
    let (live1, bus1, term1) = (LiveBooks::new(), Bus::default(), cancel.child_token());
    let status1 = start_leader(&settings, &live1, &bus1, &term1).await;
    until("the first leader connected", || status1.read().connected).await;
    let (a, b) = (BookKey::venue_a("KX.A"), BookKey::venue_a("KX.B"));
    let (book_a, book_b) = (book("KX.A", 50, 1), book("KX.B", 30, 1));
    ingest(&live1, &bus1, book_a.clone(), snapshot_of(&book_a));
    ingest(&live1, &bus1, book_b.clone(), snapshot_of(&book_b));

    let (m_live, m_bus) = (LiveBooks::new(), Bus::default());
    let mut m_rx = m_bus.subscribe();
    let status = mirror::MirrorStatus::default();
    let conn = connect(&settings, "mirror", true).await.unwrap();
    tokio::spawn(mirror::run(
        conn,
        m_live.clone(),
        m_bus.clone(),
        status.clone(),
        cancel.clone(),
    ));
    until("the mirror holds both books", || {
        m_live.get(&a) == Some(book_a.clone()) && m_live.get(&b) == Some(book_b.clone())
    })
    .await;
    let p = status1.read();
    assert!(p.publishing && p.connected && p.published >= 2 && p.term > 0, "{p:?}");
    assert_eq!(p.last_error, None, "{p:?}");

    // The leader stops following KX.B (its market closed): the mirror drops it, before the sync's event.
    live1.retain_markets(Exchange::VenueA, |m| m == "KX.A");
    bus1.publish(DomainEvent::CatalogSynced {
        exchange: Exchange::VenueA,
        markets: 1,
    });
    until("KX.B dropped", || {
        m_live.get(&b).is_none() && m_live.entry(&b).is_none()
    })
    .await;
    assert_eq!(m_live.get(&a), Some(book_a.clone()), "the other book stays");
    assert_eq!(m_live.len(), 1);

    // The first leader dies; a second one starts with its own numbering and a different book.
    term1.cancel();
    until("the first leader stopped publishing", || !status1.read().publishing).await;
    while m_rx.try_recv().is_ok() {}
    let (live2, bus2, term2) = (LiveBooks::new(), Bus::default(), cancel.child_token());
    let status2 = start_leader(&settings, &live2, &bus2, &term2).await;
    let newer = book("KX.A", 61, 9);
    ingest(&live2, &bus2, newer.clone(), snapshot_of(&newer));
    // The new book's number (1) is below the mirror's: only the new term lets its keyframe in.
    assert!(live2.entry(&a).unwrap().seq <= m_live.entry(&a).unwrap().seq);
    until("the new leader's book", || {
        m_live.get(&a) == Some(newer.clone()) && m_live.entry(&a).is_some_and(|e| !e.stale)
    })
    .await;
    assert!(status2.read().term > p.term, "terms grow");
    // The clients of the mirror saw the hand-over: the book stale (restart), then its new snapshot.
    let (mut stale_at, mut snapshot_at) = (None, None);
    let mut i = 0;
    while let Ok(ev) = m_rx.try_recv() {
        i += 1;
        match ev {
            DomainEvent::BooksStale { keys, cause, .. } if keys.contains(&a) => {
                assert_eq!(cause, crossbook_core::book::GapCause::Restart);
                stale_at.get_or_insert(i);
            }
            DomainEvent::BookUpdated(c)
                if c.key == a && matches!(c.change, BookChange::Snapshot { .. }) && c.timestamp == newer.timestamp =>
            {
                snapshot_at.get_or_insert(i);
            }
            _ => {}
        }
    }
    assert!(
        matches!((stale_at, snapshot_at), (Some(s), Some(n)) if s < n),
        "stale then snapshot: {stale_at:?} {snapshot_at:?}"
    );

    // A late message of the old term is skipped.
    let late = Envelope {
        v: VERSION,
        term: p.term,
        seq: 1_000,
        sent_at: Timestamp::now(),
        body: Body::Book(BookChanged {
            key: a.clone(),
            book_seq: 1_000,
            timestamp: Timestamp(99),
            change: snapshot_of(&book_a),
            venue_ts: None,
            received_at: Timestamp(99),
        }),
    };
    let raw = async_nats::connect(nats.url()).await.unwrap();
    raw.publish(subject::of(&late.body), late.encode().into())
        .await
        .unwrap();
    raw.flush().await.unwrap();
    // Then a change of the current leader: once it is applied, the late message has been seen.
    let mut newest = newer.clone();
    newest.bids = vec![lv(62, 10)];
    newest.timestamp = Timestamp(10);
    ingest(
        &live2,
        &bus2,
        newest.clone(),
        BookChange::Delta(vec![
            LevelChange {
                side: Side::Bid,
                price: Price::from_cents(61),
                size: Amount::from_units(0),
            },
            LevelChange {
                side: Side::Bid,
                price: Price::from_cents(62),
                size: Amount::from_units(10),
            },
        ]),
    );
    until("the current leader's change", || m_live.get(&a) == Some(newest.clone())).await;
    assert_eq!(m_live.entry(&a).unwrap().seq, live2.entry(&a).unwrap().seq);
    assert!(status.serving());
    cancel.cancel();
}
