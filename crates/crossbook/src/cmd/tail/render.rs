//! How `crossbook tail` shows each stream message: one readable line of data for standard output, or a
//! note about the connection for standard error.

use serde_json::Value;

use super::Line;

/// A server message as one readable line. Every message yields a line except `pong`; shapes this client
/// does not know are printed generically rather than dropped, so a newer server is still readable.
pub fn render(msg: &Value) -> Option<Line> {
    let Some(obj) = msg.as_object() else {
        return Some(Line::Note(format!("crossbook: unrecognised message: {msg}")));
    };
    let Some(kind) = obj.get("type").and_then(Value::as_str) else {
        return Some(Line::Note(format!("crossbook: message without a type: {msg}")));
    };
    let at = clock(msg);
    let f = |k: &str| msg.get(k).unwrap_or(&Value::Null);
    let data = |body: String| Some(Line::Data(format!("{at} {body}")));
    let note = |body: String| Some(Line::Note(format!("{at} {body}")));
    match kind {
        "snapshot" => {
            let best = |side: &str, label: &str| {
                let top = f(side).as_array().and_then(|l| l.first());
                top.map(|l| format!("{label} {}×{}", price(&l["price"]), size(&l["size"])))
            };
            let mut sides = vec![
                best("bids", "bid").unwrap_or_else(|| "bid —".into()),
                best("asks", "ask")
                    .or_else(|| ask_from_no_bids(f("no_bids")))
                    .unwrap_or_else(|| "ask —".into()),
            ];
            // Only one venue quotes NO bids; an empty list says nothing worth a column.
            sides.extend(best("no_bids", "no-bid"));
            data(format!(
                "book snapshot {} {} {} (seq {})",
                text(f("exchange")),
                book_id(msg),
                sides.join(" / "),
                text(f("book_seq"))
            ))
        }
        "change" => {
            let changes: Vec<String> = f("changes")
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|c| format!("{} {}→{}", text(&c["side"]), price(&c["price"]), size(&c["size"])))
                .collect();
            data(format!(
                "book change {} {} {} (seq {})",
                text(f("exchange")),
                book_id(msg),
                changes.join(", "),
                text(f("book_seq"))
            ))
        }
        "stale" => data(format!(
            "book stale {} {} ({}): unknown until the next snapshot",
            text(f("exchange")),
            book_id(msg),
            text(f("cause"))
        )),
        "trade" => data(format!(
            "trade {} {}{} {} {}×{} = ${}",
            text(f("exchange")),
            market_label(f("exchange"), f("market_id"), f("market_title")),
            outcome(f("outcome")),
            text(f("taker_side")),
            price(f("price")),
            size(f("size")),
            decimals(f("notional_usd"), 2)
        )),
        "whale" => {
            let d = f("data");
            let (ticker, title) = if d["market_ticker"] == d["market_id"] && d["exchange"] == "venue_b" {
                // No slug: the ticker is the condition id, which says nothing; the title takes its place.
                (
                    market_label(&d["exchange"], &d["market_id"], &d["market_title"]),
                    String::new(),
                )
            } else {
                let ticker = short_id(&d["market_ticker"]);
                let title = match &d["market_title"] {
                    Value::String(t) if *t != ticker => format!(" \"{t}\""),
                    _ => String::new(),
                };
                (ticker, title)
            };
            data(format!(
                "whale {} {ticker}{} {} {}×{} = ${}{title}",
                text(&d["exchange"]),
                outcome(&d["outcome"]),
                text(&d["taker_side"]),
                price(&d["price"]),
                size(&d["size"]),
                decimals(&d["notional_usd"], 2)
            ))
        }
        "opportunity" => {
            let o = f("opportunity");
            let label = match &o["label"] {
                Value::String(l) if !l.is_empty() => format!(" {l}"),
                _ => String::new(),
            };
            data(format!(
                "arbitrage {:<7} {}{label} yes@{} no@{} net {}¢ size {} (episode {})",
                text(f("change")),
                text(&o["event_id"]),
                text(&o["buy_yes_market"]),
                text(&o["buy_no_market"]),
                decimals(&o["net_cents"], 2),
                size(&o["executable_size"]),
                text(&f("episode")["id"])
            ))
        }
        "venue" => {
            let state = match f("connected") {
                Value::Bool(true) => "connected",
                Value::Bool(false) => "disconnected",
                _ => "?",
            };
            let mode = match f("mode") {
                Value::Null => String::new(),
                m => format!(" ({})", text(m)),
            };
            data(format!("status venue {} {state}{mode}", text(f("exchange"))))
        }
        "gap" => {
            let n = f("books").as_array().map_or(0, Vec::len);
            let books = if n == 1 { "book" } else { "books" };
            data(format!(
                "status gap {} {n} {books} ({})",
                text(f("exchange")),
                text(f("cause"))
            ))
        }
        "error" => {
            let on = match f("channel") {
                Value::String(c) if c != "control" => format!(" on {c}"),
                _ => String::new(),
            };
            let plan = match f("required_plan") {
                Value::String(p) => format!(" (needs the {} plan)", capitalised(p)),
                _ => String::new(),
            };
            note(format!("error{on}: {}: {}{plan}", text(f("code")), text(f("detail"))))
        }
        "welcome" => {
            let limits = match (&f("limits")["connections"], &f("limits")["markets"]) {
                (Value::Null, Value::Null) => String::new(),
                (c, m) => format!(", limits {} connections / {} markets", text(c), text(m)),
            };
            note(format!(
                "welcome: session {}, plan {}{limits}",
                text(f("session")),
                plan_name(f("plan"))
            ))
        }
        "authenticated" => note(format!("authenticated: plan {}", plan_name(f("plan")))),
        "subscribed" | "unsubscribed" => note(format!("{kind} {} ({})", text(f("channel")), markets(f("markets")))),
        "not_live" => note(format!(
            "no live book for {} {} ({}): {}",
            text(f("exchange")),
            short_id(f("market_id")),
            text(f("reason")),
            text(f("detail"))
        )),
        "resumed" => note(format!("resumed after seq {}", text(f("from")))),
        "reset" => note(format!(
            "reset: the session could not be resumed ({}); messages were lost, books follow as fresh snapshots",
            text(f("reason"))
        )),
        "pong" => None,
        _ => {
            let mut rest = obj.clone();
            for k in ["type", "channel", "seq", "sent_at", "received_at", "venue_ts"] {
                rest.remove(k);
            }
            let channel = obj.get("channel").and_then(Value::as_str).unwrap_or("?");
            let body = format!("{channel} {kind} {}", Value::Object(rest));
            if channel == "control" { note(body) } else { data(body) }
        }
    }
}

/// `sent_at` as HH:MM:SS.mmm, cut from the ISO text (the server writes UTC with milliseconds).
pub(super) fn clock(msg: &Value) -> String {
    msg.get("sent_at")
        .and_then(Value::as_str)
        .and_then(|s| s.split_once('T'))
        .map(|(_, t)| t.trim_end_matches('Z').to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "--:--:--.---".into())
}

/// The market, and the asset where it names something else (a venue_b outcome token), each shortened.
pub(super) fn book_id(msg: &Value) -> String {
    let market = text(&msg["market_id"]);
    match msg.get("asset_id") {
        Some(Value::String(a)) if *a != market => format!("{}/{}", short_id(&msg["market_id"]), shorten(a)),
        _ => short_id(&msg["market_id"]),
    }
}

/// The outcome a trade bought or sold (YES or NO) after a space; nothing from a server that does not say.
pub(super) fn outcome(v: &Value) -> String {
    match v {
        Value::String(o) => format!(" {}", o.to_ascii_uppercase()),
        _ => String::new(),
    }
}

/// The market of a trade: a venue_b market by its title in quotes when known (its id says nothing to a reader),
/// else by its id, shortened; a venue_a market by its ticker.
pub(super) fn market_label(exchange: &Value, market_id: &Value, title: &Value) -> String {
    match title {
        Value::String(t) if exchange == "venue_b" && !t.trim().is_empty() && title != market_id => {
            format!("\"{t}\"")
        }
        _ => short_id(market_id),
    }
}

/// An id as [`text`], shortened when long (see [`shorten`]).
pub(super) fn short_id(v: &Value) -> String {
    shorten(&text(v))
}

/// A venue_b condition id (66 characters) or token id (up to 78 digits) as its first and last characters, so
/// that a line fits a terminal and still tells markets apart; venue_a tickers and short ids are kept whole.
pub(super) fn shorten(id: &str) -> String {
    const KEEP: usize = 8;
    let venue_b = id.starts_with("0x") || id.bytes().all(|b| b.is_ascii_digit());
    if !venue_b || id.len() <= 2 * KEEP + 4 || !id.is_ascii() {
        return id.to_string();
    }
    format!(
        "{}…{}",
        &id[..KEEP + 2 * usize::from(id.starts_with("0x"))],
        &id[id.len() - KEEP..]
    )
}

/// The YES ask of a venue_a book, which carries bids only: the best NO bid at `1 − p` for its size
/// ([`crossbook_core::book::ask_from_opposite_bid`], the one place that rule is written).
pub(super) fn ask_from_no_bids(no_bids: &Value) -> Option<String> {
    let top = no_bids.as_array()?.first()?;
    let price: crossbook_core::Price = top["price"].as_str()?.parse().ok()?;
    let amount: crossbook_core::Amount = size(&top["size"]).parse().ok()?;
    let ask = crossbook_core::book::ask_from_opposite_bid(&crossbook_core::book::Level { price, size: amount });
    Some(format!("ask {}×{}", ask.price.to_string4(), size(&top["size"])))
}

pub(super) fn markets(v: &Value) -> String {
    match v.as_array() {
        Some(list) if !list.is_empty() => {
            let ids: Vec<String> = list.iter().map(text).collect();
            format!("{}: {}", count(ids.len(), "market"), ids.join(", "))
        }
        _ => "all markets".into(),
    }
}

pub(super) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(super) fn plan_name(v: &Value) -> String {
    match v {
        Value::String(p) => p.clone(),
        _ => "none".into(),
    }
}

pub(super) fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|first| first.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A field as the server wrote it: strings bare, numbers in their JSON spelling, absent as `?`.
pub(super) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "?".into(),
        other => other.to_string(),
    }
}

/// A size: whole numbers arrive as `120.0`, shown as `120`; the digits are otherwise untouched.
pub(super) fn size(v: &Value) -> String {
    let s = text(v);
    match (v, s.strip_suffix(".0")) {
        (Value::Number(_), Some(whole)) => whole.to_string(),
        _ => s,
    }
}

/// A price: ladder strings as given (`"0.5300"`); JSON numbers lose their trailing zeros, put back to the four
/// decimals prices have everywhere else.
pub(super) fn price(v: &Value) -> String {
    match v {
        Value::Number(_) => decimals(v, 4),
        _ => text(v),
    }
}

/// A number written with at least `places` decimals, by padding its text with zeros: no float arithmetic
/// touches a money value, so what is shown is exactly what was sent.
pub(super) fn decimals(v: &Value, places: usize) -> String {
    let s = text(v);
    if !matches!(v, Value::Number(_)) || s.contains(['e', 'E']) {
        return s;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s.as_str(), ""));
    if frac.len() >= places {
        return s;
    }
    format!("{whole}.{frac:0<places$}")
}
