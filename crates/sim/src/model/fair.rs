//! Fair values: the BTC/ETH reference price walks, each window's fair value from its strike, the drift of
//! games and questions, and cross episodes (scheduled or forced by [`Model::force_cross`]) that push one
//! window pair apart across venues. Everything here moves `Pair::fair`; the quoting reads it.

use crossbook_core::{Exchange, IntervalCode, Timestamp};
use rand::Rng;

use super::{Asset, Episode, Model, PairKind, STEP_MS, types};
use crate::ids;

impl Model {
    /// Pushes the current BTC `code` window pair apart for `duration_ms` so that buying YES on `cheap` and
    /// NO on the other venue nets several cents after fees. Returns the venue_a ticker and venue_b
    /// condition id, or `None` when that window is not open on both venues. Takes effect at the next step.
    pub fn force_cross(&mut self, code: IntervalCode, cheap: Exchange, duration_ms: i64) -> Option<(String, String)> {
        let (key, ids) = self.pairs.iter().find_map(|(key, p)| {
            if p.kind
                != (PairKind::Window {
                    asset: Asset::Btc,
                    interval: code,
                })
            {
                return None;
            }
            let (a, b) = self.open_pair_markets(key)?;
            Some((key.clone(), (a.market_id.clone(), b.market_id.clone())))
        })?;
        self.episode = Some(Episode {
            pair: key,
            cheap,
            until: Timestamp::from_millis(self.now.millis() + duration_ms),
        });
        Some(ids)
    }

    pub(super) fn walk_prices(&mut self, dt_ms: i64) {
        let n = (dt_ms / STEP_MS).clamp(1, 50);
        for _ in 0..n {
            self.btc_cents = (self.btc_cents + self.rng.random_range(-500..=500)).max(100_000);
            self.eth_cents = (self.eth_cents + self.rng.random_range(-23..=23)).max(10_000);
        }
    }

    pub(super) fn asset_cents(&self, asset: Asset) -> i64 {
        match asset {
            Asset::Btc => self.btc_cents,
            Asset::Eth => self.eth_cents,
        }
    }

    /// Each venue's oracle differs a little (venue_a BRTI averages, venue_b Chainlink): a fixed per-window
    /// offset in cents.
    pub(super) fn oracle_jitter(&self, pair: &str, ex: Exchange) -> i64 {
        match ex {
            Exchange::VenueA => 0,
            Exchange::VenueB => ids::key_rng(self.seed, &format!("{pair}:oracle")).random_range(-25..=25),
        }
    }

    pub(super) fn update_episode(&mut self, now: Timestamp) {
        if let Some(ep) = &self.episode {
            let alive = now < ep.until && self.open_pair_markets(&ep.pair).is_some();
            if !alive {
                self.episode = None;
                self.next_episode_at = Timestamp::from_millis(now.millis() + self.rng.random_range(60_000..=150_000));
            }
        }
        if self.episode.is_some() || now < self.next_episode_at {
            return;
        }
        // The first episode lasts longer so that a service started with the simulator sees it even if its
        // connectors take a while to subscribe.
        let duration = if self.episodes == 0 {
            45_000
        } else {
            self.rng.random_range(20_000..=35_000)
        };
        let mut candidates: Vec<(IntervalCode, String)> = Vec::new();
        for (key, p) in &self.pairs {
            let PairKind::Window {
                asset: Asset::Btc,
                interval,
            } = p.kind
            else {
                continue;
            };
            let Some((a, b)) = self.open_pair_markets(key) else {
                continue;
            };
            let left = a.close_time.millis().min(b.close_time.millis()) - now.millis();
            if left >= duration + 10_000 {
                candidates.push((interval, key.clone()));
            }
        }
        if candidates.is_empty() {
            return;
        }
        let pick = if self.episodes == 0 {
            // The first episode prefers the 15-minute window: the product everyone watches.
            let order = [
                IntervalCode::M15,
                IntervalCode::H1,
                IntervalCode::H24,
                IntervalCode::W1,
                IntervalCode::M5,
            ];
            order
                .iter()
                .find_map(|c| candidates.iter().find(|(i, _)| i == c))
                .cloned()
        } else {
            let i = self.rng.random_range(0..candidates.len());
            Some(candidates[i].clone())
        };
        if let Some((_, pair)) = pick {
            let cheap = if self.rng.random_bool(0.5) {
                Exchange::VenueA
            } else {
                Exchange::VenueB
            };
            self.episode = Some(Episode {
                pair,
                cheap,
                until: Timestamp::from_millis(now.millis() + duration),
            });
            self.episodes += 1;
        }
    }

    pub(super) fn update_fairs(&mut self) {
        let now = self.now;
        let prices = (self.btc_cents, self.eth_cents);
        for (_, pair) in self.pairs.iter_mut().filter(|(k, _)| !k.starts_with(types::BULK)) {
            let target = match pair.kind {
                PairKind::Window { asset, .. } => match pair.strike {
                    Some(strike) if now >= pair.start => {
                        let px = if asset == Asset::Btc { prices.0 } else { prices.1 };
                        let remaining = ((pair.end.millis() - now.millis()) / 1000).max(0);
                        let sigma = asset.vol() * (remaining + 1).isqrt();
                        let z_milli = (px - strike) * 1000 / sigma.max(1);
                        50 + (z_milli * 40 / 1000).clamp(-46, 46)
                    }
                    _ => 50,
                },
                PairKind::Game | PairKind::Other => pair.fair,
            };
            if pair.fair < target && self.rng.random_bool(0.5) {
                pair.fair += 1;
            } else if pair.fair > target && self.rng.random_bool(0.5) {
                pair.fair -= 1;
            }
            if self.rng.random_bool(0.08) {
                pair.fair += if self.rng.random_bool(0.5) { 1 } else { -1 };
            }
            pair.fair = pair.fair.clamp(3, 97);
            for off in &mut pair.offsets {
                if self.rng.random_bool(0.01) {
                    *off = (*off + self.rng.random_range(-1..=1)).clamp(-1, 1);
                }
            }
        }
    }
}
