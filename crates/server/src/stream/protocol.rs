//! The words of the stream: what a client may send ([`ClientOp`]), the channels and who may read them
//! ([`Channel`]), and the server's messages as JSON fragments ([`Frag`]) that are rendered once per event
//! and shared by every session that receives them.

use std::{fmt::Write as _, sync::Arc};

use crossbook_core::{Level, Plan, Timestamp, book::Side};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::access::RouteGroup;

/// Largest client message accepted: ops are small; a larger message is refused and the connection closed.
pub const MAX_CLIENT_MESSAGE: usize = 64 * 1024;

/// A channel of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    Book,
    Trades,
    Arbitrage,
    Whales,
    Status,
}

impl Channel {
    pub const ALL: [Channel; 5] = [
        Channel::Book,
        Channel::Trades,
        Channel::Arbitrage,
        Channel::Whales,
        Channel::Status,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Book => "book",
            Channel::Trades => "trades",
            Channel::Arbitrage => "arbitrage",
            Channel::Whales => "whales",
            Channel::Status => "status",
        }
    }

    pub fn parse(s: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The plan a channel needs: the one that gets the full view of the REST routes of the same data (books,
    /// trades and status: the historical routes; whales: the whale pool; arbitrage: unmasked opportunities).
    pub fn plan(self) -> Plan {
        let group = match self {
            Channel::Book | Channel::Trades | Channel::Status => RouteGroup::Historical,
            Channel::Whales => RouteGroup::PublicWhales,
            Channel::Arbitrage => RouteGroup::ArbitrageHistory,
        };
        group.access().full_plan()
    }

    /// Whether a subscription names markets: required for `book`, optional for `trades` and `arbitrage`
    /// (none: every market), not taken by `whales` and `status`.
    pub fn markets(self) -> MarketsRule {
        match self {
            Channel::Book => MarketsRule::Required,
            Channel::Trades | Channel::Arbitrage => MarketsRule::Optional,
            Channel::Whales | Channel::Status => MarketsRule::Ignored,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarketsRule {
    Required,
    Optional,
    Ignored,
}

/// A message from the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientOp {
    Auth { key: String },
    Subscribe { channel: Channel, markets: Vec<String> },
    Unsubscribe { channel: Channel, markets: Vec<String> },
    Ping,
}

/// Longest market id accepted (venue_b condition ids are 66 characters).
pub const MAX_MARKET_ID: usize = 128;

/// Why a client message was refused: the `error` message's code, detail and the parameter at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub code: &'static str,
    pub detail: String,
    pub param: Option<&'static str>,
    pub channel: Option<Channel>,
}

impl OpError {
    pub fn invalid(param: &'static str, detail: impl Into<String>) -> Self {
        OpError {
            code: "invalid_parameter",
            detail: detail.into(),
            param: Some(param),
            channel: None,
        }
    }
}

#[derive(Deserialize)]
struct RawOp {
    op: Option<Value>,
    channel: Option<Value>,
    markets: Option<Value>,
    key: Option<Value>,
}

impl ClientOp {
    /// Parses one text message; every refusal names the field at fault.
    pub fn parse(text: &str) -> Result<ClientOp, OpError> {
        let raw: RawOp = serde_json::from_str(text)
            .map_err(|e| OpError::invalid("op", format!("a message must be a JSON object with an \"op\": {e}")))?;
        let op = match raw.op {
            Some(Value::String(op)) => op,
            Some(_) => return Err(OpError::invalid("op", "op must be a string")),
            None => {
                return Err(OpError::invalid(
                    "op",
                    "the message has no \"op\" (auth, subscribe, unsubscribe or ping)",
                ));
            }
        };
        match op.as_str() {
            "ping" => Ok(ClientOp::Ping),
            "auth" => match raw.key {
                Some(Value::String(key)) => Ok(ClientOp::Auth { key }),
                _ => Err(OpError::invalid("key", "auth needs \"key\": your API key")),
            },
            "subscribe" | "unsubscribe" => {
                let channel = match raw.channel {
                    Some(Value::String(c)) => Channel::parse(&c).ok_or_else(|| {
                        OpError::invalid(
                            "channel",
                            format!("unknown channel {c:?} (book, trades, arbitrage, whales or status)"),
                        )
                    })?,
                    _ => {
                        return Err(OpError::invalid(
                            "channel",
                            format!("{op} needs \"channel\": book, trades, arbitrage, whales or status"),
                        ));
                    }
                };
                let markets = match raw.markets {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => items
                        .into_iter()
                        .map(|m| match m {
                            Value::String(s) if !s.is_empty() && s.len() <= MAX_MARKET_ID => Ok(s),
                            _ => Err(OpError::invalid(
                                "markets",
                                format!("markets must be market ids: strings of 1 to {MAX_MARKET_ID} characters"),
                            )),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    Some(_) => return Err(OpError::invalid("markets", "markets must be a list of market ids")),
                };
                if op == "subscribe" {
                    if channel.markets() == MarketsRule::Required && markets.is_empty() {
                        return Err(OpError {
                            channel: Some(channel),
                            ..OpError::invalid(
                                "markets",
                                "the book channel needs \"markets\": the market ids to follow",
                            )
                        });
                    }
                    let markets = if channel.markets() == MarketsRule::Ignored {
                        Vec::new()
                    } else {
                        markets
                    };
                    Ok(ClientOp::Subscribe { channel, markets })
                } else {
                    Ok(ClientOp::Unsubscribe { channel, markets })
                }
            }
            other => Err(OpError::invalid(
                "op",
                format!("unknown op {other:?} (auth, subscribe, unsubscribe or ping)"),
            )),
        }
    }
}

/// A server message without its envelope: `"type":…,"channel":…,…}`, the JSON object after its opening
/// brace and before the per-session fields. Rendered once per event, shared (behind an `Arc`) by every
/// session that receives it; [`envelope`] adds `seq` and `sent_at`.
pub type Frag = Arc<str>;

/// Renders a fragment from its type, channel, the venue's and crossbook's times, and the type's fields.
pub fn frag(
    kind: &str,
    channel: Option<Channel>,
    venue_ts: Option<Timestamp>,
    received_at: Option<Timestamp>,
    fields: Value,
) -> Frag {
    let mut map = Map::new();
    map.insert("type".into(), Value::String(kind.into()));
    map.insert(
        "channel".into(),
        Value::String(channel.map_or("control", Channel::as_str).into()),
    );
    map.insert(
        "venue_ts".into(),
        venue_ts.map_or(Value::Null, |t| Value::String(t.to_iso())),
    );
    map.insert(
        "received_at".into(),
        received_at.map_or(Value::Null, |t| Value::String(t.to_iso())),
    );
    if let Value::Object(fields) = fields {
        map.extend(fields);
    }
    let mut s = Value::Object(map).to_string();
    // Drop the opening brace: the envelope writes it with `seq` and `sent_at` first.
    s.remove(0);
    Arc::from(s)
}

/// A control message (welcome, subscribed, error, …).
pub fn control(kind: &str, fields: Value) -> Frag {
    frag(kind, None, None, None, fields)
}

/// The message as sent: `{"seq":N,"sent_at":"…",` + the fragment. `sent_at` is the ISO time, formatted
/// once for all the messages a connection writes together.
pub fn envelope(seq: u64, sent_at: &str, frag: &str) -> String {
    let mut s = String::with_capacity(frag.len() + 64);
    let _ = write!(s, "{{\"seq\":{seq},\"sent_at\":\"{sent_at}\",");
    s.push_str(frag);
    s
}

/// The `error` message of a refused op.
pub fn error_frag(e: &OpError, required_plan: Option<Plan>) -> Frag {
    let mut fields = json!({ "code": e.code, "detail": e.detail });
    if let Some(p) = e.param {
        fields["param"] = json!(p);
    }
    if let Some(p) = required_plan {
        fields["required_plan"] = json!(p.as_str());
    }
    frag("error", e.channel, None, None, fields)
}

/// A ladder as the REST routes show it: `[{"price": "0.5300", "size": 120.0}]`, best first.
pub fn levels_json(ladder: &[Level]) -> Value {
    Value::Array(
        ladder
            .iter()
            .map(|l| json!({ "price": l.price.four_decimals().as_str(), "size": l.size.to_f64(6) }))
            .collect(),
    )
}

/// The name of a ladder in `change` messages.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::Bid => "bid",
        Side::Ask => "ask",
        Side::NoBid => "no_bid",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_plans_follow_the_rest_routes() {
        let plans: Vec<_> = Channel::ALL.into_iter().map(|c| (c, c.plan())).collect();
        assert_eq!(
            plans,
            [
                (Channel::Book, Plan::Free),
                (Channel::Trades, Plan::Free),
                (Channel::Arbitrage, Plan::Trader),
                (Channel::Whales, Plan::Builder),
                (Channel::Status, Plan::Free),
            ]
        );
    }

    #[test]
    fn ops_parse_and_refusals_name_the_field() {
        assert_eq!(ClientOp::parse(r#"{"op":"ping"}"#), Ok(ClientOp::Ping));
        assert_eq!(
            ClientOp::parse(r#"{"op":"subscribe","channel":"book","markets":["A","B"]}"#),
            Ok(ClientOp::Subscribe {
                channel: Channel::Book,
                markets: vec!["A".into(), "B".into()]
            })
        );
        assert_eq!(
            ClientOp::parse(r#"{"op":"subscribe","channel":"whales","markets":["A"]}"#),
            Ok(ClientOp::Subscribe {
                channel: Channel::Whales,
                markets: vec![]
            }),
            "whales take no markets"
        );
        assert_eq!(
            ClientOp::parse(r#"{"op":"unsubscribe","channel":"trades"}"#),
            Ok(ClientOp::Unsubscribe {
                channel: Channel::Trades,
                markets: vec![]
            })
        );
        let param = |t: &str| ClientOp::parse(t).unwrap_err().param;
        assert_eq!(param("not json"), Some("op"));
        assert_eq!(param(r#"{"op":"dance"}"#), Some("op"));
        assert_eq!(param(r#"{"op":"subscribe","channel":"news"}"#), Some("channel"));
        assert_eq!(param(r#"{"op":"subscribe","channel":"book"}"#), Some("markets"));
        assert_eq!(
            param(r#"{"op":"subscribe","channel":"book","markets":[1]}"#),
            Some("markets")
        );
        assert_eq!(
            param(r#"{"op":"subscribe","channel":"book","markets":"A"}"#),
            Some("markets")
        );
        assert_eq!(param(r#"{"op":"auth"}"#), Some("key"));
        let long = "x".repeat(MAX_MARKET_ID + 1);
        assert_eq!(
            param(&format!(
                r#"{{"op":"subscribe","channel":"trades","markets":["{long}"]}}"#
            )),
            Some("markets")
        );
    }

    #[test]
    fn an_envelope_and_its_fragment_make_one_json_object() {
        let f = frag(
            "trade",
            Some(Channel::Trades),
            Some(Timestamp::from_millis(1_000)),
            None,
            json!({"price": "0.5300"}),
        );
        let text = envelope(7, &Timestamp::from_millis(2_000).to_iso(), &f);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["seq"], 7);
        assert_eq!(v["sent_at"], "1970-01-01T00:00:02.000Z");
        assert_eq!(v["venue_ts"], "1970-01-01T00:00:01.000Z");
        assert_eq!(v["received_at"], Value::Null);
        assert_eq!(
            (v["type"].as_str(), v["channel"].as_str()),
            (Some("trade"), Some("trades"))
        );
        assert_eq!(v["price"], "0.5300");
        let c: Value = serde_json::from_str(&envelope(
            1,
            &Timestamp::from_millis(0).to_iso(),
            &control("pong", json!({})),
        ))
        .unwrap();
        assert_eq!(c["channel"], "control");
    }
}
