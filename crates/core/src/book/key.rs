//! The identity of one book, the unit of the live map and of the book log.

use crate::{BookSnapshot, Exchange, Market};

/// Identity of one book: a venue_a market (one book with YES and NO bids) or a venue_b token (one book
/// per outcome).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct BookKey {
    pub exchange: Exchange,
    /// venue_a ticker; venue_b condition id.
    pub market_id: String,
    /// venue_b token id; `None` on venue_a.
    pub asset_id: Option<String>,
}

impl BookKey {
    /// The key of a snapshot.
    pub fn of(book: &BookSnapshot) -> Self {
        BookKey {
            exchange: book.exchange,
            market_id: book.market_id.clone(),
            asset_id: book.asset_id.clone(),
        }
    }

    /// The books of a market: one on venue_a, one per token on venue_b.
    pub fn of_market(m: &Market) -> Vec<BookKey> {
        match m.exchange {
            Exchange::VenueA => vec![BookKey::venue_a(&m.market_id)],
            Exchange::VenueB => [&m.yes_token_id, &m.no_token_id]
                .into_iter()
                .flatten()
                .map(|t| BookKey::venue_b(&m.market_id, t))
                .collect(),
        }
    }

    /// A venue_a book (one per market).
    pub fn venue_a(ticker: &str) -> Self {
        BookKey {
            exchange: Exchange::VenueA,
            market_id: ticker.to_string(),
            asset_id: None,
        }
    }

    /// A venue_b book (one per token).
    pub fn venue_b(condition_id: &str, asset_id: &str) -> Self {
        BookKey {
            exchange: Exchange::VenueB,
            market_id: condition_id.to_string(),
            asset_id: Some(asset_id.to_string()),
        }
    }
}
