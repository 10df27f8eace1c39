//! The HTTP listener: timeouts, connection cap, file limit.
//!
//! `axum::serve` closes nothing on its own: a client that connects and sends nothing, trickles its headers or
//! leaves a keep-alive connection idle holds a socket (and a file descriptor) for as long as it likes, and
//! enough of them exhaust the open-file limit. This module is the accept loop the server runs instead, over
//! hyper's HTTP/1 + HTTP/2 connection builder (with upgrades, for the WebSocket stream):
//!
//! - **Header read timeout**: a new connection has `header_read_timeout_seconds` to deliver its first request's
//!   headers; on a keep-alive connection the same time runs from the first byte of each later request.
//! - **Keep-alive timeout**: a connection with no request in progress and no byte of a new one for
//!   `keep_alive_timeout_seconds` is closed.
//!
//!   Both are enforced by a watchdog per connection ([`ConnState`]) rather than hyper's own
//!   `header_read_timeout`: hyper starts that timer as soon as it waits for the next request, so it would also
//!   close every idle keep-alive connection after the (short) header timeout.
//! - **Request body timeout**: a body still arriving `request_body_timeout_seconds` after its headers fails
//!   ([`DeadlineBody`]) and the request is answered 408 `request_timeout` ([`answer_body_timeout`]).
//! - **Response send timeout**: a response write that makes no progress for `response_send_timeout_seconds`
//!   (the client stopped reading and the socket buffers are full) closes the connection, so the response body
//!   behind it (a replay, an export) is dropped too. The watchdog sees stalled writes through [`TrackedIo`].
//! - **Connection cap**: a semaphore permit per open connection, taken *before* `accept`: at the cap the loop
//!   stops accepting and new clients wait in the kernel's listen backlog, rather than being accepted and
//!   dropped. The permit lives in the socket wrapper, so an upgraded (WebSocket) connection keeps holding it.
//! - **Header size**: `max_header_bytes` bounds what one request's headers may hold in memory: hyper's HTTP/1
//!   read buffer and the HTTP/2 `SETTINGS_MAX_HEADER_LIST_SIZE`. Over it hyper answers 431 with an empty body
//!   (it never reaches the router, so it cannot carry the JSON error shape); HTTP/1 then closes the connection.
//!   Without it HTTP/1 would buffer up to hyper's default ~400 KB per connection.
//! - **File limit**: [`raise_file_limit`] raises the open-file soft limit to the hard limit at start, and the
//!   default cap is derived from it ([`connection_cap`]).
//!
//! Upgraded connections leave the watchdog: hyper's connection future finishes when it hands the socket to the
//! WebSocket, and the stream has its own pings. Graceful shutdown stops accepting, then waits for in-flight
//! requests (idle keep-alive connections are closed at once).

use std::{
    convert::Infallible,
    error::Error as StdError,
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll, ready},
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::{ConnectInfo, Request},
    http::{HeaderValue, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::{conn::auto, graceful::GracefulShutdown},
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore},
    time::{Instant, Sleep},
};
use tower::ServiceExt;

use crate::{ApiError, config::Config};

/// The listener's limits, from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read: Duration,
    pub keep_alive: Duration,
    pub request_body: Duration,
    pub response_send: Duration,
    pub max_connections: usize,
    pub max_header_bytes: usize,
}

impl Limits {
    /// The limits of `config`, the connection cap derived from `file_limit` when the configuration leaves it 0.
    pub fn new(config: &Config, file_limit: Option<u64>) -> Limits {
        Limits {
            header_read: Duration::from_secs(config.header_read_timeout_seconds),
            keep_alive: Duration::from_secs(config.keep_alive_timeout_seconds),
            request_body: Duration::from_secs(config.request_body_timeout_seconds),
            response_send: Duration::from_secs(config.response_send_timeout_seconds),
            max_connections: connection_cap(config.max_connections, file_limit, config.webhook_concurrency),
            max_header_bytes: config.max_header_bytes,
        }
    }
}

/// Descriptors kept for everything but client connections: the database pool, the venue feeds, log files...
const RESERVED_FILES: u64 = 128;
/// Bounds of the derived cap: a floor so that a tiny limit still serves, a ceiling for memory.
const MIN_DERIVED_CAP: u64 = 64;
const MAX_DERIVED_CAP: u64 = 65_536;

/// The connection cap: `configured` when positive; else the open-file limit minus [`RESERVED_FILES`] minus
/// the webhook deliveries in flight (each an outbound socket), within 64..=65,536 (65,536 when the limit is
/// unlimited or unknown).
pub fn connection_cap(configured: usize, file_limit: Option<u64>, webhook_concurrency: usize) -> usize {
    if configured > 0 {
        return configured;
    }
    let derived = match file_limit {
        Some(limit) => limit
            .saturating_sub(RESERVED_FILES)
            .saturating_sub(webhook_concurrency as u64),
        None => MAX_DERIVED_CAP,
    };
    derived.clamp(MIN_DERIVED_CAP, MAX_DERIVED_CAP) as usize
}

/// The listen backlog `crossbook serve` asks for (the kernel caps it at `net.core.somaxconn`, 4,096 on
/// current Linux). tokio's `TcpListener::bind` asks for 128: a burst of connects larger than that, or clients
/// waiting at the connection cap, would lose SYNs and retry after 1 s, 3 s, 7 s (measured with
/// `crossbook-bench idle-sockets`: 143 of 4,000 connects took a second or more at 128, none at 4,096).
pub const LISTEN_BACKLOG: u32 = 4096;

/// Binds `addr` for the service, with [`LISTEN_BACKLOG`].
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does: a restarted server can bind at once while old connections linger.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Raises the open-file soft limit to the hard limit and returns the soft limit now in force (`None`:
/// unlimited, or not a unix system). Each open connection costs a descriptor; the common default soft limit of
/// 1,024 is far below what a server needs, while the hard limit is usually much higher.
pub fn raise_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        if limit.current != limit.maximum {
            let raised = Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            };
            match setrlimit(Resource::Nofile, raised) {
                Ok(()) => {}
                Err(e) => tracing::warn!(error = %e, "cannot raise the open-file limit to its hard limit"),
            }
        }
        let now = getrlimit(Resource::Nofile).current;
        match now {
            Some(n) => tracing::info!(open_file_limit = n, "open-file limit"),
            None => tracing::info!(open_file_limit = "unlimited", "open-file limit"),
        }
        now
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown` resolves, then stops accepting and waits for
/// the open connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    tracing::info!(
        max_connections = limits.max_connections,
        header_read_timeout_s = limits.header_read.as_secs(),
        keep_alive_timeout_s = limits.keep_alive.as_secs(),
        request_body_timeout_s = limits.request_body.as_secs(),
        response_send_timeout_s = limits.response_send.as_secs(),
        max_header_bytes = limits.max_header_bytes,
        "HTTP listener"
    );
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    // HTTP/1 keep-alive is on by default; no hyper timer is set, so hyper's own header timeout (which would
    // also cut idle keep-alive connections) stays off and the watchdog of each connection applies ours.
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The whole head must fit in the read buffer, so its size is the HTTP/1 header limit (hyper panics under
    // 8 KiB; the configuration refuses that). It also caps how much of a response hyper buffers before writing.
    builder.http1().max_buf_size(limits.max_header_bytes);
    // Within the configuration's bounds (at most 1 MiB), so the conversion cannot saturate.
    builder
        .http2()
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // The permit first: at the cap, nothing is accepted until a connection closes.
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let (stream, addr) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of descriptors or memory: wait instead of spinning on the error.
                    tracing::error!(error = %e, "accept failed");
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(Duration::from_millis(250)) => continue,
                    }
                }
            },
        };
        let state = Arc::new(ConnState::new());
        let io = TokioIo::new(TrackedIo {
            stream,
            state: state.clone(),
            _permit: permit,
        });
        let service = ConnService {
            router: router.clone(),
            addr,
            state: state.clone(),
            body_timeout: limits.request_body,
        };
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let conn = watcher.watch(builder.serve_connection_with_upgrades(io, service));
            tokio::select! {
                result = conn => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, %addr, "connection ended with an error");
                    }
                }
                reason = state.expired(limits) => {
                    // Dropping the connection closes the socket.
                    tracing::debug!(%addr, reason, "connection closed by timeout");
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Errors of one connection that `accept` reports; the next accept is unaffected.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// "Not set" in the millisecond fields of [`ConnState`].
const UNSET: u64 = u64::MAX;

/// What the watchdog of one connection knows, in milliseconds since the connection was accepted.
struct ConnState {
    born: Instant,
    /// Requests whose response is not finished (HTTP/2 may have several).
    in_flight: AtomicUsize,
    /// Requests started on this connection.
    requests: AtomicU64,
    /// When the last response finished.
    idle_since: AtomicU64,
    /// The first byte read since `idle_since` (the start of the next request), or [`UNSET`].
    head_started: AtomicU64,
    /// Since when a write has been waiting for the client to take bytes (none taken since), or [`UNSET`].
    write_stalled: AtomicU64,
}

impl ConnState {
    fn new() -> ConnState {
        ConnState {
            born: Instant::now(),
            in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
            head_started: AtomicU64::new(UNSET),
            write_stalled: AtomicU64::new(UNSET),
        }
    }

    fn now_ms(&self) -> u64 {
        self.born.elapsed().as_millis() as u64
    }

    /// Bytes arrived from the client.
    fn on_read(&self) {
        let now = self.now_ms();
        let _ = self
            .head_started
            .compare_exchange(UNSET, now, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// A write waits for the client (`progress`: false) or took bytes (true).
    fn on_write(&self, progress: bool) {
        if progress {
            self.write_stalled.store(UNSET, Ordering::SeqCst);
        } else {
            let now = self.now_ms();
            let _ = self
                .write_stalled
                .compare_exchange(UNSET, now, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// When the connection is to be closed, in ms since it was accepted; `None` while a request is in flight
    /// and its response is not stalled.
    fn deadline(&self, limits: &Limits) -> Option<u64> {
        let ms = |d: Duration| d.as_millis() as u64;
        match self.write_stalled.load(Ordering::SeqCst) {
            UNSET => {}
            stalled => return Some(stalled + ms(limits.response_send)),
        }
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        if self.requests.load(Ordering::SeqCst) == 0 {
            // The first request's headers are due a header timeout after the connection opened.
            return Some(ms(limits.header_read));
        }
        let idle_since = self.idle_since.load(Ordering::SeqCst);
        match self.head_started.load(Ordering::SeqCst) {
            UNSET => Some(idle_since + ms(limits.keep_alive)),
            head => Some(head.max(idle_since) + ms(limits.header_read)),
        }
    }

    /// Resolves when the connection has outlived its header or keep-alive timeout (with which one).
    async fn expired(&self, limits: Limits) -> &'static str {
        // Deadlines only move later, and a new one is always at least the shorter timeout after the change
        // that set it: re-checking that often while a request is in flight never finds one late.
        let recheck = limits.header_read.min(limits.keep_alive).min(limits.response_send);
        loop {
            match self.deadline(&limits) {
                None => tokio::time::sleep(recheck).await,
                Some(at) if self.now_ms() >= at => {
                    return if self.write_stalled.load(Ordering::SeqCst) != UNSET {
                        "response send timeout"
                    } else if self.requests.load(Ordering::SeqCst) == 0
                        || self.head_started.load(Ordering::SeqCst) != UNSET
                    {
                        "header read timeout"
                    } else {
                        "keep-alive timeout"
                    };
                }
                Some(at) => tokio::time::sleep_until(self.born + Duration::from_millis(at)).await,
            }
        }
    }
}

/// Marks one request in flight on its connection until dropped (with the response body, once written).
struct InFlight(Arc<ConnState>);

impl InFlight {
    fn start(state: &Arc<ConnState>) -> InFlight {
        state.requests.fetch_add(1, Ordering::SeqCst);
        state.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(state.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let state = &self.0;
        // Set before the count drops, so the watchdog never sees an idle connection with stale times.
        state.head_started.store(UNSET, Ordering::SeqCst);
        state.idle_since.store(state.now_ms(), Ordering::SeqCst);
        state.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The client socket: notes every read for the watchdog and holds the connection's cap permit for as long as
/// the socket is open (upgraded connections included).
struct TrackedIo {
    stream: TcpStream,
    state: Arc<ConnState>,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for TrackedIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.stream).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            this.state.on_read();
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for TrackedIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.state.on_write(polled.is_ready());
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.state.on_write(polled.is_ready());
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// The service of one connection: the app, with the peer address as `ConnectInfo` (the rate limiter keys
/// anonymous callers by it) and the body deadline on each request.
#[derive(Clone)]
struct ConnService {
    router: Router,
    addr: SocketAddr,
    state: Arc<ConnState>,
    body_timeout: Duration,
}

impl hyper::service::Service<hyper::Request<Incoming>> for ConnService {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, req: hyper::Request<Incoming>) -> Self::Future {
        let in_flight = InFlight::start(&self.state);
        let timed_out = BodyTimedOut::default();
        let deadline = Instant::now() + self.body_timeout;
        let body_flag = timed_out.0.clone();
        let mut req = req.map(|inner| {
            Body::new(DeadlineBody {
                inner,
                deadline,
                sleep: None,
                timed_out: body_flag,
            })
        });
        req.extensions_mut().insert(ConnectInfo(self.addr));
        req.extensions_mut().insert(timed_out);
        let router = self.router.clone();
        Box::pin(async move {
            let Ok(resp) = router.oneshot(req).await;
            Ok(resp.map(|inner| TrackedBody {
                inner,
                _in_flight: in_flight,
            }))
        })
    }
}

/// A response body that keeps its request counted in flight until hyper has written (and dropped) it.
pub struct TrackedBody {
    inner: Body,
    _in_flight: InFlight,
}

impl http_body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Set (in the request's extensions) when the request body missed its deadline.
#[derive(Debug, Clone, Default)]
pub struct BodyTimedOut(Arc<AtomicBool>);

/// A request body that fails once its deadline passes (hyper has no body timeout); the failure is recorded in
/// the request's [`BodyTimedOut`] so that the answer is a 408 whatever the handler made of the error.
struct DeadlineBody {
    inner: Incoming,
    deadline: Instant,
    /// Made on the first read that has to wait, so bodies read at once cost no timer.
    sleep: Option<Pin<Box<Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn StdError + Send + Sync>;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|r| r.map_err(Into::into)));
        }
        let deadline = this.deadline;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        ready!(sleep.as_mut().poll(cx));
        this.timed_out.store(true, Ordering::SeqCst);
        Poll::Ready(Some(Err("the request body timed out".into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Middleware of the app ([`crate::api::with_common_layers`]): a request whose body timed out is answered 408
/// `request_timeout` (whatever the handler made of the failed read) with `Connection: close`, since the rest of
/// the body may still be on its way. Inside the error layer, so webhook paths get the envelope.
pub async fn answer_body_timeout(req: Request, next: Next) -> Response {
    let timed_out = req.extensions().get::<BodyTimedOut>().cloned();
    // `Connection` is an HTTP/1 header (HTTP/2 forbids it; there the stream is reset instead).
    let http1 = req.version() < axum::http::Version::HTTP_2;
    let resp = next.run(req).await;
    match timed_out {
        Some(flag) if flag.0.load(Ordering::SeqCst) => {
            let mut resp = ApiError::RequestTimeout.into_response();
            if http1 {
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            resp
        }
        _ => resp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_configured_or_derived_from_the_file_limit() {
        assert_eq!(connection_cap(10, Some(1024), 256), 10);
        assert_eq!(connection_cap(0, Some(1024), 256), 640);
        assert_eq!(connection_cap(0, Some(100), 256), 64);
        assert_eq!(connection_cap(0, Some(1 << 20), 256), 65_536);
        assert_eq!(connection_cap(0, None, 256), 65_536);
    }
}
