//! venue_a and venue_b connectors and the ingest loop of crossbook.
//!
//! Each venue speaks its own public market-data protocol (REST for the catalog, books and trades, a
//! WebSocket for live books); everything is turned into `crossbook_core` types at the edge, in each venue's
//! `normalise` module. Nothing past this crate knows a wire format.
//!
//! Start ingestion with [`Ingest::start`]: it keeps the store (catalog, book snapshots, trades), the
//! in-memory [`crossbook_live::LiveBooks`], the [`crossbook_live::Bus`] of domain events and the [`VenueHealth`] map up to date until its
//! cancellation token fires.
//!
//! # Layout
//! - [`ingest`]: configuration, the per-venue workers (catalog, feed with reconnect and silence watchdog,
//!   trade tape, follow requests) and the two writers (snapshots, trades).
//! - [`venue`]: the [`Venue`] / [`FeedSession`] traits every connector implements (the same shape for
//!   both venues), and the venue-neutral [`FeedUpdate`].
//! - [`venue_a`], [`venue_b`]: one folder per venue with the same files: `model.rs` (wire types),
//!   `rest.rs` (typed REST endpoints), `ws.rs` (WebSocket protocol state), `normalise.rs` (wire → core).
//! - [`health`]: per-venue freshness for `/readyz`.
//! - [`backoff`]: jittered exponential backoff (reconnects, REST retries).
//! - [`rest`]: venue-agnostic REST plumbing (typed requests, throttle, retries, signing hook).
//! - [`classify`]: normalisation rules shared by both venues (categories, interval windows, YES/NO).
//! - [`wire`]: serde helpers for the venues' mixed JSON types.
//! - [`eastern`]: US Eastern time, for windows encoded in ET in tickers and slugs.
//! - [`error`]: [`VenueError`], which carries the offending payload.
#![forbid(unsafe_code)]

pub mod backoff;
pub mod classify;
pub mod eastern;
pub mod error;
pub mod health;
pub mod ingest;
pub mod rest;
pub mod venue;
pub mod venue_a;
pub mod venue_b;
pub mod web_url;
pub mod wire;

pub use error::VenueError;
pub use health::{
    Connections, DEGRADED_AFTER_FAILURES, FeedHealth, FeedMode, Freshness, Part, PartHealth, VenueHealth,
};
pub use ingest::{FollowError, Ingest, IngestConfig, IngestHandle, split_list};
pub use venue::{
    BookUpdate, CATALOG_NOTICE_KINDS, CatalogBatch, CatalogNotice, FeedSession, FeedUpdate, MarketSet, Refused, Venue,
};
