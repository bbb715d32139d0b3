//! Semantics of the views against hand-built encodings (docs/FORMAT.md §3).

use super::*;
use crate::wire::{encode_varint, DecodeReason};

/// Builds messages field by field (test helper).
#[derive(Default, Clone)]
struct M(Vec<u8>);

impl M {
    fn new() -> Self {
        M(Vec::new())
    }
    fn tag(mut self, n: u32, w: u8) -> Self {
        encode_varint(((n as u64) << 3) | w as u64, &mut self.0);
        self
    }
    fn len(self, n: u32, body: &[u8]) -> Self {
        let mut s = self.tag(n, 2);
        encode_varint(body.len() as u64, &mut s.0);
        s.0.extend_from_slice(body);
        s
    }
    fn msg(self, n: u32, m: M) -> Self {
        self.len(n, &m.0)
    }
    fn varint(self, n: u32, v: u64) -> Self {
        let mut s = self.tag(n, 0);
        encode_varint(v, &mut s.0);
        s
    }
    fn fixed32(self, n: u32, v: u32) -> Self {
        let mut s = self.tag(n, 5);
        s.0.extend_from_slice(&v.to_le_bytes());
        s
    }
    fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

fn entry(name: &str, feature: M) -> M {
    M::new().len(1, name.as_bytes()).msg(2, feature)
}

fn int64s(v: &[i64]) -> M {
    let mut packed = Vec::new();
    for &x in v {
        encode_varint(x as u64, &mut packed);
    }
    M::new().len(1, &packed)
}

fn feature_int64(v: &[i64]) -> M {
    M::new().msg(3, int64s(v))
}

fn ints(f: FeatureRef<'_>) -> Vec<i64> {
    f.int64_list()
        .unwrap()
        .unwrap()
        .iter()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn names(fs: FeaturesRef<'_>) -> Vec<String> {
    fs.iter()
        .map(|e| String::from_utf8(e.unwrap().name().to_vec()).unwrap())
        .collect()
}

#[test]
fn repeated_features_field_is_merged() {
    let ex = M::new()
        .msg(1, M::new().msg(1, entry("a", feature_int64(&[1]))))
        .varint(2, 5) // unknown
        .msg(1, M::new().msg(1, entry("b", feature_int64(&[2]))));
    let v = ExampleRef::parse(&ex.0, 0).unwrap();
    assert_eq!(names(v.features()), ["a", "b"]);
    assert_eq!(ints(v.get("b").unwrap().unwrap()), [2]);
    assert!(v.get("c").unwrap().is_none());
}

#[test]
fn duplicate_key_last_entry_wins_and_entries_show_both() {
    let ex = M::new().msg(
        1,
        M::new()
            .msg(1, entry("a", feature_int64(&[1])))
            .msg(1, entry("b", feature_int64(&[2])))
            .msg(
                1,
                entry("a", M::new().msg(2, M::new().fixed32(1, 1.5f32.to_bits()))),
            ),
    );
    let v = ExampleRef::parse(&ex.0, 0).unwrap();
    let a = v.get("a").unwrap().unwrap();
    assert_eq!(a.kind().unwrap(), Some(Kind::Float));
    assert_eq!(names(v.features()), ["b", "a"]);
    assert_eq!(v.features().len().unwrap(), 2);
    assert_eq!(v.features().entries().count(), 3);
    // strict mode reports the duplicate at the second entry for "a"
    let e = ExampleRef::parse_with(&ex.0, 0, DecodeOptions { strict: true }).unwrap_err();
    assert_eq!(e.reason, DecodeReason::DuplicateKey);
}

#[test]
fn oneof_last_member_wins_same_member_merges() {
    // int64 [1], float [2.0], int64 [3], int64 [4] (unpacked) -> int64 [3, 4]
    let f = M::new()
        .msg(3, int64s(&[1]))
        .msg(2, M::new().fixed32(1, 2.0f32.to_bits()))
        .msg(3, int64s(&[3]))
        .varint(3, 9) // wrong wire type for int64_list: unknown, clears nothing
        .msg(3, M::new().varint(1, 4));
    let ex = M::new().msg(1, M::new().msg(1, entry("x", f)));
    let v = ExampleRef::parse(&ex.0, 0).unwrap();
    let x = v.get("x").unwrap().unwrap();
    assert_eq!(ints(x), [3, 4]);
    assert!(x.list().unwrap().unwrap().is_mixed().unwrap());
}

#[test]
fn map_value_fields_merge_and_missing_key_or_value() {
    // entry with value twice: {int64 [1]} then {int64 [2]} merges to [1, 2]
    let e1 = M::new()
        .len(1, b"k")
        .msg(2, feature_int64(&[1]))
        .msg(2, feature_int64(&[2]));
    // value before key, key twice (last wins)
    let e2 = M::new()
        .msg(2, feature_int64(&[7]))
        .len(1, b"zz")
        .len(1, b"v");
    // no key: empty name; no value: feature with no kind
    let e3 = M::new().msg(2, feature_int64(&[9]));
    let e4 = M::new().len(1, b"nokind");
    let ex = M::new().msg(1, M::new().msg(1, e1).msg(1, e2).msg(1, e3).msg(1, e4));
    let v = ExampleRef::parse(&ex.0, 0).unwrap();
    assert_eq!(ints(v.get("k").unwrap().unwrap()), [1, 2]);
    assert_eq!(ints(v.get("v").unwrap().unwrap()), [7]);
    assert!(v.get("zz").unwrap().is_none());
    assert_eq!(ints(v.get("").unwrap().unwrap()), [9]);
    assert_eq!(v.get("nokind").unwrap().unwrap().kind().unwrap(), None);
}

#[test]
fn utf8_names_proto3_vs_proto2() {
    let bad = M::new().msg(1, M::new().len(1, b"\xff\xfe").msg(2, feature_int64(&[1])));
    let ex = M::new().msg(1, bad.clone());
    let e = ExampleRef::parse(&ex.0, 0).unwrap_err();
    assert_eq!(e, DecodeError::new(6, DecodeReason::InvalidUtf8));
    // OFRecord (proto2): accepted, name exposed as raw bytes; int64_list is field 5 there
    let of = M::new().msg(
        1,
        M::new()
            .len(1, b"\xff\xfe")
            .msg(2, M::new().msg(5, int64s(&[4]))),
    );
    let v = OfRecordRef::parse(&of.0, 0).unwrap();
    let f = v.features().iter().next().unwrap().unwrap();
    assert_eq!(f.name(), b"\xff\xfe");
    assert!(f.entry.name_str().is_err());
    assert_eq!(ints(f.feature), [4]);
}

#[test]
fn oneof_numbering_differs_between_schemas() {
    // field 3 is int64_list in tf.Example and double_list in OFRecord
    let f = M::new().msg(3, M::new().raw(&[0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]));
    let of = M::new().msg(1, entry("d", f.clone()));
    let v = OfRecordRef::parse(&of.0, 0).unwrap();
    let d = v.get("d").unwrap().unwrap().double_list().unwrap().unwrap();
    assert_eq!(d.iter().collect::<Result<Vec<_>, _>>().unwrap(), [1.0]);
    let ex = M::new().msg(1, M::new().msg(1, entry("d", f)));
    let v = ExampleRef::parse(&ex.0, 0).unwrap();
    // as an Int64List the fixed64 field 1 is unknown: an empty list
    let l = v.get("d").unwrap().unwrap().int64_list().unwrap().unwrap();
    assert_eq!(l.len().unwrap(), 0);
    // strict mode calls that unknown field out
    let e = ExampleRef::parse_with(&ex.0, 0, DecodeOptions { strict: true }).unwrap_err();
    assert!(matches!(
        e.reason,
        DecodeReason::UnknownField {
            field: 1,
            wire_type: 1
        }
    ));
}

#[test]
fn errors_in_cleared_members_still_fail_parse() {
    // a float_list with a bad packed length, later replaced by int64_list
    let f = M::new()
        .msg(2, M::new().len(1, &[1, 2, 3]))
        .msg(3, int64s(&[1]));
    let ex = M::new().msg(1, M::new().msg(1, entry("x", f)));
    let e = ExampleRef::parse(&ex.0, 0).unwrap_err();
    assert_eq!(
        e.reason,
        DecodeReason::PackedLength {
            length: 3,
            width: 4
        }
    );
    // the lazy view still answers for the surviving member
    let v = ExampleRef::new(&ex.0, 0);
    assert_eq!(ints(v.get("x").unwrap().unwrap()), [1]);
}

#[test]
fn unknown_fields_and_groups_everywhere_are_skipped() {
    let group = [0x5b, 0x08, 0x01, 0x5c]; // field 11 group { field 1 = 1 }
    let f = M::new()
        .raw(&group)
        .msg(3, int64s(&[5]).raw(&group))
        .raw(&group);
    let ex = M::new()
        .raw(&group)
        .msg(1, M::new().raw(&group).msg(1, entry("g", f).raw(&group)));
    let v = ExampleRef::parse(&ex.0, 0).unwrap();
    assert_eq!(ints(v.get("g").unwrap().unwrap()), [5]);
    let e = ExampleRef::parse_with(&ex.0, 0, DecodeOptions { strict: true }).unwrap_err();
    assert_eq!(
        e,
        DecodeError::new(
            0,
            DecodeReason::UnknownField {
                field: 11,
                wire_type: 3
            }
        )
    );
}

#[test]
fn nested_length_overrun_reports_absolute_offset() {
    // Example{ features (len 3) { entry (len 5: overruns) } }
    let ex = [0x0a, 0x03, 0x0a, 0x05, 0x0a];
    let e = ExampleRef::parse(&ex, 1000).unwrap_err();
    assert_eq!(
        e,
        DecodeError::new(
            1002,
            DecodeReason::LengthOverrun {
                declared: 5,
                available: 1
            }
        )
    );
    // wire type 7 deep inside a list
    let f = M::new().msg(3, M::new().raw(&[0x0f]));
    let ex = M::new().msg(1, M::new().msg(1, entry("x", f)));
    let e = ExampleRef::parse(&ex.0, 0).unwrap_err();
    assert_eq!(e.reason, DecodeReason::InvalidWireType(7));
    assert_eq!(e.offset as usize, ex.0.len() - 1);
}

#[test]
fn depth_limit_counts_messages_and_groups() {
    // A Feature list at depth 4 in a tf.Example: groups inside it start at depth 5.
    let nest = |n: usize| {
        let mut v = vec![0x5b; n];
        v.extend(std::iter::repeat_n(0x5c, n));
        v
    };
    let build = |n| {
        let f = M::new().msg(3, M::new().raw(&nest(n)));
        M::new().msg(1, M::new().msg(1, entry("x", f)))
    };
    assert!(ExampleRef::parse(&build(96).0, 0).is_ok());
    let e = ExampleRef::parse(&build(97).0, 0).unwrap_err();
    assert_eq!(e.reason, DecodeReason::DepthLimitExceeded);
}

#[test]
fn sequence_example() {
    let fl = M::new()
        .msg(1, feature_int64(&[1, 2]))
        .msg(1, M::new())
        .msg(1, feature_int64(&[3]));
    let se = M::new()
        .msg(1, M::new().msg(1, entry("len", feature_int64(&[3]))))
        .msg(
            2,
            M::new()
                .msg(1, M::new().len(1, b"tokens").msg(2, fl))
                .msg(1, M::new().len(1, b"empty")),
        );
    let v = SequenceExampleRef::parse(&se.0, 0).unwrap();
    assert_eq!(ints(v.context().get("len").unwrap().unwrap()), [3]);
    let toks = v.feature_lists().get("tokens").unwrap().unwrap();
    assert_eq!(toks.len().unwrap(), 3);
    let kinds: Vec<_> = toks.iter().map(|f| f.unwrap().kind().unwrap()).collect();
    assert_eq!(kinds, [Some(Kind::Int64), None, Some(Kind::Int64)]);
    assert_eq!(
        v.feature_lists()
            .get("empty")
            .unwrap()
            .unwrap()
            .len()
            .unwrap(),
        0
    );
    assert_eq!(v.feature_lists().len().unwrap(), 2);
}

#[test]
fn mixed_packing_is_reported_in_strict_mode() {
    let f = M::new().msg(3, M::new().varint(1, 1).raw(&int64s(&[2]).0));
    let ex = M::new().msg(1, M::new().msg(1, entry("m", f)));
    assert!(ExampleRef::parse(&ex.0, 0).is_ok());
    let e = ExampleRef::parse_with(&ex.0, 0, DecodeOptions { strict: true }).unwrap_err();
    assert_eq!(e.reason, DecodeReason::MixedPacking);
}

/// The effective map against a naive "last entry wins, in the order of the
/// last entries", for maps that each size of the duplicate table holds,
/// with duplicates (wider maps: `wide_maps`).
#[test]
fn effective_entries_small_and_large_maps() {
    for (count, modulus) in [(7usize, 5usize), (12, 12), (64, 40), (65, 65), (200, 77)] {
        let mut map = M::new();
        let mut wire: Vec<(String, i64)> = Vec::new();
        for i in 0..count {
            // Duplicate names come from i % modulus; lengths vary so both
            // the length check and the byte comparison decide.
            let name = format!("f{}{}", i % modulus, "x".repeat(i % 3));
            map = map.msg(1, entry(&name, feature_int64(&[i as i64])));
            wire.push((name, i as i64));
        }
        let expected: Vec<(String, i64)> = wire
            .iter()
            .enumerate()
            .filter(|(i, (n, _))| !wire[i + 1..].iter().any(|(m, _)| m == n))
            .map(|(_, e)| e.clone())
            .collect();
        let ex = M::new().msg(1, map);
        let ex = ExampleRef::parse(&ex.0, 0).unwrap();
        let got: Vec<(String, i64)> = ex
            .features()
            .iter()
            .map(|f| {
                let f = f.unwrap();
                (
                    String::from_utf8(f.name().to_vec()).unwrap(),
                    ints(f.feature)[0],
                )
            })
            .collect();
        assert_eq!(got, expected, "{count} entries, names mod {modulus}");
        assert_eq!(ex.features().len().unwrap(), expected.len());
    }
}

// Maps of thousands of entries and a brute-force search for colliding names:
// minutes under miri for nothing it could find (no `unsafe` here), so CI's
// miri step (wire::, frame::, view::) leaves them to the plain test run.
#[cfg(not(miri))]
mod wide_maps;

/// One-list, one-run features (checked from their bytes by validation)
/// report the errors where the general walk does: a bad float run at its
/// tag, a cut varint at the varint.
#[test]
fn one_run_feature_errors_are_where_the_walk_puts_them() {
    let float = M::new().msg(2, M::new().len(1, &[1, 2, 3]));
    let ex = M::new().msg(1, M::new().msg(1, entry("f", float)));
    let e = ExampleRef::parse(&ex.0, 0).unwrap_err();
    let run_tag = ex.0.len() - 5; // 0a 03 01 02 03
    assert_eq!(
        e,
        DecodeError::new(
            run_tag as u64,
            DecodeReason::PackedLength {
                length: 3,
                width: 4
            }
        )
    );
    let int = M::new().msg(3, M::new().len(1, &[0x05, 0x80]));
    let ex = M::new().msg(1, M::new().msg(1, entry("i", int)));
    let e = ExampleRef::parse(&ex.0, 0).unwrap_err();
    assert_eq!(e.reason, DecodeReason::Truncated);
    assert_eq!(e.offset as usize, ex.0.len() - 1);
    // A sound one-run feature passes.
    let ok = M::new().msg(2, M::new().len(1, &1f32.to_le_bytes()));
    let ex = M::new().msg(1, M::new().msg(1, entry("f", ok)));
    assert!(ExampleRef::parse(&ex.0, 0).is_ok());
}

mod fast_paths {
    //! The validation fast paths (the usual `Feature`, the usual frame of
    //! a `FeatureList`) against the general walks they stand in for, on
    //! usual shapes with one- and two-byte lengths and on any one byte of
    //! them changed.
    use super::super::feature::{validate_feature_fields, validate_feature_segment};
    use super::super::sequence_example::validate_feature_list_segment;
    use super::*;
    use crate::wire::{FieldReader, Value, MAX_DEPTH};
    use proptest::prelude::*;

    /// A `Feature` of one list (`tag`) holding one run of `run`.
    fn feature(tag: u8, run: &[u8]) -> Vec<u8> {
        let mut list = vec![0x0a];
        encode_varint(run.len() as u64, &mut list);
        list.extend_from_slice(run);
        let mut f = vec![tag];
        encode_varint(list.len() as u64, &mut f);
        f.extend_from_slice(&list);
        f
    }

    /// What the frame loop did before its fast path: each `Feature` field
    /// through `FeatureRef::validate`.
    fn frames_by_walk(seg: &[u8], base: u64, depth: u32) -> Result<(), DecodeError> {
        for f in FieldReader::new(seg, base, depth) {
            let f = f?;
            if let (1, Value::Len(b)) = (f.number, f.value) {
                let d = nested_depth(depth, f.value_offset)?;
                FeatureRef::new(b, f.value_offset, d, Schema::TensorFlow).validate(false)?;
            }
        }
        Ok(())
    }

    fn case() -> impl Strategy<Value = (u8, Vec<u8>, usize, Option<(usize, u8)>)> {
        (
            prop::sample::select(vec![0x0a, 0x12, 0x1a, 0x22, 0x0b]),
            prop::collection::vec(any::<u8>(), 0..300),
            1usize..4,
            prop::option::of((any::<usize>(), any::<u8>())),
        )
            .prop_map(|(tag, mut run, frames, change)| {
                // Mostly well-formed runs: varints end, floats fill words.
                if tag == 0x1a && run.len() % 3 != 0 {
                    if let Some(b) = run.last_mut() {
                        *b &= 0x7f;
                    }
                }
                if tag == 0x12 {
                    run.truncate(run.len() / 4 * 4);
                }
                (tag, run, frames, change)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 4 } else { 512 },
            ..crate::test_util::proptest_config()
        })]

        #[test]
        fn usual_shapes_agree_with_the_general_walks((tag, run, frames, change) in case()) {
            let mut f = feature(tag, &run);
            if let Some((at, b)) = change {
                let at = at % f.len();
                f[at] = b;
            }
            for depth in [3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH] {
                prop_assert_eq!(
                    validate_feature_segment(&f, 100, depth, Schema::TensorFlow, false),
                    validate_feature_fields(&f, 100, depth, Schema::TensorFlow, false),
                    "feature at depth {}", depth
                );
                let mut seg = Vec::new();
                for _ in 0..frames {
                    seg.push(0x0a);
                    encode_varint(f.len() as u64, &mut seg);
                    seg.extend_from_slice(&f);
                }
                prop_assert_eq!(
                    validate_feature_list_segment(&seg, 7, depth, false),
                    frames_by_walk(&seg, 7, depth),
                    "{} frames at depth {}", frames, depth
                );
            }
        }
    }
}
