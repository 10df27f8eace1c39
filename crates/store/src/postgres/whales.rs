//! [`WhaleStore`](crate::whales::WhaleStore) on PostgreSQL: the shared statements of `whales.rs` on the pool.

use super::PgStore;

crate::whales::impl_whale_store!(PgStore, read = |s| &s.pool, write = |s| &s.pool);
