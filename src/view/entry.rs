//! Map entries (`map<string, Feature>`, `map<string, FeatureList>`) as they
//! stand on the wire: one [`Entry`], and [`Entries`], every entry in wire
//! order. The effective map and the duplicate search (`map`, `dedup`) are
//! built on these.

use super::feature::nested_depth;
use super::logical::{self, Logical};
use crate::wire::{DecodeError, FieldReader, Value, MAX_DEPTH};

/// One entry of a map (`map<string, Feature>` or `map<string, FeatureList>`)
/// as it stands on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The key's raw bytes (empty when the key is absent).
    pub name: &'a [u8],
    /// Absolute offset of the entry's tag.
    pub offset: u64,
    /// Absolute offset of the key's bytes (of the entry's body when the key is absent).
    pub name_offset: u64,
    pub(super) value: Logical<'a>,
}

impl<'a> Entry<'a> {
    /// The key as UTF-8, when it is.
    pub fn name_str(&self) -> Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(self.name)
    }
}

/// Parses one map entry: last key wins, value fields merge.
///
/// Returns the key, its offset, and the value as a logical message: when the
/// value field occurs exactly once (the usual case) that is its payload
/// itself, so reading the value does not walk the entry again; otherwise the
/// concatenation of the value fields. Every field of the entry is read here,
/// so an error anywhere in the entry is reported when the entry is reached.
pub(super) fn parse_entry(
    body: &[u8],
    base: u64,
    depth: u32,
) -> Result<(&[u8], u64, Logical<'_>), DecodeError> {
    // The usual shape, `0a <len> key 12 <len> value` and nothing else, from
    // its first bytes.
    if depth < MAX_DEPTH {
        if let Some((1, key, key_offset)) = Logical::root(body, base, depth).first_len_field() {
            let after = key_offset + key.len() as u64;
            let rest = body.get((after - base) as usize..).unwrap_or_default();
            if let Some((value, at)) = Logical::root(rest, after, depth).single_len_field(2) {
                return Ok((key, key_offset, Logical::root(value, at, depth + 1)));
            }
        }
    }
    let mut key: &[u8] = &[];
    let mut key_offset = base;
    let mut values = 0u32;
    let mut single = Logical::root(&[], base, depth + 1);
    for f in FieldReader::new(body, base, depth) {
        let f = f?;
        match (f.number, f.value) {
            (1, Value::Len(k)) => {
                key = k;
                key_offset = f.value_offset;
            }
            (2, Value::Len(v)) => {
                values += 1;
                single = Logical::root(v, f.value_offset, depth + 1);
            }
            _ => {}
        }
    }
    // At the depth limit the single value is not taken as it is: the merged
    // path checks the depth when it descends (see `LogicalFields`), so the
    // depth error is reported at the value, as for a repeated value field.
    let value = if values == 1 && depth < MAX_DEPTH {
        single
    } else {
        Logical::root(body, base, depth).child(2)
    };
    Ok((key, key_offset, value))
}

/// Iterator over every map entry in wire order, duplicates included.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    pub(super) fields: logical::LogicalFields<'a>,
    pub(super) depth: u32,
}

impl<'a> Entries<'a> {
    /// The entry whose body `body` starts at `at` (its tag at `offset`).
    #[inline(never)]
    fn entry(&mut self, body: &'a [u8], offset: u64, at: u64) -> Result<Entry<'a>, DecodeError> {
        let r = nested_depth(self.depth, at).and_then(|d| {
            let (name, name_offset, value) = parse_entry(body, at, d)?;
            Ok(Entry {
                name,
                offset,
                name_offset,
                value,
            })
        });
        if r.is_err() {
            self.fields = Logical::root(&[], 0, 0).fields();
        }
        r
    }
}

/// The usual entry, `0a <len> key 12 <len> value` with one-byte tags, a
/// one-byte key length and a value length of one or two bytes, and nothing
/// else: the key, and the value with its offset in `body`. What
/// [`parse_entry`] returns for it, read from the bytes directly.
#[inline]
pub(super) fn split_entry(body: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let [0x0a, key_len, rest @ ..] = body else {
        return None;
    };
    let key = rest.get(..*key_len as usize)?;
    let [0x12, rest @ ..] = rest.get(key.len()..)? else {
        return None;
    };
    let (len, n) = crate::wire::short_len(rest)?;
    let value = rest.get(n..)?;
    (*key_len < 0x80 && value.len() == len).then_some((key, value, 3 + key.len() + n))
}

impl<'a> Entries<'a> {
    /// The usual entry in the usual place, read straight from the bytes:
    /// `Some(Ok)` with what [`next`](Iterator::next) would return, `None`
    /// (nothing read) when the next entry is not that simple.
    #[inline(always)]
    fn next_usual(&mut self) -> Option<Result<Entry<'a>, DecodeError>> {
        let (body, offset, at) = self.fields.next_short_len(0x0a)?;
        if self.depth + 1 < MAX_DEPTH {
            if let Some((name, value, value_start)) = split_entry(body) {
                return Some(Ok(Entry {
                    name,
                    offset,
                    name_offset: at + 2,
                    value: Logical::root(value, at + value_start as u64, self.depth + 2),
                }));
            }
        }
        Some(self.entry(body, offset, at))
    }

    /// [`next`](Iterator::next) past the usual entry: the general walk.
    #[inline(never)]
    fn next_general(&mut self) -> Option<Result<Entry<'a>, DecodeError>> {
        for f in self.fields.by_ref() {
            let f = match f {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            let (1, Value::Len(body)) = (f.number, f.value) else {
                continue;
            };
            return Some(self.entry(body, f.offset, f.value_offset));
        }
        None
    }

    /// The next entry when its key is `name`, `Ok(None)` when it has
    /// another one, or its error: what [`next`](Iterator::next) yields,
    /// without making the entries that do not match (for lookups).
    #[inline(always)]
    pub(super) fn next_named(
        &mut self,
        name: &[u8],
    ) -> Option<Result<Option<Entry<'a>>, DecodeError>> {
        if let Some((body, offset, at)) = self.fields.next_short_len(0x0a) {
            if self.depth + 1 < MAX_DEPTH {
                if let Some((key, value, value_start)) = split_entry(body) {
                    return Some(Ok((key == name).then(|| Entry {
                        name: key,
                        offset,
                        name_offset: at + 2,
                        value: Logical::root(value, at + value_start as u64, self.depth + 2),
                    })));
                }
            }
            return Some(
                self.entry(body, offset, at)
                    .map(|e| (e.name == name).then_some(e)),
            );
        }
        Some(self.next_general()?.map(|e| (e.name == name).then_some(e)))
    }

    /// The next entry's name and offset, or its error: what
    /// [`next`](Iterator::next) yields, without making the entry (for the
    /// walks that only look at names).
    #[inline(always)]
    pub(super) fn next_name(&mut self) -> Option<Result<(&'a [u8], u64), DecodeError>> {
        if let Some((body, offset, at)) = self.fields.next_short_len(0x0a) {
            if self.depth + 1 < MAX_DEPTH {
                if let Some((name, _, _)) = split_entry(body) {
                    return Some(Ok((name, offset)));
                }
            }
            return Some(self.entry(body, offset, at).map(|e| (e.name, e.offset)));
        }
        Some(self.next_general()?.map(|e| (e.name, e.offset)))
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_usual() {
            Some(e) => Some(e),
            None => self.next_general(),
        }
    }
}
