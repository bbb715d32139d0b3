//! Maps (`map<string, Feature>`, `map<string, FeatureList>`) and the two
//! ways to walk them: every entry ([`Entries`]) and the effective ones, last
//! entry per key ([`Effective`]).

use super::dedup::{self, Seen, Walk};
use super::entry::{split_entry, Entries, Entry};
use super::logical::Logical;
use super::*;
use crate::wire::{DecodeError, DecodeReason};
use crate::wire::{FieldReader, Value, MAX_DEPTH};

/// A map value made from its entry: a [`NamedFeature`] or a
/// [`NamedFeatureList`] (what [`Named`] yields).
pub trait FromEntry<'a> {
    /// The value of `entry`, in a map of `schema`.
    fn from_entry(entry: Entry<'a>, schema: Schema) -> Self;
}

/// Iterator over the named values of a map ([`NamedFeatures`],
/// [`NamedFeatureLists`]): the entries of `I` ([`Effective`] or [`Entries`])
/// made into `V`s.
#[derive(Clone, Debug)]
pub struct Named<I, V> {
    entries: I,
    schema: Schema,
    value: std::marker::PhantomData<fn() -> V>,
}

impl<I, V> Named<I, V> {
    pub(super) fn new(entries: I, schema: Schema) -> Self {
        Named {
            entries,
            schema,
            value: std::marker::PhantomData,
        }
    }
}

impl<'a, I, V> Iterator for Named<I, V>
where
    I: Iterator<Item = Result<Entry<'a>, DecodeError>>,
    V: FromEntry<'a>,
{
    type Item = Result<V, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let schema = self.schema;
        Some(self.entries.next()?.map(|e| V::from_entry(e, schema)))
    }
}

/// A borrowed map from names to values (a logical message of entries).
#[derive(Debug, Clone, Copy)]
pub(super) struct MapRef<'a> {
    pub(super) msg: Logical<'a>,
    /// The effective entries, when the validation of these bytes found
    /// them (bit i: entry i is effective; see [`Seen`]): 0 when not known.
    /// The views made by `parse` set it, so that iterating and counting
    /// need no walk to mark the replaced entries.
    pub(super) effective: u64,
}

impl<'a> MapRef<'a> {
    pub(super) fn new(msg: Logical<'a>) -> Self {
        MapRef { msg, effective: 0 }
    }

    /// This map with its effective entries known (from the validation of
    /// the same bytes; 0 for not known).
    pub(super) fn known(self, effective: u64) -> Self {
        MapRef { effective, ..self }
    }

    pub(super) fn entries(&self) -> Entries<'a> {
        Entries {
            fields: self.msg.fields(),
            depth: self.msg.depth(),
        }
    }

    /// The last entry whose key is `name`.
    ///
    /// Every entry is read: a later entry with the same key replaces an
    /// earlier one, and a damaged entry anywhere is an error, so the walk
    /// cannot stop at a match. Only the matching entries are made.
    pub(super) fn get(&self, name: &[u8]) -> Result<Option<Entry<'a>>, DecodeError> {
        let mut entries = self.entries();
        let mut found = None;
        while let Some(e) = entries.next_named(name) {
            if let Some(e) = e? {
                found = Some(e);
            }
        }
        Ok(found)
    }

    /// Entries whose key does not appear again later (the effective map, in
    /// the order of each key's last entry).
    pub(super) fn effective(&self) -> Effective<'a> {
        match self.effective {
            0 => Effective::new(self.entries()),
            known => Effective::known(self.entries(), known),
        }
    }

    /// The number of effective entries, or the first damaged entry's error.
    pub(super) fn len(&self) -> Result<usize, DecodeError> {
        match self.effective {
            0 => self.effective().count_effective(),
            known => Ok(known.count_ones() as usize),
        }
    }
}

/// Iterator over the effective entries of a map (see [`FeaturesRef::iter`]):
/// each entry that no later entry with the same name replaces, in wire order.
///
/// On the first call it walks the entries once, hashing their names into a
/// table on the stack, and marks each entry that a later one replaces; then
/// it walks them again, skipping the marked ones. Both walks are linear.
/// The table holds the names of [`Effective::MARKED`] entries; past that,
/// each further window of as many entries is marked by a walk over the
/// entries from it on (see `dedup`).
///
/// A damaged entry ends the map: nothing before it is known to be
/// effective, since an entry past it could replace it. The iterator yields
/// the damaged entry's error in place of each entry that no later entry
/// before the damaged one replaces, then that error once more, then ends.
#[derive(Clone, Debug)]
pub struct Effective<'a> {
    entries: Entries<'a>,
    /// Position of the next entry `entries` yields.
    position: usize,
    started: bool,
    /// Position of the first entry of the window `replaced` covers.
    start: usize,
    /// Entries before the first damaged one (all of them when none is).
    limit: usize,
    /// The first damaged entry's error (at position `limit`).
    error: Option<DecodeError>,
    /// Bit i: the window's entry i is replaced by a later one.
    replaced: [u64; dedup::WORDS],
}

impl<'a> Effective<'a> {
    /// The most entries whose duplicates are found in one walk.
    pub const MARKED: usize = dedup::WINDOW;

    pub(super) fn new(entries: Entries<'a>) -> Self {
        Effective {
            entries,
            position: 0,
            started: false,
            start: 0,
            limit: usize::MAX,
            error: None,
            replaced: [0; dedup::WORDS],
        }
    }

    /// The effective entries of a map of at most 64 entries, known from
    /// its validation (`effective`, bit i: entry i is effective): no walk
    /// to mark them, and none past the last effective entry.
    pub(super) fn known(entries: Entries<'a>, effective: u64) -> Self {
        let mut replaced = [0; dedup::WORDS];
        replaced[0] = !effective;
        Effective {
            entries,
            position: 0,
            started: true,
            start: 0,
            // After the last effective entry, nothing more is yielded.
            limit: 64 - effective.leading_zeros() as usize,
            error: None,
            replaced,
        }
    }

    /// Marks the window of entries from the current position.
    fn mark(&mut self) {
        let mut walk = Walk::new(self.entries.clone(), self.position, self.limit, self.error);
        walk.mark_replaced();
        self.started = true;
        self.start = walk.start;
        self.limit = walk.limit;
        self.error = walk.error;
        self.replaced = walk.replaced;
    }

    /// The number of effective entries, or the damaged entry's error (what
    /// the iterator yields first when an entry is damaged), without the
    /// walk that yields them.
    pub(super) fn count_effective(self) -> Result<usize, DecodeError> {
        let mut n = 0;
        let mut walk = Walk::new(self.entries, 0, usize::MAX, None);
        loop {
            walk.mark_replaced();
            if let Some(e) = walk.error {
                return Err(e);
            }
            n += walk.effective_in_window();
            let end = walk.end();
            match walk.rest.take() {
                Some(rest) if walk.limit > end => {
                    walk = Walk::new(rest, end, walk.limit, None);
                }
                _ => return Ok(n),
            }
        }
    }
}

impl<'a> Iterator for Effective<'a> {
    type Item = Result<Entry<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.mark();
        }
        loop {
            if self.position >= self.limit {
                return self.error.take().map(Err);
            }
            if self.position - self.start == dedup::WINDOW {
                self.mark();
            }
            let e = match self.entries.next()? {
                Ok(e) => e,
                // Not met by the marking walk, which stopped at the first
                // damaged entry: the limit.
                Err(e) => return Some(Err(e)),
            };
            let position = self.position;
            self.position += 1;
            let replaced = position - self.start;
            if self.replaced[replaced / 64] >> (replaced % 64) & 1 == 0 {
                return Some(match self.error {
                    Some(err) => Err(err),
                    None => Ok(e),
                });
            }
        }
    }
}

/// Validates one map entry (its body `body` at `base`, nested at `depth`);
/// returns its key (the last one, empty when there is none).
fn validate_entry<'a>(
    body: &'a [u8],
    base: u64,
    depth: u32,
    strict: bool,
    valid_name: impl Fn(&[u8]) -> bool,
    value: &mut impl FnMut(&'a [u8], u64, u32) -> Result<(), DecodeError>,
) -> Result<&'a [u8], DecodeError> {
    let mut key: &[u8] = &[];
    for g in FieldReader::new(body, base, depth) {
        let g = g?;
        match (g.number, g.value) {
            (1, Value::Len(k)) if !valid_name(k) => {
                return Err(DecodeError::new(g.value_offset, DecodeReason::InvalidUtf8));
            }
            (1, Value::Len(k)) => key = k,
            (2, Value::Len(v)) => {
                let vd = nested_depth(depth, g.value_offset)?;
                value(v, g.value_offset, vd)?;
            }
            _ if strict => return Err(unknown_field(&g)),
            _ => {}
        }
    }
    Ok(key)
}

/// Validates every segment and entry of a map; `value` checks one segment
/// of a value at its depth.
///
/// Returns the map's effective entries as [`Seen::effective`] gives them
/// (bit i: entry i is effective; 0 when the map has more than 64 entries),
/// found on the way: the names go into a table as the walk meets them.
pub(super) fn validate_map<'a>(
    map: MapRef<'a>,
    schema: Schema,
    strict: bool,
    mut value: impl FnMut(&'a [u8], u64, u32) -> Result<(), DecodeError>,
) -> Result<u64, DecodeError> {
    let depth = map.msg.depth();
    let utf8 = schema.utf8_names();
    let valid_name = |k: &[u8]| !utf8 || k.is_ascii() || std::str::from_utf8(k).is_ok();
    let mut seen = Seen::new();
    for seg in map.msg.segments() {
        let (seg, base) = seg?;
        let mut fields = FieldReader::new(seg, base, depth);
        loop {
            // The usual entry, checked from its bytes as the loop below
            // would check it: the key, then the value.
            if let Some((body, _, at)) = fields.next_short_len(0x0a) {
                let key = match (split_entry(body), depth + 1 < MAX_DEPTH) {
                    (Some((key, v, start)), true) => {
                        if !valid_name(key) {
                            return Err(DecodeError::new(at + 2, DecodeReason::InvalidUtf8));
                        }
                        value(v, at + start as u64, depth + 2)?;
                        key
                    }
                    _ => {
                        let d = nested_depth(depth, at)?;
                        validate_entry(body, at, d, strict, valid_name, &mut value)?
                    }
                };
                seen.add(key);
                continue;
            }
            let Some(f) = fields.next() else { break };
            let f = f?;
            let (1, Value::Len(body)) = (f.number, f.value) else {
                if strict {
                    return Err(unknown_field(&f));
                }
                continue;
            };
            let d = nested_depth(depth, f.value_offset)?;
            seen.add(validate_entry(
                body,
                f.value_offset,
                d,
                strict,
                valid_name,
                &mut value,
            )?);
        }
    }
    let effective = seen.effective();
    // A map whose every entry is effective has no duplicate key.
    let all = (effective != 0).then(|| effective.count_ones() as usize == seen.count());
    if strict && all != Some(true) {
        if let Some(offset) = Walk::first_duplicate(map.entries())? {
            return Err(DecodeError::new(offset, DecodeReason::DuplicateKey));
        }
    }
    Ok(effective)
}
