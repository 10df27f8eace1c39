//! The live plane of crossbook (DESIGN §1): what ingestion knows now, shared by everything that serves it.
//!
//! - [`books`]: the latest book of every followed market, with its top of book, written by ingestion and read
//!   by the scanner, `/v1/arbitrage/current` and the stream's snapshots.
//! - [`bus`]: the broadcast of [`DomainEvent`]s (book changes, stale books, trades, venue status, whales,
//!   opportunities) that the stream, the webhook dispatcher and the whale tracker consume.
//! - [`nats`]: the bridge between processes: the leader publishes the bus on NATS, api processes mirror it.
//!
//! The connectors (`crossbook-venues`) write it; the server reads it. Neither knows the other's insides:
//! this crate holds only venue-neutral domain types from `crossbook-core`.
#![forbid(unsafe_code)]

pub mod books;
pub mod bus;
pub mod nats;
#[cfg(feature = "testing")]
pub mod testing;

pub use books::{BookKey, BookSlot, LiveBook, LiveBooks, LiveView, Numbered, Resolved};
pub use bus::{BookChanged, Bus, DomainEvent};
