//! The hash of a map key (a feature's name), one for the whole crate: the
//! duplicate search of the views (`dedup`) and the batch decoder's name
//! table (`batch::spec::NameTable`) both probe their tables with it.

/// The hash of a map key: the name a word at a time, multiplied and rotated
/// (as rustc's FxHasher does), then folded so that the high bits of the
/// product decide the low bits of the result, which pick the slot.
#[inline]
pub(crate) fn hash_name(name: &[u8]) -> u32 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mix = |h: u64, w: u64| (h.rotate_left(26) ^ w).wrapping_mul(K);
    let n = name.len();
    let mut h = n as u64;
    // Every byte is in some word (the last words overlap the ones before
    // them), and the length is in the seed: equal hashes for different
    // names are collisions of the mixing, not of the loading.
    match n {
        0 => {}
        1..=3 => {
            let w = u64::from(name[0]) | u64::from(name[n / 2]) << 8 | u64::from(name[n - 1]) << 16;
            h = mix(h, w);
        }
        4..=8 => {
            h = mix(
                h,
                u64::from(word32(name, 0)) | u64::from(word32(name, n - 4)) << 32,
            )
        }
        _ => {
            let mut at = 0;
            while at + 8 < n {
                h = mix(h, word64(name, at));
                at += 8;
            }
            h = mix(h, word64(name, n - 8));
        }
    }
    ((h ^ (h >> 32)).wrapping_mul(K) >> 32) as u32
}

/// The 4 bytes of `b` from `at` (which has them), little-endian.
#[inline(always)]
fn word32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

/// The 8 bytes of `b` from `at` (which has them), little-endian.
#[inline(always)]
fn word64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}
