//! Canonical Huffman decoding tables (RFC 1951 §3.2.2), built from code
//! lengths into flat `u32` entries read with the low bits of the bit buffer.
//!
//! A table has a primary part of `2^bits` entries indexed by the next `bits`
//! input bits (LSB-first, so codes are stored bit-reversed); a code longer
//! than `bits` goes through a sub-table that the primary entry points to,
//! indexed by the bits after the first `bits`. Codes sharing a prefix are
//! contiguous in canonical order, so each sub-table is sized to the longest
//! code under its prefix (the layout of zlib's `inftrees.c`); the sizes below
//! are the proven maxima of zlib's `enough` program for complete codes.
//!
//! An entry is `value << 16 | flags | extra << 4 | length`:
//! - `length` (4 bits): the code's whole length in bits (primary or sub);
//! - `extra` (4 bits): extra bits after the code (lengths and distances), or
//!   the index width of the sub-table for a [`SUB`] entry;
//! - `value` (16 bits): the literal byte, the length or distance base, the
//!   code-length symbol, or the sub-table's start for a [`SUB`] entry.

use super::{CodeKind, InflateReason};

/// Entry flag: a literal byte (`value`).
pub(crate) const LITERAL: u32 = 0x100;
/// Entry flag: the end-of-block code (256).
pub(crate) const END: u32 = 0x200;
/// Entry flag: a pointer to a sub-table (`value` start, `extra` its width).
pub(crate) const SUB: u32 = 0x400;
/// Entry flag: no valid symbol (literal/length 286-287, distance 30-31, or
/// a code missing from an incomplete code).
pub(crate) const INVALID: u32 = 0x800;

/// Primary index width of the literal/length table.
pub(crate) const LITLEN_BITS: u32 = 11;
/// Entries of the literal/length table: `enough 288 11 15` (zlib).
pub(crate) const LITLEN_ENOUGH: usize = 2342;
/// Primary index width of the distance table.
pub(crate) const DIST_BITS: u32 = 8;
/// Entries of the distance table: `enough 32 8 15` (zlib).
pub(crate) const DIST_ENOUGH: usize = 402;
/// Index width of the code-length table: its codes are at most 7 bits.
pub(crate) const CODELEN_BITS: u32 = 7;
/// Entries of the code-length table (no sub-tables).
pub(crate) const CODELEN_ENOUGH: usize = 1 << CODELEN_BITS;

/// Longest code of any DEFLATE alphabet.
const MAX_LEN: usize = 15;

/// Base and extra bits of length symbols 257..=285.
const LENGTH_BASE: [(u16, u8); 29] = [
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (8, 0),
    (9, 0),
    (10, 0),
    (11, 1),
    (13, 1),
    (15, 1),
    (17, 1),
    (19, 2),
    (23, 2),
    (27, 2),
    (31, 2),
    (35, 3),
    (43, 3),
    (51, 3),
    (59, 3),
    (67, 4),
    (83, 4),
    (99, 4),
    (115, 4),
    (131, 5),
    (163, 5),
    (195, 5),
    (227, 5),
    (258, 0),
];

/// Base and extra bits of distance symbols 0..=29.
const DIST_BASE: [(u16, u8); 30] = [
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 1),
    (7, 1),
    (9, 2),
    (13, 2),
    (17, 3),
    (25, 3),
    (33, 4),
    (49, 4),
    (65, 5),
    (97, 5),
    (129, 6),
    (193, 6),
    (257, 7),
    (385, 7),
    (513, 8),
    (769, 8),
    (1025, 9),
    (1537, 9),
    (2049, 10),
    (3073, 10),
    (4097, 11),
    (6145, 11),
    (8193, 12),
    (12289, 12),
    (16385, 13),
    (24577, 13),
];

/// The entry data (everything but the length) of symbol `sym` of `kind`.
fn symbol_entry(kind: CodeKind, sym: usize) -> u32 {
    match kind {
        CodeKind::CodeLength => (sym as u32) << 16,
        CodeKind::LiteralLength => match sym {
            0..=255 => (sym as u32) << 16 | LITERAL,
            256 => END,
            257..=285 => {
                let (base, extra) = LENGTH_BASE[sym - 257];
                u32::from(base) << 16 | u32::from(extra) << 4
            }
            _ => INVALID,
        },
        CodeKind::Distance => match DIST_BASE.get(sym) {
            Some(&(base, extra)) => u32::from(base) << 16 | u32::from(extra) << 4,
            None => INVALID,
        },
    }
}

/// Reverses the low `len` bits of `code`.
#[inline]
fn reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits() >> (32 - len)
}

/// Fills `table` (primary width `bits`) with the canonical code of `lens`
/// (one length 0..=15 per symbol of `kind`, 0 = unused).
///
/// Accepts what zlib's `inflate_table` accepts: a complete code; no code at
/// all for distances (a block of literals only: using a distance is then an
/// invalid symbol); and, for literal/length and distance codes, an
/// incomplete code whose only code has length 1 (the missing code decodes as
/// [`INVALID`]). Everything else is an over-subscribed or incomplete code.
/// The code-length code must be complete (an empty one is incomplete here;
/// zlib accepts it and then fails on the missing end-of-block code).
pub(crate) fn build(
    table: &mut [u32],
    bits: u32,
    lens: &[u8],
    kind: CodeKind,
) -> Result<(), InflateReason> {
    let mut count = [0u16; MAX_LEN + 1];
    for &len in lens {
        count[usize::from(len)] += 1;
    }
    count[0] = 0;
    let max = (1..=MAX_LEN).rev().find(|&l| count[l] != 0).unwrap_or(0);
    let mut left: i32 = 1;
    for &c in &count[1..] {
        left = (left << 1) - i32::from(c);
        if left < 0 {
            return Err(InflateReason::OversubscribedCode(kind));
        }
    }
    if left > 0 {
        let allowed = match kind {
            CodeKind::CodeLength => false,
            CodeKind::LiteralLength => max == 1,
            CodeKind::Distance => max <= 1,
        };
        if !allowed {
            return Err(InflateReason::IncompleteCode(kind));
        }
        // Missing codes stay invalid (length 1, never consumed).
        let primary = 1usize << bits;
        table[..primary].fill(INVALID | 1);
        if max == 0 {
            return Ok(());
        }
    }

    // Symbols sorted by (length, symbol): the canonical order.
    let mut offsets = [0u16; MAX_LEN + 2];
    for len in 1..=MAX_LEN {
        offsets[len + 1] = offsets[len] + count[len];
    }
    let mut sorted = [0u16; 288];
    for (sym, &len) in lens.iter().enumerate() {
        if len != 0 {
            let slot = &mut offsets[usize::from(len)];
            sorted[usize::from(*slot)] = sym as u16;
            *slot += 1;
        }
    }
    let total = offsets[MAX_LEN + 1] as usize;

    let primary_mask = (1u32 << bits) - 1;
    let mut remaining = count; // codes of each length not yet placed
    let mut code: u32 = 0; // canonical code of the current symbol
    let mut len: usize = 0; // its length
    let mut next_sub = 1usize << bits; // where the next sub-table starts
    let mut sub_start = 0usize; // the current sub-table
    let mut sub_bits = 0u32;
    let mut sub_prefix = u32::MAX; // the primary index it hangs from
    for (i, &sym) in sorted[..total].iter().enumerate() {
        let sym_len = usize::from(lens[usize::from(sym)]);
        if i > 0 {
            code += 1;
        }
        if sym_len != len {
            code <<= sym_len - len;
            len = sym_len;
        }
        let l = len as u32;
        let rev = reverse(code, l);
        let entry = symbol_entry(kind, usize::from(sym)) | l;
        if l <= bits {
            let mut at = rev as usize;
            while at < (1 << bits) {
                table[at] = entry;
                at += 1 << l;
            }
        } else {
            let prefix = rev & primary_mask;
            if prefix != sub_prefix {
                // A new sub-table: wide enough for the longest code under
                // this prefix (codes still to place, shortest first).
                sub_start = next_sub;
                sub_bits = l - bits;
                let mut room: i32 = 1 << sub_bits;
                loop {
                    room -= i32::from(remaining[(sub_bits + bits) as usize]);
                    if room <= 0 || (sub_bits + bits) as usize >= max {
                        break;
                    }
                    sub_bits += 1;
                    room <<= 1;
                }
                next_sub += 1 << sub_bits;
                sub_prefix = prefix;
                table[prefix as usize] = (sub_start as u32) << 16 | SUB | sub_bits << 4;
            }
            let mut at = (rev >> bits) as usize;
            while at < (1 << sub_bits) {
                table[sub_start + at] = entry;
                at += 1 << (l - bits);
            }
        }
        remaining[len] -= 1;
    }
    Ok(())
}

/// Code lengths of the fixed literal/length code (RFC 1951 §3.2.6).
pub(crate) fn fixed_litlen_lengths() -> [u8; 288] {
    let mut lens = [8u8; 288];
    lens[144..256].fill(9);
    lens[256..280].fill(7);
    lens
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes one symbol from `bits` (LSB-first) with `table`; returns
    /// (entry, consumed bits).
    fn lookup(table: &[u32], width: u32, bits: u32) -> u32 {
        let e = table[(bits & ((1 << width) - 1)) as usize];
        if e & SUB != 0 {
            let sub = (e >> 4) & 15;
            table[(e >> 16) as usize + ((bits >> width) & ((1 << sub) - 1)) as usize]
        } else {
            e
        }
    }

    #[test]
    fn fixed_code_decodes_every_literal() {
        let mut table = vec![0u32; LITLEN_ENOUGH];
        build(
            &mut table,
            LITLEN_BITS,
            &fixed_litlen_lengths(),
            CodeKind::LiteralLength,
        )
        .expect("complete");
        // Literal 0 is 00110000 (8 bits), 144 is 110010000 (9 bits).
        let e = lookup(&table, LITLEN_BITS, reverse(0b0011_0000, 8));
        assert_eq!(e, LITERAL | 8);
        let e = lookup(&table, LITLEN_BITS, reverse(0b1_1001_0000, 9));
        assert_eq!(e, 144 << 16 | LITERAL | 9);
        let e = lookup(&table, LITLEN_BITS, 0);
        assert_eq!(e, END | 7);
    }

    #[test]
    fn long_codes_go_through_sub_tables() {
        // Lengths 1, 2, ..., 14, 15, 15: complete, codes up to 15 bits.
        let mut lens = [0u8; 16];
        for (i, l) in lens.iter_mut().enumerate().take(15) {
            *l = i as u8 + 1;
        }
        lens[15] = 15;
        let mut table = vec![0u32; LITLEN_ENOUGH];
        build(&mut table, LITLEN_BITS, &lens, CodeKind::LiteralLength).expect("complete");
        let mut code = 0u32;
        for (sym, &l) in lens.iter().enumerate() {
            if sym > 0 && l != lens[sym - 1] {
                code = (code + 1) << 1;
            } else if sym > 0 {
                code += 1;
            }
            let e = lookup(&table, LITLEN_BITS, reverse(code, u32::from(l)));
            assert_eq!(
                e,
                (sym as u32) << 16 | LITERAL | u32::from(l),
                "symbol {sym}"
            );
        }
    }

    #[test]
    fn over_subscribed_and_incomplete_codes_are_rejected() {
        let mut table = vec![0u32; LITLEN_ENOUGH];
        let kind = CodeKind::LiteralLength;
        assert_eq!(
            build(&mut table, LITLEN_BITS, &[1, 1, 1], kind),
            Err(InflateReason::OversubscribedCode(kind))
        );
        assert_eq!(
            build(&mut table, LITLEN_BITS, &[1, 2], kind),
            Err(InflateReason::IncompleteCode(kind))
        );
        assert_eq!(
            build(&mut table, LITLEN_BITS, &[2], kind),
            Err(InflateReason::IncompleteCode(kind))
        );
        // One code of length 1: accepted, the other half invalid.
        build(&mut table, LITLEN_BITS, &[1], kind).expect("single code");
        assert_eq!(table[0], LITERAL | 1);
        assert_eq!(table[1], INVALID | 1);
        let mut dist = vec![0u32; DIST_ENOUGH];
        build(&mut dist, DIST_BITS, &[0; 30], CodeKind::Distance).expect("no distances");
        assert!(dist[..256].iter().all(|&e| e & INVALID != 0));
        let mut cl = vec![0u32; CODELEN_ENOUGH];
        assert_eq!(
            build(&mut cl, CODELEN_BITS, &[0; 19], CodeKind::CodeLength),
            Err(InflateReason::IncompleteCode(CodeKind::CodeLength))
        );
    }
}
