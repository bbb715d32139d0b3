//! The portable scalar twins of the kernels: the reference they are tested
//! against, and what runs without the CPU features (or with
//! `RECORDWIRE_NO_SIMD=1`, or under miri).

/// The reflected CRC32C polynomial.
pub const POLY: u32 = 0x82f6_3b78;

/// Tables for slicing by 8: table `k` advances a byte through `k` further
/// zero bytes. Built at compile time.
pub(crate) const SLICE8: [[u32; 256]; 8] = {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};

/// Advances the raw CRC state (not inverted) over 8 bytes.
#[inline(always)]
fn word(state: u32, bytes: [u8; 8]) -> u32 {
    let lo = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) ^ state;
    SLICE8[7][(lo & 0xff) as usize]
        ^ SLICE8[6][((lo >> 8) & 0xff) as usize]
        ^ SLICE8[5][((lo >> 16) & 0xff) as usize]
        ^ SLICE8[4][(lo >> 24) as usize]
        ^ SLICE8[3][bytes[4] as usize]
        ^ SLICE8[2][bytes[5] as usize]
        ^ SLICE8[1][bytes[6] as usize]
        ^ SLICE8[0][bytes[7] as usize]
}

/// [`crc32c`](super::crc32c) by slicing by 8.
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    let mut state = !crc;
    let mut words = data.chunks_exact(8);
    for w in words.by_ref() {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        state = word(state, b);
    }
    for &b in words.remainder() {
        state = (state >> 8) ^ SLICE8[0][((state ^ b as u32) & 0xff) as usize];
    }
    !state
}

/// [`crc32c_u64`](super::crc32c_u64): eight lookups, no loop.
#[inline(always)]
pub fn crc32c_u64(w: u64) -> u32 {
    !word(!0, w.to_le_bytes())
}

/// `a · b mod P` over GF(2), in the reflected representation (bit 31 is
/// x^0): the reference for the carry-less multiply the x86 and ARM kernels
/// combine their streams with.
pub const fn mul_mod(a: u32, b: u32) -> u32 {
    let mut product = 0u32;
    let mut a = a;
    let mut i = 0;
    while i < 32 {
        // Bit (31 - i) of b is the coefficient of x^i.
        if (b >> (31 - i)) & 1 != 0 {
            product ^= a;
        }
        // a · x
        a = if a & 1 != 0 { (a >> 1) ^ POLY } else { a >> 1 };
        i += 1;
    }
    product
}

/// `x^n mod P`, reflected.
pub const fn x_pow(n: u64) -> u32 {
    // Square and multiply, from x^0 (bit 31).
    let mut result = 0x8000_0000u32;
    let mut base = 0x4000_0000u32; // x^1
    let mut n = n;
    while n > 0 {
        if n & 1 != 0 {
            result = mul_mod(result, base);
        }
        base = mul_mod(base, base);
        n >>= 1;
    }
    result
}

/// Words (8 bytes) per stream, at most, in one round of the three streams
/// of the hardware CRC kernels (x86 and ARM): 16 KiB lanes. With 4 KiB
/// lanes the x86 kernel ran 15-25% behind the `crc32c` crate on records of
/// 100-200 KB; with 16 KiB it runs 10-30% ahead of it (`crc_bench`,
/// BENCHMARKS.md, issue 29). Records under 12 KiB never fill a lane.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const MAX_LANE_WORDS: usize = 2048;
/// Below three streams of this many words, one stream is faster than
/// joining three.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const MIN_LANE_WORDS: usize = 4;

/// `K[m] = x^(64·m − 33) mod P` (reflected), for `m` in `1..=2·MAX_LANE_WORDS`:
/// multiplying a CRC state by it with a carry-less multiply (x86 PCLMULQDQ,
/// ARM PMULL), then reducing with one CRC32C instruction of the 64-bit
/// product (x86 `crc32`, ARM `crc32cx`), moves the state past `8·m` bytes
/// (the product carries one extra `x`, the reduction `x^32`). How the
/// kernels join their three streams; built at compile time.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) static K: [u32; 2 * MAX_LANE_WORDS + 1] = {
    let mut k = [0u32; 2 * MAX_LANE_WORDS + 1];
    k[1] = x_pow(64 - 33);
    let x64 = x_pow(64);
    let mut m = 2;
    while m <= 2 * MAX_LANE_WORDS {
        k[m] = mul_mod(k[m - 1], x64);
        m += 1;
    }
    k
};

/// The CRC state `crc` (raw, not inverted) moved past `len` zero bytes:
/// `crc · x^(8·len) mod P`. How the streams of the x86 and ARM kernels are
/// joined (with the constants of `K`), and its scalar twin.
#[cfg(test)]
pub const fn shift(crc: u32, len: u64) -> u32 {
    mul_mod(crc, x_pow(8 * len))
}

/// The continuation (high) bit of each byte of a little-endian word.
pub const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// The payload (low 7) bits of each byte of a little-endian word.
pub const PAYLOAD_BITS: u64 = !HIGH_BITS;

/// Packs the low 7 bits of each byte of `x` together (byte 0 lowest): three
/// shift-and-mask steps (7-bit pairs into 14-bit lanes, those into 28-bit
/// lanes, those into 56 bits). The high bits of `x`'s bytes must be clear.
/// The scalar twin of BMI2's `pext(x, 0x7f7f…)`.
#[inline(always)]
pub fn compact(mut x: u64) -> u64 {
    x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
}

/// The little-endian word of the 8 bytes at `i`, if there are 8.
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], i: usize) -> Option<u64> {
    bytes
        .get(i..)
        .and_then(|b| b.first_chunk::<8>())
        .map(|w| u64::from_le_bytes(*w))
}

/// [`varint_words`](super::varint_words) with [`compact`].
#[inline]
pub fn varint_words<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    while let Some(w) = word_at(bytes, i) {
        let ends = !w & HIGH_BITS;
        if ends == 0 {
            break;
        }
        if ends == HIGH_BITS {
            for k in 0..8 {
                each((w >> (8 * k)) & 0x7f);
            }
            i += 8;
            n += 8;
            continue;
        }
        i += varints_in_word(w, ends, &mut n, each);
    }
    (i, n)
}

/// [`varints_into`](super::varints_into): [`varint_words`] a word at a time
/// while 8 slots are free.
#[inline]
pub fn varints_into(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    while let (Some(w), Some(slots)) = (word_at(bytes, i), out.get_mut(n..n + 8)) {
        let ends = !w & HIGH_BITS;
        if ends == 0 {
            break;
        }
        let mut free = slots.iter_mut();
        i += varints_in_word(w, ends, &mut n, &mut |v| {
            if let Some(slot) = free.next() {
                *slot = v;
            }
        });
    }
    (i, n)
}

/// Emits every varint of the word `w` that ends at a terminator in `ends`
/// (a mask of high bits: the word's clear continuation bits, of its valid
/// bytes), counting them in `n`; returns how many bytes they took: the word
/// up to its last terminator.
#[inline(always)]
pub(crate) fn varints_in_word<F: FnMut(u64)>(
    w: u64,
    mut ends: u64,
    n: &mut usize,
    each: &mut F,
) -> usize {
    let payload = w & PAYLOAD_BITS;
    let mut start = 0u32;
    while ends != 0 {
        // Bits [start, end) hold this varint's bytes.
        let end = ends.trailing_zeros() + 1;
        let width = end - start;
        each(compact((payload >> start) & (u64::MAX >> (64 - width))));
        *n += 1;
        start = end;
        ends &= ends - 1;
    }
    (start / 8) as usize
}

/// One word (8 bytes, little-endian) of a packed run for
/// [`varint_ends`](super::varint_ends): the number of varints ending in it;
/// `run` (continuation bytes just before the word, capped at 10) becomes
/// the run at its end, and `too_long` is set when a run reaches 10 bytes.
/// Branch-free: `head` is the continuation bytes before the word's first
/// terminator (8 when it has none, as `trailing_zeros` of 0 is 64), which
/// join the run carried in; `tail` those after its last. A run inside the
/// word is at most 7 long, so only runs touching its ends can reach 10.
#[inline(always)]
pub(crate) fn varint_ends_word(w: u64, run: &mut usize, too_long: &mut bool) -> usize {
    let ends = !w & HIGH_BITS;
    let head = (ends.trailing_zeros() >> 3) as usize;
    let tail = (ends.leading_zeros() >> 3) as usize;
    *too_long |= *run + head >= 10;
    *run = if ends == 0 { (*run + 8).min(10) } else { tail };
    // The bits of `ends` counted by one multiply: the bytes of `ends >> 7`
    // are 0 or 1 and the multiply sums them into the top byte
    // (`count_ones` is a long sequence on x86-64 targets without POPCNT).
    ((ends >> 7).wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize
}

/// [`varint_ends`](super::varint_ends) a word at a time
/// (`varint_ends_word`).
#[inline]
pub fn varint_ends(bytes: &[u8], mut run: usize) -> super::VarintEnds {
    let mut ends = 0;
    let mut too_long = false;
    let blocks = bytes.chunks_exact(64);
    let used = bytes.len() - blocks.remainder().len();
    for block in blocks {
        for w in block.chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            ends += varint_ends_word(u64::from_le_bytes(b), &mut run, &mut too_long);
        }
    }
    super::VarintEnds {
        used,
        ends,
        run: run.min(10),
        too_long,
    }
}

/// [`prefetch`](super::prefetch) without a prefetch instruction: one load
/// per 64-byte line. The loads do not depend on each other, so the lines
/// still come from memory together, but each must arrive before the load
/// retires.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    let mut x = 0u8;
    for line in bytes.chunks(64) {
        x ^= line[0];
    }
    std::hint::black_box(x);
}
