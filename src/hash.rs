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

/// `cache`'s value for `key`, made by `make` and kept the first time it is asked (`make` may
/// ask the cache for other keys: no borrow is held while it runs).
pub(crate) fn cached<V: Clone>(
    cache: &std::cell::RefCell<PairMap<V>>,
    key: (usize, usize),
    make: impl FnOnce() -> V,
) -> V {
    if let Some(v) = cache.borrow().get(&key) {
        return v.clone();
    }
    let v = make();
    cache.borrow_mut().insert(key, v.clone());
    v
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
