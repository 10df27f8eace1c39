use thiserror::Error;

/// Errors of the storage layer. The server maps `Unavailable` to 503, `Conflict` to 409, `NotFound` to 404
/// and everything else to a logged 500.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database cannot take the statement now: unreachable (connection refused, pool timed out), full,
    /// read-only or locked for too long. Retrying later may succeed.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// A unique constraint was violated.
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("not found")]
    NotFound,
    /// The URL or settings are unusable.
    #[error("{0}")]
    Config(String),
    #[error("migration failed: {0}")]
    Migrate(String),
    #[error("database error: {0}")]
    Db(sqlx::Error),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            // What the wire says when a connection ends half-way (a proxy or load balancer with no database
            // behind it closes at once: "unexpected response from SSLRequest").
            | sqlx::Error::Protocol(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(e.to_string()),
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(db.message().to_string()),
            sqlx::Error::Database(db) if db.code().is_some_and(|c| unavailable_code(&c)) => {
                StoreError::Unavailable(db.message().to_string())
            }
            _ => StoreError::Db(e),
        }
    }
}

/// Whether a database error code says the storage cannot take the statement now (full, unreachable, shutting
/// down, locked for too long) rather than that the statement is wrong: the caller gets a 503 and may retry.
///
/// SQLite codes are numbers of up to four digits (extended codes carry the primary code in their low byte): `SQLITE_BUSY` (5)
/// after the busy timeout, `SQLITE_LOCKED` (6), `SQLITE_NOMEM` (7), `SQLITE_READONLY` (8, a read-only file
/// system), `SQLITE_IOERR` (10), `SQLITE_FULL` (13, disk full or `max_page_count` reached) and
/// `SQLITE_CANTOPEN` (14). PostgreSQL codes are SQLSTATEs: class `08` (connection exception), class `53`
/// (insufficient resources: disk full, out of memory, too many connections), `57P01`–`57P03` (the server is
/// shutting down or starting) and `25006` (a read-only standby).
pub(crate) fn unavailable_code(code: &str) -> bool {
    // A SQLSTATE always has five characters, often all digits ("08006"); SQLite's codes have at most four.
    if code.len() < 5
        && let Ok(n) = code.parse::<i64>()
    {
        return matches!(n & 0xff, 5 | 6 | 7 | 8 | 10 | 13 | 14);
    }
    code.starts_with("08") || code.starts_with("53") || matches!(code, "57P01" | "57P02" | "57P03" | "25006")
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migrate(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::unavailable_code;

    #[test]
    fn storage_conditions_are_unavailable_and_statement_errors_are_not() {
        // SQLITE_FULL, SQLITE_IOERR_WRITE (10 | 3 << 8), SQLITE_BUSY, SQLITE_READONLY_DBMOVED (8 | 4 << 8).
        for c in ["13", "778", "5", "1032", "14"] {
            assert!(unavailable_code(c), "{c}");
        }
        // SQLITE_ERROR (a bad statement), SQLITE_CONSTRAINT_FOREIGNKEY (787), SQLITE_MISMATCH.
        for c in ["1", "787", "20"] {
            assert!(!unavailable_code(c), "{c}");
        }
        for c in ["08006", "08001", "53100", "53300", "57P01", "57P03", "25006"] {
            assert!(unavailable_code(c), "{c}");
        }
        for c in ["42P01", "23503", "22001", "40001"] {
            assert!(!unavailable_code(c), "{c}");
        }
    }
}
