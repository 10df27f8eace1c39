//! [`WhaleStore`](crate::whales::WhaleStore) on SQLite: the shared statements of `whales.rs`, reads on the
//! reader pool, writes on the single writer.

use super::SqliteStore;

crate::whales::impl_whale_store!(SqliteStore, read = |s| &s.read, write = |s| &s.write);
