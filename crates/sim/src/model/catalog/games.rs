//! Games of the two fictional leagues: the league and team tables, and each venue's listing of a
//! game (venue_a one market per team, "Austin at Portland"; venue_b one two-outcome market, "Austin vs.
//! Portland"). Both name teams by city so the service's game matcher pairs them.

use crossbook_core::{Category, Exchange, Price};
use rand::Rng;
use time::Date;

use super::{MINUTE_MS, TAG_GAMES, TAG_SPORTS, ts, venue_b_series_gamma_id};
use crate::{
    calendar::{et_clock, month_name, to_et, yymondd},
    ids,
    model::{
        Model, Pair, PairKind,
        types::{Phase, SimEvent, SimMarket, SimSeries, Tag},
    },
};

/// A fictional team: city (both venues' titles and outcomes), nickname (venue_b's description),
/// abbreviation (both venues' ids).
struct Team {
    city: &'static str,
    nick: &'static str,
    abbr: &'static str,
}

/// A fictional league listed on both venues.
pub(super) struct League {
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

pub(super) const LEAGUES: [League; 2] = [
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
impl Model {
    pub(super) fn ensure_games(&mut self, league_index: usize, day: Date, now_s: i64) {
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
        // City names, like venue_a's listing of the game, so the service's game matcher (which compares
        // team names as written) pairs the two; the nicknames stay in the description.
        let title = format!("{} vs. {}", away.city, home.city);
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
            away.city,
            home.city,
            home.nick,
            home.city
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
            yes_label: away.city.into(),
            no_label: home.city.into(),
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
}
