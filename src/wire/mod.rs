//! The protobuf wire format over borrowed bytes: varints, tags, lengths and
//! field iteration, with the rules of Google's parser (docs/FORMAT.md §3).
//!
//! Nothing here allocates or does I/O. Every reader knows the absolute byte
//! offset of its first byte (`base`), so every [`DecodeError`] says where in
//! the whole file it was found.
//!
//! ```
//! use recordwire::wire::{FieldReader, Value};
//!
//! // The `map<string, int64>` dump of the seed analysis: {"test": 300}. (The
//! // seed dumps are the `xxd -b` dumps of a blog article that decodes
//! // protobuf bytes by hand, kept in testdata/seed_*.xxd: docs/FORMAT.md §4.4.)
//! let msg = [0x0a, 0x09, 0x0a, 0x04, b't', b'e', b's', b't', 0x10, 0xac, 0x02];
//! let mut outer = FieldReader::new(&msg, 0, 0);
//! let entry = outer.next().unwrap().unwrap();
//! assert_eq!(entry.number, 1);
//! let Value::Len(body) = entry.value else { panic!() };
//! let fields: Vec<_> = FieldReader::new(body, entry.value_offset, 1)
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert_eq!(fields[0].value, Value::Len(b"test"));
//! assert_eq!(fields[1].value, Value::Varint(300));
//! assert_eq!(fields[1].value_offset, 9);
//! ```

mod error;
mod varint;

pub use error::{DecodeError, DecodeReason};

pub(crate) use varint::{
    count_packed_varints, decode_packed_into, for_each_packed_varint, single_varint,
};
pub use varint::{decode_varint, encode_varint, encoded_len_varint, put_varint};

/// Maximum nesting of messages and groups, as in Google's parsers
/// (`kDefaultRecursionLimit`): the top-level message is depth 0, and a
/// message or group at depth 101 is an error.
pub const MAX_DEPTH: u32 = 100;

/// Largest valid field number, 2^29 - 1.
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// Longest varint, in bytes.
pub const MAX_VARINT_LEN: usize = 10;

/// Longest tag or length, in bytes.
pub const MAX_TAG_LEN: usize = 5;

/// The six valid wire types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireType {
    /// 0: varint.
    Varint = 0,
    /// 1: 8 little-endian bytes.
    Fixed64 = 1,
    /// 2: length-delimited.
    Len = 2,
    /// 3: start of a group (deprecated).
    StartGroup = 3,
    /// 4: end of a group (deprecated).
    EndGroup = 4,
    /// 5: 4 little-endian bytes.
    Fixed32 = 5,
}

impl WireType {
    /// The wire type for its 3-bit code, or `None` for 6 and 7.
    #[inline]
    pub fn from_code(code: u8) -> Option<WireType> {
        Some(match code {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return None,
        })
    }

    /// Short name as used in dumps: `VARINT`, `I64`, `LEN`, `SGROUP`, `EGROUP`, `I32`.
    pub fn name(self) -> &'static str {
        match self {
            WireType::Varint => "VARINT",
            WireType::Fixed64 => "I64",
            WireType::Len => "LEN",
            WireType::StartGroup => "SGROUP",
            WireType::EndGroup => "EGROUP",
            WireType::Fixed32 => "I32",
        }
    }
}

/// The value of one field, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1, as its raw 64 bits.
    Fixed64(u64),
    /// Wire type 2: the payload bytes.
    Len(&'a [u8]),
    /// Wire type 3: a whole group, already checked for proper nesting and
    /// termination; the bytes between the start tag and the end tag.
    Group(&'a [u8]),
    /// Wire type 5, as its raw 32 bits.
    Fixed32(u32),
}

impl Value<'_> {
    /// The wire type this value came with.
    pub fn wire_type(&self) -> WireType {
        match self {
            Value::Varint(_) => WireType::Varint,
            Value::Fixed64(_) => WireType::Fixed64,
            Value::Len(_) => WireType::Len,
            Value::Group(_) => WireType::StartGroup,
            Value::Fixed32(_) => WireType::Fixed32,
        }
    }
}

/// One field of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// Field number, 1 ..= 2^29-1.
    pub number: u32,
    /// The value.
    pub value: Value<'a>,
    /// Absolute offset of the field's tag.
    pub offset: u64,
    /// Absolute offset of the value (after the tag and, for `Len`, the length).
    pub value_offset: u64,
}

/// A reader of varints, tags, lengths and fixed-width values over bytes that
/// knows its absolute offset.
///
/// Reading never panics; every failure is a [`DecodeError`] at an absolute
/// offset. Callers should stop at the first error.
#[derive(Debug, Clone, Copy)]
pub struct ByteReader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> ByteReader<'a> {
    /// A reader over `buf`, whose first byte is at absolute offset `base`.
    #[inline]
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        ByteReader { buf, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether all bytes have been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The bytes not yet read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    #[inline]
    fn err(&self, at: usize, reason: DecodeReason) -> DecodeError {
        DecodeError::new(self.base + at as u64, reason)
    }

    /// Skips one field whose tag is one byte and whose value is a one-byte
    /// varint or a fixed-width value, all there: whether it did (else
    /// nothing is read, and [`field`](Self::field) reads what is there).
    /// The fields most messages are made of, passed over by a check.
    #[inline(always)]
    pub(crate) fn skip_short_scalar(&mut self) -> bool {
        let rest = &self.buf[self.pos..];
        let Some(&t) = rest.first() else {
            return false;
        };
        if !(8..0x80).contains(&t) {
            return false;
        }
        let n = match (t & 7, rest.get(1)) {
            (0, Some(&v)) if v < 0x80 => 2,
            (1, _) if rest.len() >= 9 => 9,
            (5, _) if rest.len() >= 5 => 5,
            _ => return false,
        };
        self.pos += n;
        true
    }

    /// Reads a varint of at most 10 bytes; bits past the 64th are dropped.
    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        match decode_varint(&self.buf[start..]) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(reason) => Err(self.err(start, reason)),
        }
    }

    /// Reads a tag (at most 5 bytes, below 2^32) and splits it into field
    /// number and wire type, rejecting field 0 and wire types 6 and 7.
    #[inline(always)]
    pub fn tag(&mut self) -> Result<(u32, WireType), DecodeError> {
        let start = self.pos;
        let raw = match self.buf.get(start) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                b as u64
            }
            _ => {
                let rest = &self.buf[start..];
                let (v, n) = decode_varint(rest).map_err(|r| {
                    self.err(
                        start,
                        if r == DecodeReason::Truncated && rest.len() < MAX_TAG_LEN {
                            DecodeReason::Truncated
                        } else {
                            DecodeReason::TagTooLong
                        },
                    )
                })?;
                if n > MAX_TAG_LEN || v > u32::MAX as u64 {
                    return Err(self.err(start, DecodeReason::TagTooLong));
                }
                self.pos += n;
                v
            }
        };
        let number = (raw >> 3) as u32;
        let code = (raw & 7) as u8;
        if number == 0 {
            return Err(self.err(start, DecodeReason::FieldNumberZero));
        }
        match WireType::from_code(code) {
            Some(w) => Ok((number, w)),
            None => Err(self.err(start, DecodeReason::InvalidWireType(code))),
        }
    }

    /// Reads a length (at most 5 bytes, below 2^31) and the bytes it
    /// announces, checked against what remains.
    #[inline(always)]
    pub fn len_delimited(&mut self) -> Result<(&'a [u8], u64), DecodeError> {
        let start = self.pos;
        let len = match self.buf.get(start) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                b as u64
            }
            _ => {
                let rest = &self.buf[start..];
                let (v, n) = decode_varint(rest).map_err(|r| {
                    self.err(
                        start,
                        if r == DecodeReason::Truncated && rest.len() < MAX_TAG_LEN {
                            DecodeReason::Truncated
                        } else {
                            DecodeReason::LengthTooLong
                        },
                    )
                })?;
                if n > MAX_TAG_LEN || v > i32::MAX as u64 {
                    return Err(self.err(start, DecodeReason::LengthTooLong));
                }
                self.pos += n;
                v
            }
        };
        let available = self.remaining() as u64;
        if len > available {
            return Err(self.err(
                start,
                DecodeReason::LengthOverrun {
                    declared: len,
                    available,
                },
            ));
        }
        let value_offset = self.offset();
        let end = self.pos + len as usize;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok((out, value_offset))
    }

    /// Reads 4 little-endian bytes.
    #[inline]
    pub fn fixed32(&mut self) -> Result<u32, DecodeError> {
        match self.buf.get(self.pos..self.pos + 4) {
            Some(b) => {
                self.pos += 4;
                Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            None => Err(self.err(self.pos, DecodeReason::Truncated)),
        }
    }

    /// Reads 8 little-endian bytes.
    #[inline]
    pub fn fixed64(&mut self) -> Result<u64, DecodeError> {
        match self.buf.get(self.pos..self.pos + 8) {
            Some(b) => {
                self.pos += 8;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(u64::from_le_bytes(a))
            }
            None => Err(self.err(self.pos, DecodeReason::Truncated)),
        }
    }

    /// Skips a group whose start tag (for `number`) has just been read, at
    /// nesting `depth` (the depth of the group itself). Returns the group's
    /// body: the bytes between the start tag and the end tag.
    ///
    /// `tag_offset` (the absolute offset of the start tag) is where an
    /// unterminated group or one nested too deep is reported.
    pub fn skip_group(
        &mut self,
        number: u32,
        depth: u32,
        tag_offset: u64,
    ) -> Result<&'a [u8], DecodeError> {
        let body_start = self.pos;
        if depth > MAX_DEPTH {
            return Err(DecodeError::new(
                tag_offset,
                DecodeReason::DepthLimitExceeded,
            ));
        }
        // The fields of this group are read in a loop; a nested group is
        // skipped by a recursive call, which checks its own end tag, so an
        // end tag met here must close this group. The recursion is at most
        // MAX_DEPTH deep: the depth check above stops it.
        loop {
            if self.is_empty() {
                return Err(DecodeError::new(
                    tag_offset,
                    DecodeReason::UnterminatedGroup(number),
                ));
            }
            let tag_start = self.pos;
            let field_offset = self.offset();
            let (n, w) = self.tag()?;
            let at = |e: DecodeError| DecodeError::new(field_offset, e.reason);
            match w {
                WireType::EndGroup => {
                    if n != number {
                        return Err(self.err(tag_start, DecodeReason::UnexpectedEndGroup(n)));
                    }
                    return Ok(&self.buf[body_start..tag_start]);
                }
                WireType::StartGroup => {
                    self.skip_group(n, depth + 1, field_offset)?;
                }
                WireType::Varint => {
                    self.varint().map_err(at)?;
                }
                WireType::Fixed64 => {
                    self.fixed64().map_err(at)?;
                }
                WireType::Fixed32 => {
                    self.fixed32().map_err(at)?;
                }
                WireType::Len => {
                    self.len_delimited().map_err(at)?;
                }
            }
        }
    }

    /// Reads one whole field of a message at nesting `depth` (groups inside
    /// it are at `depth + 1`). An end-group tag is an error here: it can only
    /// close a group, and groups are consumed whole.
    ///
    /// Errors are reported at the offset of the tag of the field that is
    /// malformed (for a group, of the innermost malformed field in it).
    #[inline(always)]
    pub fn field(&mut self, depth: u32) -> Result<Field<'a>, DecodeError> {
        let offset = self.offset();
        let (number, wire) = self.tag()?;
        let value_offset = self.offset();
        let at = |e: DecodeError| DecodeError::new(offset, e.reason);
        let value = match wire {
            WireType::Varint => Value::Varint(self.varint().map_err(at)?),
            WireType::Len => {
                let (bytes, value_offset) = self.len_delimited().map_err(at)?;
                return Ok(Field {
                    number,
                    value: Value::Len(bytes),
                    offset,
                    value_offset,
                });
            }
            WireType::Fixed32 => Value::Fixed32(self.fixed32().map_err(at)?),
            WireType::Fixed64 => Value::Fixed64(self.fixed64().map_err(at)?),
            WireType::StartGroup => Value::Group(self.skip_group(number, depth + 1, offset)?),
            WireType::EndGroup => {
                return Err(DecodeError::new(
                    offset,
                    DecodeReason::UnexpectedEndGroup(number),
                ))
            }
        };
        Ok(Field {
            number,
            value,
            offset,
            value_offset,
        })
    }
}

/// Iterates the fields of one message, in wire order.
///
/// Unknown fields and groups are returned like any other (groups whole,
/// checked); interpretation is the caller's. After an error the iterator is
/// fused: a reader that failed stays failed.
#[derive(Debug, Clone)]
pub struct FieldReader<'a> {
    bytes: ByteReader<'a>,
    depth: u32,
    failed: bool,
}

impl<'a> FieldReader<'a> {
    /// The fields of the message `buf`, whose first byte is at absolute
    /// offset `base`, nested at `depth` (0 for a top-level record).
    #[inline]
    pub fn new(buf: &'a [u8], base: u64, depth: u32) -> Self {
        FieldReader {
            bytes: ByteReader::new(buf, base),
            depth,
            failed: false,
        }
    }

    /// Absolute offset of the next field.
    pub fn offset(&self) -> u64 {
        self.bytes.offset()
    }

    /// Nesting depth of the message being read.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether the reader has nothing more to return (`next` is `None`).
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.failed || self.bytes.is_empty()
    }

    /// The next field when it is length-delimited, with the one-byte tag
    /// `tag`, a length of one or two bytes, and fits: its payload and the
    /// absolute offsets of its tag and payload, read without the general
    /// decoder (`next` would return the same field). `None`, with nothing
    /// read, for anything else.
    #[inline]
    pub(crate) fn next_short_len(&mut self, tag: u8) -> Option<(&'a [u8], u64, u64)> {
        if self.failed {
            return None;
        }
        let b = &self.bytes;
        let [t, rest @ ..] = b.buf.get(b.pos..)? else {
            return None;
        };
        if *t != tag {
            return None;
        }
        let (len, n) = short_len(rest)?;
        let payload = rest.get(n..n + len)?;
        let offset = b.base + b.pos as u64;
        self.bytes.pos += 1 + n + len;
        Some((payload, offset, offset + 1 + n as u64))
    }
}

/// A length of one or two varint bytes at the start of `b` (the usual
/// lengths of a record's fields): its value and how many bytes it took;
/// `None` for anything else. What the fast paths that read a field from its
/// first bytes share.
#[inline(always)]
pub(crate) fn short_len(b: &[u8]) -> Option<(usize, usize)> {
    match *b {
        [l, ..] if l < 0x80 => Some((l as usize, 1)),
        [l0, l1, ..] if l1 < 0x80 => Some(((l0 & 0x7f) as usize | (l1 as usize) << 7, 2)),
        _ => None,
    }
}

impl<'a> Iterator for FieldReader<'a> {
    type Item = Result<Field<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.bytes.is_empty() {
            return None;
        }
        let r = self.bytes.field(self.depth);
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// Checks that `buf` is a well-formed message at `depth` as far as the wire
/// format goes (tags, lengths, groups), without knowing its schema. Returns
/// the number of fields.
pub fn check_message(buf: &[u8], base: u64, depth: u32) -> Result<usize, DecodeError> {
    let mut n = 0;
    for f in FieldReader::new(buf, base, depth) {
        f?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(buf: &[u8]) -> Result<Field<'_>, DecodeError> {
        ByteReader::new(buf, 100).field(0)
    }

    #[test]
    fn tags_and_wire_types() {
        assert_eq!(
            first(&[0x08, 0x96, 0x01]).unwrap().value,
            Value::Varint(150)
        );
        // field 0
        let e = first(&[0x00, 0x01]).unwrap_err();
        assert_eq!(e, DecodeError::new(100, DecodeReason::FieldNumberZero));
        // wire types 6 and 7
        for code in [6u8, 7] {
            let e = first(&[0x08 | code, 0x01]).unwrap_err();
            assert_eq!(e.reason, DecodeReason::InvalidWireType(code));
        }
        // largest field number, 5-byte tag
        let mut buf = Vec::new();
        encode_varint((MAX_FIELD_NUMBER as u64) << 3, &mut buf);
        buf.push(0);
        let f = first(&buf).unwrap();
        assert_eq!(f.number, MAX_FIELD_NUMBER);
        // tag above 2^32 - 1
        let mut buf = Vec::new();
        encode_varint(1 << 32, &mut buf);
        assert_eq!(first(&buf).unwrap_err().reason, DecodeReason::TagTooLong);
        // 6-byte tag, even if the value is small (overlong)
        let e = first(&[0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00]).unwrap_err();
        assert_eq!(e.reason, DecodeReason::TagTooLong);
        // 5-byte overlong tag is fine
        let f = first(&[0x88, 0x80, 0x80, 0x80, 0x00, 0x05]).unwrap();
        assert_eq!((f.number, f.value), (1, Value::Varint(5)));
    }

    #[test]
    fn lengths() {
        let f = first(&[0x0a, 0x02, 1, 2, 3]).unwrap();
        assert_eq!(f.value, Value::Len(&[1, 2]));
        assert_eq!(f.value_offset, 102);
        let e = first(&[0x0a, 0x03, 1, 2]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(
                100,
                DecodeReason::LengthOverrun {
                    declared: 3,
                    available: 2
                }
            )
        );
        // 6-byte length
        let e = first(&[0x0a, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00]).unwrap_err();
        assert_eq!(e.reason, DecodeReason::LengthTooLong);
        // 2^31 is too long even when 5 bytes
        let e = first(&[0x0a, 0x80, 0x80, 0x80, 0x80, 0x08]).unwrap_err();
        assert_eq!(e.reason, DecodeReason::LengthTooLong);
        // overlong 5-byte zero length is fine
        let f = first(&[0x0a, 0x80, 0x80, 0x80, 0x80, 0x00]).unwrap();
        assert_eq!(f.value, Value::Len(&[]));
        // truncated inside the length: reported at the field's tag
        let e = first(&[0x0a, 0x80]).unwrap_err();
        assert_eq!(e, DecodeError::new(100, DecodeReason::Truncated));
    }

    #[test]
    fn varints() {
        // 10 bytes, 10th byte bits past 64 dropped
        let mut buf = vec![0x08];
        buf.extend_from_slice(&[0xff; 9]);
        buf.push(0x7f);
        assert_eq!(first(&buf).unwrap().value, Value::Varint(u64::MAX));
        // 11 bytes
        let mut buf = vec![0x08];
        buf.extend_from_slice(&[0x80; 10]);
        buf.push(0x00);
        assert_eq!(first(&buf).unwrap_err().reason, DecodeReason::VarintTooLong);
        // overlong zero
        let f = first(&[0x08, 0x80, 0x80, 0x00]).unwrap();
        assert_eq!(f.value, Value::Varint(0));
        let e = first(&[0x08, 0x80]).unwrap_err();
        assert_eq!(e, DecodeError::new(100, DecodeReason::Truncated));
    }

    #[test]
    fn fixed() {
        let f = first(&[0x0d, 1, 0, 0, 0]).unwrap();
        assert_eq!(f.value, Value::Fixed32(1));
        let f = first(&[0x09, 1, 0, 0, 0, 0, 0, 0, 0x80]).unwrap();
        assert_eq!(f.value, Value::Fixed64(0x8000_0000_0000_0001));
        assert_eq!(
            first(&[0x09, 1, 0, 0]).unwrap_err(),
            DecodeError::new(100, DecodeReason::Truncated)
        );
    }

    #[test]
    fn groups() {
        // field 1 group containing field 2 varint and a nested group 3
        let buf = [0x0b, 0x10, 0x01, 0x1b, 0x1c, 0x0c, 0x08, 0x07];
        let fields: Vec<_> = FieldReader::new(&buf, 0, 0)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0].value, Value::Group(&[0x10, 0x01, 0x1b, 0x1c]));
        assert_eq!(fields[1].value, Value::Varint(7));
        // unterminated
        let e = first(&[0x0b, 0x10, 0x01]).unwrap_err();
        assert_eq!(e, DecodeError::new(100, DecodeReason::UnterminatedGroup(1)));
        // crossed: start 1, start 3, end 1
        let e = first(&[0x0b, 0x1b, 0x0c, 0x1c, 0x0c]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(102, DecodeReason::UnexpectedEndGroup(1))
        );
        // stray end group
        let e = first(&[0x0c]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(100, DecodeReason::UnexpectedEndGroup(1))
        );
    }

    #[test]
    fn group_depth_limit() {
        let nested = |n: usize| {
            let mut v = vec![0x0b; n];
            v.extend(std::iter::repeat_n(0x0c, n));
            v
        };
        // 100 nested groups inside a top-level message: depths 1..=100, fine.
        assert!(first(&nested(100)).is_ok());
        let e = first(&nested(101)).unwrap_err();
        assert_eq!(e.reason, DecodeReason::DepthLimitExceeded);
        // 100 000 levels fail without exhausting the stack.
        let e = first(&nested(100_000)).unwrap_err();
        assert_eq!(e.reason, DecodeReason::DepthLimitExceeded);
    }

    #[test]
    fn reader_is_fused_after_error() {
        let buf = [0x08, 0x01, 0x0f, 0x08, 0x02];
        let mut r = FieldReader::new(&buf, 0, 0);
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }
}
