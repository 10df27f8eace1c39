//! The bulk catalog's listings: rolling window series of more coins, games of more leagues and long-dated
//! question groups, generated from the seed.

use crossbook_core::{Category, Exchange, IntervalCode, Price, Timestamp};
use rand::Rng;

use super::Bulk;
use crate::{
    calendar::window_containing,
    ids,
    model::{
        Model, Pair, PairKind,
        catalog::{self, TAG_CRYPTO, TAG_GAMES, TAG_POLITICS, TAG_SPORTS, TAG_UPDOWN},
        ex_index,
        types::{BULK, Phase, SimEvent, SimMarket, SimSeries, Tag, Update},
    },
};

/// A rolling window series of the bulk catalog.
#[derive(Debug, Clone)]
pub(super) struct Rolling {
    pub(super) exchange: Exchange,
    pub(super) coin: &'static Coin,
    pub(super) code: IntervalCode,
    /// Markets per event: 1 for up/down, more for strike ladders.
    pub(super) ladder: usize,
    /// How far ahead of now windows are listed, in seconds.
    pub(super) lead_s: i64,
    /// Start of the next window to list (Unix seconds).
    pub(super) next_start: i64,
}

#[derive(Debug)]
pub(super) struct Coin {
    symbol: &'static str,
    name: &'static str,
    /// Rough price in dollars, for strike ladders.
    dollars: i64,
}

pub(super) const COINS: [Coin; 4] = [
    Coin {
        symbol: "SOL",
        name: "Solana",
        dollars: 180,
    },
    Coin {
        symbol: "XRP",
        name: "XRP",
        dollars: 3,
    },
    Coin {
        symbol: "DOGE",
        name: "Dogecoin",
        dollars: 1,
    },
    Coin {
        symbol: "BNB",
        name: "BNB",
        dollars: 900,
    },
];

const LEAGUES: [(&str, &str); 4] = [
    ("BBL", "Basketball"),
    ("HKL", "Hockey"),
    ("FBL", "Football"),
    ("BSL", "Baseball"),
];

/// What one bulk market is.
struct Listing {
    exchange: Exchange,
    series: SimSeries,
    /// venue_a event ticker or venue_b event slug.
    event_name: String,
    event_title: String,
    sub_title: String,
    tags: Vec<Tag>,
    category: Category,
    interval: Option<IntervalCode>,
    created: i64,
    open: i64,
    close: i64,
    /// Per market: venue_a ticker (ignored on venue_b), question, yes label, no label.
    markets: Vec<(String, String, String, String)>,
    tick: Price,
    retain_ms: i64,
    mutually_exclusive: bool,
}

impl Model {
    /// Lists every rolling window that starts within its series' lead time.
    pub(super) fn list_rolling(&mut self, bulk: &mut Bulk, now_s: i64, out: &mut Vec<Update>) {
        for i in 0..bulk.rolling.len() {
            loop {
                let r = bulk.rolling[i].clone();
                if r.next_start > now_s + r.lead_s {
                    break;
                }
                let (s, e) = window_containing(r.code, r.next_start);
                bulk.rolling[i].next_start = e;
                let listing = window_listing(&r, s, e);
                self.add_listing(bulk, listing, now_s, out);
            }
        }
    }

    pub(super) fn list_games(&mut self, bulk: &mut Bulk, now_s: i64) {
        let mut r = ids::key_rng(self.seed, "bulk:games");
        let mut ignored = Vec::new();
        for (ex, count, per_game) in [(Exchange::VenueA, 300, 2), (Exchange::VenueB, 520, 1)] {
            for g in 0..count {
                let (league, sport) = LEAGUES[g % LEAGUES.len()];
                let away = r.random_range(1..=40);
                let home = (away + r.random_range(1..40)) % 40 + 1;
                let start = now_s - now_s % 900 + 900 * r.random_range(1..=288);
                let day = crate::calendar::yymondd(catalog::utc_date(start));
                let (a, h) = (format!("T{away:02}"), format!("T{home:02}"));
                let title = format!("{sport} Team {away} at Team {home}");
                let (event_name, markets) = match ex {
                    Exchange::VenueA => {
                        let event = format!("KX{league}GAME-{day}{a}{h}-{g}");
                        let markets = [&a, &h]
                            .into_iter()
                            .take(per_game)
                            .map(|t| {
                                (
                                    format!("{event}-{t}"),
                                    format!("{title} Winner?"),
                                    t.clone(),
                                    String::new(),
                                )
                            })
                            .collect();
                        (event, markets)
                    }
                    Exchange::VenueB => (
                        format!(
                            "{}-{}-{}-{day}-{g}",
                            league.to_lowercase(),
                            a.to_lowercase(),
                            h.to_lowercase()
                        ),
                        vec![(
                            String::new(),
                            format!("Team {away} vs. Team {home}"),
                            format!("Team {away}"),
                            format!("Team {home}"),
                        )],
                    ),
                };
                let series_id = match ex {
                    Exchange::VenueA => format!("KX{league}GAME"),
                    Exchange::VenueB => league.to_lowercase(),
                };
                let listing = Listing {
                    exchange: ex,
                    series: series(ex, &series_id, &format!("{sport} League"), "daily", "Sports", None),
                    event_name,
                    event_title: title.clone(),
                    sub_title: title,
                    tags: vec![TAG_SPORTS, TAG_GAMES],
                    category: Category::Sports,
                    interval: None,
                    created: now_s - 86_400,
                    open: now_s - 3_600,
                    close: start + 3 * 3_600,
                    markets,
                    tick: Price::from_cents(1),
                    retain_ms: 30 * 60_000,
                    mutually_exclusive: ex == Exchange::VenueA,
                };
                self.add_listing(bulk, listing, now_s, &mut ignored);
            }
        }
    }

    pub(super) fn list_long_dated(&mut self, bulk: &mut Bulk, now_s: i64) {
        let mut r = ids::key_rng(self.seed, "bulk:long");
        let mut ignored = Vec::new();
        for (ex, events) in [(Exchange::VenueA, 340), (Exchange::VenueB, 820)] {
            for n in 0..events {
                let days = r.random_range(30..=400);
                let close = now_s - now_s % 86_400 + days * 86_400;
                let topic = ["Rate", "Index", "Election", "Award", "Launch"][n % 5];
                let title = format!("{topic} question {n}: which outcome by day {days}?");
                let (series_id, event_name, category) = match ex {
                    Exchange::VenueA => (
                        format!("KXLONG{topic}").to_uppercase(),
                        format!("KXLONG{}-{n}", topic.to_uppercase()),
                        "Economics",
                    ),
                    Exchange::VenueB => (
                        format!("long-{}", topic.to_lowercase()),
                        format!("{}-question-{n}-day-{days}", topic.to_lowercase()),
                        "Politics",
                    ),
                };
                let markets = (0..10)
                    .map(|k| {
                        (
                            format!("{event_name}-O{k}"),
                            format!("Will outcome {k} of {topic} question {n} happen by day {days}?"),
                            if ex == Exchange::VenueA {
                                format!("Outcome {k}")
                            } else {
                                "Yes".into()
                            },
                            if ex == Exchange::VenueA {
                                String::new()
                            } else {
                                "No".into()
                            },
                        )
                    })
                    .collect();
                let listing = Listing {
                    exchange: ex,
                    series: series(ex, &series_id, &format!("{topic} questions"), "custom", category, None),
                    event_name,
                    event_title: title.clone(),
                    sub_title: format!("By day {days}"),
                    tags: vec![TAG_POLITICS],
                    category: Category::Other,
                    interval: None,
                    created: now_s - 30 * 86_400,
                    open: now_s - 30 * 86_400,
                    close,
                    markets,
                    tick: Price::from_cents(1),
                    retain_ms: 24 * 3_600_000,
                    mutually_exclusive: true,
                };
                self.add_listing(bulk, listing, now_s, &mut ignored);
            }
        }
    }

    /// Lists one bulk event with its markets and schedules their lifecycle. Markets that trade at once get
    /// a book at the next step (or at start, see [`Model::init_bulk`]).
    fn add_listing(&mut self, bulk: &mut Bulk, l: Listing, now_s: i64, out: &mut Vec<Update>) {
        if l.close <= now_s {
            return;
        }
        let ex = l.exchange;
        let mut r = ids::key_rng(self.seed, &format!("{BULK}{ex}:{}", l.event_name));
        self.ensure_series(l.series.clone());
        let (event_id, slug) = match ex {
            Exchange::VenueA => (l.event_name.clone(), None),
            Exchange::VenueB => {
                let id = self.fresh_gamma_id(&mut r, 7);
                self.slugs.insert(l.event_name.clone(), id.clone());
                (id, Some(l.event_name.clone()))
            }
        };
        let mut market_ids = Vec::new();
        for (k, (ticker, question, yes, no)) in l.markets.iter().enumerate() {
            let (market_id, gamma_id, mslug, tokens, wire_uuid) = match ex {
                Exchange::VenueA => (ticker.clone(), None, None, None, ids::uuid(&mut r)),
                Exchange::VenueB => (
                    ids::hash32(&mut r),
                    Some(self.fresh_gamma_id(&mut r, 8)),
                    Some(if l.markets.len() == 1 {
                        l.event_name.clone()
                    } else {
                        format!("{}-{k}", l.event_name)
                    }),
                    Some([ids::token_id(&mut r), ids::token_id(&mut r)]),
                    ids::hash32(&mut r),
                ),
            };
            let pair_key = format!("{BULK}{ex}:{market_id}");
            self.pairs.insert(
                pair_key.clone(),
                Pair {
                    kind: PairKind::Other,
                    fair: r.random_range(8..=92),
                    offsets: [0, 0],
                    start: Timestamp::from_secs(l.open),
                    end: Timestamp::from_secs(l.close),
                    strike: None,
                    final_cents: None,
                    result: None,
                    retain_ms: l.retain_ms,
                },
            );
            let m = SimMarket {
                exchange: ex,
                market_id: market_id.clone(),
                event_id: event_id.clone(),
                series_id: l.series.series_id.clone(),
                gamma_id,
                slug: mslug,
                wire_uuid,
                question: question.clone(),
                yes_label: yes.clone(),
                no_label: no.clone(),
                description: format!("This market resolves to \"{yes}\" if the answer to \"{question}\" is yes."),
                category: l.category,
                interval: l.interval,
                created: Timestamp::from_secs(l.created),
                open_time: Timestamp::from_secs(l.open),
                close_time: Timestamp::from_secs(l.close),
                settle_delay_ms: 60_000,
                phase: Phase::Upcoming,
                strike_cents: None,
                final_cents: None,
                result: None,
                settled_at: None,
                tokens,
                tick: l.tick,
                volume: Default::default(),
                open_interest: Default::default(),
                last_price: None,
                last_size: Default::default(),
                pair: pair_key,
                inverted: false,
                spread: r.random_range(1..=3),
                depth: r.random_range(4..=7),
            };
            let key = (ex, market_id.clone());
            market_ids.push(market_id);
            self.add_market(m);
            out.push(Update::Listed {
                exchange: ex,
                market_id: key.1.clone(),
            });
            let now = Timestamp::from_secs(now_s);
            if now >= self.markets[&key].open_time {
                self.markets.get_mut(&key).expect("listed").phase = Phase::Open;
            }
            if self.markets[&key].trading() {
                if bulk.running {
                    // Listed while running: the book arrives as an update.
                    self.open_book(bulk, &key, out);
                } else {
                    bulk.live[ex_index(ex)].push(key.clone());
                }
            }
            let retain = l.retain_ms;
            Self::schedule(bulk, Self::next_due(&self.markets[&key], retain), key);
        }
        self.events.insert(
            (ex, event_id.clone()),
            SimEvent {
                exchange: ex,
                event_id,
                slug,
                series_id: l.series.series_id.clone(),
                title: l.event_title,
                sub_title: l.sub_title,
                description: String::new(),
                category: l.series.category.clone(),
                tags: l.tags,
                interval: l.interval,
                start: Timestamp::from_secs(l.open),
                end: Timestamp::from_secs(l.close),
                created: Timestamp::from_secs(l.created),
                markets: market_ids,
                mutually_exclusive: l.mutually_exclusive,
            },
        );
    }
}

fn series(
    ex: Exchange,
    id: &str,
    title: &str,
    frequency: &str,
    category: &str,
    interval: Option<IntervalCode>,
) -> SimSeries {
    SimSeries {
        exchange: ex,
        series_id: id.into(),
        gamma_id: (ex == Exchange::VenueB).then(|| (10_500 + ids::key_hash(0, id) % 400).to_string()),
        title: title.into(),
        frequency: frequency.into(),
        category: category.into(),
        interval,
    }
}

fn window_listing(r: &Rolling, s: i64, e: i64) -> Listing {
    let sym = r.coin.symbol;
    let code = r.code;
    let (series_id, event_name) = match r.exchange {
        Exchange::VenueA => {
            let kind = if r.ladder > 1 { "D" } else { "15M" };
            let series = format!("KX{sym}{kind}");
            (series.clone(), format!("{series}-{e}"))
        }
        Exchange::VenueB => (
            format!("{}-up-or-down-{}", sym.to_lowercase(), catalog::recurrence(code)),
            format!("{}-updown-{code}-{s}", sym.to_lowercase()),
        ),
    };
    let title = if r.ladder > 1 {
        format!("{} price at {} UTC", r.coin.name, e)
    } else {
        format!("{} Up or Down {code} from {s}", r.coin.name)
    };
    let markets = if r.ladder > 1 {
        let step = (r.coin.dollars * 100 / 50).max(1);
        (0..r.ladder as i64)
            .map(|k| {
                let strike = r.coin.dollars * 100 + (k - r.ladder as i64 / 2) * step;
                (
                    format!("{event_name}-T{strike}"),
                    format!(
                        "{} above {}.{:02} at the close?",
                        r.coin.name,
                        strike / 100,
                        strike % 100
                    ),
                    format!("Above {}.{:02}", strike / 100, strike % 100),
                    String::new(),
                )
            })
            .collect()
    } else {
        vec![(format!("{event_name}-00"), title.clone(), "Up".into(), "Down".into())]
    };
    Listing {
        exchange: r.exchange,
        series: series(
            r.exchange,
            &series_id,
            &format!("{sym} Up or Down {code}"),
            catalog::recurrence(code),
            "Crypto",
            Some(code),
        ),
        event_name,
        event_title: title.clone(),
        sub_title: title,
        tags: vec![TAG_CRYPTO, TAG_UPDOWN],
        category: Category::Crypto,
        interval: Some(code),
        created: s - r.lead_s,
        open: s,
        close: e,
        markets,
        tick: Price::from_cents(1),
        retain_ms: 10 * 60_000,
        mutually_exclusive: r.ladder > 1,
    }
}
