//! Small integer-keyed containers for the replay's hot path: an Fx-style hasher, and
//! [`DenseMap`], a vector indexed by dense trace indices with a hash-map overflow so that a
//! stray huge index cannot make it allocate gigabytes.
//!
//! ```text
//! FUNCTION #0 … FUNCTION #1122     DenseMap: slots 0..=1122 of its vector
//! FUNCTION #4000000000             DenseMap: its hash map (no 4-billion-slot vector)
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
}

impl<T> Default for DenseMap<T> {
    fn default() -> Self {
        DenseMap {
            dense: Vec::new(),
            sparse: FxHashMap::default(),
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
        if u < DENSE_FLOOR || u <= self.dense.len() * 2 {
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
    #[inline]
    pub fn entry(&mut self, i: u32, make: impl FnOnce() -> T) -> &mut T {
        self.grow_for(i);
        match self.dense.get_mut(i as usize) {
            Some(slot) => slot.get_or_insert_with(make),
            None => self.sparse.entry(i).or_insert_with(make),
        }
    }

    /// Sets the entry for `i`.
    pub fn insert(&mut self, i: u32, v: T) {
        self.grow_for(i);
        match self.dense.get_mut(i as usize) {
            Some(slot) => *slot = Some(v),
            None => {
                self.sparse.insert(i, v);
            }
        }
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
        self.dense.iter().filter(|v| v.is_some()).count() + self.sparse.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
