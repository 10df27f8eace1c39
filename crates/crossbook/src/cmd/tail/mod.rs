//! `crossbook tail`: a terminal client of the live stream `GET /v1/stream` (protocol in
//! docs/live-stream.md). Data goes to standard output, one line per message; everything
//! about the connection itself goes to standard error, so that `crossbook tail … > file` records only data.

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{
    self, Message,
    client::IntoClientRequest as _,
    http::{HeaderValue, StatusCode},
    protocol::frame::coding::CloseCode,
};

mod render;

pub use render::render;

/// A channel of the stream (what each shows is in the help's table, next to the plan it needs).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Channel {
    Arbitrage,
    Whales,
    Book,
    Trades,
    Status,
}

impl Channel {
    fn as_str(self) -> &'static str {
        match self {
            Channel::Arbitrage => "arbitrage",
            Channel::Whales => "whales",
            Channel::Book => "book",
            Channel::Trades => "trades",
            Channel::Status => "status",
        }
    }
}

/// Flags of `tail`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Channels:
  book       the order books of the --market ids: a snapshot of each, then every change   (any key)
  trades     trades as the venues report them, of the --market ids or of every market     (any key)
  status     venue feeds connecting and dropping; books that lost continuity              (any key)
  whales     whale entries: trades of any market at or over the platform's size threshold  (Builder plan)
  arbitrage  arbitrage opportunities as they open, change and close                       (Trader plan)

Each line starts with the time the server sent it (UTC). A venue_b market is shown by its title, looked up once
per event over the server's search API (by its id when the catalog does not know it). Notes about the connection (welcome, subscribed,
errors, reconnects) go to standard error. A lost connection is resumed where it stopped; Ctrl-C quits.

Example: crossbook tail --channel book,trades --market KXBTC15M-26NOV211415-15 --key cbk_...")]
pub struct TailArgs {
    /// What to follow: arbitrage, whales, book, trades or status (repeat the flag or separate with commas).
    #[arg(
        long = "channel",
        value_name = "CHANNEL",
        value_enum,
        value_delimiter = ',',
        required = true
    )]
    channels: Vec<Channel>,
    /// A market to follow: a venue_a ticker or a venue_b condition id (repeatable; required for book;
    /// without it trades and arbitrage cover every market).
    #[arg(long = "market", value_name = "ID")]
    markets: Vec<String>,
    /// The server's address, http(s):// or ws(s)://; without a path the stream's (/v1/stream) is used
    /// (`crossbook serve` listens on 127.0.0.1:8080 unless told otherwise).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// Your API key (cbk_...).
    #[arg(long, value_name = "KEY", env = "CROSSBOOK_KEY", hide_env_values = true)]
    key: Option<String>,
    /// Print every server message as one JSON line, unchanged, instead of a readable line.
    #[arg(long)]
    json: bool,
    /// `tail` is a client of a running server and reads no database or configuration: these take the place
    /// of the global flags so that its help does not list them, and refuse them (see `validate`).
    #[arg(long, hide = true, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    #[arg(long = "database-url", hide = true, value_name = "URL")]
    database_url: Option<String>,
}

impl TailArgs {
    /// Checks that clap cannot express; the message is for a usage error (exit 2).
    pub fn validate(&self) -> Result<(), String> {
        if self.config.is_some() || self.database_url.is_some() {
            return Err("tail reads no database or configuration file: give the server's address with --url".into());
        }
        if self.channels.contains(&Channel::Book) && self.markets.is_empty() {
            return Err("the book channel needs at least one --market ID".into());
        }
        stream_address(&self.url).map(|_| ())
    }

    /// The channels once each, in a stable order, whatever the flags repeated.
    fn channel_set(&self) -> BTreeSet<Channel> {
        self.channels.iter().copied().collect()
    }
}

/// A message made readable: data for standard output or a note for standard error.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Data(String),
    Note(String),
}

/// What ended one connection.
enum End {
    /// Ctrl-C or SIGTERM: the socket was closed cleanly.
    Quit,
    /// Standard output is gone (`crossbook tail | head`): nobody reads any more.
    OutputClosed,
    /// The connection dropped; worth resuming.
    Lost(String),
}

/// What the client remembers across connections to resume where it stopped.
#[derive(Default)]
struct Session {
    id: Option<String>,
    last_seq: Option<u64>,
    /// The last `pos` received (an api process's messages carry it): lets another api process resume too.
    last_pos: Option<u64>,
    /// Channels whose subscription the server refused; when every channel is refused there is nothing to wait
    /// for, so the command stops instead of sitting silent.
    refused: BTreeSet<String>,
}

/// Titles of venue_b markets, whose stream messages name a market by its condition id only: looked up over
/// the search API (`/v1/search/events/{event_id}/markets`), once per event for the whole run, so a busy feed
/// costs one request per new event. A market the catalog does not know, or a lookup that fails, keeps its id.
struct Titles {
    /// The server's base address (`http(s)://host[/prefix]`); `None` when it cannot be derived.
    api: Option<url::Url>,
    key: Option<String>,
    /// Made at the first lookup: a run that sees no venue_b trade needs none.
    client: Option<reqwest::Client>,
    by_market: HashMap<String, String>,
    /// Events already asked about, answered or not: an unknown market is not asked for again.
    asked: HashSet<String>,
    /// Whether a failed lookup was already noted on standard error (once is enough).
    noted: bool,
}

/// How long a title lookup may hold the next line back.
const TITLE_TIMEOUT: Duration = Duration::from_secs(3);

impl Titles {
    fn new(url: &str, key: Option<&str>) -> Self {
        Titles {
            api: api_address(url),
            key: key.map(str::to_string),
            client: None,
            by_market: HashMap::new(),
            asked: HashSet::new(),
            noted: false,
        }
    }

    /// Adds `market_title` to a venue_b trade that has none, when the catalog knows the market.
    async fn annotate(&mut self, msg: &mut Value) {
        if msg["type"] != "trade" || msg["exchange"] != "venue_b" || msg["market_title"].is_string() {
            return;
        }
        let Some(market) = msg["market_id"].as_str().map(str::to_string) else {
            return;
        };
        if !self.by_market.contains_key(&market)
            && let Some(event) = msg["event_id"].as_str()
            && self.asked.insert(event.to_string())
            && let Err(why) = self.look_up(event).await
            && !std::mem::replace(&mut self.noted, true)
        {
            eprintln!("crossbook: market titles are unavailable ({why}); venue_b markets are shown by id");
        }
        if let Some(title) = self.by_market.get(&market) {
            msg["market_title"] = Value::String(title.clone());
        }
    }

    /// Learns the titles of an event's markets (its question when a market has no title).
    async fn look_up(&mut self, event: &str) -> Result<(), String> {
        let mut url = self.api.clone().ok_or("no HTTP address for the server")?;
        url.path_segments_mut()
            .map_err(|()| "no HTTP address for the server")?
            .pop_if_empty()
            .extend(["v1", "search", "events", event, "markets"]);
        url.query_pairs_mut().append_pair("limit", "100");
        let client = match &self.client {
            Some(c) => c.clone(),
            None => {
                let c = reqwest::Client::builder()
                    .timeout(TITLE_TIMEOUT)
                    .build()
                    .map_err(|e| e.to_string())?;
                self.client.insert(c).clone()
            }
        };
        let mut request = client.get(url);
        if let Some(key) = &self.key {
            request = request.header("X-API-Key", key);
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        // An event the catalog does not have (yet): its markets keep their ids, which is not a failure.
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(());
        }
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status().as_u16()));
        }
        let markets: Vec<Value> = response.json().await.map_err(|e| e.to_string())?;
        for m in markets {
            let title = [&m["title"], &m["question"]]
                .into_iter()
                .filter_map(Value::as_str)
                .find(|t| !t.trim().is_empty());
            if let (Some(id), Some(title)) = (m["market_id"].as_str(), title) {
                self.by_market.insert(id.to_string(), title.to_string());
            }
        }
        Ok(())
    }
}

/// The server's HTTP base address from `--url`: http(s) for ws(s), without the stream's own path.
fn api_address(given: &str) -> Option<url::Url> {
    let mut url = stream_address(given).ok()?;
    let scheme = if url.scheme() == "wss" { "https" } else { "http" };
    url.set_scheme(scheme).ok()?;
    let path = url.path().trim_end_matches('/');
    let base = path.strip_suffix("/v1/stream").unwrap_or(path).to_string();
    url.set_path(&base);
    url.set_query(None);
    Some(url)
}

/// The server pings every 15 s; three missed pings mean the connection is dead even if TCP has not noticed.
const SILENCE_LIMIT: Duration = Duration::from_secs(45);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

pub async fn run(args: TailArgs) -> anyhow::Result<()> {
    follow_stream(&args, super::shutdown_signal(), &mut std::io::stdout()).await
}

/// The command with its ending and its output given, so that tests can drive it.
async fn follow_stream(
    args: &TailArgs,
    shutdown: impl std::future::Future<Output = ()>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<()> {
    tokio::pin!(shutdown);
    let mut session = Session::default();
    let mut titles = Titles::new(&args.url, args.key.as_deref());
    let mut connected_once = false;
    let mut attempt: u32 = 0;
    loop {
        let url = stream_url(&args.url, &session)?;
        let connecting = tokio::time::timeout(CONNECT_TIMEOUT, connect(&url, args.key.as_deref()));
        let outcome = tokio::select! {
            r = connecting => r.unwrap_or(Err(ConnectError::Other("timed out".into()))),
            _ = &mut shutdown => return Ok(()),
        };
        let ws = match outcome {
            Ok(ws) => ws,
            // A refused key will not become valid by retrying.
            Err(ConnectError::Rejected(why)) => anyhow::bail!("{why}"),
            Err(ConnectError::Refused(why)) if !connected_once => {
                anyhow::bail!("cannot connect to {}: {why}", args.url)
            }
            Err(e) if !connected_once => {
                anyhow::bail!("cannot connect to {}: {e} — is `crossbook serve` running?", args.url)
            }
            Err(e) => {
                let wait = backoff(attempt);
                attempt = attempt.saturating_add(1);
                eprintln!(
                    "crossbook: cannot reconnect to {}: {e}; retrying in {:.1} s",
                    args.url,
                    wait.as_secs_f32()
                );
                tokio::select! {
                    _ = tokio::time::sleep(wait) => continue,
                    _ = &mut shutdown => return Ok(()),
                }
            }
        };
        connected_once = true;
        match follow(ws, args, &mut session, &mut titles, &mut shutdown, out, &mut attempt).await? {
            End::Quit | End::OutputClosed => return Ok(()),
            End::Lost(why) => {
                let wait = backoff(attempt);
                attempt = attempt.saturating_add(1);
                eprintln!(
                    "crossbook: connection lost ({why}); reconnecting in {:.1} s",
                    wait.as_secs_f32()
                );
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = &mut shutdown => return Ok(()),
                }
            }
        }
    }
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

#[derive(Debug)]
enum ConnectError {
    /// The server answered the upgrade with 401 or 403.
    Rejected(String),
    /// Something answered, but not with a WebSocket: a server, though maybe not a crossbook one.
    Refused(String),
    /// Nothing answered: no route, nothing listening, a timeout.
    Other(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Rejected(s) | ConnectError::Refused(s) | ConnectError::Other(s) => f.write_str(s),
        }
    }
}

async fn connect(url: &url::Url, key: Option<&str>) -> Result<Ws, ConnectError> {
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| ConnectError::Other(e.to_string()))?;
    if let Some(key) = key {
        let value = HeaderValue::from_str(key)
            .map_err(|_| ConnectError::Rejected("the key contains characters a header cannot carry".into()))?;
        request.headers_mut().insert("X-API-Key", value);
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((ws, _)) => Ok(ws),
        Err(tungstenite::Error::Http(response)) => {
            let status = response.status();
            let detail = response
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                .and_then(|v| v.get("detail").and_then(Value::as_str).map(str::to_string));
            let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                Err(ConnectError::Rejected(format!(
                    "the server rejected the key (HTTP {}){detail}",
                    status.as_u16()
                )))
            } else {
                Err(ConnectError::Refused(format!(
                    "the server refused the WebSocket upgrade (HTTP {}){detail}",
                    status.as_u16()
                )))
            }
        }
        Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Err(ConnectError::Other("connection refused".into()))
        }
        Err(e) => Err(ConnectError::Other(e.to_string())),
    }
}

/// The stream's address from the `--url` given: the server's base address or the stream's own, over
/// http(s):// or ws(s):// (the stream is a WebSocket either way); without a path, the stream's path.
fn stream_address(given: &str) -> Result<url::Url, String> {
    let mut url = url::Url::parse(given).map_err(|e| format!("--url {given:?} is not a URL: {e}"))?;
    let scheme = match url.scheme() {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        other => {
            return Err(format!(
                "--url must start with http://, https://, ws:// or wss://, not {other}://"
            ));
        }
    };
    url.set_scheme(scheme)
        .map_err(|()| format!("--url {given:?}: cannot use it as a {scheme}:// address"))?;
    if url.path().is_empty() || url.path() == "/" {
        url.set_path("/v1/stream");
    }
    Ok(url)
}

/// The URL of the next connection: the given one, plus where to resume once the server has named a session.
fn stream_url(base: &str, session: &Session) -> anyhow::Result<url::Url> {
    let mut url = stream_address(base).map_err(anyhow::Error::msg)?;
    if let Some(id) = &session.id {
        let mut q = url.query_pairs_mut();
        q.append_pair("session", id);
        if let Some(seq) = session.last_seq {
            q.append_pair("resume_from", &seq.to_string());
            if let Some(pos) = session.last_pos {
                q.append_pair("resume_pos", &pos.to_string());
            }
        }
    }
    Ok(url)
}

/// Exponential from half a second to 30 s, each wait drawn from its upper half so that many clients dropped
/// together by one server restart do not all come back in the same instant.
fn backoff(attempt: u32) -> Duration {
    let ceiling = BACKOFF_FIRST.saturating_mul(1u32 << attempt.min(16)).min(BACKOFF_MAX);
    let ms = ceiling.as_millis() as u64;
    Duration::from_millis(rand::random_range(ms / 2..=ms))
}

/// Reads one connection until it ends, subscribing when the session is new.
async fn follow(
    mut ws: Ws,
    args: &TailArgs,
    session: &mut Session,
    titles: &mut Titles,
    shutdown: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    out: &mut impl std::io::Write,
    attempt: &mut u32,
) -> anyhow::Result<End> {
    loop {
        let next = tokio::select! {
            m = tokio::time::timeout(SILENCE_LIMIT, ws.next()) => m,
            _ = shutdown.as_mut() => {
                close(&mut ws).await;
                return Ok(End::Quit);
            }
        };
        let message = match next {
            Err(_) => return Ok(End::Lost(format!("nothing heard for {} s", SILENCE_LIMIT.as_secs()))),
            Ok(None) => return Ok(End::Lost("the server closed the connection".into())),
            Ok(Some(Err(e))) => return Ok(End::Lost(e.to_string())),
            Ok(Some(Ok(m))) => m,
        };
        let text = match message {
            Message::Text(t) => t,
            Message::Close(frame) => {
                let (code, reason) = frame
                    .map(|f| (f.code, f.reason.to_string()))
                    .unwrap_or((CloseCode::Status, String::new()));
                let why = if reason.is_empty() {
                    format!("closed with code {}", u16::from(code))
                } else {
                    format!("closed with code {}: {reason}", u16::from(code))
                };
                // 1008 is the connection limit of the plan: reconnecting would only be refused again.
                if code == CloseCode::Policy {
                    anyhow::bail!("the server ended the stream ({why})");
                }
                return Ok(End::Lost(why));
            }
            // tungstenite queues the pong itself; it goes out with the next read.
            Message::Ping(_) | Message::Pong(_) | Message::Binary(_) | Message::Frame(_) => continue,
        };
        let mut msg = match parse(&text) {
            Ok(v) => v,
            Err(note) => {
                eprintln!("crossbook: {note}");
                continue;
            }
        };
        if let Some(reply) = observe(&msg, session, args) {
            for op in reply {
                if let Err(e) = ws.send(Message::text(op.to_string())).await {
                    return Ok(End::Lost(e.to_string()));
                }
            }
            // A welcome means the server took us back: the next drop starts its backoff afresh.
            *attempt = 0;
        }
        let line = if args.json {
            // JSON text holds raw line breaks only as whitespace, so flattening them keeps the message intact.
            Some(Line::Data(text.replace(['\n', '\r'], " ")))
        } else {
            titles.annotate(&mut msg).await;
            render(&msg)
        };
        let written = match line {
            Some(Line::Data(s)) => writeln!(out, "{s}").and_then(|_| out.flush()),
            Some(Line::Note(s)) => {
                eprintln!("{s}");
                Ok(())
            }
            None => Ok(()),
        };
        if written.is_err() {
            close(&mut ws).await;
            return Ok(End::OutputClosed);
        }
        if !session.refused.is_empty() && args.channel_set().iter().all(|c| session.refused.contains(c.as_str())) {
            close(&mut ws).await;
            anyhow::bail!("the server refused every channel asked for");
        }
    }
}

/// Sends the close frame and waits briefly for the server's, so that the server sees a clean goodbye.
async fn close(ws: &mut Ws) {
    let bye = tungstenite::protocol::CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    let _ = ws.close(Some(bye)).await;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
}

/// Parses a text message; an error is a note for standard error (the message is skipped).
fn parse(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| {
        let head: String = text.chars().take(80).collect();
        format!("skipped a message that is not JSON ({e}): {head}")
    })
}

/// Updates what resuming needs from a message; on `welcome` of a new session, returns the subscribe ops to
/// send (a resumed session keeps its subscriptions).
fn observe(msg: &Value, session: &mut Session, args: &TailArgs) -> Option<Vec<Value>> {
    let kind = msg.get("type").and_then(Value::as_str);
    if kind == Some("welcome") {
        let id = msg.get("session").and_then(Value::as_str).map(str::to_string);
        let resumed = id.is_some() && id == session.id;
        if !resumed {
            // A new session numbers its messages from scratch. A resumed one keeps the last seq received:
            // the replayed messages may be numbered below this welcome, and a drop during the replay must
            // ask for them again.
            session.last_seq = msg.get("seq").and_then(Value::as_u64);
            session.last_pos = None;
            session.refused.clear();
        }
        session.id = id;
        return Some(if resumed { Vec::new() } else { subscribe_ops(args) });
    }
    if let Some(seq) = msg.get("seq").and_then(Value::as_u64) {
        if let Some(last) = session.last_seq
            && seq > last + 1
            && kind != Some("reset")
        {
            eprintln!("crossbook: {} message(s) missed (seq {last} → {seq})", seq - last - 1);
        }
        session.last_seq = Some(seq);
    }
    if let Some(pos) = msg.get("pos").and_then(Value::as_u64) {
        session.last_pos = Some(pos);
    }
    if kind == Some("error")
        && matches!(
            msg.get("code").and_then(Value::as_str),
            Some("entitlement_required" | "unauthorized")
        )
        && let Some(channel) = msg.get("channel").and_then(Value::as_str)
    {
        session.refused.insert(channel.to_string());
    }
    None
}

/// One `subscribe` op per channel; `markets` only where the channel uses them.
fn subscribe_ops(args: &TailArgs) -> Vec<Value> {
    args.channel_set()
        .into_iter()
        .map(|c| {
            let uses_markets = matches!(c, Channel::Book | Channel::Trades | Channel::Arbitrage);
            if uses_markets && !args.markets.is_empty() {
                json!({"op": "subscribe", "channel": c.as_str(), "markets": args.markets})
            } else {
                json!({"op": "subscribe", "channel": c.as_str()})
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::render::*;
    use super::*;

    const AT: &str = "2026-11-21T12:00:01.234Z";

    fn msg(mut v: Value) -> Value {
        v["sent_at"] = json!(AT);
        v["seq"] = json!(17);
        v["received_at"] = Value::Null;
        v["venue_ts"] = Value::Null;
        v
    }

    fn data(s: &str) -> Option<Line> {
        Some(Line::Data(s.to_string()))
    }

    fn note(s: &str) -> Option<Line> {
        Some(Line::Note(s.to_string()))
    }

    #[test]
    fn book_snapshot_shows_the_best_levels() {
        let m = msg(json!({"type": "snapshot", "channel": "book", "exchange": "venue_a",
            "market_id": "KXBTC15M-26NOV211415-15", "asset_id": "KXBTC15M-26NOV211415-15", "book_seq": 12,
            "bids": [{"price": "0.5300", "size": 120.0}, {"price": "0.5200", "size": 10.0}],
            "asks": [{"price": "0.5500", "size": 80.5}], "no_bids": [{"price": "0.4500", "size": 80.0}]}));
        assert_eq!(
            render(&m),
            data(
                "12:00:01.234 book snapshot venue_a KXBTC15M-26NOV211415-15 bid 0.5300×120 / ask 0.5500×80.5 / no-bid 0.4500×80 (seq 12)"
            )
        );
        let empty = msg(json!({"type": "snapshot", "channel": "book", "exchange": "venue_b",
            "market_id": "0xabc", "asset_id": "7123", "book_seq": 1, "bids": [], "asks": [], "no_bids": []}));
        assert_eq!(
            render(&empty),
            data("12:00:01.234 book snapshot venue_b 0xabc/7123 bid — / ask — (seq 1)")
        );
    }

    #[test]
    fn help_lists_only_what_tail_uses() {
        use clap::CommandFactory as _;
        let mut cmd = crate::Cli::command();
        cmd.build();
        let help = cmd.find_subcommand_mut("tail").unwrap().render_long_help().to_string();
        assert!(!help.contains("--database-url") && !help.contains("--config"), "{help}");
        assert!(!help.contains("tracked wallets"), "{help}");
        assert!(help.contains("http(s)://"), "{help}");
        let given = args(&["--channel", "status", "--database-url", "sqlite://x.db"]);
        assert!(given.validate().unwrap_err().contains("--url"));
    }

    #[test]
    fn the_server_address_is_accepted_in_any_form() {
        for (given, stream) in [
            ("http://127.0.0.1:8080", "ws://127.0.0.1:8080/v1/stream"),
            ("http://127.0.0.1:8080/", "ws://127.0.0.1:8080/v1/stream"),
            ("ws://127.0.0.1:8080", "ws://127.0.0.1:8080/v1/stream"),
            ("ws://127.0.0.1:8080/v1/stream", "ws://127.0.0.1:8080/v1/stream"),
            ("https://cb.example.com", "wss://cb.example.com/v1/stream"),
            (
                "wss://cb.example.com/base/v1/stream",
                "wss://cb.example.com/base/v1/stream",
            ),
        ] {
            assert_eq!(stream_address(given).unwrap().as_str(), stream, "{given}");
            assert_eq!(args(&["--channel", "status", "--url", given]).validate(), Ok(()));
        }
    }

    #[test]
    fn a_venue_a_book_shows_its_yes_ask_from_the_best_no_bid() {
        // venue_a books carry bids only: the YES ask is 1 − the best NO bid, for its size.
        let m = msg(json!({"type": "snapshot", "channel": "book", "exchange": "venue_a",
            "market_id": "KX1", "asset_id": "KX1", "book_seq": 3,
            "bids": [{"price": "0.5300", "size": 120.0}], "asks": [],
            "no_bids": [{"price": "0.4500", "size": 80.0}, {"price": "0.4400", "size": 5.0}]}));
        assert_eq!(
            render(&m),
            data("12:00:01.234 book snapshot venue_a KX1 bid 0.5300×120 / ask 0.5500×80 / no-bid 0.4500×80 (seq 3)")
        );
    }

    #[test]
    fn long_venue_b_ids_are_shortened() {
        let cond = format!("0x{}", "ab".repeat(32));
        let token = "7".repeat(77);
        let m = msg(
            json!({"type": "stale", "channel": "book", "exchange": "venue_b", "market_id": cond,
            "asset_id": token, "cause": "disconnect"}),
        );
        assert_eq!(
            render(&m),
            data(
                "12:00:01.234 book stale venue_b 0xabababab…abababab/77777777…77777777 (disconnect): unknown until the next snapshot"
            )
        );
    }

    #[test]
    fn book_change_lists_every_level() {
        let m = msg(
            json!({"type": "change", "channel": "book", "exchange": "venue_a", "market_id": "KX1",
            "asset_id": null, "book_seq": 13, "changes": [
                {"side": "bid", "price": "0.5300", "size": 0.0},
                {"side": "ask", "price": "0.5400", "size": 25.0}]}),
        );
        assert_eq!(
            render(&m),
            data("12:00:01.234 book change venue_a KX1 bid 0.5300→0, ask 0.5400→25 (seq 13)")
        );
    }

    #[test]
    fn book_stale() {
        let m = msg(
            json!({"type": "stale", "channel": "book", "exchange": "venue_b", "market_id": "0xabc",
            "asset_id": "7123", "cause": "disconnect"}),
        );
        assert_eq!(
            render(&m),
            data("12:00:01.234 book stale venue_b 0xabc/7123 (disconnect): unknown until the next snapshot")
        );
    }

    #[test]
    fn trade_shows_price_size_and_notional_as_sent() {
        let m = msg(
            json!({"type": "trade", "channel": "trades", "exchange": "venue_b", "event_id": "e",
            "market_id": "0xabc", "asset_id": "7123", "outcome": "NO", "trade_id": "t1", "executed_at": AT,
            "price": 0.41, "size": 500.0, "taker_side": "buy", "notional_usd": 205.0}),
        );
        assert_eq!(
            render(&m),
            data("12:00:01.234 trade venue_b 0xabc NO buy 0.4100×500 = $205.00")
        );
        let strings = msg(json!({"type": "trade", "channel": "trades", "exchange": "venue_a",
            "market_id": "KX1", "outcome": "YES", "price": "0.4100", "size": 3.5, "taker_side": "sell",
            "notional_usd": 1.435}));
        assert_eq!(
            render(&strings),
            data("12:00:01.234 trade venue_a KX1 YES sell 0.4100×3.5 = $1.435")
        );
    }

    #[test]
    fn whale() {
        let m = msg(
            json!({"type": "whale", "channel": "whales", "data": {"exchange": "venue_b",
            "event_id": "e", "market_id": "0xabc", "market_ticker": "btc-up-nov-21",
            "market_title": "Bitcoin up on November 21?", "source_trade_id": "t9", "executed_at": AT,
            "taker_side": "buy", "outcome": "YES", "price": 0.62, "size": 50000.0, "notional_usd": 31000.0}}),
        );
        assert_eq!(
            render(&m),
            data(
                "12:00:01.234 whale venue_b btc-up-nov-21 YES buy 0.6200×50000 = $31000.00 \"Bitcoin up on November 21?\""
            )
        );
        // Without a slug the ticker is the condition id: the title takes its place, or the id stays when the
        // catalog did not know the market (its title is then the id).
        let cond = format!("0x{}", "ab".repeat(32));
        let mut m = msg(
            json!({"type": "whale", "channel": "whales", "data": {"exchange": "venue_b", "market_id": cond,
            "market_ticker": cond, "market_title": "Bitcoin up on November 21?", "taker_side": "buy",
            "outcome": "YES", "price": 0.62, "size": 50000.0, "notional_usd": 31000.0}}),
        );
        assert_eq!(
            render(&m),
            data("12:00:01.234 whale venue_b \"Bitcoin up on November 21?\" YES buy 0.6200×50000 = $31000.00")
        );
        m["data"]["market_title"] = json!(cond);
        assert_eq!(
            render(&m),
            data("12:00:01.234 whale venue_b 0xabababab…abababab YES buy 0.6200×50000 = $31000.00")
        );
    }

    #[test]
    fn a_venue_b_trade_shows_its_title_when_known() {
        let cond = format!("0x{}", "cd".repeat(32));
        let mut m = msg(
            json!({"type": "trade", "channel": "trades", "exchange": "venue_b", "event_id": "e",
            "market_id": cond, "outcome": "YES", "price": 0.5, "size": 2.0, "taker_side": "buy",
            "notional_usd": 1.0}),
        );
        assert_eq!(
            render(&m),
            data("12:00:01.234 trade venue_b 0xcdcdcdcd…cdcdcdcd YES buy 0.5000×2 = $1.00")
        );
        m["market_title"] = json!("Bitcoin Up or Down - November 21, 7:15PM ET");
        assert_eq!(
            render(&m),
            data("12:00:01.234 trade venue_b \"Bitcoin Up or Down - November 21, 7:15PM ET\" YES buy 0.5000×2 = $1.00")
        );
    }

    #[test]
    fn the_api_address_is_the_streams_without_its_path() {
        for (given, api) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/"),
            ("ws://127.0.0.1:8080/v1/stream", "http://127.0.0.1:8080/"),
            ("wss://example.com/crossbook/v1/stream", "https://example.com/crossbook"),
            (
                "https://example.com/crossbook/v1/stream/",
                "https://example.com/crossbook",
            ),
        ] {
            assert_eq!(api_address(given).map(String::from).as_deref(), Some(api), "{given}");
        }
    }

    #[test]
    fn arbitrage_opportunity() {
        let m = msg(
            json!({"type": "opportunity", "channel": "arbitrage", "change": "opened",
            "episode": {"id": "ep_42", "first_seen_at": AT},
            "opportunity": {"event_id": "BTC-15M-2026-11-21T19:00Z", "label": "Up", "buy_yes_market": "venue_a",
                "buy_no_market": "venue_b", "net_cents": 3.2, "executable_size": 120.0}}),
        );
        assert_eq!(
            render(&m),
            data(
                "12:00:01.234 arbitrage opened  BTC-15M-2026-11-21T19:00Z Up yes@venue_a no@venue_b net 3.20¢ size 120 (episode ep_42)"
            )
        );
        let closed = msg(
            json!({"type": "opportunity", "channel": "arbitrage", "change": "changed",
            "episode": {"id": "ep_42"}, "opportunity": {"event_id": "E", "label": null,
                "buy_yes_market": "venue_b", "buy_no_market": "venue_a", "net_cents": null,
                "executable_size": 12.5}}),
        );
        assert_eq!(
            render(&closed),
            data("12:00:01.234 arbitrage changed E yes@venue_b no@venue_a net ?¢ size 12.5 (episode ep_42)")
        );
    }

    #[test]
    fn status_venue_and_gap() {
        let up = msg(
            json!({"type": "venue", "channel": "status", "exchange": "venue_a", "connected": true,
            "mode": "websocket"}),
        );
        assert_eq!(
            render(&up),
            data("12:00:01.234 status venue venue_a connected (websocket)")
        );
        let down = msg(
            json!({"type": "venue", "channel": "status", "exchange": "venue_a", "connected": false,
            "mode": null}),
        );
        assert_eq!(render(&down), data("12:00:01.234 status venue venue_a disconnected"));
        let gap = msg(
            json!({"type": "gap", "channel": "status", "exchange": "venue_b", "cause": "disconnect",
            "books": [{"market_id": "a", "asset_id": "1"}, {"market_id": "a", "asset_id": "2"},
                      {"market_id": "b", "asset_id": "3"}]}),
        );
        assert_eq!(
            render(&gap),
            data("12:00:01.234 status gap venue_b 3 books (disconnect)")
        );
        let one = msg(
            json!({"type": "gap", "channel": "status", "exchange": "venue_b", "cause": "sequence",
            "books": [{"market_id": "a", "asset_id": "1"}]}),
        );
        assert_eq!(render(&one), data("12:00:01.234 status gap venue_b 1 book (sequence)"));
    }

    #[test]
    fn errors_go_to_stderr_with_the_plan() {
        let m = msg(
            json!({"type": "error", "channel": "arbitrage", "code": "entitlement_required",
            "detail": "the arbitrage channel is part of the Trader plan", "required_plan": "trader"}),
        );
        assert_eq!(
            render(&m),
            note(
                "12:00:01.234 error on arbitrage: entitlement_required: the arbitrage channel is part of the Trader plan (needs the Trader plan)"
            )
        );
        let limit = msg(json!({"type": "error", "channel": "control", "code": "limit_exceeded",
            "detail": "2 connections at most on the free plan"}));
        assert_eq!(
            render(&limit),
            note("12:00:01.234 error: limit_exceeded: 2 connections at most on the free plan")
        );
    }

    #[test]
    fn control_messages_are_short_notes() {
        let welcome = msg(
            json!({"type": "welcome", "channel": "control", "session": "s_1", "plan": "trader",
            "limits": {"connections": 50, "markets": 5000}, "resume_seconds": 60, "buffer": 4096}),
        );
        assert_eq!(
            render(&welcome),
            note("12:00:01.234 welcome: session s_1, plan trader, limits 50 connections / 5000 markets")
        );
        let anonymous = msg(
            json!({"type": "welcome", "channel": "control", "session": "s_2", "plan": null,
            "limits": {"connections": 2, "markets": 50}}),
        );
        assert_eq!(
            render(&anonymous),
            note("12:00:01.234 welcome: session s_2, plan none, limits 2 connections / 50 markets")
        );
        let bare = msg(json!({"type": "welcome", "channel": "control", "session": "s_3"}));
        assert_eq!(render(&bare), note("12:00:01.234 welcome: session s_3, plan none"));
        let auth = msg(json!({"type": "authenticated", "channel": "control", "plan": "builder", "limits": {}}));
        assert_eq!(render(&auth), note("12:00:01.234 authenticated: plan builder"));
        let sub = msg(json!({"type": "subscribed", "channel": "book", "markets": ["KX1", "0xabc"]}));
        assert_eq!(
            render(&sub),
            note("12:00:01.234 subscribed book (2 markets: KX1, 0xabc)")
        );
        let all = msg(json!({"type": "subscribed", "channel": "trades", "markets": null}));
        assert_eq!(render(&all), note("12:00:01.234 subscribed trades (all markets)"));
        let not_live = msg(json!({"type": "not_live", "channel": "book", "exchange": "venue_a",
            "market_id": "KX1", "reason": "closed", "detail": "the market is closed: it has no live book"}));
        assert_eq!(
            render(&not_live),
            note("12:00:01.234 no live book for venue_a KX1 (closed): the market is closed: it has no live book")
        );
        let unsub = msg(json!({"type": "unsubscribed", "channel": "book", "markets": ["KX1"]}));
        assert_eq!(render(&unsub), note("12:00:01.234 unsubscribed book (1 market: KX1)"));
        let resumed = msg(json!({"type": "resumed", "channel": "control", "from": 16}));
        assert_eq!(render(&resumed), note("12:00:01.234 resumed after seq 16"));
        let reset = msg(json!({"type": "reset", "channel": "control", "reason": "session expired"}));
        assert_eq!(
            render(&reset),
            note(
                "12:00:01.234 reset: the session could not be resumed (session expired); messages were lost, books follow as fresh snapshots"
            )
        );
        assert_eq!(render(&msg(json!({"type": "pong", "channel": "control"}))), None);
    }

    #[test]
    fn unknown_messages_are_printed_generically() {
        let m = msg(json!({"type": "halt", "channel": "book", "market_id": "KX1"}));
        assert_eq!(render(&m), data("12:00:01.234 book halt {\"market_id\":\"KX1\"}"));
        let c = msg(json!({"type": "motd", "channel": "control", "text": "hi"}));
        assert_eq!(render(&c), note("12:00:01.234 control motd {\"text\":\"hi\"}"));
        assert_eq!(render(&json!({"type": "x"})), data("--:--:--.--- ? x {}"));
        assert_eq!(render(&json!([1, 2])), note("crossbook: unrecognised message: [1,2]"));
        assert_eq!(
            render(&json!({"seq": 3})),
            note("crossbook: message without a type: {\"seq\":3}")
        );
        // Known types with fields missing or of the wrong shape still make a line.
        for kind in [
            "snapshot",
            "change",
            "stale",
            "trade",
            "whale",
            "opportunity",
            "venue",
            "gap",
            "error",
            "welcome",
            "subscribed",
            "resumed",
            "reset",
        ] {
            assert!(
                render(&json!({"type": kind, "changes": 3, "bids": "x", "data": 1})).is_some(),
                "{kind}"
            );
        }
    }

    #[test]
    fn malformed_json_is_skipped_with_a_note() {
        let e = parse("{\"type\": \"trade\"").unwrap_err();
        assert!(e.starts_with("skipped a message that is not JSON ("), "{e}");
        assert!(e.ends_with(": {\"type\": \"trade\""), "{e}");
        assert!(parse("{\"type\": \"trade\"}").is_ok());
    }

    fn args(list: &[&str]) -> TailArgs {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            a: TailArgs,
        }
        T::try_parse_from(std::iter::once("tail").chain(list.iter().copied()))
            .expect("valid flags")
            .a
    }

    #[test]
    fn flags_and_subscribe_ops() {
        let a = args(&[
            "--channel",
            "trades,book",
            "--channel",
            "status",
            "--channel",
            "book",
            "--market",
            "KX1",
        ]);
        assert_eq!(a.validate(), Ok(()));
        assert_eq!(
            stream_address(&a.url).unwrap().as_str(),
            "ws://127.0.0.1:8080/v1/stream"
        );
        assert_eq!(
            subscribe_ops(&a),
            vec![
                json!({"op": "subscribe", "channel": "book", "markets": ["KX1"]}),
                json!({"op": "subscribe", "channel": "trades", "markets": ["KX1"]}),
                json!({"op": "subscribe", "channel": "status"}),
            ]
        );
        let no_market = args(&["--channel", "book"]);
        assert_eq!(
            no_market.validate(),
            Err("the book channel needs at least one --market ID".to_string())
        );
        let ftp = args(&["--channel", "status", "--url", "ftp://127.0.0.1:8080"]);
        assert!(
            ftp.validate()
                .unwrap_err()
                .contains("http://, https://, ws:// or wss://")
        );
        let whales = args(&["--channel", "whales", "--market", "KX1"]);
        assert_eq!(
            subscribe_ops(&whales),
            vec![json!({"op": "subscribe", "channel": "whales"})]
        );
    }

    #[test]
    fn the_default_url_is_where_serve_listens() {
        let config = crossbook_server::config::Config::load(None, &json!({})).expect("defaults load");
        let a = args(&["--channel", "status"]);
        assert_eq!(
            stream_address(&a.url).unwrap().as_str(),
            format!("ws://{}/v1/stream", config.listen)
        );
    }

    #[test]
    fn resume_state_and_url() {
        let a = args(&["--channel", "status"]);
        let mut s = Session::default();
        assert_eq!(
            stream_url(&a.url, &s).unwrap().as_str(),
            "ws://127.0.0.1:8080/v1/stream"
        );
        let welcome = json!({"type": "welcome", "channel": "control", "seq": 1, "session": "s_1"});
        assert_eq!(
            observe(&welcome, &mut s, &a),
            Some(vec![json!({"op": "subscribe", "channel": "status"})])
        );
        observe(&json!({"type": "venue", "seq": 2}), &mut s, &a);
        assert_eq!(
            stream_url(&a.url, &s).unwrap().as_str(),
            "ws://127.0.0.1:8080/v1/stream?session=s_1&resume_from=2"
        );
        // Messages of an api process carry the bus's position: resuming names it, for any api process.
        observe(&json!({"type": "venue", "seq": 3, "pos": 981}), &mut s, &a);
        observe(&json!({"type": "pong", "seq": 4}), &mut s, &a);
        assert_eq!(
            stream_url(&a.url, &s).unwrap().as_str(),
            "ws://127.0.0.1:8080/v1/stream?session=s_1&resume_from=4&resume_pos=981"
        );
        // The same session back: its subscriptions survived, nothing to send.
        let again = json!({"type": "welcome", "channel": "control", "seq": 5, "session": "s_1"});
        assert_eq!(observe(&again, &mut s, &a), Some(vec![]));
        assert_eq!(s.last_seq, Some(4));
        // Another session: subscribe again, and its numbering starts over.
        let other = json!({"type": "welcome", "channel": "control", "seq": 1, "session": "s_2"});
        assert_eq!(observe(&other, &mut s, &a).map(|v| v.len()), Some(1));
        assert_eq!(s.last_seq, Some(1));
        assert_eq!(s.last_pos, None, "a position belongs to the session it was received in");
    }

    #[test]
    fn refused_channels_are_remembered() {
        let a = args(&["--channel", "arbitrage"]);
        let mut s = Session::default();
        let e = json!({"type": "error", "channel": "arbitrage", "seq": 2, "code": "entitlement_required",
            "detail": "d", "required_plan": "trader"});
        observe(&e, &mut s, &a);
        assert!(s.refused.contains("arbitrage"));
    }

    #[test]
    fn backoff_grows_jittered_and_capped() {
        for _ in 0..100 {
            let first = backoff(0);
            assert!(first >= Duration::from_millis(250) && first <= Duration::from_millis(500));
            let late = backoff(40);
            assert!(late >= Duration::from_secs(15) && late <= Duration::from_secs(30));
        }
    }

    #[test]
    fn decimals_pad_without_arithmetic() {
        assert_eq!(decimals(&json!(205.0), 2), "205.00");
        assert_eq!(decimals(&json!(0.1), 2), "0.10");
        assert_eq!(decimals(&json!(1.435), 2), "1.435");
        assert_eq!(decimals(&json!(7), 2), "7.00");
        assert_eq!(decimals(&json!("3.2"), 2), "3.2");
        assert_eq!(price(&json!(0.41)), "0.4100");
        assert_eq!(size(&json!(120.0)), "120");
        assert_eq!(size(&json!(120.25)), "120.25");
    }

    /// A stand-in for the server, on loopback, to check the client's side of the conversation.
    // The handshake callbacks return tungstenite's own error response, whose size is not ours to choose.
    #[allow(clippy::result_large_err)]
    mod against_a_fake_server {
        use std::sync::{Arc, Mutex};

        use tokio::net::{TcpListener, TcpStream};
        use tokio_tungstenite::{
            WebSocketStream,
            tungstenite::handshake::server::{ErrorResponse, Request, Response},
        };

        use super::*;

        type ServerWs = WebSocketStream<TcpStream>;

        async fn listen() -> (TcpListener, String) {
            let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("ws://{}/v1/stream", l.local_addr().expect("address"));
            (l, url)
        }

        /// Accepts one connection; returns it with the path and query it asked for and its key.
        async fn accept(l: &TcpListener) -> (ServerWs, String, Option<String>) {
            let (tcp, _) = l.accept().await.expect("accept");
            let mut uri = String::new();
            let mut key = None;
            let ws = tokio_tungstenite::accept_hdr_async(tcp, |req: &Request, resp: Response| {
                uri = req.uri().to_string();
                key = req
                    .headers()
                    .get("x-api-key")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                Ok(resp)
            })
            .await
            .expect("upgrade");
            (ws, uri, key)
        }

        async fn send(ws: &mut ServerWs, v: Value) {
            ws.send(Message::text(v.to_string())).await.expect("send");
        }

        async fn recv(ws: &mut ServerWs) -> Value {
            loop {
                match ws.next().await {
                    Some(Ok(Message::Text(t))) => return serde_json::from_str(&t).expect("JSON op"),
                    Some(Ok(_)) => continue,
                    other => panic!("expected an op, got {other:?}"),
                }
            }
        }

        /// Standard output of the command, readable while it runs; each write wakes whoever waits on it.
        #[derive(Clone, Default)]
        struct Out(Arc<Mutex<Vec<u8>>>, Arc<tokio::sync::Notify>);

        impl std::io::Write for Out {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().expect("lock").extend_from_slice(b);
                self.1.notify_waiters();
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }

        impl Out {
            fn text(&self) -> String {
                String::from_utf8(self.0.lock().expect("lock").clone()).expect("UTF-8")
            }
            /// Resolves once `needle` has been printed: the test's Ctrl-C.
            async fn printed(self, needle: &'static str) {
                let wait = async {
                    loop {
                        // Registered before the check, so a write between the two is not missed.
                        let written = self.1.notified();
                        if self.text().contains(needle) {
                            return;
                        }
                        written.await;
                    }
                };
                tokio::time::timeout(Duration::from_secs(10), wait)
                    .await
                    .unwrap_or_else(|_| panic!("{needle:?} not printed within 10 s"));
            }
        }

        fn at(mut v: Value, seq: u64) -> Value {
            v["seq"] = json!(seq);
            v["sent_at"] = json!(AT);
            v
        }

        #[tokio::test]
        async fn subscribes_prints_resumes_after_a_drop_and_closes_on_quit() {
            let (l, url) = listen().await;
            let server = tokio::spawn(async move {
                let (mut ws, uri, key) = accept(&l).await;
                assert_eq!(uri, "/v1/stream");
                assert_eq!(key.as_deref(), Some("cbk_test"));
                let welcome = json!({"type": "welcome", "channel": "control", "session": "s_1", "plan": "free",
                    "limits": {"connections": 2, "markets": 50}, "resume_seconds": 60, "buffer": 4096});
                send(&mut ws, at(welcome.clone(), 1)).await;
                assert_eq!(recv(&mut ws).await, json!({"op": "subscribe", "channel": "trades"}));
                assert_eq!(recv(&mut ws).await, json!({"op": "subscribe", "channel": "status"}));
                send(
                    &mut ws,
                    at(json!({"type": "subscribed", "channel": "trades", "markets": null}), 2),
                )
                .await;
                let trade = json!({"type": "trade", "channel": "trades", "exchange": "venue_a", "market_id": "KX1",
                    "price": 0.41, "size": 5.0, "taker_side": "buy", "notional_usd": 2.05});
                send(&mut ws, at(trade, 3)).await;
                // Gone without a close frame, as when the network drops.
                drop(ws);

                let (mut ws, uri, _) = accept(&l).await;
                assert_eq!(uri, "/v1/stream?session=s_1&resume_from=3");
                send(&mut ws, at(welcome, 4)).await;
                send(
                    &mut ws,
                    at(json!({"type": "resumed", "channel": "control", "from": 3}), 5),
                )
                .await;
                let venue = json!({"type": "venue", "channel": "status", "exchange": "venue_a", "connected": false});
                send(&mut ws, at(venue, 6)).await;
                // The resumed session kept its subscriptions: the next thing from the client is its goodbye.
                loop {
                    match ws.next().await {
                        Some(Ok(Message::Close(frame))) => {
                            assert_eq!(frame.map(|f| f.code), Some(CloseCode::Normal));
                            break;
                        }
                        Some(Ok(Message::Text(t))) => panic!("unexpected op after a resume: {t}"),
                        Some(Ok(_)) => continue,
                        other => panic!("expected a close frame, got {other:?}"),
                    }
                }
            });
            let a = args(&["--channel", "trades,status", "--key", "cbk_test", "--url", &url]);
            let out = Out::default();
            let quit = out.clone().printed("status venue");
            let result = tokio::time::timeout(Duration::from_secs(10), follow_stream(&a, quit, &mut out.clone()))
                .await
                .expect("finishes");
            result.expect("quits cleanly");
            server.await.expect("server side as expected");
            assert_eq!(
                out.text(),
                "12:00:01.234 trade venue_a KX1 buy 0.4100×5 = $2.05\n12:00:01.234 status venue venue_a disconnected\n"
            );
        }

        /// Answers one plain HTTP request with `answer(path)` (status line and body); returns its request line
        /// and key.
        async fn answer_http(
            mut tcp: TcpStream,
            answer: impl Fn(&str) -> (&'static str, String),
        ) -> (String, Option<String>) {
            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                tcp.read_exact(&mut byte).await.expect("a request head");
                head.push(byte[0]);
            }
            let head = String::from_utf8(head).expect("UTF-8");
            let line = head.lines().next().unwrap_or_default().to_string();
            let key = head
                .lines()
                .find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("x-api-key")))
                .map(|(_, v)| v.trim().to_string());
            let (status, body) = answer(line.split(' ').nth(1).unwrap_or_default());
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            tcp.write_all(reply.as_bytes()).await.expect("reply");
            (line, key)
        }

        #[tokio::test]
        async fn venue_b_trades_show_the_market_title_looked_up_once_per_event() {
            // As `main` does before any command runs.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let (l, url) = listen().await;
            let cond = format!("0x{}", "ab".repeat(32));
            let other = format!("0x{}", "ef".repeat(32));
            // (request line, key) of each lookup.
            type Asked = Vec<(String, Option<String>)>;
            let requests: Arc<Mutex<Asked>> = Arc::default();
            let (c, seen) = (cond.clone(), requests.clone());
            tokio::spawn(async move {
                let (mut ws, _, _) = accept(&l).await;
                // Every later connection is a title lookup: answered and recorded.
                let markets = json!([{"market_id": c, "title": null, "question": "Bitcoin Up or Down - 7:15PM ET?"}]);
                tokio::spawn(async move {
                    while let Ok((tcp, _)) = l.accept().await {
                        let markets = markets.to_string();
                        let asked = answer_http(tcp, move |path| {
                            if path == "/v1/search/events/btc-updown-15m/markets?limit=100" {
                                ("200 OK", markets.clone())
                            } else {
                                ("404 Not Found", r#"{"code": "not_found"}"#.to_string())
                            }
                        })
                        .await;
                        seen.lock().expect("lock").push(asked);
                    }
                });
                let welcome = json!({"type": "welcome", "channel": "control", "session": "s_1"});
                send(&mut ws, at(welcome, 1)).await;
                recv(&mut ws).await;
                let trade = |seq: u64, event: &str, market: &str| {
                    at(
                        json!({"type": "trade", "channel": "trades", "exchange": "venue_b", "event_id": event,
                        "market_id": market, "outcome": "YES", "taker_side": "buy", "price": 0.5, "size": 2.0,
                        "notional_usd": 1.0}),
                        seq,
                    )
                };
                // Two trades of one event, then two of an event the catalog lacks.
                send(&mut ws, trade(2, "btc-updown-15m", &c)).await;
                send(&mut ws, trade(3, "btc-updown-15m", &c)).await;
                send(&mut ws, trade(4, "gone", &other)).await;
                send(&mut ws, trade(5, "gone", &other)).await;
                send(
                    &mut ws,
                    at(json!({"type": "venue", "channel": "status", "exchange": "venue_b"}), 6),
                )
                .await;
                while let Some(Ok(_)) = ws.next().await {}
            });
            let a = args(&["--channel", "trades", "--key", "cbk_test", "--url", &url]);
            let out = Out::default();
            let quit = out.clone().printed("status venue");
            tokio::time::timeout(Duration::from_secs(10), follow_stream(&a, quit, &mut out.clone()))
                .await
                .expect("finishes")
                .expect("quits cleanly");
            let titled = "trade venue_b \"Bitcoin Up or Down - 7:15PM ET?\" YES buy 0.5000×2 = $1.00";
            let by_id = "trade venue_b 0xefefefef…efefefef YES buy 0.5000×2 = $1.00";
            assert_eq!(
                out.text(),
                format!(
                    "12:00:01.234 {titled}\n12:00:01.234 {titled}\n12:00:01.234 {by_id}\n12:00:01.234 {by_id}\n\
                     12:00:01.234 status venue venue_b ?\n"
                )
            );
            // One request per event, with the key; each was answered before its trade's line was printed.
            let key = Some("cbk_test".to_string());
            assert_eq!(
                *requests.lock().expect("lock"),
                [
                    (
                        "GET /v1/search/events/btc-updown-15m/markets?limit=100 HTTP/1.1".to_string(),
                        key.clone()
                    ),
                    ("GET /v1/search/events/gone/markets?limit=100 HTTP/1.1".to_string(), key),
                ]
            );
        }

        #[tokio::test]
        async fn json_prints_every_message_unchanged() {
            let (l, url) = listen().await;
            let welcome = r#"{"type":"welcome","channel":"control","seq":1,"session":"s_1"}"#;
            let data = "{\"type\": \"venue\",\n \"channel\": \"status\", \"seq\": 2, \"exchange\": \"venue_b\"}";
            tokio::spawn(async move {
                let (mut ws, _, _) = accept(&l).await;
                ws.send(Message::text(welcome)).await.expect("send");
                recv(&mut ws).await;
                ws.send(Message::text("not json")).await.expect("send");
                ws.send(Message::text(data)).await.expect("send");
                while let Some(Ok(_)) = ws.next().await {}
            });
            let a = args(&["--channel", "status", "--json", "--url", &url]);
            let out = Out::default();
            let quit = out.clone().printed("venue_b");
            follow_stream(&a, quit, &mut out.clone()).await.expect("quits cleanly");
            assert_eq!(out.text(), format!("{welcome}\n{}\n", data.replace('\n', " ")));
        }

        #[tokio::test]
        async fn a_rejected_key_ends_with_the_servers_detail() {
            let (l, url) = listen().await;
            tokio::spawn(async move {
                let (tcp, _) = l.accept().await.expect("accept");
                let _ = tokio_tungstenite::accept_hdr_async(tcp, |_: &Request, _: Response| {
                    let body = r#"{"detail": "invalid API key", "code": "unauthorized"}"#;
                    let refusal: ErrorResponse = tokio_tungstenite::tungstenite::http::Response::builder()
                        .status(401)
                        .header("content-type", "application/json")
                        .body(Some(body.to_string()))
                        .expect("response");
                    Err(refusal)
                })
                .await;
            });
            let a = args(&["--channel", "status", "--key", "cbk_bad", "--url", &url]);
            let err = follow_stream(&a, std::future::pending(), &mut Out::default())
                .await
                .expect_err("refused");
            assert_eq!(
                err.to_string(),
                "the server rejected the key (HTTP 401): invalid API key"
            );
        }

        #[tokio::test]
        async fn a_server_without_the_stream_is_named_as_such() {
            let (l, url) = listen().await;
            tokio::spawn(async move {
                let (tcp, _) = l.accept().await.expect("accept");
                let _ = tokio_tungstenite::accept_hdr_async(tcp, |_: &Request, _: Response| {
                    let body = r#"{"detail": "no such path", "code": "not_found"}"#;
                    let refusal: ErrorResponse = tokio_tungstenite::tungstenite::http::Response::builder()
                        .status(404)
                        .body(Some(body.to_string()))
                        .expect("response");
                    Err(refusal)
                })
                .await;
            });
            let a = args(&["--channel", "status", "--url", &url]);
            let err = follow_stream(&a, std::future::pending(), &mut Out::default())
                .await
                .expect_err("not a stream");
            assert_eq!(
                err.to_string(),
                format!("cannot connect to {url}: the server refused the WebSocket upgrade (HTTP 404): no such path")
            );
        }

        #[tokio::test]
        async fn no_server_is_a_clear_error() {
            let (l, url) = listen().await;
            drop(l);
            let a = args(&["--channel", "status", "--url", &url]);
            let err = follow_stream(&a, std::future::pending(), &mut Out::default())
                .await
                .expect_err("nothing listens");
            assert_eq!(
                err.to_string(),
                format!("cannot connect to {url}: connection refused — is `crossbook serve` running?")
            );
        }

        #[tokio::test]
        async fn every_channel_refused_ends_the_command() {
            let (l, url) = listen().await;
            tokio::spawn(async move {
                let (mut ws, _, _) = accept(&l).await;
                send(
                    &mut ws,
                    at(json!({"type": "welcome", "channel": "control", "session": "s_1"}), 1),
                )
                .await;
                recv(&mut ws).await;
                let refusal = json!({"type": "error", "channel": "arbitrage", "code": "entitlement_required",
                    "detail": "needs trader", "required_plan": "trader"});
                send(&mut ws, at(refusal, 2)).await;
                while let Some(Ok(_)) = ws.next().await {}
            });
            let a = args(&["--channel", "arbitrage", "--url", &url]);
            let err = follow_stream(&a, std::future::pending(), &mut Out::default())
                .await
                .expect_err("nothing to follow");
            assert_eq!(err.to_string(), "the server refused every channel asked for");
        }

        #[tokio::test]
        async fn the_connection_limit_is_not_retried() {
            let (l, url) = listen().await;
            tokio::spawn(async move {
                let (mut ws, _, _) = accept(&l).await;
                use tokio_tungstenite::tungstenite::protocol::CloseFrame;
                let frame = CloseFrame {
                    code: CloseCode::Policy,
                    reason: "limit_exceeded".into(),
                };
                let _ = ws.close(Some(frame)).await;
            });
            let a = args(&["--channel", "status", "--url", &url]);
            let err = follow_stream(&a, std::future::pending(), &mut Out::default())
                .await
                .expect_err("limit");
            assert_eq!(
                err.to_string(),
                "the server ended the stream (closed with code 1008: limit_exceeded)"
            );
        }
    }
}
