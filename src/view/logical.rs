//! Logical messages: the concatenation of the payloads of one field, walked
//! in place.
//!
//! Protobuf merges a singular message field that appears several times, and
//! parsing the concatenation of two encodings is the same as merging them. So
//! `Example.features`, a map value, or a oneof member that repeats are each
//! one *logical* message made of several byte segments. A [`Logical`] names
//! such a message without collecting its segments: a root buffer and a path of
//! up to [`MAX_PATH`] field numbers to descend; iterating it walks the root and
//! yields the fields of every matching payload in wire order. Nothing is
//! allocated.

use crate::wire::{DecodeError, DecodeReason};
use crate::wire::{Field, FieldReader, Value, MAX_DEPTH};

/// Longest path below a root that the schemas need.
pub(crate) const MAX_PATH: usize = 3;

/// A logical message: the payloads of `path` below `root`, concatenated.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Logical<'a> {
    root: &'a [u8],
    base: u64,
    depth: u32,
    path: [u32; MAX_PATH],
    len: u8,
    /// Payloads of the last path step whose tag is before this offset are
    /// left out (they were cleared by a different oneof member).
    skip_before: u64,
}

impl<'a> Logical<'a> {
    /// The message `root` itself, at absolute offset `base` and nesting `depth`.
    pub(crate) fn root(root: &'a [u8], base: u64, depth: u32) -> Self {
        Logical {
            root,
            base,
            depth,
            path: [0; MAX_PATH],
            len: 0,
            skip_before: 0,
        }
    }

    /// The logical message formed by the payloads of field `number`.
    pub(crate) fn child(mut self, number: u32) -> Self {
        debug_assert!((self.len as usize) < MAX_PATH);
        if (self.len as usize) < MAX_PATH {
            self.path[self.len as usize] = number;
            self.len += 1;
        }
        self.skip_before = 0;
        self
    }

    /// [`child`](Self::child), but when this is a plain message made of that
    /// one field only, the field's payload itself (a plain message one level
    /// deeper): the same bytes, without the walk down the path on every read.
    pub(crate) fn child_collapsed(self, number: u32) -> Self {
        match self.single_len_field(number) {
            Some((payload, at)) if self.depth < MAX_DEPTH => {
                Logical::root(payload, at, self.depth + 1)
            }
            _ => self.child(number),
        }
    }

    /// Leaves out payloads of the last path step that start before `offset`.
    pub(crate) fn skip_before(mut self, offset: u64) -> Self {
        self.skip_before = offset;
        self
    }

    /// The bytes, their offset and depth when this is one plain message (no
    /// path: a single payload, read as it is).
    pub(crate) fn plain(&self) -> Option<(&'a [u8], u64, u32)> {
        (self.len == 0).then_some((self.root, self.base, self.depth))
    }

    /// Nesting depth of this logical message.
    pub(crate) fn depth(&self) -> u32 {
        self.depth + self.len as u32
    }

    /// Absolute offset of the root's first byte.
    pub(crate) fn root_offset(&self) -> u64 {
        self.base
    }

    /// When this is a plain message (no path) whose first field has wire
    /// type LEN, a number from 1 to 15 (a one-byte tag) and a length of at
    /// most 5 bytes that fits: its number, payload and the payload's
    /// absolute offset, read from the first bytes without a field walk.
    #[inline]
    pub(crate) fn first_len_field(&self) -> Option<(u32, &'a [u8], u64)> {
        if self.len != 0 {
            return None;
        }
        let (&tag, rest) = self.root.split_first()?;
        if tag & 0x87 != 2 || tag < 8 {
            return None; // a continued tag, another wire type, or field 0
        }
        let (len, n) = crate::wire::decode_varint(rest).ok()?;
        if n > crate::wire::MAX_TAG_LEN || len > i32::MAX as u64 {
            return None;
        }
        let payload = rest.get(n..)?.get(..len as usize)?;
        Some(((tag >> 3) as u32, payload, self.base + 1 + n as u64))
    }

    /// When this is a plain message made of exactly one field of the shape
    /// [`first_len_field`](Self::first_len_field) reads: that field. The
    /// common shape of a list, a feature and a map value; anything else
    /// (`None`) takes the general path, which gives the same result.
    #[inline]
    pub(crate) fn single_len_field_any(&self) -> Option<(u32, &'a [u8], u64)> {
        let (number, payload, at) = self.first_len_field()?;
        let end = (at - self.base) as usize + payload.len();
        (end == self.root.len()).then_some((number, payload, at))
    }

    /// [`single_len_field_any`](Self::single_len_field_any) when the field is `number`.
    #[inline]
    pub(crate) fn single_len_field(&self, number: u32) -> Option<(&'a [u8], u64)> {
        match self.single_len_field_any()? {
            (n, payload, at) if n == number => Some((payload, at)),
            _ => None,
        }
    }

    /// The fields of the logical message, in wire order.
    pub(crate) fn fields(&self) -> LogicalFields<'a> {
        let empty = FieldReader::new(&[], 0, 0);
        LogicalFields {
            readers: [
                FieldReader::new(self.root, self.base, self.depth),
                empty.clone(),
                empty.clone(),
                empty,
            ],
            level: 0,
            path: self.path,
            len: self.len,
            depth: self.depth,
            skip_before: self.skip_before,
            done: false,
        }
    }

    /// The segments (payloads) making up the logical message, with their
    /// absolute offsets.
    pub(crate) fn segments(&self) -> Segments<'a> {
        if self.len == 0 {
            return Segments {
                inner: None,
                root: Some((self.root, self.base)),
                last: 0,
                skip_before: 0,
            };
        }
        let mut parent = *self;
        parent.len -= 1;
        parent.skip_before = 0;
        Segments {
            inner: Some(parent.fields()),
            root: None,
            last: self.path[self.len as usize - 1],
            skip_before: self.skip_before,
        }
    }
}

/// Iterator over the fields of a [`Logical`].
#[derive(Clone, Debug)]
pub(crate) struct LogicalFields<'a> {
    readers: [FieldReader<'a>; MAX_PATH + 1],
    level: u8,
    path: [u32; MAX_PATH],
    len: u8,
    depth: u32,
    skip_before: u64,
    done: bool,
}

impl<'a> Iterator for LogicalFields<'a> {
    type Item = Result<Field<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            let level = self.level as usize;
            match self.readers[level].next() {
                None => {
                    if level == 0 {
                        self.done = true;
                        return None;
                    }
                    self.level -= 1;
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Some(Ok(f)) => {
                    if level == self.len as usize {
                        return Some(Ok(f));
                    }
                    if f.number != self.path[level] {
                        continue;
                    }
                    let Value::Len(payload) = f.value else {
                        continue; // wrong wire type: an unknown field
                    };
                    if level + 1 == self.len as usize && f.offset < self.skip_before {
                        continue;
                    }
                    let depth = self.depth + level as u32 + 1;
                    if depth > MAX_DEPTH {
                        self.done = true;
                        return Some(Err(DecodeError::new(
                            f.value_offset,
                            DecodeReason::DepthLimitExceeded,
                        )));
                    }
                    self.readers[level + 1] = FieldReader::new(payload, f.value_offset, depth);
                    self.level += 1;
                }
            }
        }
    }
}

impl<'a> LogicalFields<'a> {
    /// [`FieldReader::next_short_len`] on the innermost message, when the
    /// walk is inside one: the next field when it has that shape, read
    /// without the general walk. `None`, with nothing read, otherwise
    /// (`next` then reads the field, or moves on to the next payload).
    #[inline]
    pub(crate) fn next_short_len(&mut self, tag: u8) -> Option<(&'a [u8], u64, u64)> {
        if self.done || self.level != self.len {
            return None;
        }
        self.readers[self.level as usize].next_short_len(tag)
    }

    /// Whether this walks a plain message (no path) that has no field left:
    /// `next` is then `None`, and cheaply known to be.
    #[inline]
    pub(crate) fn plain_and_done(&self) -> bool {
        self.len == 0 && (self.done || self.readers[0].is_done())
    }
}

/// Iterator over the segments of a [`Logical`]: `(payload, absolute offset)`.
pub(crate) struct Segments<'a> {
    inner: Option<LogicalFields<'a>>,
    root: Option<(&'a [u8], u64)>,
    last: u32,
    skip_before: u64,
}

impl<'a> Iterator for Segments<'a> {
    type Item = Result<(&'a [u8], u64), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let Some(inner) = self.inner.as_mut() else {
            return self.root.take().map(Ok);
        };
        for f in inner.by_ref() {
            match f {
                Err(e) => return Some(Err(e)),
                Ok(f) => {
                    if f.number != self.last || f.offset < self.skip_before {
                        continue;
                    }
                    if let Value::Len(p) = f.value {
                        return Some(Ok((p, f.value_offset)));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(l: Logical<'_>) -> Vec<(u32, u64)> {
        l.fields()
            .map(|f| {
                let f = f.unwrap();
                let v = match f.value {
                    Value::Varint(v) => v,
                    _ => 999,
                };
                (f.number, v)
            })
            .collect()
    }

    #[test]
    fn concatenates_payloads_of_a_field() {
        // field 1 {f2=1}, field 3=5, field 1 {f2=2, f4=3}, field 1 (varint, unknown)
        let buf = [
            0x0a, 0x02, 0x10, 0x01, 0x18, 0x05, 0x0a, 0x04, 0x10, 0x02, 0x20, 0x03, 0x08, 0x01,
        ];
        let root = Logical::root(&buf, 0, 0);
        assert_eq!(collect(root.child(1)), vec![(2, 1), (2, 2), (4, 3)]);
        assert_eq!(collect(root.child(3)), vec![]);
        assert_eq!(collect(root.child(1).skip_before(6)), vec![(2, 2), (4, 3)]);
        let segs: Vec<_> = root.child(1).segments().map(|s| s.unwrap().1).collect();
        assert_eq!(segs, vec![2, 8]);
        assert_eq!(root.child(1).depth(), 1);
    }

    #[test]
    fn nested_paths_and_errors() {
        // field 1 { field 2 { field 5 = 7 } }, then garbage tag with wire type 7
        let buf = [0x0a, 0x04, 0x12, 0x02, 0x28, 0x07, 0x0f];
        let root = Logical::root(&buf, 10, 0);
        let mut it = root.child(1).child(2).fields();
        assert_eq!(it.next().unwrap().unwrap().value, Value::Varint(7));
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e, DecodeError::new(16, DecodeReason::InvalidWireType(7)));
        assert!(it.next().is_none());
    }
}
