//! Integration tests of crossbook-server through HTTP, against a real SQLite file and a real PostgreSQL
//! database (`crossbook_store::testing`; PostgreSQL when `CROSSBOOK_TEST_DATABASE_URL` is set).

mod arbitrage;
mod backtests;
mod browser;
mod bus;
mod bus_failover;
mod bus_resume;
mod dashboard;
mod errors;
mod export;
mod faults;
mod gating;
mod historical;
mod ingest;
mod ohlcv;
mod openapi;
mod prices;
mod python_client;
mod replay;
mod search;
mod service;
mod stream;
mod util;
mod webhooks;
mod whales;
