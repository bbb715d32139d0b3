//! Owned messages and byte-exact encoders (docs/FORMAT.md §4).
//!
//! The encoders produce exactly the bytes of Google's `SerializeToString` for
//! the same message, with map entries in the order the caller inserted them:
//! minimal varints, packed numeric lists, fields in field-number order, map
//! entries always with both key and value, empty lists written as an empty
//! list message, and a feature without kind written as an empty message.
//! [`Features::sort`] gives the key order of C++'s deterministic serialization
//! instead.
//!
//! Every message computes its exact [`encoded_len`](Example::encoded_len);
//! `to_bytes` allocates once at that size, and `encode_to` writes into any
//! [`BufMut`] (a `Vec<u8>`, a `BytesMut`, a slice) without allocating when
//! the buffer has room.
//!
//! ```
//! use recordwire::encode::{Example, Feature, Features};
//!
//! let mut features = Features::new();
//! features.insert("label", Feature::Int64(vec![7]));
//! features.insert("w", Feature::Float(vec![1.0, 0.5]));
//! let example = Example::with_features(features);
//! let bytes = example.to_bytes()?;
//! assert_eq!(bytes.len(), example.encoded_len()?);
//! assert_eq!(&bytes[..4], [0x0a, 0x23, 0x0a, 0x0e]); // features, 35 bytes; first entry, 14
//! # Ok::<(), recordwire::encode::EncodeError>(())
//! ```

mod from_view;
mod output;
mod writer;

pub use from_view::{
    encode_feature_ref, example_from_view, feature_from_view, feature_ref_encoded_len,
    message_from_view, ofrecord_from_view, rewrite_features, sequence_example_from_view, Rewrite,
    ViewEncodeError,
};
pub use output::{native_framing, output_compression, output_framing, FramingConflict};
pub use writer::{write_file_atomic, FinishTarget, RecordWriter, WriterOptions};

use bytes::BufMut;

use crate::view::{Kind, Schema};
use crate::wire::{encoded_len_varint, put_varint};

/// Why a message cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A feature's list kind does not exist in the target schema (a
    /// `double_list` or `int32_list` in a tf.Example).
    #[error(
        "feature {:?} is {} (an OFRecord-only kind, which tf.Example has no equivalent for)",
        String::from_utf8_lossy(.name),
        crate::names::with_article(.kind.name())
    )]
    KindNotInSchema {
        /// The feature's name.
        name: Vec<u8>,
        /// Its kind.
        kind: Kind,
    },
    /// A message is larger than protobuf allows (2 GiB).
    #[error("message larger than 2 GiB")]
    TooLarge,
    /// A tf.Example or SequenceExample name that is not valid UTF-8 (those
    /// messages are proto3, whose parsers reject it).
    #[error("name {} is not valid UTF-8, which tf.Example requires", crate::names::quoted(.name))]
    InvalidUtf8Name {
        /// The name's bytes.
        name: Vec<u8>,
    },
}

const MAX_MESSAGE: usize = i32::MAX as usize;

/// A `Feature`: one list, or none.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Feature {
    /// No kind set: encoded as an empty message.
    #[default]
    None,
    /// `bytes_list`
    Bytes(Vec<Vec<u8>>),
    /// `float_list`
    Float(Vec<f32>),
    /// `double_list` (OFRecord only)
    Double(Vec<f64>),
    /// `int32_list` (OFRecord only)
    Int32(Vec<i32>),
    /// `int64_list`
    Int64(Vec<i64>),
}

impl Feature {
    /// The kind, or `None` for a feature with no kind.
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Feature::None => return None,
            Feature::Bytes(_) => Kind::Bytes,
            Feature::Float(_) => Kind::Float,
            Feature::Double(_) => Kind::Double,
            Feature::Int32(_) => Kind::Int32,
            Feature::Int64(_) => Kind::Int64,
        })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Feature::None => 0,
            Feature::Bytes(v) => v.len(),
            Feature::Float(v) => v.len(),
            Feature::Double(v) => v.len(),
            Feature::Int32(v) => v.len(),
            Feature::Int64(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The one quantity that costs a pass over the values: the byte length
    /// of the packed run (numeric lists) or of the list message (bytes).
    #[inline]
    pub(crate) fn payload_len(&self) -> usize {
        match self {
            Feature::None => 0,
            Feature::Bytes(v) => v.iter().map(|b| len_field_len(1, b.len())).sum(),
            Feature::Float(v) => v.len() * 4,
            Feature::Double(v) => v.len() * 8,
            Feature::Int32(v) => v.iter().map(|&x| encoded_len_varint(x as i64 as u64)).sum(),
            Feature::Int64(v) => v.iter().map(|&x| encoded_len_varint(x as u64)).sum(),
        }
    }

    /// `(list message length, Feature message length)` from [`payload_len`](Self::payload_len).
    #[inline]
    pub(crate) fn lens(&self, payload: usize) -> (usize, usize) {
        let list = match self {
            Feature::None => return (0, 0),
            Feature::Bytes(_) => payload,
            _ if payload == 0 => 0,
            _ => len_field_len(1, payload),
        };
        (list, len_field_len(1, list))
    }

    /// Exact length of the encoded `Feature` message.
    pub fn encoded_len(&self) -> usize {
        self.lens(self.payload_len()).1
    }

    /// Appends the encoded `Feature` message (without its own tag or length)
    /// for `schema`. `name` is only used in errors.
    pub fn encode_to<B: BufMut>(
        &self,
        schema: Schema,
        name: &[u8],
        out: &mut B,
    ) -> Result<(), EncodeError> {
        self.encode_with(schema, name, self.payload_len(), out)
    }

    /// [`encode_to`](Self::encode_to) with the payload length already known.
    pub(crate) fn encode_with<B: BufMut>(
        &self,
        schema: Schema,
        name: &[u8],
        payload: usize,
        out: &mut B,
    ) -> Result<(), EncodeError> {
        let Some(kind) = self.kind() else {
            return Ok(());
        };
        let field = schema
            .field_of(kind)
            .ok_or_else(|| EncodeError::KindNotInSchema {
                name: name.to_vec(),
                kind,
            })?;
        let (list_len, _) = self.lens(payload);
        put_tag_len(out, field, list_len);
        if let Feature::Bytes(v) = self {
            for b in v {
                put_tag_len(out, 1, b.len());
                out.put_slice(b);
            }
            return Ok(());
        }
        if payload == 0 {
            return Ok(());
        }
        put_tag_len(out, 1, payload);
        match self {
            Feature::Float(v) => {
                for x in v {
                    out.put_slice(&x.to_le_bytes());
                }
            }
            Feature::Double(v) => {
                for x in v {
                    out.put_slice(&x.to_le_bytes());
                }
            }
            Feature::Int32(v) => {
                for &x in v {
                    put_varint(x as i64 as u64, out);
                }
            }
            Feature::Int64(v) => {
                for &x in v {
                    put_varint(x as u64, out);
                }
            }
            Feature::None | Feature::Bytes(_) => {}
        }
        Ok(())
    }
}

/// Length of a length-delimited field with a one-byte tag (field < 16).
#[inline]
pub(crate) fn len_field_len(_field: u32, len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

/// Appends the tag of length-delimited `field` (< 16) and `len`.
#[inline]
pub fn put_tag_len<B: BufMut>(out: &mut B, field: u32, len: usize) {
    out.put_u8(((field << 3) | 2) as u8);
    put_varint(len as u64, out);
}

/// A map from names to values that keeps insertion order, as Python dicts
/// and protobuf's own serializers do; inserting an existing name replaces its
/// value in place.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NamedMap<V> {
    entries: Vec<(Vec<u8>, V)>,
}

impl<V> NamedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        NamedMap {
            entries: Vec::new(),
        }
    }

    /// Inserts or replaces `name`; returns the previous value.
    pub fn insert(&mut self, name: impl AsRef<[u8]>, value: V) -> Option<V> {
        let name = name.as_ref();
        match self.entries.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => Some(std::mem::replace(v, value)),
            None => {
                self.entries.push((name.to_vec(), value));
                None
            }
        }
    }

    /// The value for `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Option<&V> {
        let name = name.as_ref();
        self.entries.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Removes `name`; returns its value.
    pub fn remove(&mut self, name: impl AsRef<[u8]>) -> Option<V> {
        let name = name.as_ref();
        let i = self.entries.iter().position(|(n, _)| n == name)?;
        Some(self.entries.remove(i).1)
    }

    /// Entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> {
        self.entries.iter().map(|(n, v)| (n.as_slice(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sorts the entries by name bytes: the order of C++'s deterministic
    /// serialization.
    pub fn sort(&mut self) {
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
}

impl<K: AsRef<[u8]>, V> FromIterator<(K, V)> for NamedMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut m = NamedMap::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

/// A `Features` map (`map<string, Feature>`), in insertion order.
pub type Features = NamedMap<Feature>;

impl Features {
    /// Exact length of the encoded map's entries (the `Features` message, or
    /// an OFRecord).
    pub fn encoded_len(&self) -> usize {
        self.entries
            .iter()
            .map(|(n, f)| len_field_len(1, entry_len(n.len(), f.encoded_len())))
            .sum()
    }

    /// Appends the encoded entries.
    pub fn encode_to<B: BufMut>(&self, schema: Schema, out: &mut B) -> Result<(), EncodeError> {
        for (name, feature) in &self.entries {
            let payload = feature.payload_len();
            put_entry_header(out, name, feature.lens(payload).1);
            feature.encode_with(schema, name, payload, out)?;
        }
        Ok(())
    }

    /// Checks that every feature's kind exists in `schema`.
    pub fn check_schema(&self, schema: Schema) -> Result<(), EncodeError> {
        for (name, f) in &self.entries {
            if schema == Schema::TensorFlow && std::str::from_utf8(name).is_err() {
                return Err(EncodeError::InvalidUtf8Name { name: name.clone() });
            }
            if let Some(kind) = f.kind() {
                if schema.field_of(kind).is_none() {
                    return Err(EncodeError::KindNotInSchema {
                        name: name.clone(),
                        kind,
                    });
                }
            }
        }
        Ok(())
    }
}

/// Appends the header of a map entry (`map<string, Feature>` or
/// `map<string, FeatureList>`): the entry's tag and length, then the key
/// field; the caller appends the value field's payload of `value_len` bytes
/// right after.
pub fn put_entry_header<B: BufMut>(out: &mut B, name: &[u8], value_len: usize) {
    put_tag_len(out, 1, entry_len(name.len(), value_len));
    put_tag_len(out, 1, name.len());
    out.put_slice(name);
    put_tag_len(out, 2, value_len);
}

/// Length of a map entry with both key and value written.
#[inline]
pub(crate) fn entry_len(key_len: usize, value_len: usize) -> usize {
    len_field_len(1, key_len) + len_field_len(2, value_len)
}

fn check_size(len: usize) -> Result<usize, EncodeError> {
    if len > MAX_MESSAGE {
        Err(EncodeError::TooLarge)
    } else {
        Ok(len)
    }
}

/// Shared by the top-level messages: encode into a Vec sized exactly.
macro_rules! top_level {
    ($t:ty) => {
        impl $t {
            /// The encoded message as a new `Vec`, allocated once at its exact size.
            pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
                let mut out = Vec::with_capacity(self.encoded_len()?);
                self.encode_to(&mut out)?;
                Ok(out)
            }
        }
    };
}

/// An owned `tf.Example`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Example {
    /// The features; `None` when the `features` field is absent (JSON `{}`),
    /// `Some(empty)` when it is present but empty (JSON `{"features": {}}`).
    pub features: Option<Features>,
}

impl Example {
    /// An example with these features.
    pub fn with_features(features: Features) -> Self {
        Example {
            features: Some(features),
        }
    }

    /// Exact encoded length.
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        check_size(match &self.features {
            None => 0,
            Some(f) => len_field_len(1, f.encoded_len()),
        })
    }

    /// Appends the encoded message to `out` (which grows as needed; reserve
    /// [`encoded_len`](Self::encoded_len) first to avoid reallocations).
    pub fn encode_to<B: BufMut>(&self, out: &mut B) -> Result<(), EncodeError> {
        if let Some(f) = &self.features {
            f.check_schema(Schema::TensorFlow)?;
            let features_len = f.encoded_len();
            check_size(len_field_len(1, features_len))?;
            put_tag_len(out, 1, features_len);
            f.encode_to(Schema::TensorFlow, out)?;
        }
        Ok(())
    }
}
top_level!(Example);

/// An owned OneFlow `OFRecord`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OfRecord {
    /// The features.
    pub features: Features,
}

impl OfRecord {
    /// A record with these features.
    pub fn with_features(features: Features) -> Self {
        OfRecord { features }
    }

    /// Exact encoded length.
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        check_size(self.features.encoded_len())
    }

    /// Appends the encoded message to `out`.
    pub fn encode_to<B: BufMut>(&self, out: &mut B) -> Result<(), EncodeError> {
        self.encoded_len()?;
        self.features.encode_to(Schema::OneFlow, out)
    }
}
top_level!(OfRecord);

/// An owned `FeatureList` (`repeated Feature feature = 1`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FeatureList {
    /// The features, in order.
    pub features: Vec<Feature>,
}

impl FeatureList {
    fn encoded_len(&self) -> usize {
        self.features
            .iter()
            .map(|f| len_field_len(1, f.encoded_len()))
            .sum()
    }

    fn encode_to<B: BufMut>(&self, name: &[u8], out: &mut B) -> Result<(), EncodeError> {
        for f in &self.features {
            put_tag_len(out, 1, f.encoded_len());
            f.encode_to(Schema::TensorFlow, name, out)?;
        }
        Ok(())
    }
}

/// A `FeatureLists` map, in insertion order.
pub type FeatureLists = NamedMap<FeatureList>;

impl FeatureLists {
    fn encoded_len(&self) -> usize {
        self.entries
            .iter()
            .map(|(n, l)| len_field_len(1, entry_len(n.len(), l.encoded_len())))
            .sum()
    }

    fn encode_to<B: BufMut>(&self, out: &mut B) -> Result<(), EncodeError> {
        for (name, list) in &self.entries {
            let value_len = list.encoded_len();
            put_tag_len(out, 1, entry_len(name.len(), value_len));
            put_tag_len(out, 1, name.len());
            out.put_slice(name);
            put_tag_len(out, 2, value_len);
            list.encode_to(name, out)?;
        }
        Ok(())
    }
}

/// An owned `tf.SequenceExample`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceExample {
    /// The context features; `None` when absent.
    pub context: Option<Features>,
    /// The feature lists; `None` when absent.
    pub feature_lists: Option<FeatureLists>,
}

impl SequenceExample {
    /// Exact encoded length.
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        let c = self
            .context
            .as_ref()
            .map_or(0, |f| len_field_len(1, f.encoded_len()));
        let l = self
            .feature_lists
            .as_ref()
            .map_or(0, |f| len_field_len(2, f.encoded_len()));
        check_size(c + l)
    }

    /// Appends the encoded message to `out`.
    pub fn encode_to<B: BufMut>(&self, out: &mut B) -> Result<(), EncodeError> {
        self.encoded_len()?;
        if let Some(l) = &self.feature_lists {
            for (name, list) in l.iter() {
                if std::str::from_utf8(name).is_err() {
                    return Err(EncodeError::InvalidUtf8Name {
                        name: name.to_vec(),
                    });
                }
                for f in &list.features {
                    if let Some(kind) = f
                        .kind()
                        .filter(|&k| Schema::TensorFlow.field_of(k).is_none())
                    {
                        return Err(EncodeError::KindNotInSchema {
                            name: name.to_vec(),
                            kind,
                        });
                    }
                }
            }
        }
        if let Some(c) = &self.context {
            c.check_schema(Schema::TensorFlow)?;
            put_tag_len(out, 1, c.encoded_len());
            c.encode_to(Schema::TensorFlow, out)?;
        }
        if let Some(l) = &self.feature_lists {
            put_tag_len(out, 2, l.encoded_len());
            l.encode_to(out)?;
        }
        Ok(())
    }
}
top_level!(SequenceExample);
top_level!(Message);

/// A record of any payload kind, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// `tf.Example`
    Example(Example),
    /// `tf.SequenceExample`
    SequenceExample(SequenceExample),
    /// OneFlow `OFRecord`
    OfRecord(OfRecord),
    /// Bytes, not a message.
    Raw(Vec<u8>),
}

impl Message {
    /// Exact encoded length.
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        match self {
            Message::Example(m) => m.encoded_len(),
            Message::SequenceExample(m) => m.encoded_len(),
            Message::OfRecord(m) => m.encoded_len(),
            Message::Raw(b) => Ok(b.len()),
        }
    }

    /// Appends the encoded message to `out`.
    pub fn encode_to<B: BufMut>(&self, out: &mut B) -> Result<(), EncodeError> {
        match self {
            Message::Example(m) => m.encode_to(out),
            Message::SequenceExample(m) => m.encode_to(out),
            Message::OfRecord(m) => m.encode_to(out),
            Message::Raw(b) => {
                out.put_slice(b);
                Ok(())
            }
        }
    }

    /// Sorts every map by key bytes (C++ deterministic serialization order).
    pub fn sort_maps(&mut self) {
        match self {
            Message::Example(m) => {
                if let Some(f) = &mut m.features {
                    f.sort();
                }
            }
            Message::SequenceExample(m) => {
                if let Some(f) = &mut m.context {
                    f.sort();
                }
                if let Some(l) = &mut m.feature_lists {
                    l.sort();
                }
            }
            Message::OfRecord(m) => m.features.sort(),
            Message::Raw(_) => {}
        }
    }
}

#[cfg(test)]
mod tests;
