//! Executed trades, as stored once per venue trade id.

use serde::{Deserialize, Serialize};

use crate::{Amount, Exchange, Outcome, Price, Timestamp};

/// The taker's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TakerSide {
    Buy,
    Sell,
}

impl TakerSide {
    pub fn as_str(self) -> &'static str {
        match self {
            TakerSide::Buy => "buy",
            TakerSide::Sell => "sell",
        }
    }
}

/// One trade. `(exchange, source_trade_id)` is unique: venues resend trades after reconnects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trade {
    pub exchange: Exchange,
    pub source_trade_id: String,
    pub market_id: String,
    pub event_id: String,
    pub executed_at: Timestamp,
    pub taker_side: TakerSide,
    /// The outcome the taker bought or sold (venue_a `taker_outcome_side`, venue_b the token's outcome).
    pub outcome: Outcome,
    pub price: Price,
    pub size: Amount,
}

impl Trade {
    /// `abs(price × size)` in dollars.
    pub fn notional(&self) -> Amount {
        Amount::notional(self.price, self.size)
    }
}
