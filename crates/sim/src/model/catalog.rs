//! What the venues list, and how each venue names it.
//!
//! Three families, each listed on the venues in their own naming style:
//!
//! - BTC up/down windows for every interval code on both venues (current and next window; old windows
//!   close, settle and are pruned later). venue_b's window boundaries are shifted by a few seconds per
//!   interval (1–4 s, start and end alike), so pairing must use a tolerance. ETH 15m windows exist on venue_b only.
//! - Games of two fictional leagues on both venues: venue_a names teams by city and lists one market per
//!   team (`KXNBAGAME-26MAY12DENAUS-DEN`, "Denver at Austin Winner?"); venue_b names them by nickname and
//!   lists one two-outcome market (`nba-den-aus-2026-05-12`, "Comets vs. Rangers", outcomes
//!   `["Comets", "Rangers"]`). Same teams, same ET date, same abbreviations in ticker and slug.
//! - Monthly questions that exist on one venue only (economics and weather on venue_a, politics and culture
//!   on venue_b): they must never be paired.

use crossbook_core::{Category, Exchange, IntervalCode, Price, Timestamp};
use rand::Rng;
use time::{Date, Month, OffsetDateTime};

use super::{
    Asset, Model, Pair, PairKind,
    types::{Phase, SimEvent, SimMarket, SimSeries, Tag},
};
use crate::{
    calendar::{MONTHS_UPPER, et_abbrev, et_clock, month_name, to_et, twelve_hour, window_containing, yymondd},
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

fn recurrence(code: IntervalCode) -> &'static str {
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

const TAG_CRYPTO: Tag = Tag {
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
const TAG_UPDOWN: Tag = Tag {
    id: "102127",
    label: "Up or Down",
    slug: "up-or-down",
};
const TAG_SPORTS: Tag = Tag {
    id: "1",
    label: "Sports",
    slug: "sports",
};
const TAG_GAMES: Tag = Tag {
    id: "100639",
    label: "Games",
    slug: "games",
};
const TAG_POLITICS: Tag = Tag {
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

/// A fictional team: city (venue_a's naming), nickname (venue_b's), abbreviation (both).
struct Team {
    city: &'static str,
    nick: &'static str,
    abbr: &'static str,
}

/// A fictional league listed on both venues.
struct League {
    /// venue_a series ticker.
    series_a: &'static str,
    /// venue_a series title and rules wording.
    name_a: &'static str,
    /// venue_b series slug, slug prefix and series title.
    slug_b: &'static str,
    title_b: &'static str,
    sport_tag: Tag,
    teams: [Team; 8],
}

const LEAGUES: [League; 2] = [
    League {
        series_a: "KXNBAGAME",
        name_a: "professional basketball",
        slug_b: "nba",
        title_b: "NBA",
        sport_tag: Tag {
            id: "28",
            label: "Basketball",
            slug: "basketball",
        },
        teams: [
            Team {
                city: "Denver",
                nick: "Comets",
                abbr: "DEN",
            },
            Team {
                city: "Austin",
                nick: "Rangers",
                abbr: "AUS",
            },
            Team {
                city: "Portland",
                nick: "Pioneers",
                abbr: "POR",
            },
            Team {
                city: "Memphis",
                nick: "Blues",
                abbr: "MEM",
            },
            Team {
                city: "Seattle",
                nick: "Sound",
                abbr: "SEA",
            },
            Team {
                city: "Orlando",
                nick: "Suns",
                abbr: "ORL",
            },
            Team {
                city: "Boston",
                nick: "Harbormen",
                abbr: "BOS",
            },
            Team {
                city: "Phoenix",
                nick: "Firebirds",
                abbr: "PHX",
            },
        ],
    },
    League {
        series_a: "KXNHLGAME",
        name_a: "professional hockey",
        slug_b: "nhl",
        title_b: "NHL",
        sport_tag: Tag {
            id: "899",
            label: "Hockey",
            slug: "hockey",
        },
        teams: [
            Team {
                city: "Buffalo",
                nick: "Blizzard",
                abbr: "BUF",
            },
            Team {
                city: "Calgary",
                nick: "Ridgebacks",
                abbr: "CGY",
            },
            Team {
                city: "Hartford",
                nick: "Harriers",
                abbr: "HFD",
            },
            Team {
                city: "Halifax",
                nick: "Tides",
                abbr: "HFX",
            },
            Team {
                city: "Omaha",
                nick: "Lancers",
                abbr: "OMA",
            },
            Team {
                city: "Quebec",
                nick: "Voyageurs",
                abbr: "QUE",
            },
            Team {
                city: "Anchorage",
                nick: "Aces",
                abbr: "ANC",
            },
            Team {
                city: "Spokane",
                nick: "Sentinels",
                abbr: "SPK",
            },
        ],
    },
];

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_secs(secs)
}

fn utc_date(secs: i64) -> Date {
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

    fn ensure_window(&mut self, asset: Asset, code: IntervalCode, gs: i64, ge: i64, now_s: i64) {
        let key = format!("{}:{}:{gs}", asset.key(), code);
        if self.pairs.contains_key(&key) {
            return;
        }
        let skew = if asset == Asset::Btc {
            self.venue_b_skew(code)
        } else {
            0
        };
        let mut venues = Vec::new();
        if asset == Asset::Btc && ge > now_s {
            venues.push((Exchange::VenueA, gs, ge));
        }
        if ge + skew > now_s {
            venues.push((Exchange::VenueB, gs, ge));
        }
        if venues.is_empty() {
            return;
        }
        let mut r = ids::key_rng(self.seed, &key);
        let len_ms = (ge - gs) * 1000;
        self.pairs.insert(
            key.clone(),
            Pair {
                kind: PairKind::Window { asset, interval: code },
                fair: 50 + r.random_range(-2..=2),
                offsets: [0, 0],
                start: ts(gs),
                end: ts(ge),
                strike: None,
                final_cents: None,
                result: None,
                retain_ms: (2 * len_ms).max(20 * MINUTE_MS),
            },
        );
        for (ex, s, e) in venues {
            match ex {
                Exchange::VenueA => self.list_window_a(&key, code, s, e),
                Exchange::VenueB => self.list_window_b(&key, asset, code, s, e, skew),
            }
        }
    }

    fn list_window_a(&mut self, pair: &str, code: IntervalCode, open: i64, close: i64) {
        let series = venue_a_btc_series(code);
        self.ensure_series(SimSeries {
            exchange: Exchange::VenueA,
            series_id: series.into(),
            gamma_id: None,
            title: format!("BTC price up {}", venue_a_span(code)),
            frequency: venue_a_frequency(code).into(),
            category: "Crypto".into(),
            interval: Some(code),
        });
        let et_close = to_et(close);
        let event_ticker = format!(
            "{series}-{}{:02}{:02}",
            yymondd(et_close.date()),
            et_close.hour(),
            et_close.minute()
        );
        let ticker = format!("{event_ticker}-{:02}", et_close.minute());
        let long = matches!(code, IntervalCode::H24 | IntervalCode::W1);
        let title = format!("BTC price up {}?", venue_a_span(code));
        let et_open = to_et(open);
        let sub_title = format!(
            "{} {}, {}-{} ET",
            &month_name(et_open.date())[..3],
            et_open.day(),
            et_clock(open),
            et_clock(close)
        );
        let rules = format!(
            "If the simple average of the sixty seconds of CF Benchmarks' BRTI before {} is at least the \
             average before {}, then the market resolves to Yes.",
            rules_time(close, long),
            rules_time(open, long)
        );
        let mut r = ids::key_rng(self.seed, &format!("{pair}:a"));
        self.events.insert(
            (Exchange::VenueA, event_ticker.clone()),
            SimEvent {
                exchange: Exchange::VenueA,
                event_id: event_ticker.clone(),
                slug: None,
                series_id: series.into(),
                title: title.clone(),
                sub_title,
                description: String::new(),
                category: "Crypto".into(),
                tags: Vec::new(),
                interval: Some(code),
                start: ts(open),
                end: ts(close),
                created: ts(open - (close - open)),
                markets: vec![ticker.clone()],
                mutually_exclusive: false,
            },
        );
        self.add_market(SimMarket {
            exchange: Exchange::VenueA,
            market_id: ticker,
            event_id: event_ticker,
            series_id: series.into(),
            gamma_id: None,
            slug: None,
            wire_uuid: ids::uuid(&mut r),
            question: title,
            yes_label: String::new(),
            no_label: String::new(),
            description: rules,
            category: Category::Crypto,
            interval: Some(code),
            created: ts(open - (close - open)),
            open_time: ts(open),
            close_time: ts(close),
            settle_delay_ms: MINUTE_MS,
            phase: Phase::Upcoming,
            strike_cents: None,
            final_cents: None,
            result: None,
            settled_at: None,
            tokens: None,
            tick: Price::from_cents(1),
            volume: Default::default(),
            open_interest: Default::default(),
            last_price: None,
            last_size: Default::default(),
            pair: pair.into(),
            inverted: false,
            spread: r.random_range(1..=2),
            depth: r.random_range(5..=8),
        });
    }

    /// Lists a venue_b window. Names (slug, title) use the grid times `open`/`close`, as the venue's do;
    /// the stated times are shifted by `skew` seconds.
    fn list_window_b(&mut self, pair: &str, asset: Asset, code: IntervalCode, open: i64, close: i64, skew: i64) {
        let (series_slug, coin, tag) = match asset {
            Asset::Btc => (venue_b_btc_series(code), "Bitcoin", TAG_BITCOIN),
            Asset::Eth => ("eth-up-or-down-15m", "Ethereum", TAG_ETHEREUM),
        };
        self.ensure_series(SimSeries {
            exchange: Exchange::VenueB,
            series_id: series_slug.into(),
            gamma_id: Some(venue_b_series_gamma_id(series_slug).into()),
            title: format!("{} Up or Down {}", asset.symbol(), recurrence(code)),
            frequency: recurrence(code).into(),
            category: "Crypto".into(),
            interval: Some(code),
        });
        let et_open = to_et(open);
        let et_close = to_et(close);
        let mon = month_name(et_open.date());
        let (slug, title) = match code {
            IntervalCode::M5 | IntervalCode::M15 => (
                format!("{}-updown-{}-{open}", asset.key(), code),
                format!(
                    "{coin} Up or Down - {mon} {}, {}-{} ET",
                    et_open.day(),
                    et_clock(open),
                    et_clock(close)
                ),
            ),
            IntervalCode::H1 => {
                let (h, ampm) = twelve_hour(et_open.hour());
                (
                    format!(
                        "{}-up-or-down-{}-{}-{}-{h}{}-et",
                        coin.to_lowercase(),
                        mon.to_lowercase(),
                        et_open.day(),
                        et_open.year(),
                        ampm.to_lowercase()
                    ),
                    format!("{coin} Up or Down - {mon} {}, {h}{ampm} ET", et_open.day()),
                )
            }
            IntervalCode::H24 => {
                let d = et_close.date();
                (
                    format!(
                        "{}-up-or-down-on-{}-{}-{}",
                        coin.to_lowercase(),
                        month_name(d).to_lowercase(),
                        d.day(),
                        d.year()
                    ),
                    format!("{coin} Up or Down on {} {}?", month_name(d), d.day()),
                )
            }
            IntervalCode::W1 => (
                format!("{}-updown-1w-{open}", asset.key()),
                format!(
                    "{coin} Up or Down - {mon} {}, {} to {} {}, {} ET",
                    et_open.day(),
                    et_clock(open),
                    month_name(et_close.date()),
                    et_close.day(),
                    et_clock(close)
                ),
            ),
        };
        let chainlink = !matches!(code, IntervalCode::H1 | IntervalCode::H24);
        let source = if chainlink {
            format!("https://data.chain.link/streams/{}-usd", asset.key())
        } else {
            format!("https://www.binance.com/en/trade/{}_USDT", asset.symbol())
        };
        let description = format!(
            "This market will resolve to \"Up\" if the {coin} price at the end of the time range specified in \
             the title is greater than or equal to the price at the beginning of that range. Otherwise, it \
             will resolve to \"Down\".\nThe resolution source for this market is {source}."
        );
        let mut r = ids::key_rng(self.seed, &format!("{pair}:b"));
        let event_id = self.fresh_gamma_id(&mut r, 6);
        let market_gamma_id = self.fresh_gamma_id(&mut r, 7);
        let condition_id = ids::hash32(&mut r);
        let created = open - (close - open) + skew;
        let (open, close) = (open + skew, close + skew);
        self.slugs.insert(slug.clone(), event_id.clone());
        self.events.insert(
            (Exchange::VenueB, event_id.clone()),
            SimEvent {
                exchange: Exchange::VenueB,
                event_id: event_id.clone(),
                slug: Some(slug.clone()),
                series_id: series_slug.into(),
                title: title.clone(),
                sub_title: String::new(),
                description: description.clone(),
                category: "Crypto".into(),
                tags: vec![TAG_CRYPTO, tag, TAG_UPDOWN, interval_tag(code)],
                interval: Some(code),
                start: ts(open),
                end: ts(close),
                created: ts(created),
                markets: vec![condition_id.clone()],
                mutually_exclusive: false,
            },
        );
        let tokens = [ids::token_id(&mut r), ids::token_id(&mut r)];
        self.add_market(SimMarket {
            exchange: Exchange::VenueB,
            market_id: condition_id,
            event_id,
            series_id: series_slug.into(),
            gamma_id: Some(market_gamma_id),
            slug: Some(slug),
            wire_uuid: ids::hash32(&mut r),
            question: title,
            yes_label: "Up".into(),
            no_label: "Down".into(),
            description,
            category: Category::Crypto,
            interval: Some(code),
            created: ts(created),
            open_time: ts(open),
            close_time: ts(close),
            settle_delay_ms: MINUTE_MS,
            phase: Phase::Upcoming,
            strike_cents: None,
            final_cents: None,
            result: None,
            settled_at: None,
            tokens: Some(tokens),
            tick: Price::from_cents(1),
            volume: Default::default(),
            open_interest: Default::default(),
            last_price: None,
            last_size: Default::default(),
            pair: pair.into(),
            inverted: false,
            spread: r.random_range(1..=2),
            depth: r.random_range(5..=8),
        });
    }

    fn ensure_games(&mut self, league_index: usize, day: Date, now_s: i64) {
        let league = &LEAGUES[league_index];
        let day_key = format!("game:{}:{day}", league.slug_b);
        let mut r = ids::key_rng(self.seed, &day_key);
        let mut order: Vec<usize> = (0..league.teams.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, r.random_range(0..=i));
        }
        let day_start = day.midnight().assume_utc().unix_timestamp();
        for g in 0..2 {
            let key = format!("{day_key}:{g}");
            let start = day_start + 23 * 3600 + 2 * 3600 * g as i64;
            let listed = start - 36 * 3600;
            let close = start + 150 * 60;
            if self.pairs.contains_key(&key) || now_s < listed || now_s >= close {
                continue;
            }
            let (away, home) = (&league.teams[order[2 * g]], &league.teams[order[2 * g + 1]]);
            let mut gr = ids::key_rng(self.seed, &key);
            self.pairs.insert(
                key.clone(),
                Pair {
                    kind: PairKind::Game,
                    fair: gr.random_range(30..=70),
                    offsets: [0, 0],
                    start: ts(listed),
                    end: ts(close),
                    strike: None,
                    final_cents: None,
                    result: None,
                    retain_ms: 24 * 60 * MINUTE_MS,
                },
            );
            self.list_game_a(&key, league, away, home, start, listed, close);
            self.list_game_b(&key, league, away, home, start, listed, close);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn list_game_a(
        &mut self,
        pair: &str,
        league: &League,
        away: &Team,
        home: &Team,
        start: i64,
        listed: i64,
        close: i64,
    ) {
        self.ensure_series(SimSeries {
            exchange: Exchange::VenueA,
            series_id: league.series_a.into(),
            gamma_id: None,
            title: format!(
                "Pro {} Game",
                if league.slug_b == "nba" { "Basketball" } else { "Hockey" }
            ),
            frequency: "custom".into(),
            category: "Sports".into(),
            interval: None,
        });
        let et = to_et(start);
        let d = et.date();
        let event_ticker = format!("{}-{}{}{}", league.series_a, yymondd(d), away.abbr, home.abbr);
        let title = format!("{} at {}", away.city, home.city);
        let date_text = format!("{} {}, {}", month_name(d), d.day(), d.year());
        let mut markets = Vec::new();
        let mut r = ids::key_rng(self.seed, &format!("{pair}:a"));
        for (team, inverted) in [(away, false), (home, true)] {
            let ticker = format!("{event_ticker}-{}", team.abbr);
            markets.push(ticker.clone());
            self.add_market(SimMarket {
                exchange: Exchange::VenueA,
                market_id: ticker,
                event_id: event_ticker.clone(),
                series_id: league.series_a.into(),
                gamma_id: None,
                slug: None,
                wire_uuid: ids::uuid(&mut r),
                question: format!("{title} Winner?"),
                yes_label: team.city.into(),
                no_label: team.city.into(),
                description: format!(
                    "If {} wins the {title} {} game originally scheduled for {date_text}, then the market \
                     resolves to Yes.",
                    team.city, league.name_a
                ),
                category: Category::Sports,
                interval: None,
                created: ts(listed),
                open_time: ts(listed),
                close_time: ts(close),
                settle_delay_ms: 10 * MINUTE_MS,
                phase: Phase::Upcoming,
                strike_cents: None,
                final_cents: None,
                result: None,
                settled_at: None,
                tokens: None,
                tick: Price::from_cents(1),
                volume: Default::default(),
                open_interest: Default::default(),
                last_price: None,
                last_size: Default::default(),
                pair: pair.into(),
                inverted,
                spread: r.random_range(1..=3),
                depth: r.random_range(4..=7),
            });
        }
        self.events.insert(
            (Exchange::VenueA, event_ticker.clone()),
            SimEvent {
                exchange: Exchange::VenueA,
                event_id: event_ticker,
                slug: None,
                series_id: league.series_a.into(),
                title,
                sub_title: format!("{} @ {} ({} {})", away.abbr, home.abbr, &month_name(d)[..3], d.day()),
                description: String::new(),
                category: "Sports".into(),
                tags: Vec::new(),
                interval: None,
                start: ts(start),
                end: ts(close),
                created: ts(listed),
                markets,
                mutually_exclusive: true,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn list_game_b(
        &mut self,
        pair: &str,
        league: &League,
        away: &Team,
        home: &Team,
        start: i64,
        listed: i64,
        close: i64,
    ) {
        self.ensure_series(SimSeries {
            exchange: Exchange::VenueB,
            series_id: league.slug_b.into(),
            gamma_id: Some(venue_b_series_gamma_id(league.slug_b).into()),
            title: league.title_b.into(),
            frequency: "daily".into(),
            category: "Sports".into(),
            interval: None,
        });
        let d = to_et(start).date();
        let slug = format!(
            "{}-{}-{}-{}",
            league.slug_b,
            away.abbr.to_lowercase(),
            home.abbr.to_lowercase(),
            d
        );
        let title = format!("{} vs. {}", away.nick, home.nick);
        let description = format!(
            "In the upcoming {} game, scheduled for {} {}, {} at {} ET: {} {} vs. {} {}.\nIf the {} {} win, \
             the market will resolve to \"{}\". If the {} {} win, the market will resolve to \"{}\".",
            league.title_b,
            month_name(d),
            d.day(),
            d.year(),
            et_clock(start),
            away.city,
            away.nick,
            home.city,
            home.nick,
            away.city,
            away.nick,
            away.nick,
            home.city,
            home.nick,
            home.nick
        );
        let mut r = ids::key_rng(self.seed, &format!("{pair}:b"));
        let event_id = self.fresh_gamma_id(&mut r, 6);
        let gamma_id = self.fresh_gamma_id(&mut r, 7);
        let condition_id = ids::hash32(&mut r);
        self.slugs.insert(slug.clone(), event_id.clone());
        self.events.insert(
            (Exchange::VenueB, event_id.clone()),
            SimEvent {
                exchange: Exchange::VenueB,
                event_id: event_id.clone(),
                slug: Some(slug.clone()),
                series_id: league.slug_b.into(),
                title: title.clone(),
                sub_title: String::new(),
                description: description.clone(),
                category: "Sports".into(),
                tags: vec![TAG_SPORTS, league.sport_tag.clone(), TAG_GAMES],
                interval: None,
                start: ts(start),
                end: ts(close),
                created: ts(listed),
                markets: vec![condition_id.clone()],
                mutually_exclusive: false,
            },
        );
        let tokens = [ids::token_id(&mut r), ids::token_id(&mut r)];
        self.add_market(SimMarket {
            exchange: Exchange::VenueB,
            market_id: condition_id,
            event_id,
            series_id: league.slug_b.into(),
            gamma_id: Some(gamma_id),
            slug: Some(slug),
            wire_uuid: ids::hash32(&mut r),
            question: title,
            yes_label: away.nick.into(),
            no_label: home.nick.into(),
            description,
            category: Category::Sports,
            interval: None,
            created: ts(listed),
            open_time: ts(listed),
            close_time: ts(close),
            settle_delay_ms: 10 * MINUTE_MS,
            phase: Phase::Upcoming,
            strike_cents: None,
            final_cents: None,
            result: None,
            settled_at: None,
            tokens: Some(tokens),
            tick: Price::from_cents(1),
            volume: Default::default(),
            open_interest: Default::default(),
            last_price: None,
            last_size: Default::default(),
            pair: pair.into(),
            inverted: false,
            spread: r.random_range(1..=3),
            depth: r.random_range(4..=7),
        });
    }

    /// This month's questions that only one venue lists.
    fn ensure_monthly(&mut self, now_s: i64) {
        let today = utc_date(now_s);
        let first = Date::from_calendar_date(today.year(), today.month(), 1).expect("valid date");
        let next = if today.month() == Month::December {
            Date::from_calendar_date(today.year() + 1, Month::January, 1)
        } else {
            Date::from_calendar_date(today.year(), today.month().next(), 1)
        }
        .expect("valid date");
        let open = first.midnight().assume_utc().unix_timestamp();
        let close = next.midnight().assume_utc().unix_timestamp();
        let last_day = next.previous_day().expect("valid date");
        let mon = month_name(first);
        let yymon = format!(
            "{:02}{}",
            first.year() % 100,
            MONTHS_UPPER[usize::from(u8::from(first.month())) - 1]
        );
        let next_mon = month_name(next);
        let specs: [(Exchange, &str, &str, String, String, String, &str); 4] = [
            (
                Exchange::VenueA,
                "KXFEDDECISION",
                "Economics",
                format!("KXFEDDECISION-{yymon}"),
                format!("Will the Fed hold rates at its {next_mon} {} meeting?", next.year()),
                "Hold rates".into(),
                "Fed rate decision",
            ),
            (
                Exchange::VenueA,
                "KXHIGHNYM",
                "Climate and Weather",
                format!("KXHIGHNYM-{yymon}"),
                format!("Will NYC reach 90°F in {mon} {}?", first.year()),
                "90° or above".into(),
                "NYC monthly high temperature",
            ),
            (
                Exchange::VenueB,
                "us-politics",
                "Politics",
                format!(
                    "senate-passes-harbor-infrastructure-act-by-{}-{}-{}",
                    mon.to_lowercase(),
                    last_day.day(),
                    first.year()
                ),
                format!(
                    "Will the Senate pass the Harbor Infrastructure Act by {mon} {}?",
                    last_day.day()
                ),
                "Yes".into(),
                "US Politics",
            ),
            (
                Exchange::VenueB,
                "box-office",
                "Culture",
                format!(
                    "starfall-opening-weekend-over-100m-{}-{}",
                    mon.to_lowercase(),
                    first.year()
                ),
                format!("Will 'Starfall' gross over $100M on its {mon} opening weekend?"),
                "Yes".into(),
                "Box Office",
            ),
        ];
        for (ex, series, category, id, question, yes_label, series_title) in specs {
            let key = format!("other:{id}");
            if self.pairs.contains_key(&key) || now_s >= close {
                continue;
            }
            let mut r = ids::key_rng(self.seed, &key);
            self.pairs.insert(
                key.clone(),
                Pair {
                    kind: PairKind::Other,
                    fair: r.random_range(15..=85),
                    offsets: [0, 0],
                    start: ts(open),
                    end: ts(close),
                    strike: None,
                    final_cents: None,
                    result: None,
                    retain_ms: 24 * 60 * MINUTE_MS,
                },
            );
            let gamma_series = (ex == Exchange::VenueB).then(|| venue_b_series_gamma_id(series).to_string());
            self.ensure_series(SimSeries {
                exchange: ex,
                series_id: series.into(),
                gamma_id: gamma_series,
                title: series_title.into(),
                frequency: "monthly".into(),
                category: category.into(),
                interval: None,
            });
            let description = format!(
                "This market resolves to \"Yes\" if the answer to the question \"{question}\" is yes by \
                 {next_mon} 1, {} 00:00 UTC. Otherwise it resolves to \"No\".",
                next.year()
            );
            let (event_id, market_id, slug, gamma_id, tokens, wire_uuid, tags) = match ex {
                Exchange::VenueA => {
                    let suffix = if series == "KXFEDDECISION" { "H0" } else { "T90" };
                    (
                        id.clone(),
                        format!("{id}-{suffix}"),
                        None,
                        None,
                        None,
                        ids::uuid(&mut r),
                        Vec::new(),
                    )
                }
                Exchange::VenueB => {
                    let event_id = self.fresh_gamma_id(&mut r, 6);
                    let gamma_id = self.fresh_gamma_id(&mut r, 7);
                    self.slugs.insert(id.clone(), event_id.clone());
                    let tag = if category == "Politics" {
                        TAG_POLITICS
                    } else {
                        TAG_CULTURE
                    };
                    (
                        event_id,
                        ids::hash32(&mut r),
                        Some(id.clone()),
                        Some(gamma_id),
                        Some([ids::token_id(&mut r), ids::token_id(&mut r)]),
                        ids::hash32(&mut r),
                        vec![tag],
                    )
                }
            };
            self.events.insert(
                (ex, event_id.clone()),
                SimEvent {
                    exchange: ex,
                    event_id: event_id.clone(),
                    slug: slug.clone(),
                    series_id: series.into(),
                    title: question.clone(),
                    sub_title: format!("In {mon} {}", first.year()),
                    description: description.clone(),
                    category: category.into(),
                    tags,
                    interval: None,
                    start: ts(open),
                    end: ts(close),
                    created: ts(open),
                    markets: vec![market_id.clone()],
                    mutually_exclusive: false,
                },
            );
            self.add_market(SimMarket {
                exchange: ex,
                market_id,
                event_id,
                series_id: series.into(),
                gamma_id,
                slug,
                wire_uuid,
                question,
                yes_label,
                no_label: "No".into(),
                description,
                category: Category::Other,
                interval: None,
                created: ts(open),
                open_time: ts(open),
                close_time: ts(close),
                settle_delay_ms: 60 * MINUTE_MS,
                phase: Phase::Upcoming,
                strike_cents: None,
                final_cents: None,
                result: None,
                settled_at: None,
                tokens,
                tick: Price::from_cents(1),
                volume: Default::default(),
                open_interest: Default::default(),
                last_price: None,
                last_size: Default::default(),
                pair: key.clone(),
                inverted: false,
                spread: r.random_range(1..=3),
                depth: r.random_range(4..=6),
            });
        }
    }

    fn ensure_series(&mut self, s: SimSeries) {
        self.series.entry((s.exchange, s.series_id.clone())).or_insert(s);
    }

    fn add_market(&mut self, m: SimMarket) {
        if let Some(tokens) = &m.tokens {
            for (i, t) in tokens.iter().enumerate() {
                self.tokens.insert(t.clone(), (m.market_id.clone(), i));
            }
        }
        self.markets.insert((m.exchange, m.market_id.clone()), m);
    }

    /// A Gamma numeric id not used yet (ids come from the item's own generator, so they do not depend on
    /// listing order; a clash, which is rare, is resolved by drawing again).
    fn fresh_gamma_id(&mut self, r: &mut impl Rng, digits: u32) -> String {
        loop {
            let id = ids::numeric_id(r, digits);
            if self.gamma_ids.insert(id.clone()) {
                return id;
            }
        }
    }
}
