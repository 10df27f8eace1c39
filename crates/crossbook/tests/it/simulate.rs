//! `crossbook simulate` prints settings that work without the source tree: the venue_a demo key is written
//! from the binary to the file the settings name.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

#[test]
fn simulate_writes_the_demo_key_the_printed_settings_name() {
    let dir = std::env::temp_dir().join(format!("crossbook-simulate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args([
            "simulate",
            "--venue-a-listen",
            "127.0.0.1:0",
            "--venue-b-listen",
            "127.0.0.1:0",
        ])
        // A relative default resolved against the working directory, as a user running it in a fresh
        // directory gets it.
        .current_dir(&dir)
        .env("CROSSBOOK_LOG", "warn")
        .env(
            "CROSSBOOK_DATABASE_URL",
            format!("sqlite://{}/unused.db", dir.display()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run crossbook simulate");
    // Read stdout on a thread so the deadline holds even if the process prints nothing.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let key_line = loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.starts_with("venue_a_private_key_file") => break line,
            Ok(_) => continue,
            Err(e) => {
                let _ = child.kill();
                panic!("no venue_a_private_key_file line within 30 s: {e}");
            }
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let value: toml_path::Value = key_line.split_once(" = ").unwrap().1.parse().unwrap();
    let path = std::path::PathBuf::from(value.0);
    assert_eq!(path, dir.join("venue_a_demo_key.pem"), "{key_line}");
    assert!(
        !path.starts_with(env!("CARGO_MANIFEST_DIR")) && !path.to_string_lossy().contains("crates/sim/fixtures"),
        "the settings must not point into the source tree: {key_line}"
    );
    let pem = std::fs::read_to_string(&path).unwrap();
    assert_eq!(pem, crossbook_sim::venue_a::auth::DEMO_PRIVATE_KEY_PEM);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The settings are TOML `key = "value"` lines; the value is a JSON string literal, which the test decodes
/// with serde_json rather than adding a TOML parser.
mod toml_path {
    pub struct Value(pub String);
    impl std::str::FromStr for Value {
        type Err = serde_json::Error;
        fn from_str(s: &str) -> Result<Self, Self::Err> {
            serde_json::from_str(s).map(Value)
        }
    }
}
