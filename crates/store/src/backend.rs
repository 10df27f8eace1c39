//! What the two backends have in common, so that each concern's SQL is written once.
//!
//! [`Backend`] is implemented by [`SqliteStore`](crate::sqlite::SqliteStore) and
//! [`PgStore`](crate::postgres::PgStore); every concern trait is implemented once, for any `Backend`, in the
//! concern's `mod.rs`. Statements shared by both dialects run on [`Backend::reader`] / [`Backend::writer`]
//! through [`Exec`]; where a dialect differs, the method matches on [`Backend::pools`] and calls the concern's
//! `sqlite.rs` or `postgres.rs`.

use sqlx::{
    AssertSqlSafe, SqlSafeStr,
    migrate::{Migration, MigrationType, Migrator},
    postgres::PgPool,
    sqlite::SqlitePool,
};

use crate::{
    StoreResult,
    codec::Cols,
    sql::{Arg, Dialect, Sql},
};

/// Runs built statements on one backend's pool.
#[async_trait::async_trait]
pub(crate) trait Exec: Send + Sync {
    type Row: Cols + Send + Sync;
    async fn rows(&self, sql: &Sql) -> StoreResult<Vec<Self::Row>>;
    async fn exec(&self, sql: &Sql) -> StoreResult<u64>;
    /// Runs `stmts` in order in one write transaction (on SQLite `BEGIN IMMEDIATE`, so call it on the writer)
    /// and returns the rows of each.
    async fn transaction(&self, stmts: &[Sql]) -> StoreResult<Vec<Vec<Self::Row>>>;
}

/// The pools of one backend, for the statements written per dialect.
pub(crate) enum Pools<'a> {
    /// One writer connection (writes queue in its pool) and a pool of `query_only` readers.
    Sqlite {
        read: &'a SqlitePool,
        write: &'a SqlitePool,
    },
    /// One pool for reads and writes.
    Postgres(&'a PgPool),
}

/// A store backend: its dialect and the pools its statements run on.
pub(crate) trait Backend: Send + Sync + 'static {
    type Exec: Exec;
    const DIALECT: Dialect;
    /// Where reads run.
    fn reader(&self) -> &Self::Exec;
    /// Where writes run (on SQLite, the single writer connection).
    fn writer(&self) -> &Self::Exec;
    fn pools(&self) -> Pools<'_>;
}

/// A built statement ready to run on PostgreSQL.
pub(crate) fn query(sql: &Sql) -> sqlx::query::Query<'static, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query_text(sql.text.clone(), &sql.args)
}

/// A built statement ready to run on SQLite, in its SQLite form ([`Sql::sqlite_text`]).
pub(crate) fn sqlite_query(sql: &Sql) -> sqlx::query::Query<'static, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    query_text(sql.sqlite_text().into_owned(), &sql.args)
}

/// `text` with `args` bound in order, on `DB`.
fn query_text<DB: sqlx::Database>(
    text: String,
    args: &[Arg],
) -> sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments>
where
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Vec<u8>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<Vec<u8>>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut q = sqlx::query(AssertSqlSafe(text));
    for a in args {
        q = match a {
            Arg::Int(v) => q.bind(*v),
            Arg::Text(s) => q.bind(s.clone()),
            Arg::Bytes(b) => q.bind(b.clone()),
            Arg::OptInt(v) => q.bind(*v),
            Arg::OptText(s) => q.bind(s.clone()),
            Arg::OptBytes(b) => q.bind(b.clone()),
        };
    }
    q
}

#[async_trait::async_trait]
impl Exec for SqlitePool {
    type Row = sqlx::sqlite::SqliteRow;
    async fn rows(&self, sql: &Sql) -> StoreResult<Vec<Self::Row>> {
        Ok(sqlite_query(sql).fetch_all(self).await?)
    }
    async fn exec(&self, sql: &Sql) -> StoreResult<u64> {
        Ok(sqlite_query(sql).execute(self).await?.rows_affected())
    }
    async fn transaction(&self, stmts: &[Sql]) -> StoreResult<Vec<Vec<Self::Row>>> {
        let mut tx = sqlite_begin(self).await?;
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            out.push(sqlite_query(s).fetch_all(&mut *tx).await?);
        }
        tx.commit().await?;
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Exec for PgPool {
    type Row = sqlx::postgres::PgRow;
    async fn rows(&self, sql: &Sql) -> StoreResult<Vec<Self::Row>> {
        Ok(query(sql).fetch_all(self).await?)
    }
    async fn exec(&self, sql: &Sql) -> StoreResult<u64> {
        Ok(query(sql).execute(self).await?.rows_affected())
    }
    async fn transaction(&self, stmts: &[Sql]) -> StoreResult<Vec<Vec<Self::Row>>> {
        let mut tx = self.begin().await?;
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            out.push(query(s).fetch_all(&mut *tx).await?);
        }
        tx.commit().await?;
        Ok(out)
    }
}

/// A backend's migrations `(version, name, sql)`, in order. A migration once released is never edited (sqlx
/// checks its checksum).
pub(crate) fn migrator(migrations: &[(i64, &str, &'static str)]) -> Migrator {
    Migrator::with_migrations(
        migrations
            .iter()
            .map(|&(version, name, sql)| {
                Migration::new(
                    version,
                    name.to_string().into(),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    )
}

/// Starts a write transaction on SQLite's single writer connection (`IMMEDIATE`, so it takes the write lock
/// at once instead of failing on upgrade).
pub(crate) async fn sqlite_begin(write: &SqlitePool) -> StoreResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
    Ok(write.begin_with("BEGIN IMMEDIATE").await?)
}
