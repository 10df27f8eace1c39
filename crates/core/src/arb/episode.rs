//! Episodes: repeated detections of one opportunity merged into one history row (contracts §6), and the
//! webhook cooldown.
//!
//! An opportunity is identified by its [`EpisodeKey`] = (`event_id`, `outcome_key`, `buy_yes_market`,
//! `buy_no_market`). Seeing a key again within [`EPISODE_GAP_SECONDS`] of the episode's `last_seen_at`
//! (inclusive) extends that episode: its opportunity becomes the latest observation, `last_seen_at` moves to
//! now, and `peak_net` keeps the best net edge seen. A longer gap starts a new episode. The same event seen
//! with the other direction is a different key, hence a different episode.
//!
//! [`EpisodeBook`] holds only the episodes that can still be extended (memory stays bounded by what the
//! last two minutes saw); the store holds the history. An episode is identified in the store by
//! `(key, first_seen_at)`, which never changes while it is extended.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::{Exchange, Timestamp};

use super::{opportunity::Opportunity, units::MicroUsd};

/// A detection within this many seconds of the episode's `last_seen_at` extends it.
pub const EPISODE_GAP_SECONDS: i64 = 120;

/// Default cooldown between two webhook publications of the same episode key.
pub const DEFAULT_COOLDOWN_SECONDS: i64 = 300;

/// What makes two detections "the same opportunity".
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EpisodeKey {
    /// Canonical event id.
    pub event_id: String,
    /// Outcome bucket.
    pub outcome_key: String,
    /// Venue on which YES is bought.
    pub buy_yes_market: Exchange,
    /// Venue on which NO is bought.
    pub buy_no_market: Exchange,
}

// The key is derived here, next to the episodes it groups, so that the opportunity type does not depend on them.
impl Opportunity {
    /// The key that groups repeated detections into one episode.
    pub fn episode_key(&self) -> EpisodeKey {
        EpisodeKey {
            event_id: self.event_id.clone(),
            outcome_key: self.outcome_key.clone(),
            buy_yes_market: self.buy_yes_market,
            buy_no_market: self.buy_no_market,
        }
    }
}

/// One history row: an opportunity observed continuously (no gap over two minutes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// Identity of the opportunity.
    pub key: EpisodeKey,
    /// First observation.
    pub first_seen_at: Timestamp,
    /// Latest observation.
    pub last_seen_at: Timestamp,
    /// The latest observation, with `peak_net` the best net edge of the whole episode.
    pub opportunity: Opportunity,
}

/// What [`EpisodeBook::observe`] did with one detection; the store inserts `Opened` and updates `Extended`
/// (matching on `key` and `first_seen_at`).
#[derive(Debug, Clone, PartialEq)]
pub enum EpisodeChange {
    /// A new episode.
    Opened(Episode),
    /// An existing episode, after the update.
    Extended(Episode),
}

impl EpisodeChange {
    /// The episode after the change.
    pub fn episode(&self) -> &Episode {
        match self {
            EpisodeChange::Opened(e) | EpisodeChange::Extended(e) => e,
        }
    }
    /// Whether the change opened a new episode.
    pub fn is_opened(&self) -> bool {
        matches!(self, EpisodeChange::Opened(_))
    }
}

/// The open (still extendable) episodes, keyed by [`EpisodeKey`]. Pure and in memory: the caller owns the
/// clock and the store.
#[derive(Debug, Clone)]
pub struct EpisodeBook {
    open: HashMap<EpisodeKey, Episode>,
    gap_ms: i64,
}

impl Default for EpisodeBook {
    fn default() -> Self {
        Self::new()
    }
}

impl EpisodeBook {
    /// An empty book with the contract's 120-second gap.
    pub fn new() -> Self {
        Self::with_gap_seconds(EPISODE_GAP_SECONDS)
    }

    /// An empty book with another gap (tests, configuration).
    pub fn with_gap_seconds(gap_seconds: i64) -> Self {
        EpisodeBook {
            open: HashMap::new(),
            gap_ms: gap_seconds.saturating_mul(1000),
        }
    }

    /// Loads episodes recorded before a restart (e.g. those last seen in the past two minutes), so a restart
    /// extends them instead of duplicating them. Per key the one last seen latest wins.
    pub fn restore(&mut self, episodes: impl IntoIterator<Item = Episode>) {
        for e in episodes {
            match self.open.get(&e.key) {
                Some(cur) if cur.last_seen_at >= e.last_seen_at => {}
                _ => {
                    self.open.insert(e.key.clone(), e);
                }
            }
        }
    }

    /// Merges one scan's opportunities observed at `now`, in order, and returns one change per opportunity.
    ///
    /// Episodes whose `last_seen_at` is more than the gap before `now` are forgotten first: they can no
    /// longer be extended.
    pub fn observe(&mut self, opportunities: &[Opportunity], now: Timestamp) -> Vec<EpisodeChange> {
        let gap = self.gap_ms;
        self.open
            .retain(|_, e| now.millis().saturating_sub(e.last_seen_at.millis()) <= gap);
        let mut changes = Vec::with_capacity(opportunities.len());
        for opp in opportunities {
            let key = opp.episode_key();
            let mut latest = opp.clone();
            latest.peak_net = opp.net.max(opp.peak_net);
            match self.open.get_mut(&key) {
                Some(ep) if now.millis().saturating_sub(ep.last_seen_at.millis()) <= gap => {
                    latest.peak_net = latest.peak_net.max(ep.opportunity.peak_net);
                    ep.opportunity = latest;
                    ep.last_seen_at = ep.last_seen_at.max(now);
                    changes.push(EpisodeChange::Extended(ep.clone()));
                }
                _ => {
                    let ep = Episode {
                        key: key.clone(),
                        first_seen_at: now,
                        last_seen_at: now,
                        opportunity: latest,
                    };
                    changes.push(EpisodeChange::Opened(ep.clone()));
                    self.open.insert(key, ep);
                }
            }
        }
        changes
    }

    /// The open episode of a key.
    pub fn get(&self, key: &EpisodeKey) -> Option<&Episode> {
        self.open.get(key)
    }

    /// Number of open episodes.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    /// Whether no episode is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

/// The global webhook cooldown: an episode key is published at most once per period, to every customer
///. A key published at `t` may publish again from `t + period` (inclusive).
#[derive(Debug, Clone)]
pub struct Cooldown {
    period_ms: i64,
    last: HashMap<EpisodeKey, Timestamp>,
}

impl Cooldown {
    /// A cooldown of `period_seconds` (configuration `opportunity_cooldown_seconds`, default 300).
    pub fn new(period_seconds: i64) -> Self {
        Cooldown {
            period_ms: period_seconds.saturating_mul(1000),
            last: HashMap::new(),
        }
    }

    /// Whether `key` may be published at `now`; if so, records the publication.
    pub fn try_acquire(&mut self, key: &EpisodeKey, now: Timestamp) -> bool {
        if let Some(t) = self.last.get(key)
            && now.millis().saturating_sub(t.millis()) < self.period_ms
        {
            return false;
        }
        self.last.insert(key.clone(), now);
        true
    }

    /// The opportunities to publish at `now`: net edge at least `min_net` (inclusive; configuration
    /// `webhook_min_net_cents`, default 1.0) and outside their key's cooldown. Publications are recorded.
    pub fn select<'a>(
        &mut self,
        opportunities: &'a [Opportunity],
        min_net: MicroUsd,
        now: Timestamp,
    ) -> Vec<&'a Opportunity> {
        let period = self.period_ms;
        self.last
            .retain(|_, t| now.millis().saturating_sub(t.millis()) < period);
        opportunities
            .iter()
            .filter(|o| o.net >= min_net && self.try_acquire(&o.episode_key(), now))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{
        Timestamp,
        arb::scan::{ScanParams, scan, tests::fixture},
    };

    pub(crate) fn sample(now: i64) -> Opportunity {
        let (listings, books) = fixture(now);
        scan(&listings, &[], &books, &ScanParams::new(Timestamp(now))).remove(0)
    }

    fn with_net(mut o: Opportunity, micros: i64) -> Opportunity {
        o.net = MicroUsd(micros);
        o.peak_net = o.net;
        o
    }

    #[test]
    fn repeated_detections_extend_one_episode_and_keep_the_peak() {
        let t0 = crate::arb::pairing::tests::T0 + 10_000;
        let base = sample(t0);
        let mut book = EpisodeBook::new();
        let c = book.observe(&[with_net(base.clone(), 12_500)], Timestamp(t0));
        assert!(c[0].is_opened());
        let first = c[0].episode().first_seen_at;

        // One second later a better edge, then a worse one: one episode, peak 2 c, latest net 0.5 c.
        book.observe(&[with_net(base.clone(), 20_000)], Timestamp(t0 + 1_000));
        let c = book.observe(&[with_net(base.clone(), 5_000)], Timestamp(t0 + 2_000));
        assert!(!c[0].is_opened());
        let ep = c[0].episode();
        assert_eq!((ep.first_seen_at, ep.last_seen_at), (first, Timestamp(t0 + 2_000)));
        assert_eq!(ep.opportunity.net, MicroUsd(5_000));
        assert_eq!(ep.opportunity.peak_net, MicroUsd(20_000));
        assert_eq!(book.len(), 1);

        // Exactly 120 s after the last sighting still extends.
        let c = book.observe(&[with_net(base.clone(), 1_000)], Timestamp(t0 + 122_000));
        assert!(!c[0].is_opened());
        assert_eq!(c[0].episode().opportunity.peak_net, MicroUsd(20_000));

        // 120.001 s later opens a new episode, with its own peak.
        let c = book.observe(&[with_net(base.clone(), 3_000)], Timestamp(t0 + 242_001));
        assert!(c[0].is_opened());
        assert_eq!(c[0].episode().first_seen_at, Timestamp(t0 + 242_001));
        assert_eq!(c[0].episode().opportunity.peak_net, MicroUsd(3_000));
    }

    #[test]
    fn the_other_direction_is_another_episode_and_old_ones_are_forgotten() {
        let t0 = crate::arb::pairing::tests::T0 + 10_000;
        let a = sample(t0);
        let mut b = a.clone();
        b.buy_yes_market = Exchange::VenueB;
        b.buy_no_market = Exchange::VenueA;
        let mut book = EpisodeBook::new();
        let c = book.observe(&[a.clone(), b.clone()], Timestamp(t0));
        assert!(c.iter().all(EpisodeChange::is_opened));
        assert_eq!(book.len(), 2);
        // Three minutes of silence: nothing left open.
        assert!(book.observe(&[], Timestamp(t0 + 180_000)).is_empty());
        assert!(book.is_empty());
    }

    #[test]
    fn restore_continues_an_episode_after_a_restart() {
        let t0 = crate::arb::pairing::tests::T0 + 10_000;
        let o = sample(t0);
        let old = Episode {
            key: o.episode_key(),
            first_seen_at: Timestamp(t0 - 50_000),
            last_seen_at: Timestamp(t0 - 10_000),
            opportunity: with_net(o.clone(), 30_000),
        };
        let older = Episode {
            last_seen_at: Timestamp(t0 - 20_000),
            ..old.clone()
        };
        let mut book = EpisodeBook::new();
        book.restore([old.clone(), older]);
        let c = book.observe(&[with_net(o, 10_000)], Timestamp(t0));
        assert!(!c[0].is_opened());
        assert_eq!(c[0].episode().first_seen_at, old.first_seen_at);
        assert_eq!(c[0].episode().opportunity.peak_net, MicroUsd(30_000));
    }

    #[test]
    fn cooldown_publishes_once_per_period_per_key() {
        let t0 = crate::arb::pairing::tests::T0 + 10_000;
        let o = with_net(sample(t0), 12_500);
        let small = {
            let mut s = with_net(o.clone(), 9_999);
            s.event_id = "BTC-15M-2026-11-21T19:15Z".into();
            s
        };
        let min = MicroUsd::from_cents(1);
        let mut cd = Cooldown::new(DEFAULT_COOLDOWN_SECONDS);
        let opps = [o.clone(), small];
        // Below 1 c never publishes; the other once.
        assert_eq!(cd.select(&opps, min, Timestamp(t0)).len(), 1);
        assert!(cd.select(&opps, min, Timestamp(t0 + 1_000)).is_empty());
        assert!(cd.select(&opps, min, Timestamp(t0 + 299_999)).is_empty());
        // At exactly 300 s it publishes again.
        assert_eq!(cd.select(&opps, min, Timestamp(t0 + 300_000)).len(), 1);
        // Keys are independent: the other direction publishes at once.
        let mut other = o.clone();
        other.buy_yes_market = Exchange::VenueB;
        other.buy_no_market = Exchange::VenueA;
        assert!(cd.try_acquire(&other.episode_key(), Timestamp(t0 + 300_001)));
        assert!(!cd.try_acquire(&o.episode_key(), Timestamp(t0 + 300_001)));
    }
}
