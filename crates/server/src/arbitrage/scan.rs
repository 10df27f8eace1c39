//! The live scan: the core [`scan_pairs`] and [`spreads_for_pairs`] over the catalog's pairs and the
//! in-memory books (`state.live`, read in place under its lock, never copied). `/v1/arbitrage/current`,
//! `/v1/arbitrage/current/difference` and the scanner all call these, so they can never disagree.

use crossbook_core::{
    BookSnapshot, Exchange,
    arb::{BookSource, Opportunity, ScanParams, SpreadParams, SpreadRow, scan_pairs, spreads_for_pairs},
};
use crossbook_venues::{BookMap, LiveBooks};

use super::catalog::{ArbCatalog, KeyMap};

/// The live books as a [`BookSource`]: stale books count as missing.
struct LiveSource<'m> {
    map: &'m BookMap,
    book_keys: &'m [KeyMap; 2],
}

impl BookSource for LiveSource<'_> {
    fn book(&self, exchange: Exchange, key: &str) -> Option<&BookSnapshot> {
        let keys = &self.book_keys[usize::from(exchange == Exchange::VenueB)];
        self.map.get(keys.get(key)?).filter(|e| !e.stale).map(|e| &e.book)
    }
}

/// The opportunities of the catalog over the live books (see the module docs).
pub fn scan_live(catalog: &ArbCatalog, live: &LiveBooks, params: &ScanParams) -> Vec<Opportunity> {
    let pairs = catalog.pairs(params.window_tolerance_seconds);
    live.with_books(|map| {
        let source = LiveSource {
            map,
            book_keys: &catalog.book_keys,
        };
        scan_pairs(&pairs, &source, params)
    })
}

/// The price-spread rows of the catalog over the live books.
pub fn spreads_live(catalog: &ArbCatalog, live: &LiveBooks, params: &SpreadParams) -> Vec<SpreadRow> {
    let pairs = catalog.pairs(params.window_tolerance_seconds);
    live.with_books(|map| {
        let source = LiveSource {
            map,
            book_keys: &catalog.book_keys,
        };
        spreads_for_pairs(&pairs, &source, params)
    })
}
