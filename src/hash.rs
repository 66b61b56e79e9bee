//! Hashers for the engines' maps, whose keys come from the suite's own files or are hashes
//! already made: SipHash's resistance to chosen keys buys nothing there and cost a tenth of a
//! short run's evaluation. A map keyed by a transcript's values (identical calls) compares
//! keys by value on a hash match, so a collision costs time, never a wrong answer.

/// FNV-1a: a tool name is a few bytes from the suite's own files, where SipHash's resistance
/// to chosen keys buys nothing and costs most of a lookup.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by a pair of indices (a workflow step and a call), hashed with [`PairHasher`].
pub(crate) type PairMap<V> =
    std::collections::HashMap<(usize, usize), V, std::hash::BuildHasherDefault<PairHasher>>;

/// Values kept per (workflow step, call) pair of one turn, each made the first time it is
/// asked. A turn of up to [`PairCache::DENSE`] pairs keeps them in one table (one allocation,
/// no hashing: the usual turn of a few calls); a larger one in a [`PairMap`], holding only
/// the pairs asked (a long run's walk asks one per call, not steps × calls).
pub(crate) struct PairCache<V> {
    calls: usize,
    /// Steps × calls when the pairs are kept in one table, else 0.
    dense: usize,
    table: std::cell::RefCell<Vec<Option<V>>>,
    map: std::cell::RefCell<PairMap<V>>,
}

impl<V: Clone> PairCache<V> {
    /// The most pairs a turn keeps in one table.
    const DENSE: usize = 1024;

    /// An empty cache for a turn of `steps` workflow steps and `calls` calls (nothing
    /// allocated until a value is kept).
    pub(crate) fn new(steps: usize, calls: usize) -> Self {
        Self {
            calls,
            dense: Some(steps.saturating_mul(calls))
                .filter(|&n| n <= Self::DENSE)
                .unwrap_or(0),
            table: Default::default(),
            map: Default::default(),
        }
    }

    /// Whether the pairs are kept in one table (a turn of a few calls).
    pub(crate) fn is_dense(&self) -> bool {
        self.dense > 0
    }

    /// `f` of the value kept for `key`, if any.
    pub(crate) fn peek<T>(&self, (w, j): (usize, usize), f: impl FnOnce(&V) -> T) -> Option<T> {
        if self.dense > 0 {
            self.table
                .borrow()
                .get(w * self.calls + j)
                .and_then(Option::as_ref)
                .map(f)
        } else {
            self.map.borrow().get(&(w, j)).map(f)
        }
    }

    /// Keeps `v` for `key`.
    pub(crate) fn insert(&self, (w, j): (usize, usize), v: V) {
        if self.dense > 0 {
            let mut table = self.table.borrow_mut();
            if table.is_empty() {
                table.resize_with(self.dense, || None);
            }
            table[w * self.calls + j] = Some(v);
        } else {
            self.map.borrow_mut().insert((w, j), v);
        }
    }

    /// The value for `key`, made by `make` and kept the first time it is asked (`make` may
    /// ask the cache for other keys: no borrow is held while it runs).
    pub(crate) fn get(&self, key: (usize, usize), make: impl FnOnce() -> V) -> V {
        if let Some(v) = self.peek(key, V::clone) {
            return v;
        }
        let v = make();
        self.insert(key, v.clone());
        v
    }
}

/// Keys of a few small numbers, or one hash already made: one multiply per word (SipHash was
/// a tenth of a short run's evaluation as the pairing caches' hasher).
#[derive(Default)]
pub(crate) struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
