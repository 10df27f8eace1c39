//! A `nats-server -js` of a test's own, for the bus tests (feature `testing`): on a free port, storing in a
//! temporary folder, stopped and removed on drop. Tests start their own rather than share the machine's, so
//! one test stopping NATS to check an outage disturbs no other.

use std::{
    net::TcpListener,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// The `nats-server` binary: on PATH or in /usr/sbin. `None` outside CI (the bus tests then say so and return);
/// missing in CI (`CI` set) is a failure, never a silent skip.
pub fn nats_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file());
    let found = on_path.or_else(|| Some(PathBuf::from("/usr/sbin/nats-server")).filter(|p| p.is_file()));
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "nats-server is not installed (on PATH or /usr/sbin): CI needs it for the bus tests"
        );
        eprintln!("nats-server is not installed; skipping the bus test outside CI");
    }
    found
}

/// A running (or stopped, to test an outage) `nats-server` with JetStream.
pub struct NatsServer {
    child: Option<Child>,
    bin: PathBuf,
    port: u16,
    dir: PathBuf,
}

impl NatsServer {
    /// Starts `bin` on a free port and waits (at most 10 s) until it listens.
    pub fn start(bin: PathBuf) -> NatsServer {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("crossbook-nats-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut n = NatsServer {
            child: None,
            bin,
            port,
            dir,
        };
        n.run();
        n
    }

    /// Starts it again on the same port and storage, after [`NatsServer::stop`] (a no-op while it runs).
    pub fn run(&mut self) {
        if self.child.is_some() {
            return;
        }
        let child = Command::new(&self.bin)
            .args(["-js", "-a", "127.0.0.1", "-p", &self.port.to_string(), "-sd"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Stops and starts it again: clients lose their connection and reconnect.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// Kills it (an outage); [`NatsServer::run`] brings it back.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
