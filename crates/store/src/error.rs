use thiserror::Error;

/// Errors of the storage layer. The server maps `Unavailable` to 503, `Conflict` to 409, `NotFound` to 404
/// and everything else to a logged 500.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database cannot be reached (connection refused, pool timed out).
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
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => {
                StoreError::Unavailable(e.to_string())
            }
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(db.message().to_string()),
            _ => StoreError::Db(e),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migrate(e.to_string())
    }
}
