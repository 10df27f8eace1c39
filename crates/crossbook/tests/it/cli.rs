//! What the command line prints when a newcomer gets something wrong: one line that names the flag, the
//! variable or the file, no source paths or type names, and commands that only read never create a
//! database.

use std::process::{Command, Output};

fn crossbook(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args(args)
        .env_remove("CROSSBOOK_LOG")
        .env_remove("RUST_LOG")
        .env_remove("CROSSBOOK_DATABASE_URL")
        .envs(env.iter().copied())
        .output()
        .expect("run crossbook")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("crossbook-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// No Rust source path, type name or multi-line dump in what a user reads.
fn assert_plain(text: &str) {
    for leak in [".rs:", "Overrides", "&crossbook", "figment", "panicked"] {
        assert!(!text.contains(leak), "internals ({leak}) in: {text}");
    }
    assert_eq!(text.trim_end().lines().count(), 1, "not one line: {text}");
}

#[test]
fn a_bad_listen_address_names_the_flag_and_the_value() {
    let o = crossbook(&["serve", "--listen", "notanaddr"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    // The command-line parser's own message: the error line, then a pointer to --help.
    let first = e.lines().next().unwrap_or("");
    assert!(first.contains("--listen") && first.contains("notanaddr"), "{e}");
    assert_plain(first);
}

#[test]
fn an_invalid_log_filter_is_an_error_at_start() {
    for var in ["CROSSBOOK_LOG", "RUST_LOG"] {
        let dir = scratch(&format!("log-{var}"));
        let db = format!("sqlite://{}/cb.db", dir.display());
        let o = crossbook(
            &["serve", "--listen", "127.0.0.1:0", "--database-url", &db],
            &[(var, "info,crossbook=[nonsense")],
        );
        assert_eq!(o.status.code(), Some(2), "{var}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("log") && e.contains("nonsense"), "{var}: {e}");
        assert_plain(&e);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn reading_commands_never_create_a_database() {
    let dir = scratch("missing");
    let file = dir.join("nothing-here.db");
    let db = format!("sqlite://{}", file.display());
    for args in [["keys", "list"], ["pairs", "list"]] {
        let o = crossbook(&[args[0], args[1], "--database-url", &db], &[]);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("no database at") && e.contains("nothing-here.db"),
            "{args:?}: {e}"
        );
        assert_plain(&e);
        assert!(!file.exists(), "{args:?} created {}", file.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn writing_commands_refuse_a_missing_database_and_name_the_one_they_use() {
    let dir = scratch("write");
    // Run from another folder with the default database: nothing there, so nothing is created.
    let o = Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args(["keys", "create", "--name", "me", "--plan", "trader"])
        .current_dir(&dir)
        .env_remove("CROSSBOOK_DATABASE_URL")
        .output()
        .expect("run crossbook");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let default_file = dir.join("data").join("crossbook.db");
    assert!(
        stderr(&o).contains(&default_file.display().to_string()) && stderr(&o).contains("--create"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(!default_file.exists());

    let file = dir.join("elsewhere.db");
    let db = format!("sqlite://{}", file.display());
    for args in [
        &["keys", "create", "--name", "me", "--plan", "trader"][..],
        &["pairs", "add", "KX-1", "0xabc"],
        &["pairs", "reject", "--venue-a", "KX-1", "--venue-b", "0xabc"],
    ] {
        let o = crossbook(&[args, &["--database-url", &db]].concat(), &[]);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("no database at") && e.contains("elsewhere.db"),
            "{args:?}: {e}"
        );
        assert_plain(&e);
        assert!(!file.exists(), "{args:?} created {}", file.display());
    }

    // --create makes it, says where on standard error, and the key stays standard output's last line.
    let create = [
        "keys",
        "create",
        "--name",
        "me",
        "--plan",
        "trader",
        "--create",
        "--database-url",
        &db,
    ];
    let o = crossbook(&create, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("database: {db}")), "{e}");
    assert!(e.contains("no running crossbook server ingests from it"), "{e}");
    assert!(
        stdout(&o).trim_end().lines().last().unwrap().starts_with("cbk_"),
        "{}",
        stdout(&o)
    );

    // A server ingesting from the database holds its ingest lock: the command says it writes where that
    // server reads.
    let store = crossbook_store::open(&db).await.unwrap();
    let guard = store.try_leader_lock().await.unwrap().expect("the lock is free");
    let o = crossbook(&create, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(a running crossbook server ingests from it)"),
        "{}",
        stderr(&o)
    );
    guard.release().await;
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn other_crossbook_variables_warn_and_unknown_file_keys_name_the_file() {
    let dir = scratch("env");
    let db = format!("sqlite://{}/none.db", dir.display());
    // The example webhook receivers' variable, as a user following older instructions might have set it.
    let o = crossbook(
        &["keys", "list", "--database-url", &db],
        &[("CROSSBOOK_WEBHOOK_SECRET", "whsec_x")],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "the command ran (and found no database): {e}");
    assert!(e.contains("no database at"), "{e}");
    assert!(
        e.lines()
            .any(|l| l.contains("warning") && l.contains("CROSSBOOK_WEBHOOK_SECRET")),
        "{e}"
    );

    let file = dir.join("crossbook.toml");
    std::fs::write(&file, "listen = \"127.0.0.1:0\"\nwebhook_secret = \"x\"\n").unwrap();
    let o = crossbook(&["keys", "list", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    let first = e.lines().next().unwrap_or("");
    assert!(
        first.contains("webhook_secret") && first.contains(&file.display().to_string()),
        "{e}"
    );
    assert!(e.lines().all(|l| l.chars().count() <= 200), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keys_list_says_which_database_it_read_and_aligns_its_columns() {
    let dir = scratch("keys");
    let db = format!("sqlite://{}/cb.db", dir.display());
    for (name, plan) in [("al", "trader"), ("a-much-longer-customer-name", "free")] {
        let o = crossbook(
            &[
                "keys",
                "create",
                "--name",
                name,
                "--plan",
                plan,
                "--create",
                "--database-url",
                &db,
            ],
            &[],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = crossbook(&["keys", "list", "--database-url", &db], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("database: {db}")), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 3, "{out}");
    // Every column starts at the same character in the header and in each row.
    let column = |line: &str, word: &str| line.find(word).unwrap_or_else(|| panic!("no {word} in {line}"));
    let plan_at = column(lines[0], "PLAN");
    for (name, plan) in [("al ", "trader"), ("a-much-longer-customer-name", "free")] {
        let row = lines
            .iter()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        assert_eq!(column(row, plan), plan_at, "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreachable_postgresql_is_named_before_anything_listens() {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    let o = crossbook(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            "postgres://postgres@127.0.0.1:1/test",
        ],
        &[("CROSSBOOK_LOG", "info")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.to_lowercase().contains("refused"), "{e}");
    assert!(
        !e.contains("listening"),
        "announced an address before the database opened: {e}"
    );
}
