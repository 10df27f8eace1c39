//! Things a key may hold open at once, bounded: streams per customer and per client address, replays and
//! exports per customer. Each open thing holds a [`Slot`], which gives its place back when dropped, however the
//! thing ended.

use std::{
    collections::HashMap,
    hash::Hash,
    sync::{Arc, Mutex},
};

/// How many things each key holds open now. Keys with none are not kept.
#[derive(Debug)]
pub struct OpenCounts<K: Eq + Hash + Clone> {
    open: Mutex<HashMap<K, usize>>,
}

impl<K: Eq + Hash + Clone> Default for OpenCounts<K> {
    fn default() -> Self {
        OpenCounts {
            open: Mutex::new(HashMap::new()),
        }
    }
}

/// One open thing of `key`, counted until dropped.
#[derive(Debug)]
pub struct Slot<K: Eq + Hash + Clone> {
    counts: Arc<OpenCounts<K>>,
    key: K,
}

impl<K: Eq + Hash + Clone> OpenCounts<K> {
    /// A slot of `key`, or `None` when it already holds `limit` (0: no limit).
    pub fn take(self: &Arc<Self>, key: K, limit: usize) -> Option<Slot<K>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(key.clone()).or_insert(0);
        if limit > 0 && *n >= limit {
            return None;
        }
        *n += 1;
        Some(Slot {
            counts: self.clone(),
            key,
        })
    }

    /// What `key` holds open now.
    pub fn held(&self, key: &K) -> usize {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(key).copied().unwrap_or(0)
    }
}

impl<K: Eq + Hash + Clone> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut open = self.counts.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_limit_and_a_dropped_slot_frees_its_place() {
        let counts = Arc::new(OpenCounts::default());
        let a1 = counts.take("a", 2).unwrap();
        let a2 = counts.take("a", 2).unwrap();
        assert!(counts.take("a", 2).is_none());
        let b = counts.take("b", 2).expect("another key is not affected");
        drop(a1);
        assert_eq!(counts.held(&"a"), 1);
        let a3 = counts.take("a", 2).expect("a dropped slot frees its place");
        let unlimited: Vec<_> = (0..10).map(|_| counts.take("c", 0).unwrap()).collect();
        drop((a2, a3, b, unlimited));
        assert!(
            counts.open.lock().unwrap().is_empty(),
            "keys with nothing open are not kept"
        );
    }
}
