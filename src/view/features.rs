//! `Features` (`map<string, Feature>`): [`FeaturesRef`] and its iterators.

use super::logical::Logical;
use super::*;
use crate::wire::DecodeError;

/// A named feature: an entry of a `Features` map.
#[derive(Debug, Clone, Copy)]
pub struct NamedFeature<'a> {
    /// The entry on the wire (name, offsets).
    pub entry: Entry<'a>,
    /// Its value (a `Feature` with no kind when the entry has no value).
    pub feature: FeatureRef<'a>,
}

impl<'a> NamedFeature<'a> {
    /// The name's raw bytes.
    pub fn name(&self) -> &'a [u8] {
        self.entry.name
    }
}

/// Iterator over the features of a map: [`FeaturesRef::iter`] (`I` =
/// [`Effective`]: each name once) and [`FeaturesRef::entries`] (`I` =
/// [`Entries`]: every entry on the wire).
pub type NamedFeatures<'a, I> = Named<I, NamedFeature<'a>>;

impl<'a> FromEntry<'a> for NamedFeature<'a> {
    fn from_entry(entry: Entry<'a>, schema: Schema) -> Self {
        NamedFeature {
            entry,
            feature: FeatureRef::from_logical(entry.value, schema),
        }
    }
}

/// A borrowed `Features` map (`map<string, Feature>`): the features of a
/// tf.Example or a SequenceExample's context, or an OFRecord.
#[derive(Debug, Clone, Copy)]
pub struct FeaturesRef<'a> {
    pub(super) map: MapRef<'a>,
    pub(super) schema: Schema,
}

impl<'a> FeaturesRef<'a> {
    pub(super) fn new(msg: Logical<'a>, schema: Schema) -> Self {
        FeaturesRef {
            map: MapRef::new(msg),
            schema,
        }
    }

    /// The map's bytes, their absolute offset and nesting depth, when the map
    /// is one plain message (the usual shape: one `features` field), for
    /// readers with a fast path of their own.
    pub(crate) fn plain_bytes(&self) -> Option<(&'a [u8], u64, u32)> {
        self.map.msg.plain()
    }

    /// The schema of the features.
    pub fn schema(&self) -> Schema {
        self.schema
    }

    /// The feature named `name` (its last entry), without decoding the others.
    ///
    /// It reads every entry, since a later entry with the name would replace
    /// the one found and a damaged entry anywhere is an error; entries with
    /// other names are only compared.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        Ok(self
            .map
            .get(name.as_ref())?
            .map(|e| FeatureRef::from_logical(e.value, self.schema)))
    }

    /// The effective features: each name once, with its last entry, in the
    /// order of those last entries. Finding duplicates costs one extra walk
    /// of the entries, hashing their names into a table on the stack (no
    /// allocation; linear up to [`Effective::MARKED`] entries, one more
    /// walk per further window of as many entries); use [`get`](Self::get)
    /// for lookups. The map of a view made by `parse` skips that walk when
    /// the validation found every name distinct (maps of up to 64 entries
    /// in one field, the usual case): it is then one walk, which ends at
    /// the last entry.
    ///
    /// When an entry is damaged, no entry before it is known to be
    /// effective (a later one could replace it): the iterator yields the
    /// damaged entry's error first (once per entry it holds back, then once
    /// more) and ends.
    pub fn iter(&self) -> NamedFeatures<'a, Effective<'a>> {
        Named::new(self.map.effective(), self.schema)
    }

    /// Every entry in wire order, duplicates included (for tools that show them).
    pub fn entries(&self) -> NamedFeatures<'a, Entries<'a>> {
        Named::new(self.map.entries(), self.schema)
    }

    /// Number of distinct features (one walk of the entries, as
    /// [`iter`](Self::iter) marks them), or the first damaged entry's error.
    pub fn len(&self) -> Result<usize, DecodeError> {
        self.map.len()
    }

    /// Whether there are no features.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.map.entries().next().transpose()?.is_none())
    }

    /// Checks the map the way Google's parser would: every entry, key (UTF-8
    /// for TensorFlow's schema) and value; in strict mode also unknown fields,
    /// duplicate keys and mixed packing.
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        self.check(strict).map(drop)
    }

    /// [`validate`](Self::validate), returning the effective entries the
    /// walk found (see [`MapRef::effective`]).
    pub(super) fn check(&self, strict: bool) -> Result<u64, DecodeError> {
        let schema = self.schema;
        let effective = validate_map(self.map, schema, strict, |body, base, depth| {
            validate_feature_segment(body, base, depth, schema, strict)
        })?;
        if strict {
            for e in self.known(effective).iter() {
                e?.feature.validate(true)?;
            }
        }
        Ok(effective)
    }

    /// This map with its effective entries known (from [`check`](Self::check)
    /// of the same bytes; 0 for not known).
    pub(super) fn known(self, effective: u64) -> Self {
        FeaturesRef {
            map: self.map.known(effective),
            ..self
        }
    }
}
