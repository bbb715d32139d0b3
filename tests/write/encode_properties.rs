//! Property tests of the owned messages and their encoders (docs/FORMAT.md §4) and of
//! the JSON round trip (docs/FORMAT.md §5).
//!
//! Random owned `Example`s, `SequenceExample`s and `OfRecord`s (all five
//! list kinds, int32/int64 extremes, float and double specials with NaN
//! payloads, empty lists, features without kind, empty names, names with
//! quotes, backslashes, control characters, non-ASCII and, in OFRecords, bytes
//! that are not UTF-8) are checked for:
//!
//! 1. `decode(encode(x)) == x` through the views and `*_from_view`;
//! 2. `encoded_len() == to_bytes().len()`, one allocation in `to_bytes` (none
//!    for an empty message) and none in `encode_to` into a buffer with room:
//!    a `Vec` already holding bytes (capacity and pointer unchanged), a
//!    `BytesMut`, a slice of exactly `encoded_len()` bytes (filled); the same
//!    for each `Feature` and `Features` map (allocations are counted by a
//!    per-thread counting allocator);
//! 3. `encode(decode(b)) == b` for canonical `b` written by prost (where it is
//!    canonical) and by an independent canonical writer in this file, and
//!    `encode_feature_ref` / `feature_ref_encoded_len` on every feature of it;
//!    also, for the non-canonical records of `common`'s generators, that
//!    re-encoding is canonical and idempotent;
//! 4. differential against prost's encoder, by value always and byte for byte
//!    where prost's encoding is canonical;
//! 5. JSON: the printer's output reads back to the same message, and so do
//!    `MessageToDict`-style variants (int64 as numbers, lowerCamelCase names,
//!    URL-safe or unpadded base64, `null` fields, `\uXXXX` escapes, ...);
//! 6. `Message::sort_maps` then encode gives entries in ascending key byte
//!    order, whatever the insertion order.
//!
//! Floats are compared by bit pattern (except after JSON, where every NaN is
//! the same `"NaN"`). Failures print the message and its bytes in hex.
//!
//! **prost and canonical bytes.** prost's map encoder leaves out a map entry's
//! key when it is the empty string and its value when it equals the default
//! (a `Feature` with no kind, an empty `FeatureList`); Google's
//! `SerializeToString`, and docs/FORMAT.md §4.1, always write both. prost's `map` fields
//! are therefore canonical only for messages whose keys are non-empty and
//! whose values are set (pinned by
//! `prost_differs_map_entries_omit_empty_key_and_default_value`). For the
//! rest, the maps are also declared here as their wire equivalent, repeated
//! entries whose key and value are `optional` fields, which prost writes
//! whenever they are `Some`: that form is canonical for every message, in
//! insertion order. prost's `map` fields are `BTreeMap`s here, so they are
//! compared with our encoding after `sort_maps()`.
//!
//! The prost messages, entry forms included, are those of
//! `tests/support/prost_mirror.rs`.

use crate::support::common;

use std::fmt::Write as _;

use base64::Engine as _;
use common::{hex, Cfg, Feat, Vals, BASE};
use proptest::prelude::*;
use prost::Message as _;
use recordwire::encode::{
    encode_feature_ref, example_from_view, feature_ref_encoded_len, ofrecord_from_view,
    sequence_example_from_view, EncodeError, Example, Feature, FeatureList, FeatureLists, Features,
    Message, OfRecord, SequenceExample,
};
use recordwire::json;
use recordwire::json::read::message_from_json;
use recordwire::view::{
    ExampleRef, FeatureRef, FeaturesRef, Kind, OfRecordRef, PayloadKind, Schema, SequenceExampleRef,
};
use recordwire::DecodeError;

// A counting allocator (per thread), for "one allocation per record at most,
// none when the caller supplies the buffer"
use crate::counting_alloc;

use counting_alloc::count_allocations;

// prost's view of the schemas, with the maps also as repeated entries
use crate::support::prost_mirror;

use prost_mirror::{of, tf};

// ---------------------------------------------------------------------------
// Comparable forms (floats by bits, maps in order)
// ---------------------------------------------------------------------------

type Fm = Vec<(Vec<u8>, Feat)>;
type Lm = Vec<(Vec<u8>, Vec<Feat>)>;

/// A message's values, floats as bit patterns, map entries in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cmp {
    Example(Option<Fm>),
    Seq(Option<Fm>, Option<Lm>),
    Of(Fm),
    Raw(Vec<u8>),
}

fn feat(f: &Feature) -> Feat {
    match f {
        Feature::None => None,
        Feature::Bytes(v) => Some(Vals::Bytes(v.clone())),
        Feature::Float(v) => Some(Vals::Float(v.iter().map(|x| x.to_bits()).collect())),
        Feature::Double(v) => Some(Vals::Double(v.iter().map(|x| x.to_bits()).collect())),
        Feature::Int32(v) => Some(Vals::Int32(v.clone())),
        Feature::Int64(v) => Some(Vals::Int64(v.clone())),
    }
}

fn fm(f: &Features) -> Fm {
    f.iter().map(|(n, f)| (n.to_vec(), feat(f))).collect()
}

fn lm(l: &FeatureLists) -> Lm {
    l.iter()
        .map(|(n, l)| (n.to_vec(), l.features.iter().map(feat).collect()))
        .collect()
}

fn cmp(m: &Message) -> Cmp {
    match m {
        Message::Example(e) => Cmp::Example(e.features.as_ref().map(fm)),
        Message::SequenceExample(s) => {
            Cmp::Seq(s.context.as_ref().map(fm), s.feature_lists.as_ref().map(lm))
        }
        Message::OfRecord(o) => Cmp::Of(fm(&o.features)),
        Message::Raw(b) => Cmp::Raw(b.clone()),
    }
}

/// Every NaN as the one JSON gives back (`"NaN"` read as a quiet NaN).
fn nan_canonical(c: &Cmp) -> Cmp {
    fn f(x: &Feat) -> Feat {
        x.as_ref().map(|v| match v {
            Vals::Float(v) => Vals::Float(
                v.iter()
                    .map(|&b| {
                        if f32::from_bits(b).is_nan() {
                            f32::NAN.to_bits()
                        } else {
                            b
                        }
                    })
                    .collect(),
            ),
            Vals::Double(v) => Vals::Double(
                v.iter()
                    .map(|&b| {
                        if f64::from_bits(b).is_nan() {
                            f64::NAN.to_bits()
                        } else {
                            b
                        }
                    })
                    .collect(),
            ),
            other => other.clone(),
        })
    }
    let m = |m: &Fm| -> Fm { m.iter().map(|(n, x)| (n.clone(), f(x))).collect() };
    match c {
        Cmp::Example(x) => Cmp::Example(x.as_ref().map(m)),
        Cmp::Seq(c, l) => Cmp::Seq(
            c.as_ref().map(m),
            l.as_ref().map(|l| {
                l.iter()
                    .map(|(n, v)| (n.clone(), v.iter().map(f).collect()))
                    .collect()
            }),
        ),
        Cmp::Of(x) => Cmp::Of(m(x)),
        Cmp::Raw(b) => Cmp::Raw(b.clone()),
    }
}

fn kind_of(m: &Message) -> PayloadKind {
    match m {
        Message::Example(_) => PayloadKind::Example,
        Message::SequenceExample(_) => PayloadKind::SequenceExample,
        Message::OfRecord(_) => PayloadKind::OfRecord,
        Message::Raw(_) => PayloadKind::Raw,
    }
}

/// The message and its bytes, for failure messages.
fn show(m: &Message, b: &[u8]) -> String {
    format!("message: {m:?}\nbytes ({} B): {}", b.len(), hex(b))
}

/// `to_bytes` of the message inside.
fn to_bytes(m: &Message) -> Result<Vec<u8>, EncodeError> {
    match m {
        Message::Example(e) => e.to_bytes(),
        Message::SequenceExample(s) => s.to_bytes(),
        Message::OfRecord(o) => o.to_bytes(),
        Message::Raw(b) => Ok(b.clone()),
    }
}

fn enc(m: &Message) -> Result<Vec<u8>, TestCaseError> {
    to_bytes(m).map_err(|e| TestCaseError::fail(format!("to_bytes failed: {e}\nmessage: {m:?}")))
}

/// Parses `b` with the views (checked like `ParseFromString`) and converts it
/// to an owned message.
fn decode(kind: PayloadKind, b: &[u8]) -> Result<Message, DecodeError> {
    Ok(match kind {
        PayloadKind::Example => Message::Example(example_from_view(ExampleRef::parse(b, BASE)?)?),
        PayloadKind::SequenceExample => Message::SequenceExample(sequence_example_from_view(
            SequenceExampleRef::parse(b, BASE)?,
        )?),
        PayloadKind::OfRecord => {
            Message::OfRecord(ofrecord_from_view(OfRecordRef::parse(b, BASE)?)?)
        }
        PayloadKind::Raw => Message::Raw(b.to_vec()),
    })
}

fn dec(kind: PayloadKind, b: &[u8], m: &Message) -> Result<Message, TestCaseError> {
    decode(kind, b).map_err(|e| {
        TestCaseError::fail(format!(
            "the views reject our encoding: {e}\n{}",
            show(m, b)
        ))
    })
}

// ---------------------------------------------------------------------------
// Strategies for owned messages
// ---------------------------------------------------------------------------

/// Names that need escaping in JSON, or are otherwise awkward.
const AWKWARD: &[&str] = &[
    "\"",
    "\\",
    "a\"b\\c",
    "\0",
    "\n\r\t\u{8}\u{c}",
    "\u{1}\u{1f}\u{7f}",
    "/",
    "\u{2028}\u{2029}",
    "\u{1f600}",
    "\u{fffd}",
    "\u{10ffff}",
    "\u{ffff}",
    "\\udcff",
    "caf\u{e9}",
    " ",
];

/// A tf.Example name: UTF-8, often empty or short, sometimes awkward.
fn tf_name() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        5 => common::name(Cfg::default(), Schema::TensorFlow),
        2 => prop::collection::vec(any::<char>(), 0..4).prop_map(|c| String::from_iter(c).into_bytes()),
        2 => prop::sample::select(AWKWARD).prop_map(|s| s.as_bytes().to_vec()),
    ]
    .boxed()
}

/// An OFRecord name: any bytes (proto2), often not UTF-8.
fn of_name() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        4 => tf_name(),
        2 => prop::collection::vec(any::<u8>(), 0..5),
        1 => prop::sample::select(vec![
            b"\xff".to_vec(),
            b"caf\xe9".to_vec(),
            b"\xed\xa0\x80".to_vec(), // an encoded surrogate
            b"\xed\xb3\xbf".to_vec(), // U+DCFF encoded: what \udcff must not mean
            b"a\xc3".to_vec(),        // truncated sequence at the end
            b"\xf0\x9f\x98".to_vec(),
            b"\xc0\xaf".to_vec(), // overlong
            b"\x80\"\\\x01".to_vec(),
        ]),
    ]
    .boxed()
}

fn int64s() -> BoxedStrategy<i64> {
    prop_oneof![
        3 => any::<i64>(),
        2 => prop::sample::select(vec![
            0i64, 1, -1, i64::MIN, i64::MAX, 127, 128, 300, -300, 1 << 35, i32::MIN as i64,
        ]),
    ]
    .boxed()
}

fn int32s() -> BoxedStrategy<i32> {
    prop_oneof![
        3 => any::<i32>(),
        2 => prop::sample::select(vec![0i32, 1, -1, i32::MIN, i32::MAX, 127, 128, 300, -300]),
    ]
    .boxed()
}

/// A feature of `schema`: no kind, or a list (often empty) of a kind the
/// schema has.
fn feature(schema: Schema) -> BoxedStrategy<Feature> {
    let n = 0usize..6;
    let bytes = prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), n.clone())
        .prop_map(Feature::Bytes);
    let float = prop::collection::vec(common::f32_bits().prop_map(f32::from_bits), n.clone())
        .prop_map(Feature::Float);
    let int64 = prop::collection::vec(int64s(), n.clone()).prop_map(Feature::Int64);
    match schema {
        Schema::TensorFlow => prop_oneof![
            1 => Just(Feature::None),
            2 => bytes,
            2 => float,
            2 => int64,
        ]
        .boxed(),
        Schema::OneFlow => prop_oneof![
            1 => Just(Feature::None),
            2 => bytes,
            2 => float,
            2 => prop::collection::vec(common::f64_bits().prop_map(f64::from_bits), n.clone())
                .prop_map(Feature::Double),
            2 => prop::collection::vec(int32s(), n).prop_map(Feature::Int32),
            2 => int64,
        ]
        .boxed(),
    }
}

/// A features map without duplicate names (a repeated name replaces the
/// earlier value in place).
fn features(schema: Schema) -> BoxedStrategy<Features> {
    let name = match schema {
        Schema::TensorFlow => tf_name(),
        Schema::OneFlow => of_name(),
    };
    prop::collection::vec((name, feature(schema)), 0..6)
        .prop_map(|v| v.into_iter().collect())
        .boxed()
}

fn example() -> BoxedStrategy<Example> {
    prop_oneof![
        1 => Just(Example { features: None }),
        1 => Just(Example::with_features(Features::new())),
        6 => features(Schema::TensorFlow).prop_map(Example::with_features),
    ]
    .boxed()
}

fn feature_lists() -> BoxedStrategy<FeatureLists> {
    prop::collection::vec(
        (
            tf_name(),
            prop::collection::vec(feature(Schema::TensorFlow), 0..4),
        ),
        0..4,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(n, features)| (n, FeatureList { features }))
            .collect()
    })
    .boxed()
}

fn sequence_example() -> BoxedStrategy<SequenceExample> {
    (
        prop::option::weighted(0.75, features(Schema::TensorFlow)),
        prop::option::weighted(0.75, feature_lists()),
    )
        .prop_map(|(context, feature_lists)| SequenceExample {
            context,
            feature_lists,
        })
        .boxed()
}

fn ofrecord() -> BoxedStrategy<OfRecord> {
    features(Schema::OneFlow)
        .prop_map(OfRecord::with_features)
        .boxed()
}

/// A message of any of the three payloads.
fn message() -> BoxedStrategy<Message> {
    prop_oneof![
        example().prop_map(Message::Example),
        sequence_example().prop_map(Message::SequenceExample),
        ofrecord().prop_map(Message::OfRecord),
    ]
    .boxed()
}

/// The part of a message on which prost's `map` encoder is canonical: map
/// entries with a non-empty key and a value that is not the default.
fn prost_canonical_part(m: &Message) -> Message {
    fn fs(f: &Features) -> Features {
        f.iter()
            .filter(|(n, f)| !n.is_empty() && !matches!(f, Feature::None))
            .map(|(n, f)| (n.to_vec(), f.clone()))
            .collect()
    }
    fn ls(l: &FeatureLists) -> FeatureLists {
        l.iter()
            .filter(|(n, l)| !n.is_empty() && !l.features.is_empty())
            .map(|(n, l)| (n.to_vec(), l.clone()))
            .collect()
    }
    match m {
        Message::Example(e) => Message::Example(Example {
            features: e.features.as_ref().map(fs),
        }),
        Message::SequenceExample(s) => Message::SequenceExample(SequenceExample {
            context: s.context.as_ref().map(fs),
            feature_lists: s.feature_lists.as_ref().map(ls),
        }),
        Message::OfRecord(o) => Message::OfRecord(OfRecord::with_features(fs(&o.features))),
        Message::Raw(b) => Message::Raw(b.clone()),
    }
}

fn prost_is_canonical_for(m: &Message) -> bool {
    cmp(&prost_canonical_part(m)) == cmp(m)
}

fn sorted(m: &Message) -> Message {
    let mut s = m.clone();
    s.sort_maps();
    s
}

// ---------------------------------------------------------------------------
// An independent canonical writer (docs/FORMAT.md §2 and §4, field numbers written out)
// ---------------------------------------------------------------------------

mod canon {
    use recordwire::encode::{Feature, FeatureList, FeatureLists, Features, Message};

    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn field(out: &mut Vec<u8>, number: u8, body: &[u8]) {
        out.push((number << 3) | 2);
        varint(out, body.len() as u64);
        out.extend_from_slice(body);
    }

    /// A list message: bytes values one field each; numbers one packed run,
    /// none at all when the list is empty.
    fn list(f: &Feature) -> Vec<u8> {
        let mut run = Vec::new();
        match f {
            Feature::None => unreachable!("no list"),
            Feature::Bytes(v) => {
                let mut out = Vec::new();
                for b in v {
                    field(&mut out, 1, b);
                }
                return out;
            }
            Feature::Float(v) => v.iter().for_each(|x| run.extend(x.to_bits().to_le_bytes())),
            Feature::Double(v) => v.iter().for_each(|x| run.extend(x.to_bits().to_le_bytes())),
            Feature::Int32(v) => v
                .iter()
                .for_each(|&x| varint(&mut run, i64::from(x) as u64)),
            Feature::Int64(v) => v.iter().for_each(|&x| varint(&mut run, x as u64)),
        }
        let mut out = Vec::new();
        if !run.is_empty() {
            field(&mut out, 1, &run);
        }
        out
    }

    /// A `Feature` message; `of` selects record.proto's numbering.
    pub fn feature(f: &Feature, of: bool) -> Vec<u8> {
        let number = match (f, of) {
            (Feature::None, _) => return Vec::new(),
            (Feature::Bytes(_), _) => 1,
            (Feature::Float(_), _) => 2,
            (Feature::Double(_), true) => 3,
            (Feature::Int32(_), true) => 4,
            (Feature::Int64(_), true) => 5,
            (Feature::Int64(_), false) => 3,
            (Feature::Double(_) | Feature::Int32(_), false) => panic!("not in tf.Example"),
        };
        let mut out = Vec::new();
        field(&mut out, number, &list(f));
        out
    }

    fn entry(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
        let mut e = Vec::new();
        field(&mut e, 1, name);
        field(&mut e, 2, value);
        field(out, 1, &e);
    }

    pub fn features(f: &Features, of: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, f) in f.iter() {
            entry(&mut out, n, &feature(f, of));
        }
        out
    }

    pub fn feature_list(l: &FeatureList) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &l.features {
            field(&mut out, 1, &feature(f, false));
        }
        out
    }

    fn feature_lists(l: &FeatureLists) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, l) in l.iter() {
            entry(&mut out, n, &feature_list(l));
        }
        out
    }

    pub fn message(m: &Message) -> Vec<u8> {
        let mut out = Vec::new();
        match m {
            Message::Example(e) => {
                if let Some(f) = &e.features {
                    field(&mut out, 1, &features(f, false));
                }
            }
            Message::SequenceExample(s) => {
                if let Some(c) = &s.context {
                    field(&mut out, 1, &features(c, false));
                }
                if let Some(l) = &s.feature_lists {
                    field(&mut out, 2, &feature_lists(l));
                }
            }
            Message::OfRecord(o) => out = features(&o.features, true),
            Message::Raw(b) => out.clone_from(b),
        }
        out
    }
}

// ---------------------------------------------------------------------------
// To and from prost
// ---------------------------------------------------------------------------

fn utf8(n: &[u8]) -> String {
    String::from_utf8(n.to_vec()).expect("tf.Example names are UTF-8")
}

fn tf_feature(f: &Feature) -> tf::Feature {
    tf::Feature {
        kind: match f {
            Feature::None => None,
            Feature::Bytes(v) => Some(tf::Kind::BytesList(tf::BytesList { value: v.clone() })),
            Feature::Float(v) => Some(tf::Kind::FloatList(tf::FloatList { value: v.clone() })),
            Feature::Int64(v) => Some(tf::Kind::Int64List(tf::Int64List { value: v.clone() })),
            Feature::Double(_) | Feature::Int32(_) => panic!("not in tf.Example"),
        },
    }
}

fn of_feature(f: &Feature) -> of::Feature {
    of::Feature {
        kind: match f {
            Feature::None => None,
            Feature::Bytes(v) => Some(of::Kind::BytesList(of::BytesList { value: v.clone() })),
            Feature::Float(v) => Some(of::Kind::FloatList(of::FloatList { value: v.clone() })),
            Feature::Double(v) => Some(of::Kind::DoubleList(of::DoubleList { value: v.clone() })),
            Feature::Int32(v) => Some(of::Kind::Int32List(of::Int32List { value: v.clone() })),
            Feature::Int64(v) => Some(of::Kind::Int64List(of::Int64List { value: v.clone() })),
        },
    }
}

fn tf_features(f: &Features) -> tf::Features {
    tf::Features {
        feature: f.iter().map(|(n, f)| (utf8(n), tf_feature(f))).collect(),
    }
}

fn tf_features_e(f: &Features) -> tf::FeaturesE {
    tf::FeaturesE {
        feature: f
            .iter()
            .map(|(n, f)| tf::FeatureEntry {
                key: Some(utf8(n)),
                value: Some(tf_feature(f)),
            })
            .collect(),
    }
}

fn tf_list(l: &FeatureList) -> tf::FeatureList {
    tf::FeatureList {
        feature: l.features.iter().map(tf_feature).collect(),
    }
}

fn tf_lists(l: &FeatureLists) -> tf::FeatureLists {
    tf::FeatureLists {
        feature_list: l.iter().map(|(n, l)| (utf8(n), tf_list(l))).collect(),
    }
}

fn tf_lists_e(l: &FeatureLists) -> tf::FeatureListsE {
    tf::FeatureListsE {
        feature_list: l
            .iter()
            .map(|(n, l)| tf::FeatureListEntry {
                key: Some(utf8(n)),
                value: Some(tf_list(l)),
            })
            .collect(),
    }
}

/// prost's encoding with `map` fields (key order), or `None` when prost's
/// string keys cannot hold the names (non-UTF-8 OFRecord names).
fn prost_map_bytes(m: &Message) -> Option<Vec<u8>> {
    Some(match m {
        Message::Example(e) => tf::Example {
            features: e.features.as_ref().map(tf_features),
        }
        .encode_to_vec(),
        Message::SequenceExample(s) => tf::SequenceExample {
            context: s.context.as_ref().map(tf_features),
            feature_lists: s.feature_lists.as_ref().map(tf_lists),
        }
        .encode_to_vec(),
        Message::OfRecord(o) => {
            let mut map = std::collections::BTreeMap::new();
            for (n, f) in o.features.iter() {
                map.insert(String::from_utf8(n.to_vec()).ok()?, of_feature(f));
            }
            of::OfRecord { feature: map }.encode_to_vec()
        }
        Message::Raw(_) => return None,
    })
}

/// prost's encoding with the maps as repeated entries with optional key and
/// value: canonical, in insertion order.
fn prost_entries_bytes(m: &Message) -> Vec<u8> {
    match m {
        Message::Example(e) => tf::ExampleE {
            features: e.features.as_ref().map(tf_features_e),
        }
        .encode_to_vec(),
        Message::SequenceExample(s) => tf::SequenceExampleE {
            context: s.context.as_ref().map(tf_features_e),
            feature_lists: s.feature_lists.as_ref().map(tf_lists_e),
        }
        .encode_to_vec(),
        Message::OfRecord(o) => of::OfRecordE {
            feature: o
                .features
                .iter()
                .map(|(n, f)| of::Entry {
                    key: Some(n.to_vec()),
                    value: Some(of_feature(f)),
                })
                .collect(),
        }
        .encode_to_vec(),
        Message::Raw(b) => b.clone(),
    }
}

fn f32_bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn feat_tf(f: &tf::Feature) -> Feat {
    f.kind.as_ref().map(|k| match k {
        tf::Kind::BytesList(l) => Vals::Bytes(l.value.clone()),
        tf::Kind::FloatList(l) => Vals::Float(f32_bits(&l.value)),
        tf::Kind::Int64List(l) => Vals::Int64(l.value.clone()),
    })
}

fn feat_of(f: &of::Feature) -> Feat {
    f.kind.as_ref().map(|k| match k {
        of::Kind::BytesList(l) => Vals::Bytes(l.value.clone()),
        of::Kind::FloatList(l) => Vals::Float(f32_bits(&l.value)),
        of::Kind::DoubleList(l) => Vals::Double(l.value.iter().map(|x| x.to_bits()).collect()),
        of::Kind::Int32List(l) => Vals::Int32(l.value.clone()),
        of::Kind::Int64List(l) => Vals::Int64(l.value.clone()),
    })
}

fn fm_tf(f: &tf::Features) -> Fm {
    f.feature
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), feat_tf(v)))
        .collect()
}

fn fm_tf_e(f: &tf::FeaturesE) -> Fm {
    f.feature
        .iter()
        .map(|e| {
            (
                e.key.clone().unwrap_or_default().into_bytes(),
                e.value.as_ref().and_then(feat_tf),
            )
        })
        .collect()
}

fn lm_tf(l: &tf::FeatureLists) -> Lm {
    l.feature_list
        .iter()
        .map(|(k, v)| {
            (
                k.as_bytes().to_vec(),
                v.feature.iter().map(feat_tf).collect(),
            )
        })
        .collect()
}

fn lm_tf_e(l: &tf::FeatureListsE) -> Lm {
    l.feature_list
        .iter()
        .map(|e| {
            (
                e.key.clone().unwrap_or_default().into_bytes(),
                e.value
                    .as_ref()
                    .map(|v| v.feature.iter().map(feat_tf).collect())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// Decodes with prost's `map` form.
fn prost_map_decode(kind: PayloadKind, b: &[u8]) -> Result<Cmp, prost::DecodeError> {
    Ok(match kind {
        PayloadKind::Example => Cmp::Example(tf::Example::decode(b)?.features.as_ref().map(fm_tf)),
        PayloadKind::SequenceExample => {
            let s = tf::SequenceExample::decode(b)?;
            Cmp::Seq(
                s.context.as_ref().map(fm_tf),
                s.feature_lists.as_ref().map(lm_tf),
            )
        }
        PayloadKind::OfRecord => Cmp::Of(
            of::OfRecord::decode(b)?
                .feature
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), feat_of(v)))
                .collect(),
        ),
        PayloadKind::Raw => Cmp::Raw(b.to_vec()),
    })
}

/// Decodes with prost's entries form (wire order; no duplicates here).
fn prost_entries_decode(kind: PayloadKind, b: &[u8]) -> Result<Cmp, prost::DecodeError> {
    Ok(match kind {
        PayloadKind::Example => {
            Cmp::Example(tf::ExampleE::decode(b)?.features.as_ref().map(fm_tf_e))
        }
        PayloadKind::SequenceExample => {
            let s = tf::SequenceExampleE::decode(b)?;
            Cmp::Seq(
                s.context.as_ref().map(fm_tf_e),
                s.feature_lists.as_ref().map(lm_tf_e),
            )
        }
        PayloadKind::OfRecord => Cmp::Of(
            of::OfRecordE::decode(b)?
                .feature
                .iter()
                .map(|e| {
                    (
                        e.key.clone().unwrap_or_default(),
                        e.value.as_ref().and_then(feat_of),
                    )
                })
                .collect(),
        ),
        PayloadKind::Raw => Cmp::Raw(b.to_vec()),
    })
}

// ---------------------------------------------------------------------------
// 1. decode(encode(x)) == x
// ---------------------------------------------------------------------------

fn check_round_trip(m: &Message) -> Result<(), TestCaseError> {
    let b = enc(m)?;
    let back = dec(kind_of(m), &b, m)?;
    prop_assert_eq!(
        cmp(&back),
        cmp(m),
        "decode(encode(x)) != x (left: decoded)\n{}",
        show(m, &b)
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// 2. encoded_len, and allocations
// ---------------------------------------------------------------------------

fn check_lengths(m: &Message) -> Result<(), TestCaseError> {
    let len = m
        .encoded_len()
        .map_err(|e| TestCaseError::fail(format!("encoded_len failed: {e}\nmessage: {m:?}")))?;
    let (b, allocs) = count_allocations(|| to_bytes(m));
    let b = b.map_err(|e| TestCaseError::fail(format!("to_bytes failed: {e}\nmessage: {m:?}")))?;
    prop_assert_eq!(
        b.len(),
        len,
        "encoded_len() != to_bytes().len()\n{}",
        show(m, &b)
    );
    if !matches!(m, Message::Raw(_)) {
        prop_assert_eq!(
            allocs,
            u64::from(len > 0),
            "to_bytes() made {} allocations, expected one at most (none when empty)\n{}",
            allocs,
            show(m, &b)
        );
        prop_assert_eq!(
            b.capacity(),
            b.len(),
            "to_bytes() allocated {} bytes for {}\n{}",
            b.capacity(),
            b.len(),
            show(m, &b)
        );
    }
    // Into a caller's buffer that already holds something: with spare room,
    // and with exactly the room needed.
    for spare in [0usize, 7] {
        let prefix = b"\xde\xad\xbe\xef";
        let mut out = Vec::with_capacity(prefix.len() + len + spare);
        out.extend_from_slice(prefix);
        let (cap, ptr) = (out.capacity(), out.as_ptr());
        let (r, allocs) = count_allocations(|| m.encode_to(&mut out));
        prop_assert!(r.is_ok(), "encode_to failed: {:?}\n{}", r, show(m, &b));
        prop_assert_eq!(allocs, 0, "encode_to allocated\n{}", show(m, &b));
        prop_assert_eq!(
            out.capacity(),
            cap,
            "encode_to reallocated\n{}",
            show(m, &b)
        );
        prop_assert_eq!(
            out.as_ptr(),
            ptr,
            "encode_to moved the buffer\n{}",
            show(m, &b)
        );
        prop_assert_eq!(
            out.len(),
            prefix.len() + len,
            "encode_to appended a wrong length\n{}",
            show(m, &b)
        );
        prop_assert_eq!(
            &out[..prefix.len()],
            prefix,
            "encode_to changed the prefix\n{}",
            show(m, &b)
        );
        prop_assert_eq!(
            &out[prefix.len()..],
            &b[..],
            "encode_to != to_bytes\n{}",
            show(m, &b)
        );
    }
    // Into other `BufMut`s: a `BytesMut` with room, and a slice of exactly
    // `encoded_len()` bytes, which must be filled completely.
    let mut bm = bytes::BytesMut::with_capacity(len);
    let cap = bm.capacity();
    let (r, allocs) = count_allocations(|| m.encode_to(&mut bm));
    prop_assert!(
        r.is_ok(),
        "encode_to(BytesMut) failed: {:?}\n{}",
        r,
        show(m, &b)
    );
    prop_assert_eq!(
        (allocs, bm.capacity()),
        (0, cap),
        "encode_to(BytesMut) allocated\n{}",
        show(m, &b)
    );
    prop_assert_eq!(
        &bm[..],
        &b[..],
        "encode_to(BytesMut) != to_bytes\n{}",
        show(m, &b)
    );
    let mut buf = vec![0x5au8; len];
    let mut slice: &mut [u8] = &mut buf[..];
    let (r, allocs) = count_allocations(|| m.encode_to(&mut slice));
    prop_assert!(
        r.is_ok(),
        "encode_to(&mut [u8]) failed: {:?}\n{}",
        r,
        show(m, &b)
    );
    prop_assert_eq!(
        (allocs, slice.len()),
        (0, 0),
        "encode_to(&mut [u8]) allocated or left room\n{}",
        show(m, &b)
    );
    prop_assert_eq!(
        &buf[..],
        &b[..],
        "encode_to(&mut [u8]) != to_bytes\n{}",
        show(m, &b)
    );
    // The pieces: each feature's and each map's encoded_len.
    let (maps, schema): (Vec<&Features>, Schema) = match m {
        Message::Example(e) => (e.features.iter().collect(), Schema::TensorFlow),
        Message::SequenceExample(s) => (s.context.iter().collect(), Schema::TensorFlow),
        Message::OfRecord(o) => (vec![&o.features], Schema::OneFlow),
        Message::Raw(_) => (Vec::new(), Schema::OneFlow),
    };
    for f in maps {
        let mut out = Vec::new();
        f.encode_to(schema, &mut out)
            .map_err(|e| TestCaseError::fail(format!("Features::encode_to: {e}")))?;
        prop_assert_eq!(
            out.len(),
            f.encoded_len(),
            "Features::encoded_len\n{}",
            show(m, &b)
        );
        for (n, feature) in f.iter() {
            let mut out = Vec::with_capacity(feature.encoded_len());
            let cap = out.capacity();
            let (r, allocs) = count_allocations(|| feature.encode_to(schema, n, &mut out));
            prop_assert!(r.is_ok(), "Feature::encode_to: {:?}", r);
            prop_assert_eq!(
                out.len(),
                feature.encoded_len(),
                "Feature::encoded_len of {:?}",
                feature
            );
            prop_assert_eq!(
                (allocs, out.capacity()),
                (0, cap),
                "Feature::encode_to allocated"
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 3. encode(decode(b)) == b for canonical b; encode_feature_ref
// ---------------------------------------------------------------------------

/// The value bytes of a canonical map entry whose key starts at `name_offset`:
/// after the key come tag 0x12, the length and the value.
fn entry_value(b: &[u8], name_offset: u64, name_len: usize) -> Option<&[u8]> {
    let mut i = usize::try_from(name_offset.checked_sub(BASE)?).ok()? + name_len;
    if *b.get(i)? != 0x12 {
        return None;
    }
    i += 1;
    let mut len = 0usize;
    for shift in (0..35).step_by(7) {
        let byte = *b.get(i)?;
        i += 1;
        len |= usize::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return b.get(i..i.checked_add(len)?);
        }
    }
    None
}

/// `encode_feature_ref` of `f` equals `want` (the canonical bytes of the
/// model's feature) and `feature_ref_encoded_len` its length; into a buffer
/// with room it does not allocate.
fn check_feature_ref(
    f: FeatureRef<'_>,
    schema: Schema,
    name: &[u8],
    want: &[u8],
    ctx: &dyn Fn() -> String,
) -> Result<(), TestCaseError> {
    let mut out = Vec::with_capacity(want.len() + 3);
    out.push(0xaa);
    let cap = out.capacity();
    let (r, allocs) = count_allocations(|| encode_feature_ref(f, schema, name, &mut out));
    prop_assert!(
        r.is_ok(),
        "encode_feature_ref({}) failed: {:?}\n{}",
        hex(name),
        r,
        ctx()
    );
    prop_assert_eq!(
        hex(&out[1..]),
        hex(want),
        "encode_feature_ref({}) (left) != the feature's canonical bytes\n{}",
        hex(name),
        ctx()
    );
    prop_assert_eq!(
        (allocs, out.capacity()),
        (0, cap),
        "encode_feature_ref allocated\n{}",
        ctx()
    );
    let len = feature_ref_encoded_len(f);
    prop_assert_eq!(
        len,
        Ok(want.len()),
        "feature_ref_encoded_len({})\n{}",
        hex(name),
        ctx()
    );
    Ok(())
}

fn check_map_refs(
    b: &[u8],
    view: FeaturesRef<'_>,
    model: &Features,
    ctx: &dyn Fn() -> String,
) -> Result<(), TestCaseError> {
    let schema = view.schema();
    let mut seen = 0;
    for nf in view.entries() {
        let nf = nf.map_err(|e| TestCaseError::fail(format!("entries(): {e}\n{}", ctx())))?;
        let name = nf.name();
        let Some(want) = model.get(name) else {
            return Err(TestCaseError::fail(format!(
                "unexpected name {}\n{}",
                hex(name),
                ctx()
            )));
        };
        let want = canon::feature(want, schema == Schema::OneFlow);
        let on_wire = entry_value(b, nf.entry.name_offset, name.len());
        prop_assert_eq!(
            on_wire.map(hex),
            Some(hex(&want)),
            "the entry {} in the input is not canonical\n{}",
            hex(name),
            ctx()
        );
        check_feature_ref(nf.feature, schema, name, &want, ctx)?;
        seen += 1;
    }
    prop_assert_eq!(seen, model.len(), "entries() count\n{}", ctx());
    Ok(())
}

/// Every feature of the canonical record `b` (of `model`) re-encoded from
/// its view.
fn check_feature_refs(b: &[u8], model: &Message) -> Result<(), TestCaseError> {
    let ctx = || show(model, b);
    let fail = |e: DecodeError| TestCaseError::fail(format!("{e}\n{}", show(model, b)));
    match model {
        Message::Example(e) => {
            let v = ExampleRef::parse(b, BASE).map_err(fail)?;
            check_map_refs(
                b,
                v.features(),
                e.features.as_ref().unwrap_or(&Features::new()),
                &ctx,
            )?;
        }
        Message::SequenceExample(s) => {
            let v = SequenceExampleRef::parse(b, BASE).map_err(fail)?;
            check_map_refs(
                b,
                v.context(),
                s.context.as_ref().unwrap_or(&Features::new()),
                &ctx,
            )?;
            let lists = s.feature_lists.clone().unwrap_or_default();
            let mut seen = 0;
            for l in v.feature_lists().entries() {
                let l = l.map_err(fail)?;
                let want = lists.get(l.name()).ok_or_else(|| {
                    TestCaseError::fail(format!("unexpected list {}\n{}", hex(l.name()), ctx()))
                })?;
                prop_assert_eq!(
                    entry_value(b, l.entry.name_offset, l.name().len()).map(hex),
                    Some(hex(&canon::feature_list(want))),
                    "feature list entry not canonical\n{}",
                    ctx()
                );
                let mut i = 0;
                for f in l.list.iter() {
                    let f = f.map_err(fail)?;
                    let Some(wf) = want.features.get(i) else {
                        return Err(TestCaseError::fail(format!("extra feature\n{}", ctx())));
                    };
                    check_feature_ref(
                        f,
                        Schema::TensorFlow,
                        l.name(),
                        &canon::feature(wf, false),
                        &ctx,
                    )?;
                    i += 1;
                }
                prop_assert_eq!(i, want.features.len(), "feature list length\n{}", ctx());
                seen += 1;
            }
            prop_assert_eq!(seen, lists.len(), "feature_lists entries\n{}", ctx());
        }
        Message::OfRecord(o) => {
            let v = OfRecordRef::parse(b, BASE).map_err(fail)?;
            check_map_refs(b, v.features(), &o.features, &ctx)?;
        }
        Message::Raw(_) => {}
    }
    Ok(())
}

/// `b` is the canonical encoding of `model`: it decodes to `model` and
/// encodes back to `b` exactly.
fn check_canonical(b: &[u8], model: &Message, source: &str) -> Result<(), TestCaseError> {
    let back = dec(kind_of(model), b, model)?;
    prop_assert_eq!(
        cmp(&back),
        cmp(model),
        "{}: canonical bytes decode to another message (left)\n{}",
        source,
        show(model, b)
    );
    let again = enc(&back)?;
    prop_assert_eq!(
        hex(&again),
        hex(b),
        "{}: encode(decode(b)) (left) != b (right)\n{}",
        source,
        show(model, b)
    );
    check_feature_refs(b, model)
}

fn check_canonical_sources(m: &Message) -> Result<(), TestCaseError> {
    // Our own writer, and prost with maps as entries: both canonical, in
    // insertion order.
    let own = canon::message(m);
    let prost_e = prost_entries_bytes(m);
    prop_assert_eq!(
        hex(&own),
        hex(&prost_e),
        "the two canonical writers of this test disagree (left: own, right: prost entries)\nmessage: {:?}",
        m
    );
    check_canonical(&own, m, "own writer")?;
    // prost's map encoder where it is canonical: sorted, keys non-empty,
    // values set.
    let part = sorted(&prost_canonical_part(m));
    if let Some(prost_map) = prost_map_bytes(&part) {
        prop_assert_eq!(
            hex(&prost_map),
            hex(&canon::message(&part)),
            "prost's map encoding (left) is not canonical here\nmessage: {:?}",
            part
        );
        check_canonical(&prost_map, &part, "prost map")?;
    }
    Ok(())
}

/// For any valid record (canonical or not): re-encoding gives canonical
/// bytes that decode to the same values and re-encode identically, and
/// `encode_feature_ref` agrees with the owned feature's encoding.
fn check_reencode(kind: PayloadKind, input: &[u8]) -> Result<(), TestCaseError> {
    let Ok(owned) = decode(kind, input) else {
        return Ok(()); // invalid input: nothing to re-encode
    };
    let b = enc(&owned)?;
    prop_assert_eq!(
        hex(&b),
        hex(&canon::message(&owned)),
        "re-encoding (left) is not canonical\ninput: {}\n{}",
        hex(input),
        show(&owned, &b)
    );
    check_canonical(&b, &owned, "re-encoded")?;
    // Straight from the views of the original input.
    let schema = if kind == PayloadKind::OfRecord {
        Schema::OneFlow
    } else {
        Schema::TensorFlow
    };
    let ctx = || format!("input: {}\n{}", hex(input), show(&owned, &b));
    let maps: Vec<(FeaturesRef<'_>, Features)> = match (&owned, kind) {
        (Message::Example(e), _) => vec![(
            ExampleRef::new(input, BASE).features(),
            e.features.clone().unwrap_or_default(),
        )],
        (Message::SequenceExample(s), _) => vec![(
            SequenceExampleRef::new(input, BASE).context(),
            s.context.clone().unwrap_or_default(),
        )],
        (Message::OfRecord(o), _) => {
            vec![(OfRecordRef::new(input, BASE).features(), o.features.clone())]
        }
        (Message::Raw(_), _) => Vec::new(),
    };
    for (view, model) in maps {
        for nf in view.iter() {
            let nf = nf.map_err(|e| TestCaseError::fail(format!("{e}\n{}", ctx())))?;
            let want = model
                .get(nf.name())
                .map(|f| canon::feature(f, schema == Schema::OneFlow));
            let Some(want) = want else {
                return Err(TestCaseError::fail(format!(
                    "missing {}\n{}",
                    hex(nf.name()),
                    ctx()
                )));
            };
            check_feature_ref(nf.feature, schema, nf.name(), &want, &ctx)?;
        }
    }
    if let Message::SequenceExample(s) = &owned {
        let lists = s.feature_lists.clone().unwrap_or_default();
        for l in SequenceExampleRef::new(input, BASE).feature_lists().iter() {
            let l = l.map_err(|e| TestCaseError::fail(format!("{e}\n{}", ctx())))?;
            let Some(want) = lists.get(l.name()) else {
                return Err(TestCaseError::fail(format!(
                    "missing list {}\n{}",
                    hex(l.name()),
                    ctx()
                )));
            };
            for (i, f) in l.list.iter().enumerate() {
                let f = f.map_err(|e| TestCaseError::fail(format!("{e}\n{}", ctx())))?;
                let w = want.features.get(i).map(|f| canon::feature(f, false));
                let Some(w) = w else {
                    return Err(TestCaseError::fail(format!("extra feature\n{}", ctx())));
                };
                check_feature_ref(f, Schema::TensorFlow, l.name(), &w, &ctx)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 4. Differential against prost's encoder
// ---------------------------------------------------------------------------

fn check_against_prost(m: &Message) -> Result<(), TestCaseError> {
    let kind = kind_of(m);
    let ours = enc(m)?;
    let s = sorted(m);
    let ours_sorted = enc(&s)?;
    // The entries form: canonical for every message, in insertion order.
    let theirs = prost_entries_bytes(m);
    prop_assert_eq!(
        hex(&ours),
        hex(&theirs),
        "to_bytes (left) != prost's entries encoding (right)\nmessage: {:?}",
        m
    );
    let d = prost_entries_decode(kind, &ours);
    prop_assert_eq!(
        d,
        Ok(cmp(m)),
        "prost (entries) reads our bytes differently\n{}",
        show(m, &ours)
    );
    // The map form (BTreeMap), where prost's string keys can hold the names.
    if let Some(theirs) = prost_map_bytes(m) {
        let want = prost_map_decode(kind, &theirs);
        prop_assert!(
            want.is_ok(),
            "prost cannot read its own encoding: {:?}",
            want
        );
        prop_assert_eq!(
            prost_map_decode(kind, &ours_sorted),
            want.clone(),
            "prost reads our sorted bytes (left) differently from its own (right)\nprost: {}\n{}",
            hex(&theirs),
            show(&s, &ours_sorted)
        );
        prop_assert_eq!(
            prost_map_decode(kind, &ours),
            want.clone(),
            "prost reads our unsorted bytes (left) differently from its own (right)\n{}",
            show(m, &ours)
        );
        prop_assert_eq!(
            want,
            Ok(cmp(&s)),
            "prost's map value differs from the message"
        );
        if prost_is_canonical_for(m) {
            prop_assert_eq!(
                hex(&ours_sorted),
                hex(&theirs),
                "sorted to_bytes (left) != prost's encoding (right) where prost is canonical\nmessage: {:?}",
                s
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 5. JSON
// ---------------------------------------------------------------------------

fn check_json_printer(m: &Message) -> Result<(), TestCaseError> {
    let kind = kind_of(m);
    let b = enc(m)?;
    let mut out = Vec::new();
    let r = json::write_record(&mut out, kind, &b, BASE, false, None);
    prop_assert!(r.is_ok(), "write_record failed: {:?}\n{}", r, show(m, &b));
    let text = String::from_utf8(out);
    prop_assert!(text.is_ok(), "the JSON is not UTF-8\n{}", show(m, &b));
    let text = text.unwrap_or_default();
    if !has_non_utf8_name(m) {
        // Valid JSON to anyone (serde_json refuses lone surrogates, which
        // only non-UTF-8 names produce).
        let v = serde_json::from_str::<serde_json::Value>(&text);
        prop_assert!(v.is_ok(), "serde_json rejects {}: {:?}", text, v);
    }
    prop_assert!(
        !text.contains('\n'),
        "a JSON line contains a newline: {}",
        text
    );
    let back = message_from_json(kind, text.as_bytes());
    let back = back.map_err(|e| {
        TestCaseError::fail(format!(
            "message_from_json: {e}\njson: {text}\n{}",
            show(m, &b)
        ))
    })?;
    prop_assert_eq!(
        nan_canonical(&cmp(&back)),
        nan_canonical(&cmp(m)),
        "JSON round trip (left: read back)\njson: {}\n{}",
        text,
        show(m, &b)
    );
    Ok(())
}

fn has_non_utf8_name(m: &Message) -> bool {
    match m {
        Message::OfRecord(o) => o
            .features
            .iter()
            .any(|(n, _)| std::str::from_utf8(n).is_err()),
        _ => false,
    }
}

/// How the `MessageToDict`-style writer of this test spells things.
#[derive(Clone, Copy, Debug)]
struct Style {
    /// lowerCamelCase field names (`int64List`, `featureLists`).
    camel: bool,
    /// int64 values as JSON numbers.
    int64_numbers: bool,
    /// int32 values as JSON strings.
    int32_strings: bool,
    /// 0: shortest; 1: the float's exact double (`0.10000000149011612`); 2: quoted shortest.
    floats: u8,
    /// 0: standard padded; 1: standard unpadded; 2: URL-safe padded; 3: URL-safe unpadded.
    base64: u8,
    /// `null` for absent fields and empty maps and lists.
    nulls: bool,
    /// Non-ASCII as `\uXXXX` (surrogate pairs beyond the BMP), as Python's
    /// `json.dumps` does by default; `/` as `\/`.
    ascii: bool,
    /// Upper-case hex digits in `\u` escapes.
    upper: bool,
    /// Spaces after `:` and `,` and around braces.
    spaces: bool,
    /// Empty lists as `{"value": []}` rather than `{}`, empty maps written.
    explicit_empty: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (any::<[bool; 8]>(), 0u8..3, 0u8..4).prop_map(|(b, floats, base64)| Style {
        camel: b[0],
        int64_numbers: b[1],
        int32_strings: b[2],
        floats,
        base64,
        nulls: b[3],
        ascii: b[4],
        upper: b[5],
        spaces: b[6],
        explicit_empty: b[7],
    })
}

struct JsonWriter {
    s: Style,
    out: String,
}

impl JsonWriter {
    fn name(&self, proto: &'static str, camel: &'static str) -> &'static str {
        if self.s.camel {
            camel
        } else {
            proto
        }
    }

    fn u_escape(&mut self, u: u32) {
        if self.s.upper {
            let _ = write!(self.out, "\\u{u:04X}");
        } else {
            let _ = write!(self.out, "\\u{u:04x}");
        }
    }

    fn string(&mut self, s: &[u8]) {
        self.out.push('"');
        for chunk in s.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '"' => self.out.push_str("\\\""),
                    '\\' => self.out.push_str("\\\\"),
                    '/' if self.s.ascii => self.out.push_str("\\/"),
                    '\n' if !self.s.upper => self.out.push_str("\\n"),
                    '\t' if !self.s.upper => self.out.push_str("\\t"),
                    c if (c as u32) < 0x20 => self.u_escape(c as u32),
                    c if self.s.ascii && !c.is_ascii() => {
                        let mut units = [0u16; 2];
                        for &u in c.encode_utf16(&mut units).iter() {
                            self.u_escape(u32::from(u));
                        }
                    }
                    c => self.out.push(c),
                }
            }
            for &b in chunk.invalid() {
                self.u_escape(0xdc00 | u32::from(b));
            }
        }
        self.out.push('"');
    }

    fn key(&mut self, k: &str) {
        self.string(k.as_bytes());
        self.out.push(':');
        if self.s.spaces {
            self.out.push(' ');
        }
    }

    fn comma(&mut self) {
        self.out.push(',');
        if self.s.spaces {
            self.out.push(' ');
        }
    }

    fn open(&mut self) {
        self.out.push('{');
        if self.s.spaces {
            self.out.push(' ');
        }
    }

    fn close(&mut self) {
        if self.s.spaces {
            self.out.push(' ');
        }
        self.out.push('}');
    }

    fn float(&mut self, v: f64, single: Option<f32>) {
        if v.is_nan() {
            self.out.push_str("\"NaN\"");
        } else if v.is_infinite() {
            self.out.push_str(if v > 0.0 {
                "\"Infinity\""
            } else {
                "\"-Infinity\""
            });
        } else {
            let text = match (self.s.floats, single) {
                (1, _) | (_, None) => format!("{v:?}"),
                (_, Some(f)) => format!("{f:?}"),
            };
            if self.s.floats == 2 {
                let _ = write!(self.out, "\"{text}\"");
            } else {
                self.out.push_str(&text);
            }
        }
    }

    fn feature(&mut self, f: &Feature) {
        self.open();
        let (proto, camel, n) = match f {
            Feature::None => {
                if self.s.nulls {
                    let k = self.name("bytes_list", "bytesList");
                    self.key(k);
                    self.out.push_str("null");
                }
                self.close();
                return;
            }
            Feature::Bytes(v) => ("bytes_list", "bytesList", v.len()),
            Feature::Float(v) => ("float_list", "floatList", v.len()),
            Feature::Double(v) => ("double_list", "doubleList", v.len()),
            Feature::Int32(v) => ("int32_list", "int32List", v.len()),
            Feature::Int64(v) => ("int64_list", "int64List", v.len()),
        };
        if self.s.nulls {
            // Another member of the oneof, absent.
            let k = if proto == "float_list" {
                self.name("int64_list", "int64List")
            } else {
                self.name("float_list", "floatList")
            };
            self.key(k);
            self.out.push_str("null");
            self.comma();
        }
        let k = self.name(proto, camel);
        self.key(k);
        self.open();
        if n == 0 {
            if self.s.explicit_empty {
                self.key("value");
                self.out.push_str("[]");
            } else if self.s.nulls {
                self.key("value");
                self.out.push_str("null");
            }
        } else {
            self.key("value");
            self.out.push('[');
            for i in 0..n {
                if i > 0 {
                    self.comma();
                }
                match f {
                    Feature::None => {}
                    Feature::Bytes(v) => {
                        use base64::engine::general_purpose::{
                            STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD,
                        };
                        let e = match self.s.base64 {
                            0 => &STANDARD,
                            1 => &STANDARD_NO_PAD,
                            2 => &URL_SAFE,
                            _ => &URL_SAFE_NO_PAD,
                        };
                        let _ = write!(self.out, "\"{}\"", e.encode(&v[i]));
                    }
                    Feature::Float(v) => self.float(f64::from(v[i]), Some(v[i])),
                    Feature::Double(v) => self.float(v[i], None),
                    Feature::Int32(v) => {
                        if self.s.int32_strings {
                            let _ = write!(self.out, "\"{}\"", v[i]);
                        } else {
                            let _ = write!(self.out, "{}", v[i]);
                        }
                    }
                    Feature::Int64(v) => {
                        if self.s.int64_numbers {
                            let _ = write!(self.out, "{}", v[i]);
                        } else {
                            let _ = write!(self.out, "\"{}\"", v[i]);
                        }
                    }
                }
            }
            self.out.push(']');
        }
        self.close();
        self.close();
    }

    /// The `"feature": {...}` member of a map (nothing for an empty map,
    /// unless the style writes empty maps); returns whether it wrote one.
    fn feature_map(&mut self, f: &Features, first: bool) -> bool {
        if f.is_empty() && !self.s.explicit_empty && !self.s.nulls {
            return false;
        }
        if !first {
            self.comma();
        }
        self.key("feature");
        if f.is_empty() && !self.s.explicit_empty {
            self.out.push_str("null");
            return true;
        }
        self.open();
        for (i, (n, feature)) in f.iter().enumerate() {
            if i > 0 {
                self.comma();
            }
            self.string(n);
            self.out.push(':');
            self.feature(feature);
        }
        self.close();
        true
    }

    fn absent(&mut self, proto: &'static str, camel: &'static str, first: &mut bool) {
        if self.s.nulls {
            if !*first {
                self.comma();
            }
            let k = self.name(proto, camel);
            self.key(k);
            self.out.push_str("null");
            *first = false;
        }
    }

    fn message(mut self, m: &Message) -> String {
        self.open();
        let mut first = true;
        match m {
            Message::Example(e) => match &e.features {
                None => self.absent("features", "features", &mut first),
                Some(f) => {
                    self.key("features");
                    self.open();
                    self.feature_map(f, true);
                    self.close();
                }
            },
            Message::SequenceExample(s) => {
                match &s.context {
                    None => self.absent("context", "context", &mut first),
                    Some(c) => {
                        self.key("context");
                        self.open();
                        self.feature_map(c, true);
                        self.close();
                        first = false;
                    }
                }
                match &s.feature_lists {
                    None => self.absent("feature_lists", "featureLists", &mut first),
                    Some(l) => {
                        if !first {
                            self.comma();
                        }
                        let k = self.name("feature_lists", "featureLists");
                        self.key(k);
                        self.open();
                        if !l.is_empty() || self.s.explicit_empty {
                            let k = self.name("feature_list", "featureList");
                            self.key(k);
                            self.open();
                            for (i, (n, list)) in l.iter().enumerate() {
                                if i > 0 {
                                    self.comma();
                                }
                                self.string(n);
                                self.out.push(':');
                                self.open();
                                if !list.features.is_empty() || self.s.explicit_empty {
                                    self.key("feature");
                                    self.out.push('[');
                                    for (j, f) in list.features.iter().enumerate() {
                                        if j > 0 {
                                            self.comma();
                                        }
                                        self.feature(f);
                                    }
                                    self.out.push(']');
                                }
                                self.close();
                            }
                            self.close();
                        }
                        self.close();
                    }
                }
            }
            Message::OfRecord(o) => {
                self.feature_map(&o.features, true);
            }
            Message::Raw(_) => unreachable!("raw is not printed"),
        }
        self.close();
        self.out
    }
}

fn check_json_style(m: &Message, s: Style) -> Result<(), TestCaseError> {
    let text = JsonWriter {
        s,
        out: String::new(),
    }
    .message(m);
    let back = message_from_json(kind_of(m), text.as_bytes()).map_err(|e| {
        TestCaseError::fail(format!(
            "message_from_json: {e}\njson: {text}\nstyle: {s:?}\nmessage: {m:?}"
        ))
    })?;
    prop_assert_eq!(
        nan_canonical(&cmp(&back)),
        nan_canonical(&cmp(m)),
        "JSON variant round trip (left: read back)\njson: {}\nstyle: {:?}\nmessage: {:?}",
        text,
        s,
        m
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// 6. Sorted order
// ---------------------------------------------------------------------------

fn reversed(m: &Message) -> Message {
    fn rev<V: Clone>(f: &recordwire::encode::NamedMap<V>) -> recordwire::encode::NamedMap<V> {
        let v: Vec<_> = f.iter().map(|(n, v)| (n.to_vec(), v.clone())).collect();
        v.into_iter().rev().collect()
    }
    match m {
        Message::Example(e) => Message::Example(Example {
            features: e.features.as_ref().map(rev),
        }),
        Message::SequenceExample(s) => Message::SequenceExample(SequenceExample {
            context: s.context.as_ref().map(rev),
            feature_lists: s.feature_lists.as_ref().map(rev),
        }),
        Message::OfRecord(o) => Message::OfRecord(OfRecord::with_features(rev(&o.features))),
        Message::Raw(b) => Message::Raw(b.clone()),
    }
}

fn ascending(names: &[Vec<u8>]) -> bool {
    names.windows(2).all(|w| w[0] < w[1])
}

fn check_sorted(m: &Message) -> Result<(), TestCaseError> {
    let s = sorted(m);
    let b = enc(&s)?;
    let err = |e: DecodeError| TestCaseError::fail(format!("{e}\n{}", show(&s, &b)));
    let mut maps: Vec<Vec<Vec<u8>>> = Vec::new();
    match kind_of(m) {
        PayloadKind::Example => {
            let v = ExampleRef::parse(&b, BASE).map_err(err)?;
            maps.push(
                v.features()
                    .entries()
                    .map(|e| e.map(|e| e.name().to_vec()))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
            );
        }
        PayloadKind::SequenceExample => {
            let v = SequenceExampleRef::parse(&b, BASE).map_err(err)?;
            maps.push(
                v.context()
                    .entries()
                    .map(|e| e.map(|e| e.name().to_vec()))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
            );
            maps.push(
                v.feature_lists()
                    .entries()
                    .map(|e| e.map(|e| e.name().to_vec()))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
            );
        }
        PayloadKind::OfRecord => {
            let v = OfRecordRef::parse(&b, BASE).map_err(err)?;
            maps.push(
                v.features()
                    .entries()
                    .map(|e| e.map(|e| e.name().to_vec()))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
            );
        }
        PayloadKind::Raw => {}
    }
    for names in &maps {
        prop_assert!(
            ascending(names),
            "entries after sort_maps are not in ascending byte order: {:?}\n{}",
            names.iter().map(|n| hex(n)).collect::<Vec<_>>(),
            show(&s, &b)
        );
    }
    // Same entries as before sorting.
    let sort_cmp = |c: Cmp| -> Cmp {
        match c {
            Cmp::Example(f) => Cmp::Example(f.map(|mut f| {
                f.sort_by(|a, b| a.0.cmp(&b.0));
                f
            })),
            Cmp::Seq(c, l) => Cmp::Seq(
                c.map(|mut f| {
                    f.sort_by(|a, b| a.0.cmp(&b.0));
                    f
                }),
                l.map(|mut l| {
                    l.sort_by(|a, b| a.0.cmp(&b.0));
                    l
                }),
            ),
            Cmp::Of(mut f) => {
                f.sort_by(|a, b| a.0.cmp(&b.0));
                Cmp::Of(f)
            }
            Cmp::Raw(b) => Cmp::Raw(b),
        }
    };
    prop_assert_eq!(cmp(&s), sort_cmp(cmp(m)), "sort_maps changed the entries");
    // The order of insertion does not matter once sorted.
    let b2 = enc(&sorted(&reversed(m)))?;
    prop_assert_eq!(
        hex(&b2),
        hex(&b),
        "sorted encodings differ with the insertion order\nmessage: {:?}",
        m
    );
    // And it is the order of the canonical writer fed with sorted names.
    prop_assert_eq!(
        hex(&canon::message(&s)),
        hex(&b),
        "sorted encoding not canonical"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------

/// Records of `common`'s generators that prost and Google read alike (no
/// invalid pieces; names may be non-UTF-8 only where allowed).
const ANY_VALID: Cfg = Cfg {
    google_only: true,
    bad_utf8: false,
    invalid: false,
};

proptest! {
    #![proptest_config(common::config(common::cases(256)))]

    /// 1. decode(encode(x)) == x, for each payload.
    #[test]
    fn example_round_trips(e in example()) {
        check_round_trip(&Message::Example(e))?;
    }

    #[test]
    fn sequence_example_round_trips(s in sequence_example()) {
        check_round_trip(&Message::SequenceExample(s))?;
    }

    #[test]
    fn ofrecord_round_trips(o in ofrecord()) {
        check_round_trip(&Message::OfRecord(o))?;
    }

    /// 2. encoded_len() == to_bytes().len(); at most one allocation, none
    /// into a buffer with room.
    #[test]
    fn encoded_len_is_exact_and_encode_to_does_not_allocate(m in message()) {
        check_lengths(&m)?;
        check_lengths(&sorted(&m))?;
    }

    #[test]
    fn raw_messages_encode_as_themselves(b in prop::collection::vec(any::<u8>(), 0..40)) {
        check_lengths(&Message::Raw(b.clone()))?;
        let mut out = vec![1u8];
        prop_assert!(Message::Raw(b.clone()).encode_to(&mut out).is_ok());
        prop_assert_eq!(&out[1..], &b[..]);
    }

    /// 3. encode(decode(b)) == b for canonical b (our writer, prost's entries
    /// form, prost's maps where canonical), and encode_feature_ref.
    #[test]
    fn canonical_bytes_re_encode_identically(m in message()) {
        check_canonical_sources(&m)?;
    }

    /// 3b. Any valid record, canonical or not: re-encoding is canonical and
    /// idempotent; encode_feature_ref agrees with the owned encoding.
    #[test]
    fn any_valid_record_re_encodes_canonically((kind, rec) in common::any_record(ANY_VALID)) {
        check_reencode(kind, &common::encode(&rec))?;
    }

    /// 4. Differential against prost's encoder.
    #[test]
    fn encoding_agrees_with_prost(m in message()) {
        check_against_prost(&m)?;
        check_against_prost(&prost_canonical_part(&m))?;
    }

    /// 5. JSON: the printer's output reads back to the same message.
    #[test]
    fn json_printer_round_trips(m in message()) {
        check_json_printer(&m)?;
    }

    /// 5b. MessageToDict-style variants read back to the same message.
    #[test]
    fn json_variants_read_back(m in message(), s in style()) {
        check_json_style(&m, s)?;
    }

    /// 6. sort_maps gives ascending key byte order, whatever the insertion order.
    #[test]
    fn sorted_maps_encode_in_key_order(m in message()) {
        check_sorted(&m)?;
    }

    /// A tf.Example or SequenceExample holding an OFRecord-only kind is an
    /// error that names the feature, and leaves the caller's buffer as it was.
    #[test]
    fn ofrecord_only_kinds_are_refused_in_tf_messages(
        m in prop_oneof![
            example().prop_map(Message::Example),
            sequence_example().prop_map(Message::SequenceExample),
        ],
        bad in prop_oneof![
            prop::collection::vec(any::<f64>(), 0..3).prop_map(Feature::Double),
            prop::collection::vec(any::<i32>(), 0..3).prop_map(Feature::Int32),
        ],
        name in tf_name(),
        where_ in 0u8..2,
    ) {
        let mut m = m;
        match &mut m {
            Message::Example(e) => {
                e.features.get_or_insert_with(Features::new).insert(&name, bad.clone());
            }
            Message::SequenceExample(s) if where_ == 0 => {
                s.context.get_or_insert_with(Features::new).insert(&name, bad.clone());
            }
            Message::SequenceExample(s) => {
                let lists = s.feature_lists.get_or_insert_with(FeatureLists::new);
                lists.insert(&name, FeatureList { features: vec![Feature::None, bad.clone()] });
            }
            _ => unreachable!(),
        }
        let want = EncodeError::KindNotInSchema {
            name: name.clone(),
            kind: if matches!(bad, Feature::Double(_)) { Kind::Double } else { Kind::Int32 },
        };
        prop_assert_eq!(to_bytes(&m), Err(want.clone()), "message: {:?}", m);
        let mut out = b"keep".to_vec();
        prop_assert_eq!(m.encode_to(&mut out), Err(want), "message: {:?}", m);
        prop_assert_eq!(&out[..], b"keep", "a failed encode_to left bytes behind");
    }
}

// ---------------------------------------------------------------------------
// Pinned cases
// ---------------------------------------------------------------------------

/// prost's map encoder omits an entry's empty key and default value, which
/// Google's `SerializeToString` (and docs/FORMAT.md §4.1) write: the reason the property
/// compares bytes with prost's maps only where keys are non-empty and values
/// set.
#[test]
fn prost_differs_map_entries_omit_empty_key_and_default_value() {
    let mut f = Features::new();
    f.insert("", Feature::Int64(vec![1]));
    f.insert("n", Feature::None);
    let ex = Example::with_features(f);
    let ours = ex.to_bytes().expect("encodes");
    assert_eq!(
        hex(&ours),
        hex(&[
            0x0a, 0x12, // features
            0x0a, 0x09, 0x0a, 0x00, 0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x01, // "" -> [1]
            0x0a, 0x05, 0x0a, 0x01, b'n', 0x12, 0x00, // "n" -> Feature {}
        ])
    );
    let theirs = prost_map_bytes(&Message::Example(ex.clone())).expect("UTF-8 names");
    assert_eq!(
        hex(&theirs),
        hex(&[
            0x0a, 0x0e, // features
            0x0a, 0x07, 0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x01, // no key
            0x0a, 0x03, 0x0a, 0x01, b'n', // no value
        ]),
        "prost now writes default keys and values; the property can compare all bytes"
    );
    // Both mean the same to prost and to recordwire.
    let m = Message::Example(ex);
    assert_eq!(
        prost_map_decode(PayloadKind::Example, &ours),
        prost_map_decode(PayloadKind::Example, &theirs)
    );
    let a = decode(PayloadKind::Example, &ours).expect("valid");
    let b = decode(PayloadKind::Example, &theirs).expect("valid");
    assert_eq!(cmp(&a), cmp(&m));
    assert_eq!(cmp(&b), cmp(&m));
    // And re-encoding prost's form gives the canonical bytes.
    assert_eq!(hex(&to_bytes(&b).expect("encodes")), hex(&ours));
}

/// JSON float specials and extremes, one by one.
#[test]
fn json_float_extremes_round_trip() {
    let floats = vec![
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        -0.0,
        0.1,
        16_777_216.0,
        16_777_218.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let doubles = vec![
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        -0.0,
        0.1,
        9_007_199_254_740_993.0,
        f64::INFINITY,
    ];
    let mut f = Features::new();
    f.insert("f", Feature::Float(floats));
    f.insert("d", Feature::Double(doubles));
    f.insert("i", Feature::Int32(vec![i32::MIN, i32::MAX, -1, 0]));
    f.insert("l", Feature::Int64(vec![i64::MIN, i64::MAX, -1, 0]));
    let m = Message::OfRecord(OfRecord::with_features(f));
    if let Err(e) = check_json_printer(&m) {
        panic!("{e}");
    }
    for floats in 0..3 {
        for int64_numbers in [false, true] {
            let s = Style {
                camel: true,
                int64_numbers,
                int32_strings: int64_numbers,
                floats,
                base64: 3,
                nulls: true,
                ascii: true,
                upper: false,
                spaces: true,
                explicit_empty: false,
            };
            if let Err(e) = check_json_style(&m, s) {
                panic!("{e}");
            }
        }
    }
}

/// docs/FORMAT.md §3.3/§5.4: tf.Example is proto3, so a feature name that is not UTF-8
/// makes the record invalid, and the `\udcXX` form is for OFRecord names
/// only (README: "possible only in an OFRecord"). Reading such a name from
/// JSON into a tf.Example must be refused, or at least not produce bytes
/// that recordwire's own parser (and Google's, and prost's) reject.
#[test]
fn json_non_utf8_name_in_tf_example_is_refused() {
    for (kind, text) in [
        (
            PayloadKind::Example,
            &br#"{"features": {"feature": {"caf\udce9": {"int64_list": {"value": ["1"]}}}}}"#[..],
        ),
        (
            PayloadKind::SequenceExample,
            br#"{"context": {"feature": {"\udcff": {}}}}"#,
        ),
        (
            PayloadKind::SequenceExample,
            br#"{"feature_lists": {"feature_list": {"\udcff": {"feature": [{}]}}}}"#,
        ),
    ] {
        let Ok(m) = message_from_json(kind, text) else {
            continue; // refused: as it should be
        };
        let b = to_bytes(&m).expect("encodes");
        assert!(
            decode(kind, &b).is_ok(),
            "message_from_json accepted a non-UTF-8 name in a {} and the encoder wrote bytes \
             that ExampleRef/SequenceExampleRef::parse reject\njson: {}\n{}",
            kind.name(),
            String::from_utf8_lossy(text),
            show(&m, &b)
        );
    }
}

/// docs/FORMAT.md §5.2: a float is printed as protobuf's `ToShortestFloat`
/// prints it, the first of `%.6g` to `%.9g` that reads back "as protobuf
/// does (decimal to double, then rounded to the nearest float)". Rust's
/// shortest `f32` representation assumes a direct decimal-to-float
/// conversion; through a double, the rounding happens twice. An exhaustive
/// check of all 2^32 floats (Rust's `{:?}`, then `parse::<f64>() as f32`)
/// finds exactly two whose shortest form does not read back: ±7.038531e-26
/// (0x15ae43fd / 0x95ae43fd), read back as 0x15ae43fe / 0x95ae43fe. Checking
/// the round trip through a double, as `ToShortestFloat` does, gives
/// `7.0385307e-26` instead; these two and the tie 52277.8125 (`52277.812`,
/// where the shortest printer says `52277.813`) must print as MessageToDict
/// prints them and read back. `tests/decode/float_text.rs` checks every
/// float32 printed against MessageToDict on more than a million values.
#[test]
fn json_floats_that_double_rounding_breaks_round_trip() {
    for (bits, message_to_dict) in [
        (0x15ae_43fdu32, "7.0385307e-26"),
        (0x95ae_43fd, "-7.0385307e-26"),
        (0xc74c_35d0, "-52277.812"),
    ] {
        let x = f32::from_bits(bits);
        for kind in [PayloadKind::Example, PayloadKind::OfRecord] {
            let mut f = Features::new();
            f.insert("f", Feature::Float(vec![x]));
            let m = match kind {
                PayloadKind::Example => Message::Example(Example::with_features(f)),
                _ => Message::OfRecord(OfRecord::with_features(f)),
            };
            let b = to_bytes(&m).expect("encodes");
            let mut out = Vec::new();
            json::write_record(&mut out, kind, &b, 0, false, None).expect("prints");
            let text = String::from_utf8_lossy(&out);
            assert!(
                text.contains(&format!("[{message_to_dict}]")),
                "{bits:#010x} printed as {text}, MessageToDict gives {message_to_dict}"
            );
            let back = message_from_json(kind, &out).expect("reads");
            assert_eq!(
                cmp(&back),
                cmp(&m),
                "{:#010x} printed as {} reads back as another float (left)",
                bits,
                String::from_utf8_lossy(&out)
            );
        }
    }
}
