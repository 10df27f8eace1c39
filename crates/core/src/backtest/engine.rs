//! The backtest engine: the recorded books of both venues applied in receive-time order, every pair of a
//! changed book priced by the scanner's own [`scan_one`], and each opportunity found taken under the run's
//! assumptions: once by the run itself and once by a twin with no latency, on the same books.

use std::{
    cmp::Reverse,
    collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap},
};

use crate::{
    Amount, Exchange, Outcome, Price, Timestamp,
    arb::{
        EPISODE_GAP_SECONDS, MarketPair, MicroUsd, Opportunity, PairFees, ScanParams,
        scan::DEFAULT_WINDOW_TOLERANCE_SECONDS as WINDOW_TOLERANCE, scan_one,
    },
    book::BookKey,
};

use super::{
    books::{Books, Update, venue_index},
    fill::{LegFill, LegRef, PICO_PER_MICRO, Taken, Unwind, micros, take, total},
    params::{BacktestParams, LegOrder, MissingLeg},
    report::{Report, SeenOpportunity, Summary, Trade, TradeKind, Valuation, equity, groups},
};

/// A market's recorded outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settlement {
    pub yes_won: bool,
    /// When the venue settled it.
    pub at: Timestamp,
}

/// The outcomes the run knows, by `(venue, market_id)`.
pub type Settlements = HashMap<(Exchange, String), Settlement>;

/// Books are never too old in a replay (see [`super::books`]); this keeps the scanner's freshness check from
/// dropping a quiet book.
const NEVER_STALE_SECONDS: i64 = i64::MAX / 2_000;

/// A backtest over a set of pairs. Feed it the books' events in receive-time order with [`Backtest::apply`],
/// then take the [`Report`] with [`Backtest::finish`].
pub struct Backtest<'l> {
    params: BacktestParams,
    pairs: Vec<MarketPair<'l>>,
    books: Books,
    pairs_of_slot: Vec<Vec<usize>>,
    settlements: Settlements,
    /// Per pair and direction (YES bought on venue_a, on venue_b): the opportunity being seen, if any.
    open: Vec<[Option<Open>; 2]>,
    seen: Vec<SeenOpportunity>,
    runs: [Run; 2],
    events: u64,
    now: Timestamp,
}

/// An opportunity of one pair and direction: its entry in `seen`, and whether it is found now.
#[derive(Debug, Clone, Copy)]
struct Open {
    seen: usize,
    found: bool,
}

impl<'l> Backtest<'l> {
    /// A run of `params` over `pairs`, settling with `settlements`.
    pub fn new(pairs: Vec<MarketPair<'l>>, settlements: Settlements, params: BacktestParams) -> Self {
        let books = Books::new(&pairs);
        let mut pairs_of_slot = vec![Vec::new(); books.len()];
        for i in 0..pairs.len() {
            for s in books.pair_slots(i).into_iter().flatten() {
                if !pairs_of_slot[s].contains(&i) {
                    pairs_of_slot[s].push(i);
                }
            }
        }
        Backtest {
            runs: [Run::new(&params), Run::new(&params.without_latency())],
            open: vec![[None, None]; pairs.len()],
            pairs,
            books,
            pairs_of_slot,
            settlements,
            seen: Vec::new(),
            events: 0,
            now: params.from,
            params,
        }
    }

    /// Applies one event of one book at `at` (receive time, never earlier than the previous event's), then
    /// prices every pair that reads the book.
    pub fn apply(&mut self, key: &BookKey, at: Timestamp, update: Update<'_>) {
        self.events += 1;
        let at = at.max(self.now);
        self.advance(at);
        self.now = at;
        let Some(slot) = self.books.slot_of(key) else { return };
        self.books.apply(slot, key, at, update);
        for k in 0..self.pairs_of_slot[slot].len() {
            let i = self.pairs_of_slot[slot][k];
            self.price(i, at);
        }
    }

    /// Fills the orders due before `at` against the books as they stand (every event up to their time has
    /// been applied), and frees the capital of trades settled by then.
    fn advance(&mut self, at: Timestamp) {
        for r in 0..self.runs.len() {
            while let Some((&(due, n), _)) = self.runs[r].pending.first_key_value() {
                if due >= at {
                    break;
                }
                let order = self.runs[r].pending.remove(&(due, n)).expect("first key");
                self.fill(r, order, due);
            }
            self.runs[r].release(at);
        }
    }

    /// The scan at `at`; `walk` attaches the depth walk's chunks, which only a new opportunity needs.
    fn scan_params(&self, at: Timestamp, walk: bool) -> ScanParams {
        ScanParams {
            now: at,
            min_net: self.params.min_net,
            interval_code: self.params.interval_code,
            max_staleness_seconds: NEVER_STALE_SECONDS,
            window_tolerance_seconds: WINDOW_TOLERANCE,
            include_orderbook: walk,
            fees: self.params.fees,
        }
    }

    /// Prices pair `i` at `at` and follows its opportunities.
    fn price(&mut self, i: usize, at: Timestamp) {
        let opp = scan_one(i, &self.pairs[i], &self.books, &self.scan_params(at, false));
        let found = opp.as_ref().map(|o| venue_index(o.buy_yes_market));
        for d in 0..2 {
            if found == Some(d) {
                continue;
            }
            if let Some(open) = self.open[i][d].as_mut().filter(|o| o.found) {
                open.found = false;
                self.seen[open.seen].last_seen_at = at;
            }
        }
        let Some(opp) = opp else { return };
        let d = venue_index(opp.buy_yes_market);
        // Found again within the gap of the recorded history: the same opportunity goes on.
        if let Some(open) = self.open[i][d].as_mut() {
            let s = &mut self.seen[open.seen];
            if open.found || at.millis() - s.last_seen_at.millis() <= EPISODE_GAP_SECONDS * 1000 {
                open.found = true;
                s.last_seen_at = at;
                s.peak_net = s.peak_net.max(opp.net);
                return;
            }
        }
        // A new opportunity: priced again with its walk, which sizes the trade.
        let opp = scan_one(i, &self.pairs[i], &self.books, &self.scan_params(at, true)).unwrap_or(opp);
        let seen = self.seen.len();
        self.seen.push(SeenOpportunity {
            event_id: opp.event_id.clone(),
            outcome_key: opp.outcome_key.clone(),
            label: opp.label.clone(),
            buy_yes_market: opp.buy_yes_market,
            buy_no_market: opp.buy_no_market,
            first_seen_at: at,
            last_seen_at: at,
            net: opp.net,
            peak_net: opp.net,
            executable_size: opp.executable_size,
            max_profit: opp.max_profit,
            taken: false,
        });
        self.open[i][d] = Some(Open { seen, found: true });
        for r in 0..self.runs.len() {
            self.take(r, i, seen, &opp, at);
        }
    }

    /// Run `r` decides whether and how much to trade of a new opportunity, and sends its orders.
    fn take(&mut self, r: usize, pair: usize, seen: usize, opp: &Opportunity, at: Timestamp) {
        let run = &mut self.runs[r];
        let walk = opp.orderbook.as_ref().map(|o| o.walk.as_slice()).unwrap_or_default();
        let cap = match (run.capital_per_trade, run.capital_total) {
            (Some(a), Some(t)) => Some(a.min(t - run.locked)),
            (a, t) => a.or(t.map(|t| t - run.locked)),
        };
        // Whole contracts, best chunks first, while the trade's cost at the detected book fits the capital;
        // then what those contracts cost, promise and reach on each leg.
        let cap_pico = cap.map(|c| i128::from(c.micros()) * PICO_PER_MICRO);
        let mut size = 0i64;
        let mut capital_pico = 0i128;
        for f in walk {
            let per = i128::from(1_000_000 - f.net.micros()).max(1);
            let mut n = f.size.micros();
            if let Some(c) = cap_pico {
                n = n.min(i64::try_from((c - capital_pico).max(0) / per).unwrap_or(i64::MAX));
            }
            size += n;
            capital_pico += per * i128::from(n);
            if n < f.size.micros() {
                break;
            }
        }
        let size = size / 1_000_000 * 1_000_000;
        if size <= 0 {
            run.summary.skipped_capital += 1;
            return;
        }
        let (mut left, mut capital_pico, mut expected_pico) = (size, 0i128, 0i128);
        let (mut yes_limit, mut no_limit) = (Price::ZERO, Price::ZERO);
        for f in walk {
            let n = f.size.micros().min(left);
            if n <= 0 {
                break;
            }
            left -= n;
            capital_pico += i128::from(1_000_000 - f.net.micros()) * i128::from(n);
            expected_pico += i128::from(f.net.micros()) * i128::from(n);
            yes_limit = yes_limit.max(f.yes_price);
            no_limit = no_limit.max(f.no_price);
        }
        let reserved = micros(capital_pico);
        run.locked += reserved;
        run.summary.opportunities_taken += 1;
        if r == 0 {
            self.seen[seen].taken = true;
        }
        let order = Order {
            pair,
            seen,
            detected_at: at,
            detected_net: opp.net,
            expected: micros(expected_pico),
            size: Amount(size),
            buy_yes: opp.buy_yes_market,
            buy_no: opp.buy_no_market,
            limits: [yes_limit, no_limit],
            reserved,
            stage: Stage::Both,
            first: None,
        };
        let run = &mut self.runs[r];
        match (run.latency_ms, run.leg_order) {
            (0, _) => self.fill(r, order, at),
            (l, LegOrder::Simultaneous) => run.send(order, Timestamp(at.millis() + l)),
            (l, LegOrder::VenueAFirst) => run.send(
                Order {
                    stage: Stage::First,
                    ..order
                },
                Timestamp(at.millis() + l),
            ),
        }
    }

    /// The venue and book slot of one leg of `order`.
    fn leg(&self, order: &Order, outcome: Outcome) -> LegRef {
        let venue = if outcome == Outcome::Yes {
            order.buy_yes
        } else {
            order.buy_no
        };
        let p = &self.pairs[order.pair];
        let slots = self.books.pair_slots(order.pair);
        match venue {
            Exchange::VenueA => {
                let id = p.venue_a.market.market_id.clone();
                LegRef {
                    venue,
                    slot: slots[0],
                    market_id: id.clone(),
                    identifier: id,
                }
            }
            Exchange::VenueB => {
                let m = &p.venue_b.market;
                let (slot, token) = if outcome == Outcome::Yes {
                    (slots[1], &m.yes_token_id)
                } else {
                    (slots[2], &m.no_token_id)
                };
                LegRef {
                    venue,
                    slot,
                    market_id: m.market_id.clone(),
                    identifier: token.clone().unwrap_or_default(),
                }
            }
        }
    }

    fn fees(&self, pair: usize) -> PairFees {
        self.params.fees.for_category(self.pairs[pair].fee_category())
    }

    /// Buys `size` of one leg of `order` against its book now.
    fn buy(&self, order: &Order, outcome: Outcome, size: Amount, at: Timestamp) -> Option<LegFill> {
        let leg = self.leg(order, outcome);
        let (venue, slot) = (leg.venue, leg.slot?);
        if self.books.broken_since(slot, order.detected_at) {
            return None;
        }
        let limit = order.limits[usize::from(outcome == Outcome::No)];
        let mut asks = self.books.asks(slot, venue, outcome);
        asks.retain(|l| l.price <= limit);
        let fees = self.fees(order.pair);
        let t = take(&asks, size, |p| fees.taker_fee(venue, p));
        Some(LegFill::new(&leg, outcome, at, limit, size, t))
    }

    /// An order of run `r` meets the books at `at`.
    fn fill(&mut self, r: usize, mut order: Order, at: Timestamp) {
        match order.stage {
            Stage::Both => {
                let yes = self.buy(&order, Outcome::Yes, order.size, at);
                let no = self.buy(&order, Outcome::No, order.size, at);
                match (yes, no) {
                    (Some(yes), Some(no)) => self.settle_legs(r, &order, yes, no, at),
                    _ => self.abandon(r, &order),
                }
            }
            Stage::First => {
                // The venue_a leg first; the venue_b leg follows for what it filled.
                let first_outcome = if order.buy_yes == Exchange::VenueA {
                    Outcome::Yes
                } else {
                    Outcome::No
                };
                let Some(first) = self.buy(&order, first_outcome, order.size, at) else {
                    self.abandon(r, &order);
                    return;
                };
                if first.filled.micros() == 0 {
                    let second = self.unfilled_leg(&order, first_outcome.opposite(), at);
                    let (yes, no) = if first_outcome == Outcome::Yes {
                        (first, second)
                    } else {
                        (second, first)
                    };
                    self.settle_legs(r, &order, yes, no, at);
                    return;
                }
                order.first = Some(first);
                order.stage = Stage::Second;
                let l = self.runs[r].latency_ms;
                self.runs[r].send(order, Timestamp(at.millis() + l));
            }
            Stage::Second => {
                let first = order.first.take().expect("the first leg filled");
                let outcome = first.outcome.opposite();
                // A gap on the second leg's book: its fill is unknown, so it is counted as missed.
                let second = self
                    .buy(&order, outcome, first.filled, at)
                    .unwrap_or_else(|| self.unfilled_leg(&order, outcome, at));
                let (yes, no) = if outcome == Outcome::Yes {
                    (second, first)
                } else {
                    (first, second)
                };
                self.settle_legs(r, &order, yes, no, at);
            }
        }
    }

    /// A book of the order lost continuity before it could be placed: the trade is not made.
    fn abandon(&mut self, r: usize, order: &Order) {
        self.runs[r].summary.skipped_gap += 1;
        self.withdraw(r, order);
    }

    /// An order that is never placed: its capital comes back and its opportunity counts as not taken.
    fn withdraw(&mut self, r: usize, order: &Order) {
        let run = &mut self.runs[r];
        run.summary.opportunities_taken -= 1;
        run.locked = run.locked - order.reserved;
        if r == 0 {
            self.seen[order.seen].taken = false;
        }
    }

    /// A leg that met nothing.
    fn unfilled_leg(&self, order: &Order, outcome: Outcome, at: Timestamp) -> LegFill {
        let limit = order.limits[usize::from(outcome == Outcome::No)];
        LegFill::new(
            &self.leg(order, outcome),
            outcome,
            at,
            limit,
            order.size,
            Taken::default(),
        )
    }

    /// Both legs are known: sells an unmatched leg if the run unwinds, and records the trade.
    fn settle_legs(&mut self, r: usize, order: &Order, yes: LegFill, no: LegFill, at: Timestamp) {
        let run_missing = self.runs[r].missing_leg;
        if yes.filled.micros() == 0 && no.filled.micros() == 0 {
            let run = &mut self.runs[r];
            run.summary.unfilled += 1;
            run.locked = run.locked - order.reserved;
            return;
        }
        let matched = yes.filled.min(no.filled);
        let kind = if yes.filled != no.filled {
            TradeKind::SecondLegMissed
        } else if matched == order.size {
            TradeKind::Filled
        } else {
            TradeKind::Partial
        };
        let unwind = (kind == TradeKind::SecondLegMissed && run_missing == MissingLeg::Unwind).then(|| {
            let long = if yes.filled > no.filled { &yes } else { &no };
            let unmatched = Amount(long.filled.micros() - matched.micros());
            let bids = self
                .leg(order, long.outcome)
                .slot
                .map(|s| self.books.bids(s, long.venue, long.outcome))
                .unwrap_or_default();
            let fees = self.fees(order.pair);
            let t = take(bids, unmatched, |p| fees.taker_fee(long.venue, p));
            Unwind::new(long.venue, long.outcome, at, unmatched, t)
        });
        let p = &self.pairs[order.pair];
        let capital = micros(yes.cost_pico + yes.fee_pico + no.cost_pico + no.fee_pico);
        let trade = Trade {
            id: 0,
            event_id: p.event_id.to_string(),
            label: p.label(),
            category: p.fee_category(),
            interval_code: p.interval_code(),
            detected_at: order.detected_at,
            detected_net: order.detected_net,
            expected_pnl: order.expected,
            yes,
            no,
            kind,
            matched,
            unwind,
            valuation: Valuation::Settled,
            closed_at: at,
            payout: MicroUsd::ZERO,
            capital,
            pnl_gross: MicroUsd::ZERO,
            fees: MicroUsd::ZERO,
            pnl_net: MicroUsd::ZERO,
        };
        let release = [&trade.yes, &trade.no]
            .iter()
            .map(|l| self.settlements.get(&(l.venue, l.market_id.clone())).map(|s| s.at))
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max());
        let run = &mut self.runs[r];
        run.locked = run.locked - order.reserved + capital;
        run.summary.capital_used = run.summary.capital_used.max(run.locked);
        match kind {
            TradeKind::Filled => run.summary.filled += 1,
            TradeKind::Partial => run.summary.partial += 1,
            TradeKind::SecondLegMissed => run.summary.second_legs_missed += 1,
        }
        let n = run.trades.len();
        if let Some(at) = release {
            run.releases.push(Reverse((at, n, capital)));
        }
        run.trades.push(trade);
    }

    /// Ends the run at `params.to`: orders still on their way are cut, held contracts are settled from the
    /// recorded outcomes or marked to the books as they stand, and the report is built.
    pub fn finish(mut self) -> Report {
        let to = self.params.to;
        self.advance(Timestamp(to.millis().saturating_add(1)));
        for r in 0..self.runs.len() {
            let pending = std::mem::take(&mut self.runs[r].pending);
            for (_, mut order) in pending {
                self.runs[r].summary.cut_by_end += 1;
                match order.first.take() {
                    // The first leg filled and the second never left: the first is unmatched.
                    Some(first) => {
                        let second = self.unfilled_leg(&order, first.outcome.opposite(), to);
                        let (yes, no) = if first.outcome == Outcome::Yes {
                            (first, second)
                        } else {
                            (second, first)
                        };
                        self.settle_legs(r, &order, yes, no, to);
                    }
                    None => self.withdraw(r, &order),
                }
            }
        }
        let mut marked = BTreeSet::new();
        let mut summaries = Vec::new();
        let (mut main_trades, mut main_equity) = (Vec::new(), Vec::new());
        for r in 0..self.runs.len() {
            let mut trades = std::mem::take(&mut self.runs[r].trades);
            for (n, t) in trades.iter_mut().enumerate() {
                t.id = n as u64 + 1;
                self.value(t, if r == 0 { Some(&mut marked) } else { None });
            }
            let mut s = std::mem::take(&mut self.runs[r].summary);
            let (points, drawdown) = equity(&trades);
            s.trades = trades.len() as u64;
            s.settled_trades = trades.iter().filter(|t| t.valuation == Valuation::Settled).count() as u64;
            s.marked_trades = s.trades - s.settled_trades;
            s.pnl_gross = total(trades.iter().map(|t| t.pnl_gross));
            s.fees = total(trades.iter().map(|t| t.fees));
            s.pnl_net = total(trades.iter().map(|t| t.pnl_net));
            s.max_drawdown = drawdown;
            summaries.push(s);
            if r == 0 {
                (main_trades, main_equity) = (trades, points);
            }
        }
        let zero = summaries.pop().expect("two runs");
        let summary = summaries.pop().expect("two runs");
        Report {
            params: self.params,
            pairs: self.pairs.len() as u64,
            books: self.books.len() as u64,
            events: self.events,
            opportunities_seen: self.seen.len() as u64,
            latency_cost: zero.pnl_net - summary.pnl_net,
            summary,
            zero_latency: zero,
            equity: main_equity,
            by_interval: groups(&main_trades, |t| {
                t.interval_code.map_or("none".to_string(), |c| c.as_str().to_string())
            }),
            by_category: groups(&main_trades, |t| t.category.as_str().to_string()),
            by_pair: groups(&main_trades, |t| t.event_id.clone()),
            marked_markets: marked.into_iter().collect(),
            opportunities: self.seen,
            trades: main_trades,
        }
    }

    /// Values a trade's held contracts and works out its result.
    fn value(&self, t: &mut Trade, mut marked: Option<&mut BTreeSet<String>>) {
        let to = self.params.to;
        let mut payout_pico = 0i128;
        let mut closed_at = t.closed_at;
        let mut valuation = Valuation::Settled;
        for leg in [&t.yes, &t.no] {
            let sold = t
                .unwind
                .as_ref()
                .filter(|u| u.outcome == leg.outcome)
                .map_or(0, |u| u.sold.micros());
            let held = i128::from(leg.filled.micros() - sold);
            if held == 0 {
                continue;
            }
            match self.settlements.get(&(leg.venue, leg.market_id.clone())) {
                Some(s) => {
                    let won = s.yes_won == (leg.outcome == Outcome::Yes);
                    if won {
                        payout_pico += held * PICO_PER_MICRO;
                    }
                    closed_at = closed_at.max(s.at);
                }
                None => {
                    valuation = Valuation::Marked;
                    closed_at = closed_at.max(to);
                    let slot = self.books.slot_of(&match leg.venue {
                        Exchange::VenueA => BookKey::venue_a(&leg.market_id),
                        Exchange::VenueB => BookKey::venue_b(&leg.market_id, &leg.identifier),
                    });
                    let mark = slot.map_or(0, |s| self.books.mark(s, leg.venue, leg.outcome));
                    // `mark` is twice the price (the sum of bid and ask), so the mid is exact here.
                    payout_pico += (held * i128::from(mark) + 1) / 2;
                    if let Some(m) = marked.as_deref_mut() {
                        m.insert(format!("{}:{}", leg.venue.as_str(), leg.market_id));
                    }
                }
            }
        }
        let (proceeds, unwind_fee) = t.unwind.as_ref().map_or((0, 0), |u| (u.proceeds_pico, u.fee_pico));
        let cost = t.yes.cost_pico + t.no.cost_pico;
        let fees = t.yes.fee_pico + t.no.fee_pico + unwind_fee;
        let gross = payout_pico + proceeds - cost;
        t.payout = micros(payout_pico);
        t.pnl_gross = micros(gross);
        t.fees = micros(fees);
        t.pnl_net = micros(gross - fees);
        t.valuation = valuation;
        t.closed_at = closed_at;
    }
}

/// Where an order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Both legs meet their books together.
    Both,
    /// The venue_a leg meets its book.
    First,
    /// The venue_b leg meets its book, for what the first filled.
    Second,
}

/// A trade on its way.
#[derive(Debug, Clone)]
struct Order {
    pair: usize,
    /// Its opportunity in `seen`.
    seen: usize,
    detected_at: Timestamp,
    detected_net: MicroUsd,
    expected: MicroUsd,
    size: Amount,
    buy_yes: Exchange,
    buy_no: Exchange,
    /// YES leg's and NO leg's limit price.
    limits: [Price; 2],
    /// The capital held for it since detection.
    reserved: MicroUsd,
    stage: Stage,
    first: Option<LegFill>,
}

/// One run's orders, capital and trades.
struct Run {
    latency_ms: i64,
    leg_order: LegOrder,
    missing_leg: MissingLeg,
    capital_per_trade: Option<MicroUsd>,
    capital_total: Option<MicroUsd>,
    pending: BTreeMap<(Timestamp, u64), Order>,
    sent: u64,
    locked: MicroUsd,
    /// When each settled trade's capital comes back.
    releases: BinaryHeap<Reverse<(Timestamp, usize, MicroUsd)>>,
    trades: Vec<Trade>,
    summary: Summary,
}

impl Run {
    fn new(p: &BacktestParams) -> Self {
        Run {
            latency_ms: p.latency_ms,
            leg_order: p.leg_order,
            missing_leg: p.missing_leg,
            capital_per_trade: p.capital_per_trade,
            capital_total: p.capital_total,
            pending: BTreeMap::new(),
            sent: 0,
            locked: MicroUsd::ZERO,
            releases: BinaryHeap::new(),
            trades: Vec::new(),
            summary: Summary {
                latency_ms: p.latency_ms,
                ..Summary::default()
            },
        }
    }

    fn send(&mut self, order: Order, due: Timestamp) {
        self.sent += 1;
        self.pending.insert((due, self.sent), order);
    }

    fn release(&mut self, at: Timestamp) {
        while let Some(Reverse((when, _, capital))) = self.releases.peek().copied() {
            if when >= at {
                break;
            }
            self.releases.pop();
            self.locked = self.locked - capital;
        }
    }
}
