//! The arbitrage service (spec 4.3, 2.9–2.12, 6.1; contracts §6): what the arbitrage routes and the scanner
//! worker share, so that neither imports the other.
//!
//! - [`catalog`]: the pair catalog ([`ArbCatalog`]) and its cache ([`ArbCache`], in [`AppState::arb`]).
//! - [`scan`](mod@scan): the live scan over the in-memory books ([`scan_live`], [`spreads_live`]), one
//!   computation for `/v1/arbitrage/current` and the scanner.
//! - [`render`]: the opportunity, episode and spread objects as JSON (API and webhook `data`).
//!
//! [`AppState::arb`]: crate::AppState::arb

pub mod catalog;
pub mod render;
pub mod scan;

pub use catalog::{ArbCache, ArbCatalog, CATALOG_TTL, PairSlots};
pub use scan::{scan_live, scan_live_pairs, spreads_live};

pub use crossbook_core::arb::scan::{DEFAULT_MAX_STALENESS_SECONDS, DEFAULT_WINDOW_TOLERANCE_SECONDS};
