//! Borrowed views of the list messages: `BytesList`, `FloatList`,
//! `DoubleList`, `Int32List` and `Int64List`.
//!
//! Every list is `repeated T value = 1`. Numeric values are accepted packed
//! and unpacked in any mix (the list is their concatenation in wire order); a
//! field 1 with a wire type that fits neither form is an unknown field and is
//! skipped, like every other unknown field.

use std::marker::PhantomData;

use crate::view::logical::{Logical, LogicalFields};
use crate::wire::{ByteReader, Value, WireType};
use crate::wire::{DecodeError, DecodeReason};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

/// An element type of a numeric list: `f32`, `f64`, `i32` or `i64`.
pub trait Element: sealed::Sealed + Copy + Default + PartialEq + std::fmt::Debug + 'static {
    /// Wire type of one unpacked element.
    const WIRE: WireType;
    /// Width of one packed element in bytes, or 0 for varints.
    const WIDTH: usize;
    /// The element from its raw bits (varint value or little-endian fixed bits).
    fn from_bits(bits: u64) -> Self;
    /// `out` as the raw varint values, when [`from_bits`](Self::from_bits)
    /// keeps every bit (int64): varints are then decoded straight into it.
    fn as_varint_slots(_out: &mut [Self]) -> Option<&mut [u64]> {
        None
    }
    /// Copies a packed run of fixed-width little-endian elements into `out`
    /// (as many as fit). For varint elements it is never called.
    fn copy_fixed(bytes: &[u8], out: &mut [Self]);
}

macro_rules! fixed_element {
    ($t:ty, $wire:expr, $width:expr, $bits:ident, $from:expr) => {
        impl Element for $t {
            const WIRE: WireType = $wire;
            const WIDTH: usize = $width;
            #[inline]
            fn from_bits($bits: u64) -> Self {
                $from
            }
            #[inline]
            fn copy_fixed(bytes: &[u8], out: &mut [Self]) {
                let n = out.len().min(bytes.len() / $width);
                let src = &bytes[..n * $width];
                #[cfg(target_endian = "little")]
                {
                    // One memcpy: the wire format is little-endian like the machine.
                    let dst: &mut [u8] = bytemuck::cast_slice_mut(&mut out[..n]);
                    dst.copy_from_slice(src);
                }
                #[cfg(not(target_endian = "little"))]
                for (d, c) in out[..n].iter_mut().zip(src.chunks_exact($width)) {
                    let mut a = [0u8; 8];
                    a[..$width].copy_from_slice(c);
                    *d = Self::from_bits(u64::from_le_bytes(a));
                }
            }
        }
    };
}

fixed_element!(f32, WireType::Fixed32, 4, bits, f32::from_bits(bits as u32));
fixed_element!(f64, WireType::Fixed64, 8, bits, f64::from_bits(bits));

impl Element for i64 {
    const WIRE: WireType = WireType::Varint;
    const WIDTH: usize = 0;
    #[inline]
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
    #[inline]
    fn as_varint_slots(out: &mut [Self]) -> Option<&mut [u64]> {
        Some(bytemuck::cast_slice_mut(out))
    }
    fn copy_fixed(_: &[u8], _: &mut [Self]) {}
}

impl Element for i32 {
    const WIRE: WireType = WireType::Varint;
    const WIDTH: usize = 0;
    /// `int32` is sent sign-extended to 64 bits and read by truncation.
    #[inline]
    fn from_bits(bits: u64) -> Self {
        bits as i32
    }
    fn copy_fixed(_: &[u8], _: &mut [Self]) {}
}

/// A borrowed numeric list (`FloatList`, `DoubleList`, `Int32List`, `Int64List`).
///
/// Nothing is decoded until asked for. Values come in wire order, packed and
/// unpacked runs concatenated.
#[derive(Clone, Copy, Debug)]
pub struct NumList<'a, T: Element> {
    list: Logical<'a>,
    _t: PhantomData<T>,
}

/// `FloatList` (`repeated float value = 1`).
pub type FloatListRef<'a> = NumList<'a, f32>;
/// `DoubleList` (`repeated double value = 1`), OFRecord only.
pub type DoubleListRef<'a> = NumList<'a, f64>;
/// `Int32List` (`repeated int32 value = 1`), OFRecord only.
pub type Int32ListRef<'a> = NumList<'a, i32>;
/// `Int64List` (`repeated int64 value = 1`).
pub type Int64ListRef<'a> = NumList<'a, i64>;

/// One occurrence of field 1 in a list: what it contributes.
enum Run<'a> {
    One(u64),
    Packed(&'a [u8], u64, u64),
}

/// Classifies a field of a list message; `None` for unknown fields.
#[inline]
fn run<'a, T: Element>(f: &crate::wire::Field<'a>) -> Option<Run<'a>> {
    if f.number != 1 {
        return None;
    }
    match (f.value, T::WIRE) {
        (Value::Varint(v), WireType::Varint) => Some(Run::One(v)),
        (Value::Fixed32(v), WireType::Fixed32) => Some(Run::One(v as u64)),
        (Value::Fixed64(v), WireType::Fixed64) => Some(Run::One(v)),
        (Value::Len(b), _) => Some(Run::Packed(b, f.value_offset, f.offset)),
        _ => None,
    }
}

/// Checks a packed run of fixed-width elements.
#[inline]
fn check_fixed<T: Element>(bytes: &[u8], tag_offset: u64) -> Result<usize, DecodeError> {
    if !bytes.len().is_multiple_of(T::WIDTH) {
        return Err(DecodeError::new(
            tag_offset,
            DecodeReason::PackedLength {
                length: bytes.len() as u64,
                width: T::WIDTH as u8,
            },
        ));
    }
    Ok(bytes.len() / T::WIDTH)
}

/// Counts the varints of a packed run, checking each is complete and at most 10 bytes.
#[inline]
pub(crate) fn count_varints(bytes: &[u8], base: u64) -> Result<usize, DecodeError> {
    if crate::wire::single_varint(bytes).is_some() {
        return Ok(1); // the one-value list
    }
    crate::wire::count_packed_varints(bytes)
        .map_err(|(at, reason)| DecodeError::new(base + at as u64, reason))
}

/// Copies one packed run into `out` (as many values as fit) and returns the
/// number of values in it: one `memcpy` for fixed-width elements, the
/// word-at-a-time decoder for varints.
#[inline]
fn copy_run<T: Element>(b: &[u8], off: u64, tag: u64, out: &mut [T]) -> Result<usize, DecodeError> {
    if T::WIDTH != 0 {
        let count = check_fixed::<T>(b, tag)?;
        T::copy_fixed(b, out);
        return Ok(count);
    }
    if let Some(v) = crate::wire::single_varint(b) {
        // A run that is one varint (the one-value list).
        if let Some(slot) = out.first_mut() {
            *slot = T::from_bits(v);
        }
        return Ok(1);
    }
    if let Some(out) = T::as_varint_slots(out) {
        return crate::wire::decode_packed_into(b, out)
            .map_err(|(at, reason)| DecodeError::new(off + at as u64, reason));
    }
    let mut slots = out.iter_mut();
    crate::wire::for_each_packed_varint(b, |v| {
        if let Some(slot) = slots.next() {
            *slot = T::from_bits(v);
        }
    })
    .map_err(|(at, reason)| DecodeError::new(off + at as u64, reason))
}

impl<'a, T: Element> NumList<'a, T> {
    pub(crate) fn new(list: Logical<'a>) -> Self {
        NumList {
            list,
            _t: PhantomData,
        }
    }

    /// The values, in wire order.
    pub fn iter(&self) -> NumIter<'a, T> {
        NumIter {
            fields: self.list.fields(),
            packed: ByteReader::new(&[], 0),
            done: false,
            _t: PhantomData,
        }
    }

    /// Number of values, without decoding them (varints are counted by their
    /// last bytes, fixed-width runs by their length).
    pub fn len(&self) -> Result<usize, DecodeError> {
        if let Some((b, off)) = self.list.single_len_field(1) {
            return if T::WIDTH == 0 {
                count_varints(b, off)
            } else {
                check_fixed::<T>(b, self.list.root_offset())
            };
        }
        let mut n = 0usize;
        for f in self.list.fields() {
            match run::<T>(&f?) {
                Some(Run::One(_)) => n += 1,
                Some(Run::Packed(b, off, tag)) => {
                    n += if T::WIDTH == 0 {
                        count_varints(b, off)?
                    } else {
                        check_fixed::<T>(b, tag)?
                    };
                }
                None => {}
            }
        }
        Ok(n)
    }

    /// Whether the list has no values.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.len()? == 0)
    }

    /// A bound on the number of values, found without reading them: for one
    /// packed run (the usual list) its length in bytes for varints (each
    /// takes at least one byte), its exact count for fixed-width values;
    /// otherwise the exact count ([`len`](Self::len)). Enough room for
    /// [`copy_to_slice`](Self::copy_to_slice) to decode the list in one pass.
    pub fn len_bound(&self) -> Result<usize, DecodeError> {
        if let Some((b, _)) = self.list.single_len_field(1) {
            return Ok(b.len().checked_div(T::WIDTH).unwrap_or(b.len()));
        }
        self.len()
    }

    /// The raw bytes of the list when it is one packed run (or empty): for
    /// `float`/`double` these are the little-endian values, for integers the
    /// packed varints. `None` when the values come in several runs or
    /// unpacked.
    pub fn packed_bytes(&self) -> Result<Option<&'a [u8]>, DecodeError> {
        let mut found: Option<&'a [u8]> = None;
        for f in self.list.fields() {
            match run::<T>(&f?) {
                Some(Run::One(_)) => return Ok(None),
                Some(Run::Packed(b, _, tag)) => {
                    if found.is_some() {
                        return Ok(None);
                    }
                    if T::WIDTH != 0 {
                        check_fixed::<T>(b, tag)?;
                    }
                    found = Some(b);
                }
                None => {}
            }
        }
        Ok(Some(found.unwrap_or(&[])))
    }

    /// Copies the values into `out`, as many as fit, and returns the number
    /// of values in the list (which may be more than `out.len()`).
    ///
    /// A packed run of floats or doubles is copied with one `memcpy` on
    /// little-endian machines.
    ///
    /// ```
    /// # use recordwire::view::{ExampleRef, ListRef};
    /// // Example { features { "w": float_list [1.0, 0.5] } }
    /// let msg = [0x0a, 0x13, 0x0a, 0x11, 0x0a, 0x01, b'w', 0x12, 0x0c, 0x12, 0x0a, 0x0a,
    ///            0x08, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x3f];
    /// let ex = ExampleRef::parse(&msg, 0).unwrap();
    /// let Some(ListRef::Float(w)) = ex.get("w").unwrap().unwrap().list().unwrap() else { panic!() };
    /// let mut buf = [0f32; 4];
    /// assert_eq!(w.copy_to_slice(&mut buf).unwrap(), 2);
    /// assert_eq!(buf[..2], [1.0, 0.5]);
    /// ```
    pub fn copy_to_slice(&self, out: &mut [T]) -> Result<usize, DecodeError> {
        if let Some((b, off)) = self.list.single_len_field(1) {
            // One packed run and nothing else: the common case, without the
            // field walk (its tag offset is the list's first byte).
            return copy_run(b, off, self.list.root_offset(), out);
        }
        let mut n = 0usize;
        for f in self.list.fields() {
            match run::<T>(&f?) {
                Some(Run::One(v)) => {
                    if let Some(slot) = out.get_mut(n) {
                        *slot = T::from_bits(v);
                    }
                    n += 1;
                }
                Some(Run::Packed(b, off, tag)) => {
                    let rest = out.get_mut(n..).unwrap_or_default();
                    n += copy_run(b, off, tag, rest)?;
                }
                None => {}
            }
        }
        Ok(n)
    }

    /// Appends the values to `out`.
    pub fn extend_vec(&self, out: &mut Vec<T>) -> Result<(), DecodeError> {
        let start = out.len();
        let n = self.len()?;
        out.resize(start + n, T::default());
        self.copy_to_slice(&mut out[start..])?;
        Ok(())
    }

    /// Whether field 1 comes both packed and unpacked (strict mode reports it).
    pub fn is_mixed(&self) -> Result<bool, DecodeError> {
        let (mut packed, mut unpacked) = (false, false);
        for f in self.list.fields() {
            match run::<T>(&f?) {
                Some(Run::One(_)) => unpacked = true,
                Some(Run::Packed(..)) => packed = true,
                None => {}
            }
        }
        Ok(packed && unpacked)
    }

    /// Absolute offset of the first byte of the message that holds this list
    /// (for error messages).
    pub(crate) fn logical(&self) -> Logical<'a> {
        self.list
    }
}

impl<'a, T: Element> IntoIterator for &NumList<'a, T> {
    type Item = Result<T, DecodeError>;
    type IntoIter = NumIter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over the values of a [`NumList`]. Fused after an error.
#[derive(Clone, Debug)]
pub struct NumIter<'a, T: Element> {
    fields: LogicalFields<'a>,
    packed: ByteReader<'a>,
    done: bool,
    _t: PhantomData<T>,
}

impl<T: Element> Iterator for NumIter<'_, T> {
    type Item = Result<T, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            if !self.packed.is_empty() {
                let r = match T::WIRE {
                    WireType::Varint => self.packed.varint(),
                    WireType::Fixed32 => self.packed.fixed32().map(u64::from),
                    _ => self.packed.fixed64(),
                };
                if r.is_err() {
                    self.done = true;
                }
                return Some(r.map(T::from_bits));
            }
            match self.fields.next() {
                None => {
                    self.done = true;
                    return None;
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Some(Ok(f)) => match run::<T>(&f) {
                    Some(Run::One(v)) => return Some(Ok(T::from_bits(v))),
                    Some(Run::Packed(b, off, tag)) => {
                        if T::WIDTH != 0 {
                            if let Err(e) = check_fixed::<T>(b, tag) {
                                self.done = true;
                                return Some(Err(e));
                            }
                        }
                        self.packed = ByteReader::new(b, off);
                    }
                    None => {}
                },
            }
        }
    }
}

/// A borrowed `BytesList` (`repeated bytes value = 1`).
#[derive(Clone, Copy, Debug)]
pub struct BytesListRef<'a> {
    list: Logical<'a>,
}

impl<'a> BytesListRef<'a> {
    pub(crate) fn new(list: Logical<'a>) -> Self {
        BytesListRef { list }
    }

    /// The values, borrowed from the input, in wire order.
    pub fn iter(&self) -> BytesIter<'a> {
        BytesIter {
            fields: self.list.fields(),
        }
    }

    /// Number of values.
    pub fn len(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for v in self.iter() {
            v?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether the list has no values.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.iter().next().transpose()?.is_none())
    }

    pub(crate) fn logical(&self) -> Logical<'a> {
        self.list
    }
}

impl<'a> IntoIterator for &BytesListRef<'a> {
    type Item = Result<&'a [u8], DecodeError>;
    type IntoIter = BytesIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over the values of a [`BytesListRef`].
#[derive(Clone, Debug)]
pub struct BytesIter<'a> {
    fields: LogicalFields<'a>,
}

impl<'a> BytesIter<'a> {
    /// The next value with its absolute offset.
    pub fn next_with_offset(&mut self) -> Option<Result<(&'a [u8], u64), DecodeError>> {
        // A value with a short length, read straight from the bytes.
        if let Some((b, _, at)) = self.fields.next_short_len(0x0a) {
            return Some(Ok((b, at)));
        }
        if self.fields.plain_and_done() {
            return None;
        }
        for f in self.fields.by_ref() {
            match f {
                Err(e) => return Some(Err(e)),
                Ok(f) => {
                    if let (1, Value::Len(b)) = (f.number, f.value) {
                        return Some(Ok((b, f.value_offset)));
                    }
                }
            }
        }
        None
    }
}

impl<'a> Iterator for BytesIter<'a> {
    type Item = Result<&'a [u8], DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_with_offset().map(|r| r.map(|(b, _)| b))
    }
}

/// Validates one list payload (one segment) of element kind `kind`.
#[inline]
pub(crate) fn validate_list_segment(
    kind: crate::view::Kind,
    seg: &[u8],
    base: u64,
    depth: u32,
    strict: bool,
) -> Result<(), DecodeError> {
    if let Some((b, at)) = Logical::root(seg, base, depth).single_len_field(1) {
        return validate_one_run(kind, b, base, at);
    }
    validate_list_fields(kind, seg, base, depth, strict)
}

/// Validates a list made of one packed run (or one bytes value) `run` and
/// nothing else: the list's first byte at `base`, the run's at `at`.
#[inline]
pub(crate) fn validate_one_run(
    kind: crate::view::Kind,
    run: &[u8],
    base: u64,
    at: u64,
) -> Result<(), DecodeError> {
    use crate::view::Kind;
    match kind {
        Kind::Bytes => Ok(()),
        Kind::Float => check_fixed::<f32>(run, base).map(drop),
        Kind::Double => check_fixed::<f64>(run, base).map(drop),
        Kind::Int32 | Kind::Int64 => count_varints(run, at).map(drop),
    }
}

/// [`validate_list_segment`] by the walk of the segment's fields.
#[inline(never)]
fn validate_list_fields(
    kind: crate::view::Kind,
    seg: &[u8],
    base: u64,
    depth: u32,
    strict: bool,
) -> Result<(), DecodeError> {
    use crate::view::Kind;
    for f in crate::wire::FieldReader::new(seg, base, depth) {
        let f = f?;
        let known = match kind {
            Kind::Bytes => f.number == 1 && matches!(f.value, Value::Len(_)),
            Kind::Float => check_num::<f32>(&f)?,
            Kind::Double => check_num::<f64>(&f)?,
            Kind::Int32 => check_num::<i32>(&f)?,
            Kind::Int64 => check_num::<i64>(&f)?,
        };
        if strict && !known {
            return Err(crate::view::unknown_field(&f));
        }
    }
    Ok(())
}

fn check_num<T: Element>(f: &crate::wire::Field<'_>) -> Result<bool, DecodeError> {
    match run::<T>(f) {
        Some(Run::One(_)) => Ok(true),
        Some(Run::Packed(b, off, tag)) => {
            if T::WIDTH == 0 {
                count_varints(b, off)?;
            } else {
                check_fixed::<T>(b, tag)?;
            }
            Ok(true)
        }
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list<T: Element>(buf: &[u8]) -> NumList<'_, T> {
        NumList::new(Logical::root(buf, 0, 1))
    }

    #[test]
    fn packed_unpacked_and_unknown_mix() {
        // unpacked 1, packed [2, 300], unknown fixed32 on field 1, field 2 varint, unpacked -1
        let mut buf = vec![
            0x08, 0x01, 0x0a, 0x03, 0x02, 0xac, 0x02, 0x0d, 1, 2, 3, 4, 0x10, 0x05,
        ];
        buf.extend_from_slice(&[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ]);
        let l = list::<i64>(&buf);
        let v: Vec<i64> = l.iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(v, vec![1, 2, 300, -1]);
        assert_eq!(l.len().unwrap(), 4);
        assert!(l.is_mixed().unwrap());
        assert_eq!(l.packed_bytes().unwrap(), None);
        let mut out = [0i64; 2];
        assert_eq!(l.copy_to_slice(&mut out).unwrap(), 4);
        assert_eq!(out, [1, 2]);
        let i32s: Vec<i32> = list::<i32>(&buf).iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(i32s, vec![1, 2, 300, -1]);
    }

    #[test]
    fn int32_truncates() {
        // 2^32 + 5 as a varint reads as 5 in int32
        let mut buf = vec![0x08];
        crate::wire::encode_varint((1u64 << 32) + 5, &mut buf);
        let v: Vec<i32> = list::<i32>(&buf).iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(v, vec![5]);
    }

    #[test]
    fn floats_packed_run() {
        let mut buf = vec![0x0a, 0x08];
        buf.extend_from_slice(&1.5f32.to_le_bytes());
        buf.extend_from_slice(&(-0.0f32).to_le_bytes());
        let l = list::<f32>(&buf);
        assert_eq!(l.packed_bytes().unwrap(), Some(&buf[2..]));
        let mut out = [9f32; 3];
        assert_eq!(l.copy_to_slice(&mut out).unwrap(), 2);
        assert_eq!(out[0], 1.5);
        assert!(out[1] == 0.0 && out[1].is_sign_negative());
        assert_eq!(out[2], 9.0);
        // a double list reading the same bytes as one packed run of 8
        let d = list::<f64>(&buf);
        assert_eq!(d.len().unwrap(), 1);
        // unpacked float and a bad packed run
        let bad = [0x0d, 0, 0, 0x80, 0x3f, 0x0a, 0x03, 1, 2, 3];
        let l = list::<f32>(&bad);
        let mut it = l.iter();
        assert_eq!(it.next().unwrap().unwrap(), 1.0);
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(
                5,
                DecodeReason::PackedLength {
                    length: 3,
                    width: 4
                }
            )
        );
        assert!(it.next().is_none());
        assert_eq!(l.len().unwrap_err(), e);
    }

    #[test]
    fn packed_varint_errors() {
        // packed run ending inside a varint
        let buf = [0x0a, 0x02, 0x01, 0x80];
        let e = list::<i64>(&buf).len().unwrap_err();
        assert_eq!(e, DecodeError::new(3, DecodeReason::Truncated));
        let e = list::<i64>(&buf).iter().nth(1).unwrap().unwrap_err();
        assert_eq!(e, DecodeError::new(3, DecodeReason::Truncated));
        // 11-byte varint inside a packed run
        let mut buf = vec![0x0a, 11];
        buf.extend_from_slice(&[0x80; 10]);
        buf.push(0);
        let e = list::<i64>(&buf).len().unwrap_err();
        assert_eq!(e.reason, DecodeReason::VarintTooLong);
        assert_eq!(
            list::<i64>(&buf).iter().next().unwrap().unwrap_err().reason,
            DecodeReason::VarintTooLong
        );
    }

    #[test]
    fn bytes_list() {
        let buf = [0x0a, 0x01, b'a', 0x08, 0x01, 0x0a, 0x00];
        let l = BytesListRef::new(Logical::root(&buf, 0, 1));
        let v: Vec<&[u8]> = l.iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(v, vec![&b"a"[..], &b""[..]]);
        assert_eq!(l.len().unwrap(), 2);
    }
}
