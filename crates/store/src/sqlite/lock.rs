//! [`LeaderLock`] on SQLite: an exclusive OS lock on `<database file>-leader.lock`, released by the OS when
//! the process dies; an in-memory database is private to its process, so its lock always succeeds.

use std::{fs::File, future::Future, path::PathBuf, pin::Pin, sync::Arc};

use super::SqliteStore;
use crate::{
    StoreError, StoreResult,
    lock::{GuardImpl, LeaderGuard, LeaderLock},
};

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

impl SqliteStore {
    /// The lock file next to the database file, `None` for an in-memory database.
    fn leader_lock_path(&self) -> Option<PathBuf> {
        let opts = self.write.connect_options();
        let db = opts.get_filename();
        let name = db.to_string_lossy();
        if name.is_empty() || name.contains(":memory:") || name.starts_with("file:sqlx-in-memory-") {
            return None;
        }
        let mut path = db.as_os_str().to_owned();
        path.push("-leader.lock");
        Some(PathBuf::from(path))
    }
}

#[async_trait::async_trait]
impl LeaderLock for SqliteStore {
    async fn try_leader_lock(&self) -> StoreResult<Option<LeaderGuard>> {
        let Some(path) = self.leader_lock_path() else {
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
}
