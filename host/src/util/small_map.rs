//! A map that costs what a few entries cost while it holds a few: per-ring state holds a
//! handful of keys on most rings and many on some (a first pass's wrapper kinds per site of
//! the run being read, a ring's ops per run in the second), and an empty
//! hash map's first insert takes room for four buckets and their control bytes (300,000
//! tiny rings held 35 MB of such maps; issue 41).

use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Entries a [`SmallMap`] keeps in a list searched in order, before it becomes a hash map.
const FEW: usize = 8;

/// Up to [`FEW`] entries in a list sized to them (found by a linear search), a hash map
/// past that. Iteration order is unspecified (as a hash map's).
#[derive(Clone, Debug)]
pub(crate) enum SmallMap<K, V> {
    /// A few entries, in insertion order.
    Few(Vec<(K, V)>),
    /// More (boxed: the map is as small as its list, one `Vec`).
    Many(Box<FxHashMap<K, V>>),
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        SmallMap::Few(Vec::new())
    }
}

impl<K: Eq + Hash + Copy, V> SmallMap<K, V> {
    /// The value of `key`, made by `make` when absent.
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        if let SmallMap::Few(list) = self {
            if list.len() >= FEW && !list.iter().any(|(k, _)| *k == key) {
                *self = SmallMap::Many(Box::new(std::mem::take(list).into_iter().collect()));
            }
        }
        match self {
            SmallMap::Few(list) => {
                let i = match list.iter().position(|(k, _)| *k == key) {
                    Some(i) => i,
                    None => {
                        list.reserve_exact(1);
                        list.push((key, make()));
                        list.len() - 1
                    }
                };
                &mut list[i].1
            }
            SmallMap::Many(map) => map.entry(key).or_insert_with(make),
        }
    }

    /// Inserts `key` (with `make`'s value) when absent; whether it was.
    #[cfg(test)]
    pub(crate) fn insert_new(&mut self, key: K, make: impl FnOnce() -> V) -> bool {
        let mut made = false;
        self.get_or_insert_with(key, || {
            made = true;
            make()
        });
        made
    }

    /// The value of `key`, if present.
    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        match self {
            SmallMap::Few(list) => list.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            SmallMap::Many(map) => map.get(key),
        }
    }

    /// Every entry.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = (&K, &V)> + '_> {
        match self {
            SmallMap::Few(list) => Box::new(list.iter().map(|(k, v)| (k, v))),
            SmallMap::Many(map) => Box::new(map.iter()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_every_key_once_across_the_switch_to_a_hash_map() {
        let mut m: SmallMap<u32, u32> = SmallMap::default();
        for round in 0..2 {
            for k in 0..(3 * FEW as u32) {
                let v = m.get_or_insert_with(k % (2 * FEW as u32), || 0);
                *v += 1;
                assert!(!m.insert_new(k % (2 * FEW as u32), || 99), "round {round}");
            }
        }
        assert_eq!(m.iter().count(), 2 * FEW);
        assert!(matches!(m, SmallMap::Many(_)));
        let mut got: Vec<(u32, u32)> = m.iter().map(|(k, v)| (*k, *v)).collect();
        got.sort();
        // Keys 0..FEW came up twice a round, the rest once.
        let want: Vec<(u32, u32)> = (0..2 * FEW as u32)
            .map(|k| (k, if k < FEW as u32 { 4 } else { 2 }))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_few_entries_stay_in_a_list_sized_to_them() {
        let mut m: SmallMap<(u32, u16), bool> = SmallMap::default();
        assert!(m.insert_new((1, 2), || true));
        assert!(m.insert_new((1, 3), || false));
        assert!(!m.insert_new((1, 2), || false));
        match &m {
            SmallMap::Few(list) => {
                assert_eq!(list.len(), 2);
                assert_eq!(list.capacity(), 2);
            }
            SmallMap::Many(_) => panic!("two entries made a hash map"),
        }
        assert!(*m.get_or_insert_with((1, 2), || false));
    }
}
