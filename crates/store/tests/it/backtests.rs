//! The backtests concern on both backends: a run is created running, moves while it works, and ends in one
//! write with its report or its error; a run that stops moving reads as failed; a finished run cannot be
//! finished again.

use crate::testing::for_each_backend;
use crossbook_core::Timestamp;
use crossbook_store::{BacktestStatus, backtests::STALLED_AFTER_MS};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_millis(1_763_000_000_000 + secs * 1000)
}

#[tokio::test]
async fn a_run_ends_once_with_its_whole_report() {
    for_each_backend(async |db| {
        let s = &db.store;
        s.create_backtest("bt_1", 7, r#"{"from":1}"#, at(0)).await.unwrap();
        s.create_backtest("bt_2", 7, "{}", at(1)).await.unwrap();
        s.create_backtest("bt_3", 8, "{}", at(2)).await.unwrap();
        assert_eq!(s.running_backtests(7, at(-1)).await.unwrap(), 2);
        assert_eq!(s.running_backtests(8, at(-1)).await.unwrap(), 1);

        let b = s.backtest("bt_1").await.unwrap().unwrap();
        assert_eq!(
            (b.status, b.customer_id, b.params.as_str()),
            (BacktestStatus::Running, 7, r#"{"from":1}"#)
        );
        assert_eq!((b.report, b.error, b.progress_at), (None, None, None));

        assert!(s.backtest_progress("bt_1", at(-500), at(10)).await.unwrap());
        let b = s.backtest("bt_1").await.unwrap().unwrap();
        assert_eq!((b.progress_at, b.updated_at), (Some(at(-500)), at(10)));
        // Alive at 10 s; stalled once it has not moved for the limit.
        assert_eq!(b.status_at(at(20)), BacktestStatus::Running);
        assert_eq!(
            b.status_at(Timestamp(at(10).millis() + STALLED_AFTER_MS + 1)),
            BacktestStatus::Failed
        );
        // A run that stopped moving is not counted as running.
        assert_eq!(s.running_backtests(7, at(5)).await.unwrap(), 1);

        assert!(s.finish_backtest("bt_1", Ok(b"{\"trades\":[]}"), at(11)).await.unwrap());
        let failed = s.finish_backtest("bt_2", Err("the database failed part-way"), at(12));
        assert!(failed.await.unwrap());
        // A finished run is not finished again, nor moved.
        assert!(!s.finish_backtest("bt_1", Err("late"), at(13)).await.unwrap());
        assert!(!s.backtest_progress("bt_1", at(0), at(14)).await.unwrap());

        let done = s.backtest("bt_1").await.unwrap().unwrap();
        assert_eq!(done.status, BacktestStatus::Done);
        assert_eq!(done.report.as_deref(), Some(&b"{\"trades\":[]}"[..]));
        assert_eq!(
            (done.error, done.finished_at, done.updated_at),
            (None, Some(at(11)), at(11))
        );
        let failed = s.backtest("bt_2").await.unwrap().unwrap();
        assert_eq!(failed.status, BacktestStatus::Failed);
        assert_eq!(
            (failed.report, failed.error.as_deref()),
            (None, Some("the database failed part-way"))
        );
        assert_eq!(s.running_backtests(7, at(-1)).await.unwrap(), 0);

        // Newest first, without reports; another customer's runs are not listed.
        let list = s.customer_backtests(7, 10).await.unwrap();
        assert_eq!(list.iter().map(|b| b.id.as_str()).collect::<Vec<_>>(), ["bt_2", "bt_1"]);
        assert!(list.iter().all(|b| b.report.is_none()));
        assert_eq!(s.customer_backtests(7, 1).await.unwrap().len(), 1);
        assert!(s.backtest("bt_9").await.unwrap().is_none());

        // A running run deleted: it cannot move or end any more, and nothing of it is left.
        assert!(s.delete_backtest("bt_3").await.unwrap());
        assert!(!s.backtest_progress("bt_3", at(0), at(15)).await.unwrap());
        assert!(!s.finish_backtest("bt_3", Ok(b"{}"), at(16)).await.unwrap());
        assert!(s.backtest("bt_3").await.unwrap().is_none());
        assert!(!s.delete_backtest("bt_3").await.unwrap());
    })
    .await;
}
