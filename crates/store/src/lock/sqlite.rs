//! [`LeaderLock`](super::LeaderLock) on SQLite: an exclusive OS lock on `<database file>-leader.lock`, released by the OS when
//! the process dies; an in-memory database is private to its process, so its lock always succeeds.

use std::{fs::File, future::Future, path::PathBuf, pin::Pin, sync::Arc};

use sqlx::sqlite::SqlitePool;

use super::{GuardImpl, LeaderGuard};
use crate::{StoreError, StoreResult};

/// Holds the locked file (or nothing, in memory) until released or dropped.
struct FileGuard {
    #[allow(dead_code)]
    file: Option<File>,
}

impl GuardImpl for FileGuard {
    fn lost(&mut self) -> Pin<Box<dyn Future<Output = String> + Send + '_>> {
        Box::pin(std::future::pending())
    }

    fn release(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        // Closing the file releases the lock.
        drop(self);
        Box::pin(std::future::ready(()))
    }
}

/// The lock file next to the database file; `None` for an in-memory database.
/// The lock file next to the database file, `None` for an in-memory database.
fn leader_lock_path(write: &SqlitePool) -> Option<PathBuf> {
    let opts = write.connect_options();
    let db = opts.get_filename();
    let name = db.to_string_lossy();
    if name.is_empty() || name.contains(":memory:") || name.starts_with("file:sqlx-in-memory-") {
        return None;
    }
    let mut path = db.as_os_str().to_owned();
    path.push("-leader.lock");
    Some(PathBuf::from(path))
}

pub(super) async fn try_leader_lock(write: &SqlitePool) -> StoreResult<Option<LeaderGuard>> {
    let Some(path) = leader_lock_path(write) else {
        return Ok(Some(LeaderGuard::new(FileGuard { file: None })));
    };
    let path = Arc::new(path);
    let p = path.clone();
    let attempt = tokio::task::spawn_blocking(move || -> std::io::Result<Option<File>> {
        let file = File::options().create(true).truncate(false).write(true).open(&*p)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    })
    .await
    .map_err(|e| StoreError::Config(format!("lock task failed: {e}")))?
    .map_err(|e| StoreError::Config(format!("cannot lock {}: {e}", path.display())))?;
    Ok(attempt.map(|file| LeaderGuard::new(FileGuard { file: Some(file) })))
}
