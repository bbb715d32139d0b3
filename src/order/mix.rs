//! The frozen randomness of the orders: SplitMix64, key derivation and the
//! keyed Feistel bijection with cycle walking (the module docs of
//! [`crate::order`] describe them in words; this is the one implementation).

/// SplitMix64's increment, the 64-bit golden ratio.
pub(crate) const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The most rounds of the Feistel network.
pub(crate) const MAX_ROUNDS: usize = 64;

/// Rounds of the Feistel network over `bits`-bit integers. Part of the frozen algorithm.
pub(crate) fn rounds(bits: u32) -> usize {
    let small: usize = std::env::var("RW_SMALL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let big: usize = std::env::var("RW_BIG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let cut: u32 = std::env::var("RW_CUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    if bits < cut {
        small
    } else {
        big
    }
}

/// Key-derivation tag of [`crate::order::Mode::Shuffle`]: the bytes
/// `"records\0"` read as a little-endian `u64`.
pub(crate) const TAG_RECORDS: u64 = u64::from_le_bytes(*b"records\0");
/// Key-derivation tag of the page-group order of both page modes.
pub(crate) const TAG_PAGES: u64 = u64::from_le_bytes(*b"pages\0\0\0");
/// Key-derivation tag of the per-window shuffles of `QuasiRandom`.
pub(crate) const TAG_WINDOW: u64 = u64::from_le_bytes(*b"window\0\0");

/// SplitMix64's output function (Steele, Lea and Flood 2014; the constants
/// of Stafford's "Mix13"): a bijection of `u64` with full avalanche.
#[inline]
pub(crate) const fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The next output of a SplitMix64 generator whose state is `state`.
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GAMMA);
    mix64(*state)
}

/// Folds one word into a key: `mix64(h ^ mix64(word + GAMMA))`, i.e. `h`
/// xor the first SplitMix64 output of a generator seeded with `word`, mixed.
#[inline]
pub(crate) const fn absorb(h: u64, word: u64) -> u64 {
    mix64(h ^ mix64(word.wrapping_add(GAMMA)))
}

/// The key of one bijection:
/// `absorb(absorb(absorb(seed, tag), epoch), index)`.
#[inline]
pub(crate) const fn derive_key(seed: u64, tag: u64, epoch: u64, index: u64) -> u64 {
    absorb(absorb(absorb(seed, tag), epoch), index)
}

/// `width` low bits set (`width <= 64`).
#[inline]
const fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// A keyed bijection of `[0, n)`: an alternating (unbalanced when the width
/// is odd) Feistel network over the `k`-bit integers, `2^(k-1) < n <= 2^k`,
/// restricted to `[0, n)` by cycle walking.
///
/// `n <= 1` is the identity. Each evaluation costs [`ROUNDS`] `mix64` per
/// walk, and a walk leaves `[0, n)` with probability below 1/2, so fewer than
/// two walks are expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Feistel {
    n: u64,
    bits: u32,
    rounds: usize,
    keys: [u64; MAX_ROUNDS],
}

impl Feistel {
    /// The bijection of `[0, n)` for `key` (see [`derive_key`]).
    pub(crate) fn new(n: u64, key: u64) -> Feistel {
        let bits = if n <= 1 {
            0
        } else {
            u64::BITS - (n - 1).leading_zeros()
        };
        let rounds = rounds(bits);
        let mut state = key;
        let mut keys = [0; MAX_ROUNDS];
        for k in &mut keys[..rounds] {
            *k = splitmix64(&mut state);
        }
        Feistel {
            n,
            bits,
            rounds,
            keys,
        }
    }

    /// The size of the domain.
    #[inline]
    pub(crate) fn len(&self) -> u64 {
        self.n
    }

    /// One pass of the network over `[0, 2^bits)`.
    #[inline]
    fn network(&self, mut x: u64) -> u64 {
        let k = self.bits;
        for (i, key) in self.keys[..self.rounds].iter().enumerate() {
            // Right half: floor(k/2) bits on even rounds, ceil(k/2) on odd.
            let right = if i % 2 == 0 { k / 2 } else { k - k / 2 };
            let left = k - right;
            let l = x >> right;
            let r = x & mask(right);
            let f = mix64(r ^ key) & mask(left);
            x = (r << left) | (l ^ f);
        }
        x
    }

    /// The image of `x` (`x < n`; other values are returned unchanged).
    #[inline]
    pub(crate) fn apply(&self, x: u64) -> u64 {
        if self.n <= 1 || x >= self.n {
            return x;
        }
        let mut y = self.network(x);
        while y >= self.n {
            y = self.network(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // The first outputs of Vigna's splitmix64.c seeded with 1234567.
        let mut state = 1_234_567;
        let got: Vec<u64> = (0..5).map(|_| splitmix64(&mut state)).collect();
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn the_network_is_a_permutation_of_every_width() {
        for bits in 1..=12u32 {
            let f = Feistel::new(1 << bits, derive_key(7, TAG_RECORDS, 0, u64::from(bits)));
            assert_eq!(f.bits, bits);
            let mut seen = vec![false; 1 << bits];
            for x in 0..1u64 << bits {
                let y = f.network(x);
                assert!(y < 1 << bits);
                assert!(!seen[y as usize], "width {bits}: {y} twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn cycle_walking_stays_in_the_domain() {
        for n in 0..300u64 {
            let f = Feistel::new(n, derive_key(n, TAG_RECORDS, 1, 2));
            let mut image: Vec<u64> = (0..n).map(|x| f.apply(x)).collect();
            image.sort_unstable();
            assert_eq!(image, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }

    #[test]
    fn the_widest_domain_works() {
        let f = Feistel::new(u64::MAX, 3);
        assert_eq!(f.bits, 64);
        let a = f.apply(0);
        let b = f.apply(u64::MAX - 1);
        assert!(a < u64::MAX && b < u64::MAX && a != b);
        assert_eq!(f.apply(u64::MAX), u64::MAX, "outside the domain");
    }

    #[test]
    fn keys_separate_every_input() {
        let base = derive_key(1, TAG_RECORDS, 2, 3);
        assert_ne!(base, derive_key(0, TAG_RECORDS, 2, 3));
        assert_ne!(base, derive_key(1, TAG_PAGES, 2, 3));
        assert_ne!(base, derive_key(1, TAG_RECORDS, 3, 3));
        assert_ne!(base, derive_key(1, TAG_RECORDS, 2, 4));
        // Swapping epoch and index gives another key.
        assert_ne!(base, derive_key(1, TAG_RECORDS, 3, 2));
    }
}
