//! This month's one-venue questions (economics and weather on venue_a, politics and culture on
//! venue_b), which exist so that the pairing must leave them unpaired.

use crossbook_core::{Category, Exchange, Price};
use rand::Rng;
use time::{Date, Month};

use super::{MINUTE_MS, TAG_CULTURE, TAG_POLITICS, ts, utc_date, venue_b_series_gamma_id};
use crate::{
    calendar::{MONTHS_UPPER, month_name},
    ids,
    model::{
        Model, Pair, PairKind,
        types::{Phase, SimEvent, SimMarket, SimSeries},
    },
};

impl Model {
    /// This month's questions that only one venue lists.
    pub(super) fn ensure_monthly(&mut self, now_s: i64) {
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
}
