//! From borrowed views to owned messages, and straight to bytes.

use super::{
    len_field_len, put_tag_len, EncodeError, Example, Feature, FeatureList, Features, Message,
    OfRecord, SequenceExample,
};
use crate::view::{
    ExampleRef, FeatureRef, FeaturesRef, ListRef, NumList, OfRecordRef, PayloadRef, Schema,
    SequenceExampleRef,
};
use crate::wire::DecodeError;
use crate::wire::{encoded_len_varint, put_varint};
use bytes::BufMut;

/// The owned value of a borrowed feature.
pub fn feature_from_view(f: FeatureRef<'_>) -> Result<Feature, DecodeError> {
    Ok(match f.list()? {
        None => Feature::None,
        Some(ListRef::Bytes(l)) => Feature::Bytes(
            l.iter()
                .map(|b| b.map(<[u8]>::to_vec))
                .collect::<Result<_, _>>()?,
        ),
        Some(ListRef::Float(l)) => Feature::Float(l.iter().collect::<Result<_, _>>()?),
        Some(ListRef::Double(l)) => Feature::Double(l.iter().collect::<Result<_, _>>()?),
        Some(ListRef::Int32(l)) => Feature::Int32(l.iter().collect::<Result<_, _>>()?),
        Some(ListRef::Int64(l)) => Feature::Int64(l.iter().collect::<Result<_, _>>()?),
    })
}

fn features_from_view(f: FeaturesRef<'_>) -> Result<Features, DecodeError> {
    let mut out = Features::new();
    for e in f.iter() {
        let e = e?;
        out.insert(e.name(), feature_from_view(e.feature)?);
    }
    Ok(out)
}

/// The owned value of a borrowed tf.Example (unknown fields dropped,
/// duplicates resolved as Google's parser does).
pub fn example_from_view(v: ExampleRef<'_>) -> Result<Example, DecodeError> {
    Ok(Example {
        features: if v.has_features()? {
            Some(features_from_view(v.features())?)
        } else {
            None
        },
    })
}

/// The owned value of a borrowed OFRecord.
pub fn ofrecord_from_view(v: OfRecordRef<'_>) -> Result<OfRecord, DecodeError> {
    Ok(OfRecord {
        features: features_from_view(v.features())?,
    })
}

/// The owned message of any borrowed payload (raw bytes are copied).
///
/// ```
/// use recordwire::encode::{message_from_view, Message};
/// use recordwire::view::{PayloadKind, PayloadRef};
///
/// let bytes = Message::Raw(b"abc".to_vec());
/// let view = PayloadRef::new(PayloadKind::Raw, b"abc", 0);
/// assert_eq!(message_from_view(view)?, bytes);
/// # Ok::<(), recordwire::DecodeError>(())
/// ```
pub fn message_from_view(payload: PayloadRef<'_>) -> Result<Message, DecodeError> {
    Ok(match payload {
        PayloadRef::Example(v) => Message::Example(example_from_view(v)?),
        PayloadRef::SequenceExample(v) => Message::SequenceExample(sequence_example_from_view(v)?),
        PayloadRef::OfRecord(v) => Message::OfRecord(ofrecord_from_view(v)?),
        PayloadRef::Raw(bytes) => Message::Raw(bytes.to_vec()),
    })
}

/// The owned value of a borrowed tf.SequenceExample.
pub fn sequence_example_from_view(
    v: SequenceExampleRef<'_>,
) -> Result<SequenceExample, DecodeError> {
    let (has_context, has_lists) = v.has_parts()?;
    let feature_lists = if has_lists {
        let mut lists = super::FeatureLists::new();
        for l in v.feature_lists().iter() {
            let l = l?;
            let features = l
                .list
                .iter()
                .map(|f| f.and_then(feature_from_view))
                .collect::<Result<_, _>>()?;
            lists.insert(l.name(), FeatureList { features });
        }
        Some(lists)
    } else {
        None
    };
    Ok(SequenceExample {
        context: if has_context {
            Some(features_from_view(v.context())?)
        } else {
            None
        },
        feature_lists,
    })
}

/// An error while encoding from a view: the view's bytes were invalid, or the
/// value has no place in the target schema. Shows the wrapped error's message;
/// the wrapped error is also its [`source`](std::error::Error::source).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewEncodeError {
    /// The input view could not be decoded.
    #[error("{0}")]
    Decode(#[from] DecodeError),
    /// The output schema cannot hold the value.
    #[error("{0}")]
    Encode(#[from] EncodeError),
}

fn packed_varints<T: crate::view::Element>(
    l: &NumList<'_, T>,
    to_u64: fn(T) -> u64,
) -> Result<usize, DecodeError> {
    let mut n = 0;
    for v in l.iter() {
        n += encoded_len_varint(to_u64(v?));
    }
    Ok(n)
}

/// The one quantity that costs a pass over a borrowed list's values: the
/// byte length of its packed run (numeric lists) or of its list message
/// (bytes lists), as [`Feature`]'s owned encoder computes it.
fn payload_len(list: &ListRef<'_>) -> Result<usize, DecodeError> {
    Ok(match list {
        ListRef::Bytes(l) => {
            let mut n = 0;
            for b in l.iter() {
                n += len_field_len(1, b?.len());
            }
            n
        }
        ListRef::Float(l) => l.len()? * 4,
        ListRef::Double(l) => l.len()? * 8,
        ListRef::Int32(l) => packed_varints(l, |x| x as i64 as u64)?,
        ListRef::Int64(l) => packed_varints(l, |x| x as u64)?,
    })
}

/// Length of the canonical list message, from [`payload_len`].
fn list_len(list: &ListRef<'_>, payload: usize) -> usize {
    match list {
        ListRef::Bytes(_) => payload,
        _ if payload == 0 => 0,
        _ => len_field_len(1, payload),
    }
}

/// Writes a fixed-width list's values: its one packed run as it stands when
/// there is one (the wire bytes are already canonical), else value by value.
fn put_fixed<T: crate::view::Element, B: BufMut>(
    l: &NumList<'_, T>,
    out: &mut B,
    put: impl Fn(T, &mut B),
) -> Result<(), DecodeError> {
    match l.packed_bytes()? {
        Some(raw) => out.put_slice(raw),
        None => {
            for v in l.iter() {
                put(v?, out);
            }
        }
    }
    Ok(())
}

/// Exact length of the canonical encoding of a borrowed feature.
pub fn feature_ref_encoded_len(f: FeatureRef<'_>) -> Result<usize, DecodeError> {
    Ok(match f.list()? {
        None => 0,
        Some(l) => len_field_len(1, list_len(&l, payload_len(&l)?)),
    })
}

/// Appends the canonical encoding of a borrowed `Feature` message (without
/// its own tag and length) for `schema`, without building an owned value: a
/// record can be filtered or rewritten without copying the features that
/// stay the same into owned lists. `name` is only used in errors.
pub fn encode_feature_ref<B: BufMut>(
    f: FeatureRef<'_>,
    schema: Schema,
    name: &[u8],
    out: &mut B,
) -> Result<(), ViewEncodeError> {
    let Some(list) = f.list()? else {
        return Ok(());
    };
    let kind = list.kind();
    let field = schema
        .field_of(kind)
        .ok_or_else(|| EncodeError::KindNotInSchema {
            name: name.to_vec(),
            kind,
        })?;
    let payload = payload_len(&list)?;
    put_tag_len(out, field, list_len(&list, payload));
    if !matches!(list, ListRef::Bytes(_)) {
        if payload == 0 {
            return Ok(());
        }
        put_tag_len(out, 1, payload);
    }
    match list {
        ListRef::Bytes(l) => {
            for b in l.iter() {
                let b = b?;
                put_tag_len(out, 1, b.len());
                out.put_slice(b);
            }
        }
        ListRef::Float(l) => put_fixed(&l, out, |v, o| o.put_slice(&v.to_le_bytes()))?,
        ListRef::Double(l) => put_fixed(&l, out, |v, o| o.put_slice(&v.to_le_bytes()))?,
        ListRef::Int32(l) => {
            for v in l.iter() {
                put_varint(v? as i64 as u64, out);
            }
        }
        ListRef::Int64(l) => {
            for v in l.iter() {
                put_varint(v? as u64, out);
            }
        }
    }
    Ok(())
}

/// What to do with one feature when rewriting a record (see [`rewrite_features`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Rewrite {
    /// Keep it: re-encoded canonically straight from the view, no owned copy.
    Keep,
    /// Leave it out.
    Drop,
    /// Replace its value.
    Replace(Feature),
}

/// Rewrites a features map feature by feature into `out`, as map entries of
/// `schema` (an OFRecord's body, or the payload of `Example.features`): `f`
/// decides for each effective feature, in order, whether to keep, drop or
/// replace it. Kept features are re-encoded from the borrowed view, so
/// filtering a record never builds owned values for what stays the same.
///
/// ```
/// use recordwire::encode::{rewrite_features, Feature, Rewrite, Features, Example};
/// use recordwire::view::{ExampleRef, Schema};
///
/// let mut f = Features::new();
/// f.insert("image", Feature::Bytes(vec![vec![0xff; 1000]]));
/// f.insert("label", Feature::Int64(vec![3]));
/// let bytes = Example::with_features(f).to_bytes()?;
///
/// // Drop the image, relabel: the result is an Example's `features` payload.
/// let view = ExampleRef::parse(&bytes, 0)?;
/// let mut body = Vec::new();
/// rewrite_features(view.features(), Schema::TensorFlow, &mut body, |name, _| match name {
///     b"image" => Rewrite::Drop,
///     _ => Rewrite::Replace(Feature::Int64(vec![4])),
/// })?;
/// let mut out = Vec::new();
/// recordwire::encode::put_tag_len(&mut out, 1, body.len());
/// out.extend_from_slice(&body);
/// let mut want = Features::new();
/// want.insert("label", Feature::Int64(vec![4]));
/// assert_eq!(out, Example::with_features(want).to_bytes()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rewrite_features<B: BufMut>(
    features: FeaturesRef<'_>,
    schema: Schema,
    out: &mut B,
    mut f: impl FnMut(&[u8], FeatureRef<'_>) -> Rewrite,
) -> Result<(), ViewEncodeError> {
    for e in features.iter() {
        let e = e?;
        match f(e.name(), e.feature) {
            Rewrite::Drop => {}
            Rewrite::Keep => {
                if let Some(kind) = e.feature.kind()? {
                    if schema.field_of(kind).is_none() {
                        return Err(EncodeError::KindNotInSchema {
                            name: e.name().to_vec(),
                            kind,
                        }
                        .into());
                    }
                }
                super::put_entry_header(out, e.name(), feature_ref_encoded_len(e.feature)?);
                encode_feature_ref(e.feature, schema, e.name(), out)?;
            }
            Rewrite::Replace(v) => {
                if let Some(kind) = v.kind() {
                    if schema.field_of(kind).is_none() {
                        return Err(EncodeError::KindNotInSchema {
                            name: e.name().to_vec(),
                            kind,
                        }
                        .into());
                    }
                }
                super::put_entry_header(out, e.name(), v.encoded_len());
                v.encode_to(schema, e.name(), out)?;
            }
        }
    }
    Ok(())
}
