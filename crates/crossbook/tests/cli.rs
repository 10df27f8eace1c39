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

#[test]
fn keys_list_says_which_database_it_read_and_aligns_its_columns() {
    let dir = scratch("keys");
    let db = format!("sqlite://{}/cb.db", dir.display());
    for (name, plan) in [("al", "trader"), ("a-much-longer-customer-name", "free")] {
        let o = crossbook(
            &["keys", "create", "--name", name, "--plan", plan, "--database-url", &db],
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
