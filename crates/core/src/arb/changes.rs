//! Opportunity changes for the live stream: when an opportunity appears, when its net edge or executable
//! size moves, and when it goes away, as the scanner sees it.
//!
//! [`EpisodeBook`](super::EpisodeBook) answers "which history row does this detection belong to"; an
//! episode stays extendable for two minutes after its last sighting, so it cannot say when an opportunity
//! stopped being there. [`Visible`] tracks what the latest pricing of each pair found:
//! - **Opened**: a pair's pricing finds an opportunity it did not show before (a new episode, or the same
//!   episode seen again after it closed);
//! - **Changed**: the same episode again with another `net` or `executable_size` (an observation with the
//!   same figures is no change);
//! - **Closed**: the pair was priced and found nothing (the books uncrossed, a book went stale, the window
//!   expired, the pair left the catalog), or it now shows the other direction or a new episode (then the
//!   old one closes before the new one opens).
//!
//! A pair is identified by its `(event_id, outcome_key)`, which is its episode key without the direction.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::{Amount, Timestamp};

use super::{
    episode::{Episode, EpisodeKey},
    opportunity::Opportunity,
    units::MicroUsd,
};

/// What happened to an opportunity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Opened,
    Changed,
    Closed,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Opened => "opened",
            ChangeKind::Changed => "changed",
            ChangeKind::Closed => "closed",
        }
    }
}

/// One change of one opportunity. The episode is `(key, first_seen_at)`, the history row's identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpportunityChange {
    pub kind: ChangeKind,
    pub key: EpisodeKey,
    pub first_seen_at: Timestamp,
    /// The latest observation (with the episode's `peak_net`); for `Closed`, the last one seen.
    pub opportunity: Opportunity,
}

/// The identity of a pair: `(event_id, outcome_key)`.
pub type PairId = (String, String);

/// The pair of an opportunity.
pub fn pair_id(o: &Opportunity) -> PairId {
    (o.event_id.clone(), o.outcome_key.clone())
}

#[derive(Debug, Clone)]
struct Seen {
    first_seen_at: Timestamp,
    net: MicroUsd,
    executable_size: Amount,
    opportunity: Opportunity,
}

/// The opportunities the latest pricing of each pair found (see the module docs). Pure and in memory.
#[derive(Debug, Clone, Default)]
pub struct Visible {
    by_pair: HashMap<PairId, Seen>,
}

impl Visible {
    pub fn new() -> Self {
        Self::default()
    }

    /// After some pairs were priced: `priced` are those pairs, `found` the episodes of the opportunities
    /// their pricing found (as [`EpisodeBook::observe`](super::EpisodeBook::observe) left them). Pairs of
    /// `found` missing from `priced` are taken as priced.
    pub fn update<'p>(
        &mut self,
        priced: impl IntoIterator<Item = &'p PairId>,
        found: &[Episode],
    ) -> Vec<OpportunityChange> {
        let found_by_pair: HashMap<PairId, &Episode> = found.iter().map(|e| (pair_id(&e.opportunity), e)).collect();
        let mut out = Vec::new();
        for p in priced {
            if !found_by_pair.contains_key(p)
                && let Some(s) = self.by_pair.remove(p)
            {
                out.push(closed(s));
            }
        }
        self.record(found_by_pair, &mut out);
        out
    }

    /// After every pair was priced (a full pass): whatever is not in `found` closed.
    pub fn update_all(&mut self, found: &[Episode]) -> Vec<OpportunityChange> {
        let found_by_pair: HashMap<PairId, &Episode> = found.iter().map(|e| (pair_id(&e.opportunity), e)).collect();
        let mut out = Vec::new();
        let gone: Vec<PairId> = self
            .by_pair
            .keys()
            .filter(|p| !found_by_pair.contains_key(*p))
            .cloned()
            .collect();
        for p in gone {
            if let Some(s) = self.by_pair.remove(&p) {
                out.push(closed(s));
            }
        }
        self.record(found_by_pair, &mut out);
        out
    }

    fn record(&mut self, found: HashMap<PairId, &Episode>, out: &mut Vec<OpportunityChange>) {
        // In the scan's order (net descending), so a burst reads best first.
        let mut found: Vec<(PairId, &Episode)> = found.into_iter().collect();
        found.sort_by(|(_, x), (_, y)| {
            let (x, y) = (&x.opportunity, &y.opportunity);
            y.net.cmp(&x.net).then_with(|| x.event_id.cmp(&y.event_id))
        });
        for (p, e) in found {
            let o = &e.opportunity;
            let kind = match self.by_pair.get(&p) {
                Some(s) if s.opportunity.episode_key() == e.key && s.first_seen_at == e.first_seen_at => {
                    if s.net == o.net && s.executable_size == o.executable_size {
                        None
                    } else {
                        Some(ChangeKind::Changed)
                    }
                }
                Some(_) => {
                    // Another direction or a new episode of the pair: the old one closes first.
                    if let Some(s) = self.by_pair.remove(&p) {
                        out.push(closed(s));
                    }
                    Some(ChangeKind::Opened)
                }
                None => Some(ChangeKind::Opened),
            };
            let seen = Seen {
                first_seen_at: e.first_seen_at,
                net: o.net,
                executable_size: o.executable_size,
                opportunity: o.clone(),
            };
            self.by_pair.insert(p, seen);
            if let Some(kind) = kind {
                out.push(OpportunityChange {
                    kind,
                    key: e.key.clone(),
                    first_seen_at: e.first_seen_at,
                    opportunity: o.clone(),
                });
            }
        }
    }

    /// Number of opportunities showing.
    pub fn len(&self) -> usize {
        self.by_pair.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_pair.is_empty()
    }
}

fn closed(s: Seen) -> OpportunityChange {
    OpportunityChange {
        kind: ChangeKind::Closed,
        key: s.opportunity.episode_key(),
        first_seen_at: s.first_seen_at,
        opportunity: s.opportunity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Exchange,
        arb::{EpisodeBook, episode::tests::sample, pairing::tests::T0},
    };

    fn kinds(c: &[OpportunityChange]) -> Vec<ChangeKind> {
        c.iter().map(|c| c.kind).collect()
    }

    #[test]
    fn opened_changed_unchanged_closed() {
        let t0 = T0 + 10_000;
        let o = sample(t0);
        let pair = pair_id(&o);
        let mut book = EpisodeBook::new();
        let mut vis = Visible::new();
        let observe = |book: &mut EpisodeBook, opps: &[Opportunity], t: i64| -> Vec<Episode> {
            book.observe(opps, Timestamp(t))
                .into_iter()
                .map(|c| c.episode().clone())
                .collect()
        };

        let eps = observe(&mut book, std::slice::from_ref(&o), t0);
        let c = vis.update([&pair], &eps);
        assert_eq!(kinds(&c), [ChangeKind::Opened]);
        assert_eq!(c[0].first_seen_at, Timestamp(t0));
        assert_eq!(c[0].key, o.episode_key());

        // Seen again with the same figures: no change.
        let eps = observe(&mut book, std::slice::from_ref(&o), t0 + 100);
        assert!(vis.update([&pair], &eps).is_empty());

        // Another size: changed; another net: changed.
        let mut bigger = o.clone();
        bigger.executable_size = Amount::from_units(99);
        let eps = observe(&mut book, std::slice::from_ref(&bigger), t0 + 200);
        assert_eq!(kinds(&vis.update([&pair], &eps)), [ChangeKind::Changed]);
        let mut better = bigger.clone();
        better.net = MicroUsd(20_000);
        let eps = observe(&mut book, std::slice::from_ref(&better), t0 + 300);
        let c = vis.update([&pair], &eps);
        assert_eq!(kinds(&c), [ChangeKind::Changed]);
        assert_eq!(c[0].opportunity.peak_net, MicroUsd(20_000));

        // Priced and not found: closed, once; the first sighting stays the episode's.
        let c = vis.update([&pair], &[]);
        assert_eq!(kinds(&c), [ChangeKind::Closed]);
        assert_eq!(c[0].first_seen_at, Timestamp(t0));
        assert!(vis.update([&pair], &[]).is_empty());
        assert!(vis.is_empty());

        // Back within the gap: the same episode opens again.
        let eps = observe(&mut book, std::slice::from_ref(&o), t0 + 1_000);
        let c = vis.update([&pair], &eps);
        assert_eq!(kinds(&c), [ChangeKind::Opened]);
        assert_eq!(c[0].first_seen_at, Timestamp(t0));
    }

    #[test]
    fn a_direction_flip_closes_then_opens_and_a_full_pass_closes_the_rest() {
        let t0 = T0 + 10_000;
        let o = sample(t0);
        let pair = pair_id(&o);
        let mut other = o.clone();
        other.event_id = "OTHER".into();
        let mut book = EpisodeBook::new();
        let mut vis = Visible::new();
        let eps: Vec<Episode> = book
            .observe(&[o.clone(), other.clone()], Timestamp(t0))
            .into_iter()
            .map(|c| c.episode().clone())
            .collect();
        assert_eq!(vis.update_all(&eps).len(), 2);

        // Pricing only `o`'s pair leaves `other` alone.
        let mut flipped = o.clone();
        flipped.buy_yes_market = Exchange::VenueB;
        flipped.buy_no_market = Exchange::VenueA;
        let eps: Vec<Episode> = book
            .observe(std::slice::from_ref(&flipped), Timestamp(t0 + 10))
            .into_iter()
            .map(|c| c.episode().clone())
            .collect();
        let c = vis.update([&pair], &eps);
        assert_eq!(kinds(&c), [ChangeKind::Closed, ChangeKind::Opened]);
        assert_eq!(c[0].key, o.episode_key());
        assert_eq!(c[1].key, flipped.episode_key());
        assert_eq!(vis.len(), 2);

        // A full pass that finds nothing closes both.
        let c = vis.update_all(&[]);
        assert_eq!(kinds(&c), [ChangeKind::Closed, ChangeKind::Closed]);
        assert!(vis.is_empty());
    }
}
