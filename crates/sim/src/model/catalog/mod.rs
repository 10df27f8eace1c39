//! What the venues list, and how each venue names it.
//!
//! Three families, each listed on the venues in their own naming style:
//!
//! - BTC up/down windows for every interval code on both venues (current and next window; old windows
//!   close, settle and are pruned later). venue_b's window boundaries are shifted by a few seconds per
//!   interval (1–4 s, start and end alike), so pairing must use a tolerance. ETH 15m windows exist on venue_b only.
//! - Games of two fictional leagues on both venues: venue_a names teams by city and lists one market per
//!   team (`KXNBAGAME-26MAY12DENAUS-DEN`, "Denver at Austin Winner?"); venue_b lists one two-outcome market
//!   (`nba-den-aus-2026-05-12`, "Denver vs. Austin", outcomes `["Denver", "Austin"]`, nicknames in the
//!   description). Same teams by the same names, same ET date, same abbreviations in ticker and slug, so
//!   the service's automatic game matcher pairs them.
//! - Monthly questions that exist on one venue only (economics and weather on venue_a, politics and culture
//!   on venue_b): they must never be paired.

mod games;
mod monthly;
mod windows;

use crossbook_core::{IntervalCode, Timestamp};
use rand::Rng;
use time::{Date, OffsetDateTime};

use self::games::LEAGUES;
use super::{
    Asset, Model,
    types::{SimMarket, SimSeries, Tag},
};
use crate::{
    calendar::{et_abbrev, month_name, to_et, twelve_hour, window_containing},
    ids,
};

const MINUTE_MS: i64 = 60_000;

/// venue_a series ticker of a BTC up/down interval. `KXBTC15M` is the venue's own; the others are
/// invented in the same grammar because venue_a lists no up/down product for those lengths.
pub fn venue_a_btc_series(code: IntervalCode) -> &'static str {
    match code {
        IntervalCode::M5 => "KXBTC5M",
        IntervalCode::M15 => "KXBTC15M",
        IntervalCode::H1 => "KXBTC1H",
        IntervalCode::H24 => "KXBTC24H",
        IntervalCode::W1 => "KXBTCW",
    }
}

/// venue_b series slug of a BTC up/down interval (`btc-up-or-down-15m`, …).
pub fn venue_b_btc_series(code: IntervalCode) -> &'static str {
    match code {
        IntervalCode::M5 => "btc-up-or-down-5m",
        IntervalCode::M15 => "btc-up-or-down-15m",
        IntervalCode::H1 => "btc-up-or-down-hourly",
        IntervalCode::H24 => "btc-up-or-down-daily",
        IntervalCode::W1 => "btc-up-or-down-weekly",
    }
}

fn venue_b_series_gamma_id(slug: &str) -> &'static str {
    match slug {
        "btc-up-or-down-5m" => "10684",
        "btc-up-or-down-15m" => "10192",
        "btc-up-or-down-hourly" => "10114",
        "btc-up-or-down-daily" => "10117",
        "btc-up-or-down-weekly" => "10231",
        "eth-up-or-down-15m" => "10191",
        "nba" => "10345",
        "nhl" => "10346",
        "us-politics" => "10020",
        _ => "10040",
    }
}

pub(crate) fn recurrence(code: IntervalCode) -> &'static str {
    match code {
        IntervalCode::M5 => "5m",
        IntervalCode::M15 => "15m",
        IntervalCode::H1 => "hourly",
        IntervalCode::H24 => "daily",
        IntervalCode::W1 => "weekly",
    }
}

fn venue_a_frequency(code: IntervalCode) -> &'static str {
    match code {
        IntervalCode::M5 => "five_min",
        IntervalCode::M15 => "fifteen_min",
        IntervalCode::H1 => "hourly",
        IntervalCode::H24 => "daily",
        IntervalCode::W1 => "weekly",
    }
}

/// "in next 15 mins" wording of venue_a titles.
fn venue_a_span(code: IntervalCode) -> &'static str {
    match code {
        IntervalCode::M5 => "in next 5 mins",
        IntervalCode::M15 => "in next 15 mins",
        IntervalCode::H1 => "in next hour",
        IntervalCode::H24 => "in next 24 hours",
        IntervalCode::W1 => "this week",
    }
}

pub(crate) const TAG_CRYPTO: Tag = Tag {
    id: "21",
    label: "Crypto",
    slug: "crypto",
};
const TAG_BITCOIN: Tag = Tag {
    id: "235",
    label: "Bitcoin",
    slug: "bitcoin",
};
const TAG_ETHEREUM: Tag = Tag {
    id: "39",
    label: "Ethereum",
    slug: "ethereum",
};
pub(crate) const TAG_UPDOWN: Tag = Tag {
    id: "102127",
    label: "Up or Down",
    slug: "up-or-down",
};
pub(crate) const TAG_SPORTS: Tag = Tag {
    id: "1",
    label: "Sports",
    slug: "sports",
};
pub(crate) const TAG_GAMES: Tag = Tag {
    id: "100639",
    label: "Games",
    slug: "games",
};
pub(crate) const TAG_POLITICS: Tag = Tag {
    id: "2",
    label: "Politics",
    slug: "politics",
};
const TAG_CULTURE: Tag = Tag {
    id: "596",
    label: "Culture",
    slug: "pop-culture",
};

fn interval_tag(code: IntervalCode) -> Tag {
    match code {
        IntervalCode::M5 => Tag {
            id: "102892",
            label: "5M",
            slug: "5M",
        },
        IntervalCode::M15 => Tag {
            id: "102467",
            label: "15M",
            slug: "15M",
        },
        IntervalCode::H1 => Tag {
            id: "102175",
            label: "1H",
            slug: "1H",
        },
        IntervalCode::H24 => Tag {
            id: "102281",
            label: "Daily",
            slug: "daily",
        },
        IntervalCode::W1 => Tag {
            id: "102264",
            label: "Weekly",
            slug: "weekly",
        },
    }
}

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_secs(secs)
}

pub(crate) fn utc_date(secs: i64) -> Date {
    OffsetDateTime::from_unix_timestamp(secs)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .date()
}

/// `7:15 AM EDT` (short windows) or `May 12, 2026 12:00 PM EDT` (daily and longer), for venue_a rules.
fn rules_time(secs: i64, with_date: bool) -> String {
    let t = to_et(secs);
    let (h, ampm) = twelve_hour(t.hour());
    let clock = format!("{h}:{:02} {ampm} {}", t.minute(), et_abbrev(secs));
    if with_date {
        format!("{} {}, {} {clock}", month_name(t.date()), t.day(), t.year())
    } else {
        clock
    }
}

impl Model {
    /// Lists whatever should exist at `now_s` and does not yet: current/next windows, games of the
    /// surrounding days, this month's one-venue questions. Items whose trading already ended are not
    /// (re)created, so pruned items stay gone.
    pub(super) fn ensure_catalog(&mut self, now_s: i64) {
        for code in IntervalCode::ALL {
            let (s0, e0) = window_containing(code, now_s);
            let (sp, _) = window_containing(code, s0 - 1);
            let (_, e1) = window_containing(code, e0);
            for (gs, ge) in [(sp, s0), (s0, e0), (e0, e1)] {
                self.ensure_window(Asset::Btc, code, gs, ge, now_s);
            }
        }
        let (s0, e0) = window_containing(IntervalCode::M15, now_s);
        self.ensure_window(Asset::Eth, IntervalCode::M15, s0, e0, now_s);
        self.ensure_window(Asset::Eth, IntervalCode::M15, e0, e0 + 900, now_s);

        let today = utc_date(now_s);
        for day in [today.previous_day(), Some(today), today.next_day()]
            .into_iter()
            .flatten()
        {
            for li in 0..LEAGUES.len() {
                self.ensure_games(li, day, now_s);
            }
        }
        self.ensure_monthly(now_s);
    }

    /// Shift of venue_b's windows of `code` relative to venue_a's, in seconds (1–4 either way, fixed per
    /// seed). Start and end move together so that consecutive windows still tile.
    pub(super) fn venue_b_skew(&self, code: IntervalCode) -> i64 {
        let mut r = ids::key_rng(self.seed, &format!("skew:{code}"));
        let v = r.random_range(1..=4);
        if r.random_bool(0.5) { v } else { -v }
    }

    pub(super) fn ensure_series(&mut self, s: SimSeries) {
        self.series.entry((s.exchange, s.series_id.clone())).or_insert(s);
    }

    pub(super) fn add_market(&mut self, m: SimMarket) {
        if let Some(tokens) = &m.tokens {
            for (i, t) in tokens.iter().enumerate() {
                self.tokens.insert(t.clone(), (m.market_id.clone(), i));
            }
        }
        self.markets.insert((m.exchange, m.market_id.clone()), m);
    }

    /// A Gamma numeric id not used yet (ids come from the item's own generator, so they do not depend on
    /// listing order; a clash, which is rare, is resolved by drawing again).
    pub(super) fn fresh_gamma_id(&mut self, r: &mut impl Rng, digits: u32) -> String {
        loop {
            let id = ids::numeric_id(r, digits);
            if self.gamma_ids.insert(id.clone()) {
                return id;
            }
        }
    }
}
