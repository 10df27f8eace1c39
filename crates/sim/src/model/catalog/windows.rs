//! BTC and ETH up/down windows: the window pair's bookkeeping and each venue's listing of it
//! (venue_a's series/event/market in its ticker grammar, venue_b's Gamma series/event/market with
//! its skewed boundaries). Kept apart from games and one-venue questions because windows recur and are
//! listed again every interval.

use crossbook_core::{Category, Exchange, IntervalCode, Price};
use rand::Rng;

use super::{
    MINUTE_MS, TAG_BITCOIN, TAG_CRYPTO, TAG_ETHEREUM, TAG_UPDOWN, interval_tag, recurrence, rules_time, ts,
    venue_a_btc_series, venue_a_frequency, venue_a_span, venue_b_btc_series, venue_b_series_gamma_id,
};
use crate::{
    calendar::{et_clock, month_name, to_et, twelve_hour, yymondd},
    ids,
    model::{
        Asset, Model, Pair, PairKind,
        types::{Phase, SimEvent, SimMarket, SimSeries},
    },
};

impl Model {
    pub(super) fn ensure_window(&mut self, asset: Asset, code: IntervalCode, gs: i64, ge: i64, now_s: i64) {
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
}
