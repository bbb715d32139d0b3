//! Differential property tests against prost.
//!
//! The messages of both schemas (docs/FORMAT.md §2) are declared by hand with
//! `#[derive(prost::Message)]` (`tests/support/prost_mirror.rs`). Records are
//! generated with proptest and encoded by the test's own writer
//! (`common::encode`), which produces the encodings Google's parser accepts but
//! prost's encoder never writes: unpacked and mixed numeric runs, overlong
//! varints, tags and lengths, unknown fields of every wire type (groups and
//! nested groups included) at every level, duplicate map keys, repeated
//! `features`/`context`, map entries out of order or with missing or repeated
//! parts, switching and repeated oneof members, sign-extended int32s, float
//! specials. Each encoding is decoded by prost and by recordwire and both are
//! compared by value (floats by bits); recordwire is read through every
//! accessor, which must agree.
//!
//! Where prost and Google's parser differ, the generators stay on the common
//! ground and the difference is pinned by a `prost_differs_*` test below
//! (recordwire follows Google there):
//!
//! * a known field with the wrong wire type: Google skips it as unknown,
//!   prost fails;
//! * a 10-byte varint whose last byte is above 1: Google drops the bits past
//!   the 64th, prost fails;
//! * tags and lengths longer than 5 bytes: Google fails, prost accepts;
//! * a `map<string, _>` key that is not UTF-8 in proto2 (OFRecord): Google
//!   accepts it, prost's `String` keys fail. The OFRecord map is therefore
//!   read as its wire equivalent, `repeated Entry { bytes key = 1; Feature
//!   value = 2; }` (`of::OfRecordE`), and last-wins is applied when comparing.
//!
//! In proto3 (tf.Example) a non-UTF-8 key is rejected by Google and by prost
//! alike, so the generators produce some and all decoders must fail.

use crate::support::common;

use std::collections::BTreeMap;

use common::{hex, observe, Cfg, Feat, FeatMap, Open, Rec, Vals, BASE};
use proptest::prelude::*;
use prost::Message;
use recordwire::view::{ExampleRef, OfRecordRef, PayloadKind};

use crate::support::prost_mirror;

use prost_mirror::{of, tf};

fn f32_bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn tf_feature(f: &tf::Feature) -> Feat {
    f.kind.as_ref().map(|k| match k {
        tf::Kind::BytesList(l) => Vals::Bytes(l.value.clone()),
        tf::Kind::FloatList(l) => Vals::Float(f32_bits(&l.value)),
        tf::Kind::Int64List(l) => Vals::Int64(l.value.clone()),
    })
}

fn tf_features(f: Option<&tf::Features>) -> FeatMap {
    f.map(|f| {
        f.feature
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), tf_feature(v)))
            .collect()
    })
    .unwrap_or_default()
}

fn of_feature(f: &of::Feature) -> Feat {
    f.kind.as_ref().map(|k| match k {
        of::Kind::BytesList(l) => Vals::Bytes(l.value.clone()),
        of::Kind::FloatList(l) => Vals::Float(f32_bits(&l.value)),
        of::Kind::DoubleList(l) => Vals::Double(l.value.iter().map(|x| x.to_bits()).collect()),
        of::Kind::Int32List(l) => Vals::Int32(l.value.clone()),
        of::Kind::Int64List(l) => Vals::Int64(l.value.clone()),
    })
}

/// Decodes `input` with prost into the comparable form.
fn prost_decode(kind: PayloadKind, input: &[u8]) -> Result<Rec, prost::DecodeError> {
    Ok(match kind {
        PayloadKind::Example => {
            let ex = tf::Example::decode(input)?;
            Rec::Example {
                has_features: ex.features.is_some(),
                features: tf_features(ex.features.as_ref()),
            }
        }
        PayloadKind::SequenceExample => {
            let se = tf::SequenceExample::decode(input)?;
            Rec::Seq {
                has_context: se.context.is_some(),
                has_lists: se.feature_lists.is_some(),
                context: tf_features(se.context.as_ref()),
                lists: se
                    .feature_lists
                    .map(|l| {
                        l.feature_list
                            .into_iter()
                            .map(|(k, v)| {
                                (k.into_bytes(), v.feature.iter().map(tf_feature).collect())
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        }
        PayloadKind::OfRecord => {
            let rec = of::OfRecordE::decode(input)?;
            // A map is its entries with last-wins; a missing key is the empty name.
            let mut map = BTreeMap::new();
            for e in &rec.feature {
                map.insert(
                    e.key.clone().unwrap_or_default(),
                    e.value.as_ref().and_then(of_feature),
                );
            }
            Rec::Of(map)
        }
        PayloadKind::Raw => unreachable!("raw payloads are not decoded"),
    })
}

/// Decodes `input` with prost and with recordwire (through every accessor)
/// and checks they agree, on failure as on success.
fn check(kind: PayloadKind, input: &[u8]) -> Result<(), TestCaseError> {
    let theirs = prost_decode(kind, input);
    let ours = observe(kind, input, BASE, Open::Parse);
    match (theirs, ours) {
        (Ok(want), Ok(Ok(got))) => {
            prop_assert_eq!(
                &got.values(),
                &want,
                "{:?} decoded differently by recordwire (left) and prost (right)\ninput: {}",
                kind,
                hex(input)
            );
            // The lazy view reads the same values as the parsed one.
            let lazy = observe(kind, input, BASE, Open::Lazy);
            prop_assert_eq!(
                lazy,
                Ok(Ok(got)),
                "lazy view differs from parsed view\ninput: {}",
                hex(input)
            );
        }
        (Ok(_), Ok(Err(e))) => {
            prop_assert!(
                false,
                "{:?}: parse succeeded but the accessors failed: {:?}\ninput: {}",
                kind,
                e,
                hex(input)
            );
        }
        (Err(_), Err(_)) => {}
        (Ok(want), Err(e)) => {
            prop_assert!(
                false,
                "{:?}: prost accepts ({:?}) but recordwire rejects: {}\ninput: {}",
                kind,
                want,
                e,
                hex(input)
            );
        }
        (Err(e), Ok(got)) => {
            prop_assert!(
                false,
                "{:?}: recordwire accepts ({:?}) but prost rejects: {}\ninput: {}",
                kind,
                got,
                e,
                hex(input)
            );
        }
    }
    Ok(())
}

/// What the generators may produce here: everything prost and Google agree on.
const CFG: Cfg = Cfg {
    google_only: false,
    bad_utf8: true,
    invalid: false,
};

proptest! {
    #![proptest_config(common::config(common::cases(256)))]

    #[test]
    fn example_decodes_like_prost(rec in common::example(CFG)) {
        check(PayloadKind::Example, &common::encode(&rec))?;
    }

    #[test]
    fn sequence_example_decodes_like_prost(rec in common::sequence_example(CFG)) {
        check(PayloadKind::SequenceExample, &common::encode(&rec))?;
    }

    #[test]
    fn ofrecord_decodes_like_prost(rec in common::ofrecord(CFG)) {
        check(PayloadKind::OfRecord, &common::encode(&rec))?;
    }
}

// ---------------------------------------------------------------------------
// Hand-written cases for the quirks, each checked against prost too
// ---------------------------------------------------------------------------

use common::{bytes, msg, varint, Body, VEnc, F};

fn entry(name: &[u8], feature: Vec<F>) -> F {
    msg(1, vec![bytes(1, name), msg(2, feature)])
}

fn packed_i64(v: &[i64]) -> F {
    F::Len {
        n: 1,
        tp: 0,
        lp: 0,
        body: Body::Varints(v.iter().map(|&x| (x as u64, VEnc::default())).collect()),
    }
}

fn example_of(entries: Vec<F>) -> Vec<u8> {
    common::encode(&[msg(1, entries)])
}

fn assert_agree(kind: PayloadKind, input: &[u8]) {
    if let Err(e) = check(kind, input) {
        panic!("{e}");
    }
}

fn ints(kind: PayloadKind, input: &[u8], name: &[u8]) -> Vec<i64> {
    let f = match kind {
        PayloadKind::Example => ExampleRef::parse(input, 0).and_then(|e| e.get(name)),
        _ => OfRecordRef::parse(input, 0).and_then(|e| e.get(name)),
    };
    let f = f.expect("parses").expect("has the feature");
    let l = f.int64_list().expect("valid").expect("an int64 list");
    l.iter().collect::<Result<_, _>>().expect("valid")
}

#[test]
fn every_quirk_of_section_3_at_once_agrees_with_prost() {
    let group = F::Group {
        n: 9,
        tp: 1,
        body: vec![
            varint(1, 5),
            F::Group {
                n: 10,
                tp: 0,
                body: vec![bytes(2, b"x")],
            },
        ],
    };
    let feature = vec![
        group.clone(),
        msg(
            2,
            vec![F::I32 {
                n: 1,
                tp: 0,
                v: f32::NAN.to_bits(),
            }],
        ), // float, cleared below
        msg(3, vec![varint(1, 1), packed_i64(&[2, -3]), group.clone()]),
        msg(
            3,
            vec![F::Varint {
                n: 1,
                tp: 4,
                v: 4,
                e: VEnc { pad: 6, dirty: 0 },
            }],
        ), // merged
    ];
    let features = vec![
        entry(b"x", vec![msg(1, vec![bytes(1, b"old")])]),
        group.clone(),
        // value before key, value repeated (merged), key repeated (last wins)
        msg(
            1,
            vec![
                msg(2, feature.clone()),
                bytes(1, b"ignored"),
                bytes(1, b"x"),
                msg(2, vec![msg(3, vec![varint(1, 5)])]),
            ],
        ),
        msg(1, vec![bytes(1, b"nokind")]),
        msg(1, vec![msg(2, vec![msg(3, vec![varint(1, 7)])])]),
    ];
    let input = common::encode(&[
        group.clone(),
        msg(1, features),
        F::I64 { n: 7, tp: 0, v: 1 },
        msg(1, vec![entry(b"y", vec![msg(1, vec![bytes(1, b"")])])]),
    ]);
    assert_agree(PayloadKind::Example, &input);
    assert_eq!(ints(PayloadKind::Example, &input, b"x"), [1, 2, -3, 4, 5]);
    assert_eq!(ints(PayloadKind::Example, &input, b""), [7]);
}

#[test]
fn ofrecord_int32_sign_extended_and_truncated_agrees_with_prost() {
    // int32 -1 as ten bytes, and 2^32 + 5 (read as 5 by truncation).
    let list = vec![varint(1, u64::MAX), varint(1, (1 << 32) + 5)];
    let input = common::encode(&[entry(b"\xff\x00", vec![msg(4, list)])]);
    assert_agree(PayloadKind::OfRecord, &input);
    let rec = OfRecordRef::parse(&input, 0).expect("valid");
    let f = rec.get(b"\xff\x00").expect("valid").expect("present");
    let l = f.int32_list().expect("valid").expect("int32");
    assert_eq!(
        l.iter().collect::<Result<Vec<_>, _>>().expect("valid"),
        [-1, 5]
    );
}

// ---------------------------------------------------------------------------
// Documented exceptions: where prost and Google's parser differ
// ---------------------------------------------------------------------------

#[test]
fn prost_differs_known_field_with_wrong_wire_type_is_skipped_by_google() {
    // Example { features = 1 (varint) }: Google skips it as an unknown field.
    let input = [0x08, 0x01];
    assert!(
        tf::Example::decode(&input[..]).is_err(),
        "prost now accepts it; update the doc"
    );
    let ex = ExampleRef::parse(&input, 0).expect("Google accepts it");
    assert!(!ex.has_features().expect("valid"));
    assert_eq!(ex.features().len().expect("valid"), 0);
    // A Feature whose int64_list (3) comes as fixed32: unknown, the earlier member stays.
    let input = example_of(vec![entry(
        b"a",
        vec![msg(3, vec![varint(1, 1)]), F::I32 { n: 3, tp: 0, v: 0 }],
    )]);
    assert!(tf::Example::decode(&input[..]).is_err());
    assert_eq!(ints(PayloadKind::Example, &input, b"a"), [1]);
}

#[test]
fn prost_differs_tenth_varint_byte_above_one_is_accepted_by_google() {
    // int64 value whose 10th byte is 0x7f: Google drops the bits past the 64th.
    let mut raw = vec![0x08];
    common::put_varint_len(&mut raw, u64::MAX, 10, 0x3f);
    assert_eq!(raw[10], 0x7f);
    let input = example_of(vec![entry(b"a", vec![msg(3, vec![F::Raw(raw)])])]);
    assert!(
        tf::Example::decode(&input[..]).is_err(),
        "prost now accepts it; update the doc"
    );
    assert_eq!(ints(PayloadKind::Example, &input, b"a"), [-1]);
}

#[test]
fn prost_differs_six_byte_tags_and_lengths_are_rejected_by_google() {
    // Example { features (length 0 in 6 bytes) }
    let input = [0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    assert!(
        tf::Example::decode(&input[..]).is_ok(),
        "prost now rejects it; update the doc"
    );
    assert!(ExampleRef::parse(&input, 0).is_err());
    // Example { unknown field 6 varint with a 6-byte tag }
    let input = [0xb0, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01];
    assert!(
        tf::Example::decode(&input[..]).is_ok(),
        "prost now rejects it; update the doc"
    );
    assert!(ExampleRef::parse(&input, 0).is_err());
}

#[test]
fn prost_differs_string_map_keys_reject_non_utf8_that_proto2_accepts() {
    let input = common::encode(&[entry(b"\xff", vec![msg(5, vec![packed_i64(&[1])])])]);
    assert!(
        of::OfRecord::decode(&input[..]).is_err(),
        "prost now accepts it; update the doc"
    );
    // The bytes-keyed equivalent used by the property, Google and recordwire accept it.
    assert_agree(PayloadKind::OfRecord, &input);
    assert_eq!(ints(PayloadKind::OfRecord, &input, b"\xff"), [1]);
}

#[test]
fn non_utf8_example_key_is_rejected_by_prost_and_recordwire() {
    let input = example_of(vec![entry(b"a\xc3", vec![])]);
    assert!(tf::Example::decode(&input[..]).is_err());
    assert!(ExampleRef::parse(&input, 0).is_err());
    assert_agree(PayloadKind::Example, &input);
}

#[test]
fn depth_limit_agrees_with_prost_at_every_level() {
    // prost counts nesting like Google's upb (the message a map entry is
    // counts as a level) and like docs/FORMAT.md §3.2: 100 levels below the record.
    for depth in 93..=102 {
        let g = F::Raw(common::nested_groups(11, depth));
        let list = vec![g.clone(), varint(1, 1)];
        let feature = vec![g.clone(), msg(3, list.clone())];
        let entry = vec![g.clone(), bytes(1, b"k"), msg(2, feature.clone())];
        let map = vec![g.clone(), msg(1, entry.clone())];
        let flist = vec![g.clone(), msg(1, feature.clone())];
        let fl_entry = vec![g.clone(), bytes(1, b"k"), msg(2, flist)];
        let of_entry = vec![
            g.clone(),
            bytes(1, b"k"),
            msg(2, vec![msg(5, list.clone())]),
        ];
        assert_agree(
            PayloadKind::Example,
            &common::encode(&[g.clone(), msg(1, map.clone())]),
        );
        assert_agree(
            PayloadKind::SequenceExample,
            &common::encode(&[
                msg(1, map.clone()),
                msg(2, vec![g.clone(), msg(1, fl_entry)]),
            ]),
        );
        assert_agree(
            PayloadKind::OfRecord,
            &common::encode(&[g.clone(), msg(1, of_entry)]),
        );
    }
}
