//! Preview masking of the arbitrage history (spec 5.3, contracts §3 and §6).
//!
//! Who reads the history in preview mode is the server's gating table (everyone below the Trader plan). In
//! preview mode only the first row of the filtered result is unlocked, that is the first item of the page
//! at offset 0. Every other row, on every page, is locked. A locked row keeps its identity (event, labels,
//! times, ids, venues) and nulls everything monetary: `gross_cents`, `fee_cents`, `net_cents`,
//! `roi_percent`, `executable_size`, `max_profit_dollars`, `peak_net_cents`, `yes_ask`/`no_ask` in both venue
//! legs, and the `orderbook`. Outside preview mode every row is unlocked.
//!
//! The masked view is [`Masked`]: a borrowed row plus its `locked` flag, whose accessors return `None` for the
//! masked fields, so no code path can render a locked price by accident.

use crate::{Amount, Price};

use super::{
    episode::Episode,
    opportunity::{Opportunity, OrderbookDepth},
    units::{MicroUsd, Roi},
};

/// Whether the row at `index` of a page that starts at `offset` of the filtered result is locked, for a
/// caller reading in `preview` mode or not.
pub fn is_locked(offset: u64, index: usize, preview: bool) -> bool {
    preview && !(offset == 0 && index == 0)
}

/// A row with its lock flag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Masked<T> {
    /// The row.
    pub item: T,
    /// `true` for masked preview rows.
    pub locked: bool,
}

/// Masks one page of rows (episodes or opportunities) fetched at `offset` for a caller reading in `preview`
/// mode or not.
pub fn mask_page<T>(page: &[T], offset: u64, preview: bool) -> Vec<Masked<&T>> {
    page.iter()
        .enumerate()
        .map(|(i, item)| Masked {
            item,
            locked: is_locked(offset, i, preview),
        })
        .collect()
}

impl<'a> Masked<&'a Episode> {
    /// The episode's opportunity under the same lock.
    pub fn opportunity(&self) -> Masked<&'a Opportunity> {
        Masked {
            item: &self.item.opportunity,
            locked: self.locked,
        }
    }
}

impl<'a> Masked<&'a Opportunity> {
    fn open<V>(&self, v: V) -> Option<V> {
        (!self.locked).then_some(v)
    }
    /// `gross_cents`, `None` when locked.
    pub fn gross(&self) -> Option<MicroUsd> {
        self.open(self.item.gross)
    }
    /// `fee_cents`, `None` when locked.
    pub fn fee(&self) -> Option<MicroUsd> {
        self.open(self.item.fee)
    }
    /// The `fee_cents` of the leg that buys `outcome`, `None` when locked.
    pub fn leg_fee(&self, outcome: crate::Outcome) -> Option<MicroUsd> {
        let leg = match outcome {
            crate::Outcome::Yes => &self.item.yes_leg,
            crate::Outcome::No => &self.item.no_leg,
        };
        self.open(leg.fee)
    }
    /// `net_cents`, `None` when locked.
    pub fn net(&self) -> Option<MicroUsd> {
        self.open(self.item.net)
    }
    /// `roi_percent`, `None` when locked.
    pub fn roi(&self) -> Option<Roi> {
        self.open(self.item.roi)
    }
    /// `executable_size`, `None` when locked.
    pub fn executable_size(&self) -> Option<Amount> {
        self.open(self.item.executable_size)
    }
    /// `max_profit_dollars`, `None` when locked.
    pub fn max_profit(&self) -> Option<MicroUsd> {
        self.open(self.item.max_profit)
    }
    /// `capital_dollars`, `None` when locked: what buying `executable_size` pairs of legs costs, fees
    /// included. Each pair pays one dollar however the market settles, so the cost is that payout less the
    /// profit, exactly.
    pub fn capital(&self) -> Option<MicroUsd> {
        let item = self.item;
        self.open(MicroUsd::from_micros(
            item.executable_size.micros() - item.max_profit.micros(),
        ))
    }
    /// `peak_net_cents`, `None` when locked.
    pub fn peak_net(&self) -> Option<MicroUsd> {
        self.open(self.item.peak_net)
    }
    /// `venue_a.yes_ask`, `None` when locked or absent.
    pub fn venue_a_yes_ask(&self) -> Option<Price> {
        self.open(self.item.venue_a.yes_ask).flatten()
    }
    /// `venue_a.no_ask`, `None` when locked or absent.
    pub fn venue_a_no_ask(&self) -> Option<Price> {
        self.open(self.item.venue_a.no_ask).flatten()
    }
    /// `venue_b.yes_ask`, `None` when locked or absent.
    pub fn venue_b_yes_ask(&self) -> Option<Price> {
        self.open(self.item.venue_b.yes_ask).flatten()
    }
    /// `venue_b.no_ask`, `None` when locked or absent.
    pub fn venue_b_no_ask(&self) -> Option<Price> {
        self.open(self.item.venue_b.no_ask).flatten()
    }
    /// `orderbook`, `None` when locked or not captured.
    pub fn orderbook(&self) -> Option<&'a OrderbookDepth> {
        if self.locked {
            None
        } else {
            self.item.orderbook.as_ref()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Timestamp,
        arb::{
            episode::{EpisodeBook, tests::sample},
            pairing::tests::T0,
        },
    };

    #[test]
    fn only_the_first_row_of_the_result_is_unlocked_in_preview() {
        for preview in [true, false] {
            let rows = [1, 2, 3];
            let first_page: Vec<bool> = mask_page(&rows, 0, preview).iter().map(|m| m.locked).collect();
            let later_page: Vec<bool> = mask_page(&rows, 3, preview).iter().map(|m| m.locked).collect();
            let offset_one: Vec<bool> = mask_page(&rows, 1, preview).iter().map(|m| m.locked).collect();
            if preview {
                assert_eq!(first_page, [false, true, true]);
                assert_eq!(later_page, [true, true, true]);
                // Offset 1 starts after the first row of the result: all locked.
                assert_eq!(offset_one, [true, true, true]);
            } else {
                assert_eq!(first_page, [false, false, false]);
                assert_eq!(later_page, [false, false, false]);
                assert_eq!(offset_one, [false, false, false]);
            }
            assert!(mask_page::<i32>(&[], 0, preview).is_empty());
        }
    }

    #[test]
    fn locked_rows_hide_every_monetary_field() {
        let t = T0 + 10_000;
        let mut o = sample(t);
        o.orderbook = Some(OrderbookDepth {
            yes: crate::arb::LegAsks {
                market: o.buy_yes_market,
                asks: vec![],
            },
            no: crate::arb::LegAsks {
                market: o.buy_no_market,
                asks: vec![],
            },
            walk: vec![],
        });
        let mut book = EpisodeBook::new();
        let eps: Vec<Episode> = book
            .observe(std::slice::from_ref(&o), Timestamp(t))
            .iter()
            .map(|c| c.episode().clone())
            .collect();
        let page = [eps[0].clone(), eps[0].clone()];
        let masked = mask_page(&page, 0, true);
        let open = masked[0].opportunity();
        let locked = masked[1].opportunity();
        assert_eq!(open.net(), Some(o.net));
        assert_eq!(open.venue_a_yes_ask(), o.venue_a.yes_ask);
        assert!(open.orderbook().is_some());
        assert!(locked.locked);
        assert_eq!(
            (
                locked.gross(),
                locked.fee(),
                locked.net(),
                locked.peak_net(),
                locked.max_profit()
            ),
            (None, None, None, None, None)
        );
        assert_eq!((locked.roi(), locked.executable_size()), (None, None));
        assert_eq!(
            (
                locked.venue_a_yes_ask(),
                locked.venue_a_no_ask(),
                locked.venue_b_yes_ask(),
                locked.venue_b_no_ask()
            ),
            (None, None, None, None)
        );
        assert!(locked.orderbook().is_none());
        // Identity survives.
        assert_eq!(locked.item.event_id, o.event_id);
    }
}
