//! `tf.SequenceExample`: [`SequenceExampleRef`], its `FeatureLists` map
//! ([`FeatureListsRef`]) and each `FeatureList` ([`FeatureListRef`]).

use super::logical::{Logical, LogicalFields};
use super::*;
use crate::wire::DecodeError;
use crate::wire::{FieldReader, Value, MAX_DEPTH};

/// A borrowed `FeatureList` (`repeated Feature feature = 1`).
#[derive(Debug, Clone, Copy)]
pub struct FeatureListRef<'a> {
    pub(super) msg: Logical<'a>,
}

impl<'a> FeatureListRef<'a> {
    /// The features, in order.
    pub fn iter(&self) -> FeatureListIter<'a> {
        FeatureListIter {
            fields: self.msg.fields(),
            depth: self.msg.depth(),
        }
    }

    /// Number of features.
    pub fn len(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for f in self.iter() {
            f?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.len()? == 0)
    }
}

/// Iterator over the features of a `FeatureList`: [`FeatureListRef::iter`].
#[derive(Clone, Debug)]
pub struct FeatureListIter<'a> {
    fields: LogicalFields<'a>,
    depth: u32,
}

impl<'a> Iterator for FeatureListIter<'a> {
    type Item = Result<FeatureRef<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        // The usual frame, a `Feature` field with a short length, from its
        // first bytes (what the walk below would return for it).
        if let Some((b, _, at)) = self.fields.next_short_len(0x0a) {
            return Some(
                nested_depth(self.depth, at).map(|d| FeatureRef::new(b, at, d, Schema::TensorFlow)),
            );
        }
        for f in self.fields.by_ref() {
            let f = match f {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            if let (1, Value::Len(b)) = (f.number, f.value) {
                return Some(
                    nested_depth(self.depth, f.value_offset)
                        .map(|d| FeatureRef::new(b, f.value_offset, d, Schema::TensorFlow)),
                );
            }
        }
        None
    }
}

pub(super) fn validate_feature_list_segment(
    seg: &[u8],
    base: u64,
    depth: u32,
    strict: bool,
) -> Result<(), DecodeError> {
    let mut fields = FieldReader::new(seg, base, depth);
    loop {
        // The usual frame, a `Feature` field with a short length: its one
        // segment checked as `FeatureRef::validate` checks it (outside
        // strict mode, which also looks at how the list is packed).
        if !strict && depth < MAX_DEPTH {
            if let Some((b, _, at)) = fields.next_short_len(0x0a) {
                validate_feature_segment(b, at, depth + 1, Schema::TensorFlow, false)?;
                continue;
            }
        }
        let Some(f) = fields.next() else {
            return Ok(());
        };
        let f = f?;
        match (f.number, f.value) {
            (1, Value::Len(b)) => {
                let d = nested_depth(depth, f.value_offset)?;
                FeatureRef::new(b, f.value_offset, d, Schema::TensorFlow).validate(strict)?;
            }
            _ if strict => return Err(unknown_field(&f)),
            _ => {}
        }
    }
}

/// A named feature list: an entry of a `FeatureLists` map.
#[derive(Debug, Clone, Copy)]
pub struct NamedFeatureList<'a> {
    /// The entry on the wire.
    pub entry: Entry<'a>,
    /// Its value.
    pub list: FeatureListRef<'a>,
}

impl<'a> NamedFeatureList<'a> {
    /// The name's raw bytes.
    pub fn name(&self) -> &'a [u8] {
        self.entry.name
    }
}

/// Iterator over the feature lists of a map: [`FeatureListsRef::iter`]
/// (`I` = [`Effective`]) and [`FeatureListsRef::entries`] (`I` = [`Entries`]).
pub type NamedFeatureLists<'a, I> = Named<I, NamedFeatureList<'a>>;

impl<'a> FromEntry<'a> for NamedFeatureList<'a> {
    fn from_entry(entry: Entry<'a>, _: Schema) -> Self {
        NamedFeatureList {
            entry,
            list: FeatureListRef { msg: entry.value },
        }
    }
}

/// A borrowed `FeatureLists` map (`map<string, FeatureList>`).
#[derive(Debug, Clone, Copy)]
pub struct FeatureListsRef<'a> {
    pub(super) map: MapRef<'a>,
}

impl<'a> FeatureListsRef<'a> {
    /// The feature list named `name` (its last entry).
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureListRef<'a>>, DecodeError> {
        Ok(self
            .map
            .get(name.as_ref())?
            .map(|e| FeatureListRef { msg: e.value }))
    }

    /// The effective feature lists, each name once (see [`FeaturesRef::iter`]).
    pub fn iter(&self) -> NamedFeatureLists<'a, Effective<'a>> {
        Named::new(self.map.effective(), Schema::TensorFlow)
    }

    /// Every entry in wire order, duplicates included.
    pub fn entries(&self) -> NamedFeatureLists<'a, Entries<'a>> {
        Named::new(self.map.entries(), Schema::TensorFlow)
    }

    /// Number of distinct feature lists.
    pub fn len(&self) -> Result<usize, DecodeError> {
        self.map.len()
    }

    /// Whether there are no feature lists.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.map.entries().next().transpose()?.is_none())
    }

    pub(super) fn validate(&self, strict: bool) -> Result<u64, DecodeError> {
        validate_map(self.map, Schema::TensorFlow, strict, |b, off, d| {
            validate_feature_list_segment(b, off, d, strict)
        })
    }
}

/// A borrowed `tf.SequenceExample`.
#[derive(Debug, Clone, Copy)]
pub struct SequenceExampleRef<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) base: u64,
    /// The effective entries of the context and of the feature lists when
    /// `parse` found them (see `MapRef::effective`); 0 when not known.
    pub(super) known: [u64; 2],
}

impl<'a> SequenceExampleRef<'a> {
    /// The context features (`SequenceExample.context.feature`).
    pub fn context(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(
            Logical::root(self.bytes, self.base, 0).child(1),
            Schema::TensorFlow,
        )
        .known(self.known[0])
    }

    /// The feature lists (`SequenceExample.feature_lists.feature_list`).
    pub fn feature_lists(&self) -> FeatureListsRef<'a> {
        FeatureListsRef {
            map: MapRef::new(Logical::root(self.bytes, self.base, 0).child(2)).known(self.known[1]),
        }
    }

    /// Whether the record has a `context` / `feature_lists` field at all.
    pub fn has_parts(&self) -> Result<(bool, bool), DecodeError> {
        let (mut c, mut l) = (false, false);
        for f in FieldReader::new(self.bytes, self.base, 0) {
            let f = f?;
            match (f.number, f.value) {
                (1, Value::Len(_)) => c = true,
                (2, Value::Len(_)) => l = true,
                _ => {}
            }
        }
        Ok((c, l))
    }

    /// Checks the record like `ParseFromString` (and more in strict mode):
    /// the body of [`Self::validate`]. Returns the effective entries of the
    /// context and of the feature lists, each when its part is one field
    /// (its map is then that field's entries), else 0.
    fn check(&self, strict: bool) -> Result<[u64; 2], DecodeError> {
        let mut parts = [(0u32, 0u64); 2];
        validate_top(self.bytes, self.base, strict, |n, b, off| {
            let effective = match n {
                1 => FeaturesRef::new(Logical::root(b, off, 1), Schema::TensorFlow).check(false),
                2 => FeatureListsRef {
                    map: MapRef::new(Logical::root(b, off, 1)),
                }
                .validate(false),
                _ => return None,
            };
            let part = &mut parts[n as usize - 1];
            Some(effective.map(|e| *part = (part.0 + 1, e)))
        })?;
        if strict {
            self.context().validate(true)?;
            self.feature_lists().validate(true)?;
        }
        Ok(parts.map(|(segments, e)| if segments == 1 { e } else { 0 }))
    }
}

payload_view!(SequenceExampleRef, SequenceExample, "`tf.SequenceExample`");
