//! The frozen randomness of the orders: SplitMix64, key derivation and the
//! keyed bijections (a shuffled table, or a Feistel network with cycle
//! walking). The module docs of [`crate::order`] describe them in words;
//! this is the one implementation (the `bench` command draws its random
//! samples from [`splitmix64`] too).

/// SplitMix64's increment, the 64-bit golden ratio.
pub(crate) const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

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

/// Domains of at most this many elements are shuffled with a table.
pub(crate) const TABLE_MAX: u64 = 64;

/// Rounds of the Feistel network (used on domains of more than
/// [`TABLE_MAX`] elements, so halves of at least 3 bits).
pub(crate) const ROUNDS: usize = 8;
const _: () = assert!(ROUNDS.is_multiple_of(2), "rounds go in pairs");

/// A keyed bijection of `[0, n)`.
///
/// - `n <= 64`: a table, the Fisher–Yates shuffle of `0..n` driven by
///   SplitMix64 seeded with the key: for `i` from `n - 1` down to 1, swap
///   entries `i` and `(next() · (i + 1)) >> 64` (Lemire's multiply-shift,
///   within 2^-58 of uniform).
/// - `n > 64`: an alternating (unbalanced when the width is odd) Feistel
///   network over the `k`-bit integers, `2^(k-1) < n <= 2^k`, then a keyed
///   transposition of 0 and 1, restricted to `[0, n)` by cycle walking.
///
/// Narrow Feistel halves mix slowly (with 8 rounds, the position of an
/// element in a 17-element shuffle is visibly biased over a million keys;
/// from 33 on it is not), hence the table for small domains. Every Feistel
/// network on 3-bit or wider halves is an even permutation; the final
/// transposition, applied for half of the keys, keeps the cycle-walked
/// permutation from favouring one parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bijection {
    /// `n <= 64`: `table[x]` is the image of `x`.
    Table {
        n: u8,
        table: [u8; TABLE_MAX as usize],
    },
    /// `n > 64`.
    Feistel {
        n: u64,
        bits: u32,
        keys: [u64; ROUNDS],
        swap: bool,
    },
}

impl Bijection {
    /// The bijection of `[0, n)` for `key` (see [`derive_key`]).
    pub(crate) fn new(n: u64, key: u64) -> Bijection {
        let mut state = key;
        if n <= TABLE_MAX {
            let mut table = [0u8; TABLE_MAX as usize];
            for (i, t) in table.iter_mut().enumerate() {
                *t = i as u8;
            }
            for i in (1..n as usize).rev() {
                let r = splitmix64(&mut state);
                let j = ((u128::from(r) * (i as u128 + 1)) >> 64) as usize;
                table.swap(i, j);
            }
            return Bijection::Table { n: n as u8, table };
        }
        let bits = u64::BITS - (n - 1).leading_zeros();
        let mut keys = [0; ROUNDS];
        for k in &mut keys {
            *k = splitmix64(&mut state);
        }
        let swap = splitmix64(&mut state) & 1 == 1;
        Bijection::Feistel {
            n,
            bits,
            keys,
            swap,
        }
    }

    /// The size of the domain.
    #[inline]
    pub(crate) fn len(&self) -> u64 {
        match *self {
            Bijection::Table { n, .. } => u64::from(n),
            Bijection::Feistel { n, .. } => n,
        }
    }

    /// The image of `x` (`x < len()`; other values are returned unchanged).
    #[inline]
    pub(crate) fn apply(&self, x: u64) -> u64 {
        match self {
            Bijection::Table { n, table } => {
                if x < u64::from(*n) {
                    u64::from(table[x as usize])
                } else {
                    x
                }
            }
            Bijection::Feistel {
                n,
                bits,
                keys,
                swap,
            } => {
                if x >= *n {
                    return x;
                }
                let mut y = pass(x, *bits, keys, *swap);
                while y >= *n {
                    y = pass(y, *bits, keys, *swap);
                }
                y
            }
        }
    }
}

/// One pass of the Feistel network over `[0, 2^k)`, then the transposition.
#[inline]
fn pass(mut x: u64, k: u32, keys: &[u64; ROUNDS], swap: bool) -> u64 {
    // Even rounds split x into a left half of `a` bits and a right half of
    // `b = floor(k/2)` bits, odd rounds into `b` and `a` bits.
    let (a, b) = (k - k / 2, k / 2);
    let (mask_a, mask_b) = (mask(a), mask(b));
    for pair in keys.chunks_exact(2) {
        let r = x & mask_b;
        x = (r << a) | ((x >> b) ^ (mix64(r ^ pair[0]) & mask_a));
        let r = x & mask_a;
        x = (r << b) | ((x >> a) ^ (mix64(r ^ pair[1]) & mask_b));
    }
    if swap && x < 2 {
        x ^= 1;
    }
    x
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
    fn tables_are_permutations() {
        for n in 0..=TABLE_MAX {
            let f = Bijection::new(n, derive_key(n, TAG_RECORDS, 0, 0));
            assert!(matches!(f, Bijection::Table { .. }));
            assert_eq!(f.len(), n);
            let mut image: Vec<u64> = (0..n).map(|x| f.apply(x)).collect();
            image.sort_unstable();
            assert_eq!(image, (0..n).collect::<Vec<_>>(), "n = {n}");
            assert_eq!(f.apply(n), n, "outside the domain");
        }
    }

    #[test]
    fn a_pass_permutes_every_width() {
        for bits in 1..=12u32 {
            for swap in [false, true] {
                let keys =
                    [bits.into(), 1, 2, 3, 4, 5, 6, 7].map(|k| derive_key(k, TAG_PAGES, 0, 0));
                let mut seen = vec![false; 1 << bits];
                for x in 0..1u64 << bits {
                    let y = pass(x, bits, &keys, swap);
                    assert!(y < 1 << bits);
                    assert!(!seen[y as usize], "width {bits}: {y} twice");
                    seen[y as usize] = true;
                }
            }
        }
    }

    #[test]
    fn cycle_walking_stays_in_the_domain() {
        for n in TABLE_MAX + 1..600 {
            let f = Bijection::new(n, derive_key(n, TAG_RECORDS, 1, 2));
            let Bijection::Feistel { bits, .. } = f else {
                panic!("n = {n} should use the network")
            };
            assert!(1 << (bits - 1) < n && n <= 1 << bits);
            let mut image: Vec<u64> = (0..n).map(|x| f.apply(x)).collect();
            image.sort_unstable();
            assert_eq!(image, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }

    #[test]
    fn the_widest_domain_works() {
        let f = Bijection::new(u64::MAX, 3);
        assert!(matches!(f, Bijection::Feistel { bits: 64, .. }));
        let a = f.apply(0);
        let b = f.apply(u64::MAX - 1);
        assert!(a < u64::MAX && b < u64::MAX && a != b);
        assert_eq!(f.apply(u64::MAX), u64::MAX, "outside the domain");
    }

    /// Whether `perm` is an even permutation (counting its cycles).
    fn is_even(perm: &[u64]) -> bool {
        let mut seen = vec![false; perm.len()];
        let mut cycles = 0;
        for start in 0..perm.len() {
            if !seen[start] {
                cycles += 1;
                let mut x = start;
                while !seen[x] {
                    seen[x] = true;
                    x = perm[x] as usize;
                }
            }
        }
        (perm.len() - cycles).is_multiple_of(2)
    }

    #[test]
    fn both_parities_are_equally_likely() {
        // Without the final transposition, the cycle-walked permutations of
        // [0, 65) would be even only about 37% of the time: of the
        // permutations of [0, 128) that walk to a given one, a share of
        // (1 - 65·64 / (128·127)) / 2 is even when it is even.
        // 2000 keys: a fair coin lands outside 45%..55% with probability
        // below 1e-5.
        for n in [65u64, 100, 128, 129] {
            let even = (0..2000u64)
                .filter(|&seed| {
                    let f = Bijection::new(n, derive_key(seed, TAG_RECORDS, 0, 0));
                    is_even(&(0..n).map(|x| f.apply(x)).collect::<Vec<_>>())
                })
                .count();
            assert!((900..=1100).contains(&even), "n = {n}: {even} of 2000 even");
        }
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
