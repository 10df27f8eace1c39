//! The webhooks concern on both backends: registrations (one per type per customer, update, delete, the
//! dispatcher's view) and the delivery log (batched appends, trimming, attempts of deleted registrations,
//! pruning by count and age).

use crate::testing::for_each_backend;
use crossbook_core::{Plan, Timestamp};
use crossbook_store::{NewDelivery, Store, WebhookKind, webhooks::DELIVERY_LOG_KEEP};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_millis(1_763_000_000_000 + secs * 1000)
}

fn attempt(webhook_id: i64, n: i64) -> NewDelivery {
    NewDelivery {
        webhook_id,
        message_id: format!("msg_{webhook_id}_{n}"),
        event_type: "whale.entry".into(),
        status_code: if n % 2 == 0 { Some(200) } else { None },
        latency_ms: n,
        error: if n % 2 == 0 {
            None
        } else {
            Some("connect timed out".into())
        },
        blocked: n % 3 == 0,
        created_at: at(n),
    }
}

#[tokio::test]
async fn one_registration_per_type_per_customer() {
    for_each_backend(async |db| {
        let s = &db.store;
        let alice = s.create_key("alice", Plan::Trader).await.unwrap().info.customer_id;
        let bob = s.create_key("bob", Plan::Builder).await.unwrap().info.customer_id;
        // A second key of the same customer sees the same registrations.
        assert_eq!(
            s.create_key("alice", Plan::Trader).await.unwrap().info.customer_id,
            alice
        );

        let w = s
            .create_webhook(alice, WebhookKind::Whale, "https://a.example/w", "s1", true, at(0))
            .await
            .unwrap()
            .expect("created");
        assert_eq!(
            (w.customer_id, w.kind, w.url.as_str(), w.secret.as_str(), w.enabled),
            (alice, WebhookKind::Whale, "https://a.example/w", "s1", true)
        );
        assert_eq!((w.created_at, w.updated_at), (at(0), at(0)));

        // The same type again is a conflict; the other type and another customer are not.
        assert!(
            s.create_webhook(alice, WebhookKind::Whale, "https://x.example/", "s2", true, at(1))
                .await
                .unwrap()
                .is_none()
        );
        let a2 = s
            .create_webhook(alice, WebhookKind::Arbitrage, "https://a.example/a", "s3", true, at(2))
            .await
            .unwrap()
            .unwrap();
        let b1 = s
            .create_webhook(bob, WebhookKind::Whale, "https://b.example/w", "s4", true, at(3))
            .await
            .unwrap()
            .unwrap();
        assert_ne!(a2.id, w.id);

        assert_eq!(s.webhook(alice, WebhookKind::Whale).await.unwrap(), Some(w.clone()));
        assert_eq!(s.webhook(bob, WebhookKind::Arbitrage).await.unwrap(), None);
        let kinds: Vec<_> = s
            .customer_webhooks(alice)
            .await
            .unwrap()
            .iter()
            .map(|w| w.kind)
            .collect();
        assert_eq!(kinds, [WebhookKind::Whale, WebhookKind::Arbitrage]);

        // Update: the URL, and `enabled` only when given.
        let u = s
            .update_webhook(alice, WebhookKind::Whale, "https://a.example/w2", None, at(10))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (u.url.as_str(), u.enabled, u.secret.as_str()),
            ("https://a.example/w2", true, "s1")
        );
        assert_eq!((u.created_at, u.updated_at), (at(0), at(10)));
        let u = s
            .update_webhook(alice, WebhookKind::Whale, "https://a.example/w3", Some(false), at(11))
            .await
            .unwrap()
            .unwrap();
        assert!(!u.enabled);
        assert!(
            s.update_webhook(bob, WebhookKind::Arbitrage, "https://b.example/", None, at(12))
                .await
                .unwrap()
                .is_none()
        );

        // The dispatcher sees enabled registrations only.
        let enabled: Vec<i64> = s.enabled_webhooks().await.unwrap().iter().map(|w| w.id).collect();
        assert_eq!(enabled, [a2.id, b1.id]);

        // Delete: once, then nothing; a new registration of that type gets a new id.
        assert!(s.delete_webhook(alice, WebhookKind::Arbitrage).await.unwrap());
        assert!(!s.delete_webhook(alice, WebhookKind::Arbitrage).await.unwrap());
        assert_eq!(s.webhook(alice, WebhookKind::Arbitrage).await.unwrap(), None);
        let again = s
            .create_webhook(alice, WebhookKind::Arbitrage, "https://a.example/a", "s5", true, at(20))
            .await
            .unwrap()
            .unwrap();
        assert!(again.id > a2.id, "ids are never reused");
    })
    .await;
}

#[tokio::test]
async fn delivery_log_keeps_the_newest_attempts() {
    for_each_backend(async |db| {
        let s = &db.store;
        let c = s.create_key("carol", Plan::Trader).await.unwrap().info.customer_id;
        let w = s
            .create_webhook(c, WebhookKind::Whale, "https://c.example/", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();
        let a = s
            .create_webhook(c, WebhookKind::Arbitrage, "https://c.example/a", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();

        // Round trip of every field, newest first.
        s.record_deliveries(&[attempt(w.id, 1), attempt(w.id, 2), attempt(a.id, 3)])
            .await
            .unwrap();
        let log = s.deliveries(w.id, 100).await.unwrap();
        let got: Vec<NewDelivery> = log.iter().map(|d| d.attempt.clone()).collect();
        assert_eq!(got, [attempt(w.id, 2), attempt(w.id, 1)]);
        assert!(log[0].seq > log[1].seq);
        assert_eq!(s.deliveries(a.id, 100).await.unwrap().len(), 1);
        assert_eq!(s.deliveries(w.id, 1).await.unwrap()[0].attempt, attempt(w.id, 2));

        // Batches beyond the limit keep the newest DELIVERY_LOG_KEEP per registration.
        let batch: Vec<NewDelivery> = (10..10 + DELIVERY_LOG_KEEP + 30).map(|n| attempt(w.id, n)).collect();
        s.record_deliveries(&batch).await.unwrap();
        let log = s.deliveries(w.id, 1000).await.unwrap();
        assert_eq!(log.len() as i64, DELIVERY_LOG_KEEP);
        assert_eq!(
            log[0].attempt.message_id,
            format!("msg_{}_{}", w.id, 10 + DELIVERY_LOG_KEEP + 29)
        );
        assert_eq!(
            log.last().unwrap().attempt.message_id,
            format!("msg_{}_{}", w.id, 10 + 30)
        );
        // The other registration's log is untouched.
        assert_eq!(s.deliveries(a.id, 1000).await.unwrap().len(), 1);

        // Deleting a registration deletes its log; attempts that arrive for it afterwards are dropped.
        assert!(s.delete_webhook(c, WebhookKind::Whale).await.unwrap());
        assert!(s.deliveries(w.id, 1000).await.unwrap().is_empty());
        s.record_deliveries(&[attempt(w.id, 999), attempt(a.id, 1000)])
            .await
            .unwrap();
        assert!(s.deliveries(w.id, 1000).await.unwrap().is_empty());
        assert_eq!(s.deliveries(a.id, 1000).await.unwrap().len(), 2);
        s.record_deliveries(&[]).await.unwrap();
    })
    .await;
}

/// The message ids of a registration's log, newest first.
async fn logged(s: &dyn Store, webhook_id: i64) -> Vec<String> {
    s.deliveries(webhook_id, 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.attempt.message_id)
        .collect()
}

/// The message ids `attempt(webhook_id, n)` gives for `ns`, newest (last) first.
fn ids(webhook_id: i64, ns: impl DoubleEndedIterator<Item = i64>) -> Vec<String> {
    ns.rev().map(|n| format!("msg_{webhook_id}_{n}")).collect()
}

/// Prunes in steps of `max_rows` until done; the rows removed and the calls made. Every step stays within
/// its budget.
async fn prune_all(s: &dyn Store, keep: u32, before: Option<Timestamp>, max_rows: u32) -> (u64, u32) {
    let (mut rows, mut calls) = (0, 0);
    loop {
        let p = s.prune_deliveries(keep, before, max_rows).await.unwrap();
        assert!(p.rows <= u64::from(max_rows), "{p:?}");
        assert_eq!(p.partitions, 0);
        rows += p.rows;
        calls += 1;
        assert!(calls < 100, "pruning does not finish");
        if p.done {
            return (rows, calls);
        }
    }
}

#[tokio::test]
async fn pruning_keeps_the_newest_attempts_per_registration_and_drops_old_ones() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let c = s.create_key("dora", Plan::Trader).await.unwrap().info.customer_id;
        let o = s.create_key("otto", Plan::Trader).await.unwrap().info.customer_id;
        let w = s
            .create_webhook(c, WebhookKind::Whale, "https://d.example/w", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();
        let a = s
            .create_webhook(c, WebhookKind::Arbitrage, "https://d.example/a", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();
        let other = s
            .create_webhook(o, WebhookKind::Whale, "https://o.example/w", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();

        // attempt(_, n) is created at at(n): n < 1000 is older than the cutoff.
        const KEEP: u32 = 5;
        let cutoff = Some(at(1_000));
        // Old attempts first, then more than KEEP recent ones, the registrations interleaved across batches.
        s.record_deliveries(&[
            attempt(w.id, 1),
            attempt(a.id, 2),
            attempt(w.id, 3),
            attempt(other.id, 2_001),
        ])
        .await
        .unwrap();
        for n in 0..12 {
            s.record_deliveries(&[attempt(w.id, 2_000 + n), attempt(a.id, 3_000 + n)])
                .await
                .unwrap();
        }
        // The other registration: fewer than KEEP, all recent.
        s.record_deliveries(&[attempt(other.id, 2_002), attempt(other.id, 2_003)])
            .await
            .unwrap();
        let other_before = logged(s, other.id).await;
        assert_eq!(other_before, ids(other.id, 2_001..2_004));

        // No limit at all removes nothing.
        assert_eq!(prune_all(s, 0, None, 3).await, (0, 1));
        assert_eq!(logged(s, w.id).await.len(), 14);

        // Both rules, in steps of at most 3 rows: exactly the newest KEEP of each registration remain.
        let (rows, calls) = prune_all(s, KEEP, cutoff, 3).await;
        assert_eq!(rows, (14 - 5) + (13 - 5));
        assert!(calls >= 6, "{calls} calls for {rows} rows in steps of 3");
        assert_eq!(logged(s, w.id).await, ids(w.id, 2_007..2_012));
        assert_eq!(logged(s, a.id).await, ids(a.id, 3_007..3_012));
        assert_eq!(
            logged(s, other.id).await,
            other_before,
            "other registrations are untouched"
        );

        // Nothing left to do: one empty, finished step.
        assert_eq!(prune_all(s, KEEP, cutoff, 3).await, (0, 1));
        assert_eq!(
            s.prune_deliveries(KEEP, cutoff, 1_000).await.unwrap(),
            crossbook_store::Pruned {
                rows: 0,
                partitions: 0,
                done: true
            }
        );
    })
    .await;
}

#[tokio::test]
async fn pruning_by_age_alone_by_count_alone_and_inside_the_newest() {
    for_each_backend(async |db| {
        let s = db.store.as_ref();
        let c = s.create_key("erin", Plan::Trader).await.unwrap().info.customer_id;
        let w = s
            .create_webhook(c, WebhookKind::Whale, "https://e.example/w", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();
        let a = s
            .create_webhook(c, WebhookKind::Arbitrage, "https://e.example/a", "s", true, at(0))
            .await
            .unwrap()
            .unwrap();
        let batch: Vec<NewDelivery> = (2_000..2_010).map(|n| attempt(w.id, n)).collect();
        s.record_deliveries(&batch).await.unwrap();
        // An old attempt logged after recent ones (ids follow logging, not creation).
        s.record_deliveries(&[attempt(w.id, 7), attempt(a.id, 2_100), attempt(a.id, 8)])
            .await
            .unwrap();

        // Age alone (keep = 0): only the old attempts go, wherever they are in the log.
        assert_eq!(prune_all(s, 0, Some(at(1_000)), 100).await.0, 2);
        assert_eq!(logged(s, w.id).await, ids(w.id, 2_000..2_010));
        assert_eq!(logged(s, a.id).await, ids(a.id, 2_100..2_101));

        // Count alone: the newest 4 of each.
        assert_eq!(prune_all(s, 4, None, 100).await.0, 6);
        assert_eq!(logged(s, w.id).await, ids(w.id, 2_006..2_010));
        assert_eq!(logged(s, a.id).await, ids(a.id, 2_100..2_101));

        // Both: an old attempt among the newest `keep` goes too, and the count still bounds the rest.
        s.record_deliveries(&[attempt(w.id, 9)]).await.unwrap();
        assert_eq!(prune_all(s, 4, Some(at(1_000)), 100).await.0, 2);
        assert_eq!(logged(s, w.id).await, ids(w.id, 2_007..2_010));
        assert_eq!(logged(s, a.id).await, ids(a.id, 2_100..2_101));
    })
    .await;
}

#[test]
fn kinds_and_event_types() {
    assert_eq!(WebhookKind::parse("whale"), Some(WebhookKind::Whale));
    assert_eq!(WebhookKind::parse("arbitrage"), Some(WebhookKind::Arbitrage));
    assert_eq!(WebhookKind::parse("Whale"), None);
    assert_eq!(
        WebhookKind::for_event_type("arbitrage.opportunity"),
        Some(WebhookKind::Arbitrage)
    );
    assert_eq!(WebhookKind::for_event_type("whale.entry"), Some(WebhookKind::Whale));
    assert_eq!(WebhookKind::for_event_type("webhook.test"), None);
}
