//! Small integer-keyed containers for the replay's hot path: an Fx-style hasher, and
//! [`DenseMap`], a vector indexed by dense trace indices with a hash-map overflow so that a
//! stray huge index cannot make it allocate gigabytes.
//!
//! ```text
//! FUNCTION #0 … FUNCTION #1122     DenseMap: slots 0..=1122 of its vector
//! FUNCTION #4000000000             DenseMap: its hash map (no 4-billion-slot vector)
//! FUNCTION #2^16, #2^17 … #2^31     DenseMap: its hash map (the vector never outgrows twice
//!                                   the entries present, so doubling indices cannot grow it)
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The multiply-rotate hash rustc uses (FxHash): fast and good enough for integer keys.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The product's low bits depend only on the input's low bits, and hashbrown picks
        // buckets by the low bits: rotate the well-mixed high bits down (as rustc-hash 2 does).
        self.0.rotate_left(26)
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A map from a dense `u32` index to `T`: a vector for indices near the ones seen so far,
/// a hash map for outliers.
#[derive(Debug, Clone)]
pub struct DenseMap<T> {
    dense: Vec<Option<T>>,
    sparse: FxHashMap<u32, T>,
    /// Entries present (dense and sparse): the vector grows only up to twice this.
    present: usize,
}

impl<T> Default for DenseMap<T> {
    fn default() -> Self {
        DenseMap {
            dense: Vec::new(),
            sparse: FxHashMap::default(),
            present: 0,
        }
    }
}

/// Indices below this always live in the vector.
const DENSE_FLOOR: usize = 1 << 16;

impl<T> DenseMap<T> {
    #[inline]
    pub fn get(&self, i: u32) -> Option<&T> {
        match self.dense.get(i as usize) {
            Some(v) => v.as_ref(),
            None => self.sparse.get(&i),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        match self.dense.get_mut(i as usize) {
            Some(v) => v.as_mut(),
            None => self.sparse.get_mut(&i),
        }
    }

    #[inline]
    fn grow_for(&mut self, i: u32) {
        let u = i as usize;
        if u >= self.dense.len() {
            self.grow_slow(u);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow_slow(&mut self, u: usize) {
        if u < DENSE_FLOOR || u <= self.present * 2 {
            let old = self.dense.len();
            self.dense.resize_with(u + 1, || None);
            if !self.sparse.is_empty() {
                for k in old..=u {
                    if let Some(v) = self.sparse.remove(&(k as u32)) {
                        self.dense[k] = Some(v);
                    }
                }
            }
        }
    }

    /// The entry for `i`, created with `make` if absent.
    #[inline(always)]
    pub fn entry(&mut self, i: u32, make: impl FnOnce() -> T) -> &mut T {
        let u = i as usize;
        if u < self.dense.len() && self.dense[u].is_some() {
            // Present: `make` is not called.
            return self.dense[u].get_or_insert_with(make);
        }
        self.entry_slow(i, make)
    }

    /// [`DenseMap::entry`] where the slot is not in the vector or empty.
    #[inline(never)]
    fn entry_slow(&mut self, i: u32, make: impl FnOnce() -> T) -> &mut T {
        self.grow_for(i);
        match self.dense.get_mut(i as usize) {
            Some(slot) => {
                if slot.is_none() {
                    self.present += 1;
                }
                slot.get_or_insert_with(make)
            }
            None => match self.sparse.entry(i) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    self.present += 1;
                    e.insert(make())
                }
            },
        }
    }

    /// Sets the entry for `i`.
    pub fn insert(&mut self, i: u32, v: T) {
        self.grow_for(i);
        let new = match self.dense.get_mut(i as usize) {
            Some(slot) => slot.replace(v).is_none(),
            None => self.sparse.insert(i, v).is_none(),
        };
        self.present += usize::from(new);
    }

    /// Entries in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let mut sparse: Vec<(u32, &T)> = self.sparse.iter().map(|(k, v)| (*k, v)).collect();
        sparse.sort_unstable_by_key(|(k, _)| *k);
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)));
        // Sparse keys are all beyond the dense range.
        dense.chain(sparse)
    }

    pub fn len(&self) -> usize {
        self.present
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubling_indices_stay_sparse() {
        let mut m = DenseMap::default();
        for b in 16..31 {
            m.insert(1u32 << b, b);
        }
        m.insert(i32::MAX as u32, 31);
        *m.entry(u32::MAX, || 0) += 1;
        assert_eq!(m.len(), 17);
        assert!(m.dense.len() <= DENSE_FLOOR, "{}", m.dense.len());
        assert_eq!(m.get(1 << 20), Some(&20));
        let keys: Vec<u32> = m.iter().map(|(k, _)| k).collect();
        assert_eq!(keys.len(), 17);
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn dense_indices_stay_dense() {
        let mut m = DenseMap::default();
        for i in 0..200_000u32 {
            m.insert(i, i);
        }
        m.insert(5, 6);
        assert_eq!(m.len(), 200_000);
        assert!(m.sparse.is_empty());
        assert_eq!(m.get(199_999), Some(&199_999));
    }
}
