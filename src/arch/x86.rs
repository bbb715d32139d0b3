#![allow(unsafe_code)] // the one file of CPU intrinsics (see super)
//! x86-64 kernels: SSE4.2 `crc32` and PCLMULQDQ, BMI2 `pext`,
//! SSE2/SSSE3/SSE4.1 for varints. Each public function here is
//! called by the dispatcher only after `super::level()` found the features on
//! this CPU; each has its scalar twin in `super::scalar`.

#![allow(unused_unsafe)] // intrinsics became safe inside target_feature fns in 1.87; MSRV is older

use std::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_clmulepi64_si128, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtepu32_epi64,
    _mm_cvtepu8_epi64, _mm_cvtsi128_si64, _mm_cvtsi64_si128, _mm_load_si128, _mm_loadl_epi64,
    _mm_loadu_si128, _mm_madd_epi16, _mm_movemask_epi8, _mm_prefetch, _mm_set1_epi16,
    _mm_set1_epi32, _mm_set1_epi8, _mm_setzero_si128, _mm_shuffle_epi8, _mm_srli_epi16,
    _mm_srli_si128, _mm_storeu_si128, _mm_sub_epi16, _mm_unpackhi_epi32, _pext_u64, _popcnt64,
    _MM_HINT_T0,
};

use super::scalar::{self, K, MAX_LANE_WORDS, MIN_LANE_WORDS};

#[inline(always)]
fn load(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_le_bytes(b)
}

/// `super::crc32c` with SSE4.2 and PCLMULQDQ.
#[inline]
pub fn crc32c(crc: u32, data: &[u8]) -> u32 {
    // SAFETY: the dispatcher calls this only when `is_x86_feature_detected!`
    // found sse4.2 and pclmulqdq on the running CPU, which is all the
    // target_feature function requires; it takes a plain slice.
    unsafe { crc32c_sse42(crc, data) }
}

/// `super::crc32c_u64` with SSE4.2: one instruction.
#[inline]
pub fn crc32c_u64(word: u64) -> u32 {
    // SAFETY: as for `crc32c`: called only when sse4.2 was detected.
    unsafe { crc32c_u64_sse42(word) }
}

#[target_feature(enable = "sse4.2")]
unsafe fn crc32c_u64_sse42(word: u64) -> u32 {
    // SAFETY: sse4.2 is enabled for this function (the caller checked it).
    !(unsafe { _mm_crc32_u64(u64::from(!0u32), word) } as u32)
}

/// The state `s` moved past `8·m` bytes (see [`K`]).
#[target_feature(enable = "sse4.2,pclmulqdq")]
unsafe fn shift_product(s: u64, m: usize) -> u64 {
    // SAFETY: pclmulqdq and sse2 are enabled for this function (the caller
    // checked them); the intrinsics work on values only.
    unsafe {
        let p = _mm_clmulepi64_si128(
            _mm_cvtsi64_si128(s as i64),
            _mm_cvtsi64_si128(i64::from(K[m])),
            0x00,
        );
        _mm_cvtsi128_si64(p) as u64
    }
}

#[target_feature(enable = "sse4.2,pclmulqdq")]
unsafe fn crc32c_sse42(crc: u32, data: &[u8]) -> u32 {
    let mut state = u64::from(!crc);
    let mut rest = data;
    // Three streams over three equal lanes (a whole number of words each),
    // joined: state(A ++ B ++ C) = sa·x^(16L) ^ sb·x^(8L) ^ sc, sb and sc
    // from 0. Lanes span the whole input, up to 16 KiB each, so only the last
    // few words run in one stream.
    while rest.len() >= 24 * MIN_LANE_WORDS {
        let m = (rest.len() / 24).min(MAX_LANE_WORDS);
        let l = 8 * m;
        let (a, tail) = rest.split_at(l);
        let (b, tail) = tail.split_at(l);
        let (c, tail) = tail.split_at(l);
        let (mut sa, mut sb, mut sc) = (state, 0u64, 0u64);
        for ((wa, wb), wc) in a
            .chunks_exact(8)
            .zip(b.chunks_exact(8))
            .zip(c.chunks_exact(8))
        {
            // SAFETY: sse4.2 is enabled for this function; values only.
            unsafe {
                sa = _mm_crc32_u64(sa, load(wa));
                sb = _mm_crc32_u64(sb, load(wb));
                sc = _mm_crc32_u64(sc, load(wc));
            }
        }
        // SAFETY: the features of this function are those `shift_product`
        // and the intrinsic need.
        state = unsafe {
            let folded = shift_product(sa, 2 * m) ^ shift_product(sb, m);
            _mm_crc32_u64(0, folded) ^ sc
        };
        rest = tail;
    }
    let mut words = rest.chunks_exact(8);
    for w in words.by_ref() {
        // SAFETY: sse4.2 is enabled for this function; values only.
        state = unsafe { _mm_crc32_u64(state, load(w)) };
    }
    let mut s = state as u32;
    for &b in words.remainder() {
        // SAFETY: as above.
        s = unsafe { _mm_crc32_u8(s, b) };
    }
    !s
}

/// `super::varint_words` with BMI2: each varint's value is one `pext` of
/// its bytes' payload bits out of the word.
#[inline]
pub fn varint_words<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    // SAFETY: the dispatcher calls this only when `is_x86_feature_detected!`
    // found bmi1 and bmi2 on the running CPU, which is all the
    // target_feature function requires; it takes a plain slice.
    unsafe { varint_words_bmi2(bytes, each) }
}

#[target_feature(enable = "bmi1,bmi2")]
unsafe fn varint_words_bmi2<F: FnMut(u64)>(bytes: &[u8], each: &mut F) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    while let Some(w) = scalar::word_at(bytes, i) {
        let mut ends = !w & scalar::HIGH_BITS;
        if ends == 0 {
            break;
        }
        if ends == scalar::HIGH_BITS {
            for k in 0..8 {
                each((w >> (8 * k)) & 0x7f);
            }
            i += 8;
            n += 8;
            continue;
        }
        // The payload bits not yet consumed by earlier varints of the word.
        let mut rest = scalar::PAYLOAD_BITS;
        let mut used = 0;
        while ends != 0 {
            // Every bit up to and including this varint's terminator.
            let upto = ends ^ (ends - 1);
            // SAFETY: bmi2 is enabled for this function; values only.
            each(unsafe { _pext_u64(w, rest & upto) });
            n += 1;
            rest &= !upto;
            used = upto;
            ends &= ends - 1;
        }
        i += ((64 - used.leading_zeros()) / 8) as usize;
    }
    (i, n)
}

/// `super::varints_into` with SSSE3, SSE4.1, BMI2 and LZCNT.
#[inline]
pub fn varints_into(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    // SAFETY: called only when sse4.2 (with the ssse3 and sse4.1 before it,
    // each detected too), bmi1, bmi2 and lzcnt were detected: all the
    // target_feature function needs; plain slices.
    unsafe { varints_into_sse41_bmi2(bytes, out) }
}

/// One entry of [`SHORT_STEPS`]: the `pshufb` control that moves the
/// varints of one word into 32-bit lanes (16-byte aligned, so that it loads
/// with `movdqa`).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct Shuffle(pub(super) [u8; 16]);

/// What one step of the word walk does, for every continuation mask of its
/// word (bit `k` set: byte `k` continues its varint), when the varints that
/// end in the word are 2 to 4 and each is 1 to 4 bytes long.
pub(super) struct ShortSteps {
    /// The shuffle that puts the word's varints 0, 1, `c − 2` and `c − 1`
    /// (`c` of them) into the four 32-bit lanes, each varint's bytes low
    /// first and zeros above: the values go into the slots with two stores
    /// of two, at 0 and `c − 2`, which overlap when `c < 4` and never pass
    /// the last value.
    pub(super) shuffle: [Shuffle; 256],
    /// 0 where the step is not for this path; otherwise bit 7 set and bits
    /// 0–1 `c − 2` (masked, so the compiler sees the slots it indexes stay
    /// inside a 16-long block). The bytes a step uses come from the mask
    /// itself (its last terminator), not from here: bit operations on the
    /// mask are a shorter chain from one block's load to the next than a
    /// second table load.
    pub(super) meta: [u8; 256],
}

/// [`ShortSteps`], built at compile time.
pub(super) const fn short_steps() -> ShortSteps {
    let mut t = ShortSteps {
        shuffle: [Shuffle([0x80; 16]); 256],
        meta: [0; 256],
    };
    let mut m = 0;
    while m < 256 {
        // The varints ending in the word: bytes [start[v], end[v]).
        let (mut start, mut end) = ([0usize; 8], [0usize; 8]);
        let (mut count, mut from, mut longest) = (0, 0, 0);
        let mut k = 0;
        while k < 8 {
            if (m >> k) & 1 == 0 {
                start[count] = from;
                end[count] = k + 1;
                if k + 1 - from > longest {
                    longest = k + 1 - from;
                }
                count += 1;
                from = k + 1;
            }
            k += 1;
        }
        if count >= 2 && count <= 4 && longest <= 4 {
            let lanes = [0, 1, count - 2, count - 1];
            let mut lane = 0;
            while lane < 4 {
                let v = lanes[lane];
                let mut b = 0;
                while start[v] + b < end[v] {
                    t.shuffle[m].0[4 * lane + b] = (start[v] + b) as u8;
                    b += 1;
                }
                lane += 1;
            }
            t.meta[m] = (0x80 | (count - 2)) as u8;
        }
        m += 1;
    }
    t
}

/// The table of the short-varint steps (4 KiB of shuffles, 256 bytes of
/// counts).
pub(super) static SHORT_STEPS: ShortSteps = short_steps();

/// The varints of one step ([`SHORT_STEPS`]): the word (in the low 8 bytes
/// of `word`) shuffled into 32-bit lanes, the continuation bits dropped and
/// the 7-bit groups joined: in each 16-bit half `lo + 128·hi` (the high
/// byte masked, halved and taken off), then the halves as `lo + 16384·hi`
/// with one `pmaddwd`.
#[target_feature(enable = "ssse3,sse4.1")]
#[inline]
unsafe fn short_values(word: __m128i, shuffle: &Shuffle) -> __m128i {
    // SAFETY: `shuffle` is 16 bytes aligned to 16 (its type); ssse3 and sse2
    // are enabled for this function; the rest works on values only.
    unsafe {
        let x = _mm_shuffle_epi8(word, _mm_load_si128(shuffle.0.as_ptr().cast::<__m128i>()));
        let groups = _mm_and_si128(x, _mm_set1_epi8(0x7f));
        let high = _mm_and_si128(x, _mm_set1_epi16(0x7f00));
        let halves = _mm_sub_epi16(groups, _mm_srli_epi16::<1>(high));
        _mm_madd_epi16(halves, _mm_set1_epi32(0x4000_0001))
    }
}

/// Stores the two u64s of `v` at `slots[at..at + 2]` (nothing when they
/// would not fit: the callers' indices always do).
#[inline(always)]
fn store_pair<const N: usize>(slots: &mut [u64; N], at: usize, v: __m128i) {
    if let Some(pair) = slots.get_mut(at..at + 2) {
        // SAFETY: `pair` is two u64s (16 bytes) of a live slice, written
        // unaligned; sse2 is x86-64 baseline.
        unsafe { _mm_storeu_si128(pair.as_mut_ptr().cast::<__m128i>(), v) };
    }
}

/// One step of the word walk through [`SHORT_STEPS`] (its `meta` entry
/// `e`, non-zero): the values into `slots[at..at + c]`; returns `c`.
#[target_feature(enable = "ssse3,sse4.1")]
#[inline]
unsafe fn short_step<const N: usize>(
    word: __m128i,
    m: usize,
    e: u8,
    slots: &mut [u64; N],
    at: usize,
) -> usize {
    let last = usize::from(e & 3);
    // SAFETY: the features of this function are those `short_values` needs.
    let values = unsafe { short_values(word, &SHORT_STEPS.shuffle[m & 0xff]) };
    // SAFETY: sse4.1 (and sse2) are enabled for this function; values only.
    let (lo, hi) = unsafe {
        (
            _mm_cvtepu32_epi64(values),
            _mm_unpackhi_epi32(values, _mm_setzero_si128()),
        )
    };
    store_pair(slots, at, lo);
    store_pair(slots, at + last, hi);
    last + 2
}

/// Steps of the word walk through [`SHORT_STEPS`] over a window of 64
/// bytes (their continuation bits in `mask`), the values into `slots`,
/// while the step's word lies inside the window and its entry is for the
/// table; returns (bytes used, values). A step writes no more values than
/// it uses bytes, so the values start at most 56 slots in (the 8 extra
/// slots let the compiler see that with `k & 63`).
#[target_feature(enable = "ssse3,sse4.1,lzcnt")]
#[inline]
unsafe fn short_window(b: &[u8; 64], mask: u64, slots: &mut [u64; 72]) -> (usize, usize) {
    let ends = !mask;
    let (mut p, mut k) = (0, 0);
    while p <= 64 - 8 {
        let m = ((mask >> p) & 0xff) as usize;
        let e = SHORT_STEPS.meta[m];
        if e == 0 {
            break;
        }
        let w = &b[p..p + 8];
        // SAFETY: `w` is 8 bytes of a live slice, read unaligned; the
        // features of this function are those `short_step` needs.
        k += unsafe {
            let word = _mm_loadl_epi64(w.as_ptr().cast::<__m128i>());
            short_step(word, m, e, slots, k & 63)
        };
        // Just past the last terminator of the step's word: the next start
        // comes from the mask alone, a short chain from step to step
        // (`lzcnt` is one cycle where `bsr` is several, on AMD's cores).
        p = 64 - (ends & (0xff << p)).leading_zeros() as usize;
    }
    (p, k)
}

#[target_feature(enable = "ssse3,sse4.1,bmi1,bmi2,lzcnt")]
unsafe fn varints_into_sse41_bmi2(bytes: &[u8], out: &mut [u64]) -> (usize, usize) {
    let mut i = 0;
    let mut n = 0;
    loop {
        // Blocks of 16 bytes while 16 slots are free: sixteen one-byte
        // varints, or steps of the word walk through the shuffle table,
        // over the next 64 bytes where 64 bytes and 72 slots are left, else
        // two steps inside the block. A step here is the twin's step (every
        // varint ending in the 8 bytes from `i`, then `i` moves past the
        // last of them), so the walk stops where the twin's does: a step
        // starts at least 8 bytes before the end of the bytes loaded, so its
        // word is among them, and with at least 8 bytes and 8 slots left
        // (a step writes no more values than it uses bytes).
        if let (Some(b), true) = (
            bytes.get(i..).and_then(|b| b.first_chunk::<16>()),
            out.len() - n >= 16,
        ) {
            // SAFETY: `b` is 16 bytes of a live slice, read unaligned;
            // sse4.1 (and so sse2) is enabled for this function.
            let v = unsafe { _mm_loadu_si128(b.as_ptr().cast::<__m128i>()) };
            // SAFETY: as above; values only.
            let m = unsafe { _mm_movemask_epi8(v) } as u32 as usize;
            if m == 0 {
                // Sixteen one-byte varints (no high bit set), widened two at a time.
                // SAFETY: as above; values only.
                let pairs = unsafe {
                    [
                        _mm_cvtepu8_epi64(v),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<2>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<4>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<6>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<8>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<10>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<12>(v)),
                        _mm_cvtepu8_epi64(_mm_srli_si128::<14>(v)),
                    ]
                };
                if let Some(slots) = out.get_mut(n..).and_then(|s| s.first_chunk_mut::<16>()) {
                    for (k, pair) in pairs.into_iter().enumerate() {
                        store_pair(slots, 2 * k, pair);
                    }
                }
                i += 16;
                n += 16;
                continue;
            }
            // The step at the block's start: the word of bytes 0..8 and its
            // continuation bits.
            let e1 = SHORT_STEPS.meta[m & 0xff];
            if e1 == 0 {
                // Not for the table: the word goes through `pext` below.
            } else if let (Some(b), Some(slots)) = (
                bytes.get(i..).and_then(|b| b.first_chunk::<64>()),
                out.get_mut(n..).and_then(|s| s.first_chunk_mut::<72>()),
            ) {
                // 64 bytes and 72 free slots: steps over all of them.
                let mut mask = m as u64;
                for (k, lane) in b.chunks_exact(16).enumerate().skip(1) {
                    // SAFETY: `lane` is 16 bytes of a live slice, read
                    // unaligned; sse2 is enabled for this function.
                    let c = unsafe {
                        _mm_movemask_epi8(_mm_loadu_si128(lane.as_ptr().cast::<__m128i>()))
                    };
                    mask |= u64::from(c as u16) << (16 * k);
                }
                // SAFETY: the features of this function are those
                // `short_window` needs.
                let (used, values) = unsafe { short_window(b, mask, slots) };
                i += used;
                n += values;
                continue;
            } else if let Some(slots) = out.get_mut(n..).and_then(|s| s.first_chunk_mut::<16>()) {
                // SAFETY: the features of this function are those
                // `short_step` needs; `v`'s low 8 bytes are the word.
                let c1 = unsafe { short_step(v, m, e1, slots, 0) };
                // The block's terminators (bit k: byte k ends a varint).
                let ends = !m & 0xffff;
                // The first step uses the bytes up to and with the last
                // terminator of its word (1 to 8: the entry says there is
                // one).
                let used1 = 8 - (ends as u8).leading_zeros() as usize;
                // The next step's word, bytes used1..used1 + 8 (inside the
                // block), and its continuation bits.
                let m2 = (m >> used1) & 0xff;
                let e2 = SHORT_STEPS.meta[m2];
                if e2 != 0 {
                    let w2 = &b[used1..used1 + 8];
                    // SAFETY: `w2` is 8 bytes of a live slice, read
                    // unaligned; sse2 is enabled for this function.
                    let v2 = unsafe { _mm_loadl_epi64(w2.as_ptr().cast::<__m128i>()) };
                    // SAFETY: as for the first step.
                    let c2 = unsafe { short_step(v2, m2, e2, slots, c1) };
                    // Up to and with the second word's last terminator.
                    let upto = ends & (0xff << used1);
                    i += 16 - (upto as u16).leading_zeros() as usize;
                    n += c1 + c2;
                } else {
                    i += used1;
                    n += c1;
                }
                continue;
            }
        }
        let (Some(w), Some(slots)) = (scalar::word_at(bytes, i), out.get_mut(n..n + 8)) else {
            break;
        };
        let mut ends = !w & scalar::HIGH_BITS;
        if ends == 0 {
            break;
        }
        // The word loop of `varint_words_bmi2`, kept apart rather than
        // shared through a closure: with one, the slot writes cost 6% more
        // instructions on the BERT-like loop (measured).
        // The payload bits not yet consumed by earlier varints of the word.
        let mut rest = scalar::PAYLOAD_BITS;
        let mut used = 0;
        for slot in slots.iter_mut() {
            if ends == 0 {
                break;
            }
            // Every bit up to and including this varint's terminator.
            let upto = ends ^ (ends - 1);
            // SAFETY: bmi2 is enabled for this function; values only.
            *slot = unsafe { _pext_u64(w, rest & upto) };
            n += 1;
            rest &= !upto;
            used = upto;
            ends &= ends - 1;
        }
        i += ((64 - used.leading_zeros()) / 8) as usize;
    }
    (i, n)
}

/// `super::varint_ends` with SSE2 and POPCNT, 64 bytes a round.
#[inline]
pub fn varint_ends(bytes: &[u8], run: usize) -> super::VarintEnds {
    // SAFETY: the dispatcher calls this only when `is_x86_feature_detected!`
    // found sse4.2, pclmulqdq and popcnt (SSE2 is x86-64 baseline), which is
    // all the target_feature function requires; it takes a plain slice.
    unsafe { varint_ends_sse2(bytes, run) }
}

#[target_feature(enable = "sse2,popcnt")]
unsafe fn varint_ends_sse2(bytes: &[u8], mut run: usize) -> super::VarintEnds {
    let mut ends = 0;
    let mut too_long = false;
    let blocks = bytes.chunks_exact(64);
    let used = bytes.len() - blocks.remainder().len();
    for block in blocks {
        let mut cont = 0u64;
        for (k, lane) in block.chunks_exact(16).enumerate() {
            // SAFETY: `lane` is 16 bytes of a live slice, read unaligned;
            // sse2 is enabled for this function (x86-64 baseline).
            let m = unsafe { _mm_movemask_epi8(_mm_loadu_si128(lane.as_ptr().cast::<__m128i>())) };
            cont |= u64::from(m as u16) << (16 * k);
        }
        // Bit i of `cont`: byte i continues its varint.
        // SAFETY: popcnt is enabled for this function; values only.
        ends += 64 - unsafe { _popcnt64(cont as i64) } as usize;
        // A run carried in, with the block's first continuation bytes.
        too_long |= run + cont.trailing_ones() as usize >= 10;
        // Runs of 10 inside the block: bit i of `r10` is set when bits
        // i..i+10 of `cont` all are.
        let r2 = cont & (cont >> 1);
        let r4 = r2 & (r2 >> 2);
        let r8 = r4 & (r4 >> 4);
        too_long |= r8 & (r2 >> 8) != 0;
        run = if cont == u64::MAX {
            (run + 64).min(10)
        } else {
            cont.leading_ones() as usize
        };
    }
    super::VarintEnds {
        used,
        ends,
        run: run.min(10),
        too_long,
    }
}

/// `super::prefetch` with SSE's `prefetcht0`, one per 64-byte line.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    for line in bytes.chunks(64) {
        // SAFETY: SSE (`prefetcht0`) is x86-64 baseline; a prefetch never
        // faults, and the address is a byte of a live slice.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
}
