//! `idle-sockets`: what idle connections cost the listener. For each N, N TCP connections are
//! opened and send nothing; while they are held, a normal `GET /healthz` on a new connection is timed
//! `--requests` times; then the bench waits for the server to close every idle socket (its header read
//! timeout) and reports how long that took from each socket's connect completing.
//!
//! The server runs in this process (`crossbook_server::serve`) on a temporary SQLite file, with no venue to
//! ingest from (its feeds point nowhere; only HTTP matters here), on a listener with `crossbook serve`'s
//! backlog (4,096) unless `--backlog` says otherwise. Its connection cap is `max_connections`, 0 deriving it
//! from the open-file limit as the server does; with `--max-connections` at or below N, the connections over
//! the cap wait in the listen backlog (or, when it is full, on SYN retransmissions) and so does the timed
//! client: its first request waits for the header timeout to free the cap, and that wait is reported.
//!
//! Both ends share this process's open-file limit (each held connection costs two descriptors here, one in a
//! separate server process), so it is raised first, as the server does; a derived cap therefore promises
//! about twice the connections this process can hold.
//!
//! ```text
//! cargo run --release -p crossbook-bench -- idle-sockets
//! cargo run --release -p crossbook-bench -- idle-sockets --max-connections 1000 --header-timeout-seconds 2
//! ```

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use clap::Args;
use crossbook_server::{config::Config, http};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    sync::{Semaphore, mpsc},
    task::JoinSet,
};

#[derive(Args, Debug)]
pub struct IdleArgs {
    /// Idle connections to hold, one round per value.
    #[arg(long, value_delimiter = ',', default_value = "500,1000,2000,4000")]
    sockets: Vec<usize>,
    /// `GET /healthz` requests timed per round, each on a new connection.
    #[arg(long, default_value_t = 20)]
    requests: usize,
    /// The server's `header_read_timeout_seconds` (its default is 10; shorter makes the rounds shorter).
    #[arg(long, default_value_t = 10)]
    header_timeout_seconds: u64,
    /// The server's `max_connections` (0: derived from the open-file limit, as by default).
    #[arg(long, default_value_t = 0)]
    max_connections: usize,
    /// The listen backlog of the server's socket; `crossbook serve` asks for 4,096 (tokio's `bind`, 128).
    #[arg(long, default_value_t = crossbook_server::http::LISTEN_BACKLOG)]
    backlog: u32,
}

/// What became of one idle connection.
struct Idle {
    /// How long its connect took (a second or more: a SYN was lost to a full listen backlog and resent).
    connect_took: Duration,
    /// From its connect completing to the server closing it (end of stream or reset). The server's timer
    /// starts when it accepts the connection, so time spent in the listen backlog counts here.
    open_for: Duration,
    /// Whether the server sent anything before closing (it should not: the client never sent a request).
    answered: bool,
}

/// See the pacing of connects in [`run`].
const CONNECTS_IN_FLIGHT: usize = 64;

const GET_HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: crossbook\r\nConnection: close\r\n\r\n";

/// One `GET /healthz` on a new connection, read to the end: its latency, or why it failed.
async fn healthz(addr: SocketAddr) -> Result<Duration, String> {
    let t = Instant::now();
    let mut s = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    s.write_all(GET_HEALTHZ).await.map_err(|e| format!("write: {e}"))?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.map_err(|e| format!("read: {e}"))?;
    if !answer.starts_with(b"HTTP/1.1 200") {
        let line = String::from_utf8_lossy(&answer);
        return Err(format!("answer: {:?}", line.lines().next().unwrap_or("")));
    }
    Ok(t.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub async fn run(args: IdleArgs) -> anyhow::Result<()> {
    // Raised before the server starts so that the cap it derives is the one computed here.
    let file_limit = http::raise_file_limit();
    let (url, path) = crate::temp_sqlite("idle");
    let config = Config {
        header_read_timeout_seconds: args.header_timeout_seconds,
        max_connections: args.max_connections,
        ..Config::for_tests(&url)
    };
    // As `serve` computes it (crossbook_server::http::Limits::new).
    let cap = http::connection_cap(config.max_connections, file_limit, config.webhook_concurrency);
    let header_timeout = Duration::from_secs(args.header_timeout_seconds);
    println!(
        "open-file limit {}, server max_connections {cap} ({}), header_read_timeout_seconds {}, listen backlog {}",
        file_limit.map_or("unlimited".into(), |n| n.to_string()),
        if args.max_connections == 0 {
            "derived"
        } else {
            "configured"
        },
        args.header_timeout_seconds,
        args.backlog
    );
    if let Some(limit) = file_limit {
        let most = args.sockets.iter().copied().max().unwrap_or(0) as u64;
        if 2 * most + 256 > limit {
            println!(
                "warning: {most} connections need about {} descriptors in this process",
                2 * most + 256
            );
        }
    }

    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind("127.0.0.1:0".parse()?)?;
    let listener = socket.listen(args.backlog)?;
    let addr = listener.local_addr()?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crossbook_server::serve(config, listener, async move {
        let _ = stop_rx.await;
    }));
    // The listener is bound already, so this waits for the server to start serving; it also warms it.
    let up = tokio::time::timeout(Duration::from_secs(30), healthz(addr)).await;
    anyhow::ensure!(matches!(up, Ok(Ok(_))), "the server did not start: {up:?}");

    // The clients run on a runtime of their own, so that the server's workers run only the server, as they
    // would with clients elsewhere.
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;

    // A connection over the cap and the backlog waits on SYN retransmissions (1 s, 3 s, 7 s...), so a
    // request may take several header timeouts; past this it counts as failed.
    let request_deadline = 4 * header_timeout + Duration::from_secs(30);
    // Every idle socket is closed by then, or the round fails.
    let idle_deadline = 8 * header_timeout + Duration::from_secs(120);

    for &n in &args.sockets {
        let (connected_tx, mut connected_rx) = mpsc::unbounded_channel::<()>();
        let mut idle = JoinSet::new();
        let opening = Instant::now();
        // Connects in flight at most: a burst past the listen backlog loses SYNs to a 1 s retransmission.
        // Even so, with the 128 of `crossbook serve` some are lost whenever the accept loop falls 128
        // handshakes behind (counted as connects of 1 s or more); `--backlog 4096` shows the difference.
        let pace = Arc::new(Semaphore::new(CONNECTS_IN_FLIGHT));
        for _ in 0..n {
            let connected_tx = connected_tx.clone();
            let pace = pace.clone();
            idle.spawn_on(
                async move {
                    let permit = pace.acquire_owned().await.expect("never closed");
                    let started = Instant::now();
                    let mut s = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
                    drop(permit);
                    let connect_took = started.elapsed();
                    let connected = Instant::now();
                    let _ = connected_tx.send(());
                    // Sends nothing; reads until the server closes it.
                    let mut buf = [0u8; 256];
                    let mut answered = false;
                    loop {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) => answered = true,
                        }
                    }
                    Ok::<_, String>(Idle {
                        connect_took,
                        open_for: connected.elapsed(),
                        answered,
                    })
                },
                clients.handle(),
            );
        }
        drop(connected_tx);
        // Until every connect finished, or the cap is filled (the timed client then queues behind the idle
        // ones), or half the header timeout passed (the first ones are closed at the timeout; connects still
        // waiting on SYN retries then are not held while the requests are timed).
        let mut connected = 0;
        let until = tokio::time::Instant::now() + header_timeout / 2;
        while connected < n.min(cap) {
            match tokio::time::timeout_at(until, connected_rx.recv()).await {
                Ok(Some(())) => connected += 1,
                Ok(None) | Err(_) => break,
            }
        }
        let opened_in = opening.elapsed();

        let mut lat = Vec::with_capacity(args.requests);
        let mut errors = Vec::new();
        let mut first = None;
        for _ in 0..args.requests {
            let request = clients.spawn(tokio::time::timeout(request_deadline, healthz(addr)));
            match request.await.expect("a request task panicked") {
                Ok(Ok(d)) => {
                    first.get_or_insert(d);
                    lat.push(ms(d));
                }
                Ok(Err(e)) => errors.push(e),
                Err(_) => errors.push(format!("no answer within {request_deadline:?}")),
            }
        }

        let mut closed = Vec::with_capacity(n);
        let mut answered = 0;
        let mut connect_errors = 0;
        let mut slow_connects = 0;
        let waited = tokio::time::timeout(idle_deadline, async {
            while let Some(r) = idle.join_next().await {
                match r.expect("an idle-socket task panicked") {
                    Ok(i) => {
                        answered += usize::from(i.answered);
                        slow_connects += usize::from(i.connect_took >= Duration::from_secs(1));
                        closed.push(ms(i.open_for));
                    }
                    Err(_) => connect_errors += 1,
                }
            }
        })
        .await;
        anyhow::ensure!(
            waited.is_ok(),
            "{} idle sockets still open after {idle_deadline:?}",
            idle.len()
        );
        closed.sort_by(f64::total_cmp);
        lat.sort_by(f64::total_cmp);

        let requests = if lat.is_empty() {
            "none answered".to_string()
        } else {
            format!(
                "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, first {:.2} ms",
                crate::percentile(&lat, 0.5),
                crate::percentile(&lat, 0.99),
                lat[lat.len() - 1],
                first.map_or(0.0, ms)
            )
        };
        let closing = if closed.is_empty() {
            "none".to_string()
        } else {
            format!(
                "min {:.2} s, p50 {:.2} s, max {:.2} s",
                closed[0] / 1e3,
                crate::percentile(&closed, 0.5) / 1e3,
                closed[closed.len() - 1] / 1e3
            )
        };
        println!(
            "idle {n} (cap reached: {}; {connected} connected within {:.0} ms): /healthz x{}: {requests}; errors {}{}; \
             idle sockets closed after (from the connect completing) {closing}; answered {answered}, connect errors {connect_errors}, \
             connects of 1 s or more {slow_connects}",
            n >= cap,
            ms(opened_in),
            args.requests,
            errors.len(),
            errors.first().map_or(String::new(), |e| format!(" (first: {e})")),
        );
    }

    // Dropping a runtime inside another one would panic.
    clients.shutdown_background();
    let _ = stop_tx.send(());
    server.await??;
    crate::remove_sqlite(&path);
    Ok(())
}
