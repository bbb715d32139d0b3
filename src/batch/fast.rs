//! The fast path of a record's feature map: the usual shape read straight
//! from its bytes, every entry `0a len (0a len key 12 len (tag len list))`
//! and every list one packed run (numbers) or `0a len value` fields
//! (bytes), with values that fit the spec. Anything else — another shape,
//! an empty `Feature`, another type, a count the form refuses, bad bytes —
//! takes back what the record's entries appended and leaves the record to
//! the general walk, which gives the same values and the errors.

use super::column::{slot, Column, PartWindows};
use super::shape::Shape;
use super::spec::{DType, FeatureSpec, NameTable};
use crate::wire::{decode_packed_into, decode_varint, MAX_DEPTH};

/// A field `tag len payload` at the start of `buf` (`tag` one byte, `len` a
/// varint of at most 5 bytes): the payload and what follows.
#[inline(always)]
fn take(buf: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = buf.split_first()?;
    if t != tag {
        return None;
    }
    let (len, n) = match rest.first() {
        Some(&l) if l < 0x80 => (l as usize, 1),
        _ => {
            let (len, n) = decode_varint(rest).ok()?;
            if n > 5 {
                return None;
            }
            (usize::try_from(len).ok()?, n)
        }
    };
    let rest = rest.get(n..)?;
    Some((rest.get(..len)?, rest.get(len..)?))
}

/// Decodes the map `bytes` (at nesting `depth`) into `columns` when every
/// entry has the usual shape and fits the spec; otherwise takes back what
/// it appended and returns `false`. The placed columns' values go to their
/// `windows` at `row` (the general walk then writes them again).
pub(super) fn fast_map<'a>(
    columns: &mut [Column<'a>],
    features: &[FeatureSpec],
    table: &NameTable,
    (bytes, depth): (&'a [u8], u32),
    stamp: u64,
    (windows, row): (PartWindows<'_, '_>, usize),
) -> bool {
    if depth + 4 >= MAX_DEPTH {
        return false;
    }
    let mut rest = bytes;
    while !rest.is_empty() {
        let done = take(rest, 0x0a).and_then(|(entry, after)| {
            rest = after;
            let (key, r) = take(entry, 0x0a)?;
            let (value, r) = take(r, 0x12)?;
            if !r.is_empty() {
                return None;
            }
            match table.find(features, key) {
                None => Some(()),
                Some(c) => {
                    let col = &mut columns[c];
                    append(col, value, stamp, slot(windows, c, row, col))
                }
            }
        });
        if done.is_none() {
            for col in columns.iter_mut().filter(|c| c.seen == stamp) {
                col.rollback();
                col.seen = 0;
                col.pending = None;
            }
            return false;
        }
    }
    true
}

/// One entry's `Feature` into its column, or for a placed row into its
/// `slot`; `None` when the general walk must read it (the column is then as
/// the caller takes it back).
#[inline(always)]
fn append<'a>(
    col: &mut Column<'a>,
    value: &'a [u8],
    stamp: u64,
    slot: Option<&mut [u8]>,
) -> Option<()> {
    let (&tag, _) = value.split_first()?;
    let (list, r) = take(value, tag)?;
    let fits = matches!(
        (tag, col.dtype),
        (0x0a, DType::Bytes) | (0x12, DType::Float32) | (0x1a, DType::Int64)
    );
    if !r.is_empty() || !fits {
        return None;
    }
    let (exact, multiple) = match col.form {
        Shape::Fixed { elems } => (Some(elems), None),
        Shape::VarLen => (None, None),
        Shape::Padded { elems } => (None, Some(elems)),
        Shape::RaggedFrames | Shape::Raw { .. } => return None,
    };
    col.begin_entry(stamp);
    let n = match col.dtype {
        DType::Bytes => {
            let mut n = 0;
            let mut r = list;
            while !r.is_empty() {
                let (v, after) = take(r, 0x0a)?;
                if col.borrow {
                    col.borrowed.push(v);
                } else {
                    col.values.extend_from_slice(v);
                    col.offsets.push(col.values.len() as i64);
                }
                r = after;
                n += 1;
            }
            n
        }
        dtype => {
            let packed = match list {
                [] => &[][..],
                _ => {
                    let (packed, r) = take(list, 0x0a)?;
                    if !r.is_empty() {
                        return None;
                    }
                    packed
                }
            };
            match (dtype, slot) {
                (DType::Float32, _) if packed.len() % 4 != 0 => return None,
                (DType::Float32, Some(slot)) => {
                    // A count the form refuses goes to the general walk.
                    slot.get_mut(..packed.len())?.copy_from_slice(packed);
                    packed.len() / 4
                }
                (DType::Float32, None) => {
                    col.values.extend_from_slice(packed);
                    packed.len() / 4
                }
                (_, Some(slot)) => {
                    decode_packed_into(packed, bytemuck::cast_slice_mut(slot)).ok()?
                }
                (_, None) => {
                    let room = exact.unwrap_or(packed.len());
                    let start = col.values.len();
                    let out = col.values.extend_typed::<i64>(room);
                    let n = decode_packed_into(packed, bytemuck::cast_slice_mut(out)).ok()?;
                    col.values.truncate(start + n.min(room) * 8);
                    n
                }
            }
        }
    };
    let fits = match (exact, multiple) {
        (Some(e), _) => n == e,
        (_, Some(m)) => n.checked_rem(m).map_or(n == 0, |r| r == 0),
        _ => true,
    };
    fits.then_some(())
}
