//! A naive reference decoder, checked against recordwire's fast views.
//!
//! The reference implements docs/FORMAT.md §3 directly, in the most obvious way: byte
//! at a time, recursive, allocating owned values for everything, every
//! message parsed into a list of fields first and only then interpreted. A
//! message field that appears again is parsed into the same value (so a oneof
//! member in a later payload clears a different one set by an earlier
//! payload), a oneof member of the kind already set concatenates its list, a
//! later map entry replaces an earlier one with the same key. It shares no
//! code with recordwire.
//!
//! The properties feed both decoders (a) valid random encodings of all three
//! payload kinds with every quirk Google's parser accepts, (b) the same with
//! deliberately invalid pieces at random places, (c) random mutations of
//! valid encodings (bit flips, truncations, inserted, deleted and overwritten
//! bytes), (d) random schema-agnostic wire trees and (e) random bytes. Every
//! input is decoded as each of the three payload kinds. Both decoders must
//! agree on success versus failure and, on success, on every value and on the
//! encoding details the views expose (`packed_bytes`, `is_mixed`, entry names
//! in wire order); the lazy `new` views must give the same values as the
//! parsed ones, and must not panic on invalid input. On a disagreement the
//! input is minimized and both the original and the minimal input are
//! printed in hex.

use crate::support::common;

use std::collections::BTreeMap;

use common::{hex, observe, Cfg, FeatObs, MapObs, ObsErr, Open, RecObs, Vals, BASE, F, KINDS};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{TestCaseError, TestError, TestRunner};
use recordwire::view::{Kind, PayloadKind, Schema};

// ---------------------------------------------------------------------------
// The reference decoder
// ---------------------------------------------------------------------------

/// Why the reference rejected the input (for messages only).
#[derive(Debug, Clone, PartialEq, Eq)]
struct RefErr(&'static str);

type R<T> = Result<T, RefErr>;

fn err<T>(why: &'static str) -> R<T> {
    Err(RefErr(why))
}

/// Messages and groups may nest 100 deep below the top-level message.
const MAX_DEPTH: u32 = 100;

/// A field's value, owned.
#[derive(Debug, Clone)]
enum WV {
    Varint(u64),
    I64(u64),
    Len(Vec<u8>),
    /// A group, checked for nesting and termination; its contents are unknown.
    Group,
    I32(u32),
}

/// Bytes read one at a time.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn done(&self) -> bool {
        self.pos == self.data.len()
    }

    fn byte(&mut self) -> R<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => err("input ends inside a value"),
        }
    }

    /// A varint of at most `max` bytes; bits past the 64th are dropped.
    fn varint_of(&mut self, max: u32) -> R<u64> {
        let mut value: u128 = 0;
        for i in 0..max {
            let b = self.byte()?;
            value |= ((b & 0x7f) as u128) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value as u64);
            }
        }
        err("varint too long")
    }

    fn varint(&mut self) -> R<u64> {
        self.varint_of(10)
    }

    /// A tag: at most 5 bytes, below 2^32, field number not 0, wire type not 6 or 7.
    fn tag(&mut self) -> R<(u32, u8)> {
        let v = self.varint_of(5)?;
        if v > u32::MAX as u64 {
            return err("tag above 2^32-1");
        }
        let (number, wire) = ((v >> 3) as u32, (v & 7) as u8);
        if number == 0 {
            return err("field number 0");
        }
        if wire > 5 {
            return err("wire type 6 or 7");
        }
        Ok((number, wire))
    }

    /// Little-endian fixed-width bits, byte at a time.
    fn fixed(&mut self, width: u32) -> R<u64> {
        let mut v = 0u64;
        for i in 0..width {
            v |= (self.byte()? as u64) << (8 * i);
        }
        Ok(v)
    }

    /// A length (at most 5 bytes, below 2^31) and that many bytes.
    fn len_delimited(&mut self) -> R<Vec<u8>> {
        let len = self.varint_of(5)?;
        if len >= 1 << 31 {
            return err("length of 2^31 or more");
        }
        let mut out = Vec::new();
        for _ in 0..len {
            out.push(
                self.byte()
                    .map_err(|_| RefErr("length runs past the message"))?,
            );
        }
        Ok(out)
    }

    /// The value of a field of wire type `wire` other than the group types.
    fn value(&mut self, wire: u8) -> R<WV> {
        Ok(match wire {
            0 => WV::Varint(self.varint()?),
            1 => WV::I64(self.fixed(8)?),
            2 => WV::Len(self.len_delimited()?),
            5 => WV::I32(self.fixed(4)? as u32),
            _ => unreachable!("groups are handled by the callers"),
        })
    }

    /// The fields of a group of field `number` at `depth`, up to its end tag.
    fn group(&mut self, number: u32, depth: u32) -> R<Vec<(u32, WV)>> {
        if depth > MAX_DEPTH {
            return err("nesting deeper than 100");
        }
        let mut fields = Vec::new();
        loop {
            if self.done() {
                return err("group not terminated");
            }
            let (n, wire) = self.tag()?;
            match wire {
                4 if n == number => return Ok(fields),
                4 => return err("end group of another group"),
                3 => {
                    self.group(n, depth + 1)?;
                    fields.push((n, WV::Group));
                }
                _ => fields.push((n, self.value(wire)?)),
            }
        }
    }
}

/// Every field of a message at `depth`, wire-checked, in wire order.
fn fields(data: &[u8], depth: u32) -> R<Vec<(u32, WV)>> {
    let mut r = Reader { data, pos: 0 };
    let mut out = Vec::new();
    while !r.done() {
        let (n, wire) = r.tag()?;
        match wire {
            4 => return err("end group outside a group"),
            3 => {
                r.group(n, depth + 1)?;
                out.push((n, WV::Group));
            }
            _ => out.push((n, r.value(wire)?)),
        }
    }
    Ok(out)
}

/// The depth of a submessage of a message at `depth`.
fn sub(depth: u32) -> R<u32> {
    if depth + 1 > MAX_DEPTH {
        err("nesting deeper than 100")
    } else {
        Ok(depth + 1)
    }
}

/// One piece of a numeric list on the wire.
#[derive(Debug, Clone, PartialEq)]
enum Run {
    Packed(Vec<u8>),
    One,
}

/// A list, owned. Numeric values are kept as their raw wire bits.
#[derive(Debug, Clone, PartialEq)]
enum RList {
    Bytes(Vec<Vec<u8>>),
    Num {
        kind: Kind,
        bits: Vec<u64>,
        runs: Vec<Run>,
    },
}

/// A Feature, owned: the oneof's field number and list, if set.
#[derive(Debug, Clone, Default, PartialEq)]
struct RFeature {
    member: Option<(u32, RList)>,
}

fn feature_kind(schema: Schema, n: u32) -> Option<Kind> {
    match (schema, n) {
        (_, 1) => Some(Kind::Bytes),
        (_, 2) => Some(Kind::Float),
        (Schema::TensorFlow, 3) => Some(Kind::Int64),
        (Schema::OneFlow, 3) => Some(Kind::Double),
        (Schema::OneFlow, 4) => Some(Kind::Int32),
        (Schema::OneFlow, 5) => Some(Kind::Int64),
        _ => None,
    }
}

/// A list message of `kind` at `depth`.
fn list(data: &[u8], depth: u32, kind: Kind) -> R<RList> {
    let mut values = Vec::new();
    let mut bits = Vec::new();
    let mut runs = Vec::new();
    for (n, v) in fields(data, depth)? {
        if n != 1 {
            continue;
        }
        match (kind, v) {
            (Kind::Bytes, WV::Len(b)) => values.push(b),
            (Kind::Bytes, _) => {}
            (Kind::Float, WV::I32(x)) => {
                bits.push(x as u64);
                runs.push(Run::One);
            }
            (Kind::Double, WV::I64(x)) | (Kind::Int32 | Kind::Int64, WV::Varint(x)) => {
                bits.push(x);
                runs.push(Run::One);
            }
            (_, WV::Len(b)) => {
                let mut r = Reader { data: &b, pos: 0 };
                match kind {
                    Kind::Float | Kind::Double => {
                        let width = if kind == Kind::Float { 4 } else { 8 };
                        if b.len() % width != 0 {
                            return err("packed run not a multiple of the width");
                        }
                        while !r.done() {
                            bits.push(r.fixed(width as u32)?);
                        }
                    }
                    _ => {
                        while !r.done() {
                            bits.push(r.varint()?);
                        }
                    }
                }
                runs.push(Run::Packed(b));
            }
            _ => {} // wrong wire type: an unknown field
        }
    }
    Ok(if kind == Kind::Bytes {
        RList::Bytes(values)
    } else {
        RList::Num { kind, bits, runs }
    })
}

/// One oneof member arriving: a member of the same kind merges into the one
/// set (lists concatenate), another member replaces it.
fn merge_member(into: &mut RFeature, n: u32, l: RList) {
    match &mut into.member {
        Some((m, cur)) if *m == n => match (cur, l) {
            (RList::Bytes(a), RList::Bytes(b)) => a.extend(b),
            (
                RList::Num {
                    bits: a, runs: ra, ..
                },
                RList::Num {
                    bits: b, runs: rb, ..
                },
            ) => {
                a.extend(b);
                ra.extend(rb);
            }
            _ => unreachable!("same field number, same kind"),
        },
        _ => into.member = Some((n, l)),
    }
}

/// Parses a Feature message at `depth` *into* `f`, as a parser does with a
/// message field that appears again: each member occurrence is merged in
/// turn, so a member in this payload can clear one set by an earlier payload.
/// (This is not `MergeFrom` of the payload parsed on its own: for a oneof the
/// two differ, and Google's parsers, prost and docs/FORMAT.md §3.3 all do this.)
fn feature_into(f: &mut RFeature, data: &[u8], depth: u32, schema: Schema) -> R<()> {
    for (n, v) in fields(data, depth)? {
        if let (Some(kind), WV::Len(b)) = (feature_kind(schema, n), v) {
            let l = list(&b, sub(depth)?, kind)?;
            merge_member(f, n, l);
        }
    }
    Ok(())
}

/// Parses one payload of a map value at a depth into the value.
type ValueInto<'a, V> = dyn Fn(&mut V, &[u8], u32) -> R<()> + 'a;

/// A map entry at `depth`: the last key (UTF-8 checked when `utf8`), every
/// value payload parsed into the same value.
fn entry<V: Default>(
    data: &[u8],
    depth: u32,
    utf8: bool,
    value_into: &ValueInto<'_, V>,
) -> R<(Vec<u8>, V)> {
    let mut key = Vec::new();
    let mut val = V::default();
    for (n, v) in fields(data, depth)? {
        match (n, v) {
            (1, WV::Len(k)) => {
                if utf8 && std::str::from_utf8(&k).is_err() {
                    return err("proto3 string key is not UTF-8");
                }
                key = k;
            }
            (2, WV::Len(b)) => value_into(&mut val, &b, sub(depth)?)?,
            _ => {}
        }
    }
    Ok((key, val))
}

/// A map message at `depth`: its entries in wire order.
fn map_entries<V: Default>(
    data: &[u8],
    depth: u32,
    utf8: bool,
    value_into: &ValueInto<'_, V>,
) -> R<Vec<(Vec<u8>, V)>> {
    let mut out = Vec::new();
    for (n, v) in fields(data, depth)? {
        if let (1, WV::Len(b)) = (n, v) {
            out.push(entry(&b, sub(depth)?, utf8, value_into)?);
        }
    }
    Ok(out)
}

fn features_entries(data: &[u8], depth: u32, schema: Schema) -> R<Vec<(Vec<u8>, RFeature)>> {
    map_entries(data, depth, schema == Schema::TensorFlow, &|f, b, d| {
        feature_into(f, b, d, schema)
    })
}

/// Parses a FeatureList at `depth` into `out` (its features are appended).
fn feature_list_into(out: &mut Vec<RFeature>, data: &[u8], depth: u32) -> R<()> {
    for (n, v) in fields(data, depth)? {
        if let (1, WV::Len(b)) = (n, v) {
            let mut f = RFeature::default();
            feature_into(&mut f, &b, sub(depth)?, Schema::TensorFlow)?;
            out.push(f);
        }
    }
    Ok(())
}

/// What the views should show for a feature.
fn feature_obs(f: &RFeature) -> FeatObs {
    match &f.member {
        None => FeatObs {
            vals: None,
            packed: None,
            mixed: false,
        },
        Some((_, RList::Bytes(v))) => FeatObs {
            vals: Some(Vals::Bytes(v.clone())),
            packed: None,
            mixed: false,
        },
        Some((_, RList::Num { kind, bits, runs })) => {
            let vals = match kind {
                Kind::Float => Vals::Float(bits.iter().map(|&b| b as u32).collect()),
                Kind::Double => Vals::Double(bits.clone()),
                Kind::Int32 => Vals::Int32(bits.iter().map(|&b| b as i32).collect()),
                Kind::Int64 => Vals::Int64(bits.iter().map(|&b| b as i64).collect()),
                Kind::Bytes => unreachable!("bytes lists are RList::Bytes"),
            };
            let packed = match runs.as_slice() {
                [] => Some(Vec::new()),
                [Run::Packed(b)] => Some(b.clone()),
                _ => None,
            };
            let mixed =
                runs.contains(&Run::One) && runs.iter().any(|r| matches!(r, Run::Packed(_)));
            FeatObs {
                vals: Some(vals),
                packed,
                mixed,
            }
        }
    }
}

/// Entries in wire order to the effective map (last entry wins).
fn to_map<V, O>(entries: &[(Vec<u8>, V)], obs: impl Fn(&V) -> O) -> MapObs<O> {
    let mut map = BTreeMap::new();
    for (k, v) in entries {
        map.insert(k.clone(), obs(v));
    }
    MapObs {
        map,
        entry_names: entries.iter().map(|(k, _)| k.clone()).collect(),
    }
}

/// Decodes `data` as `kind`, the way docs/FORMAT.md §3 says Google's parser does.
fn reference(kind: PayloadKind, data: &[u8]) -> R<RecObs> {
    let top = fields(data, 0)?;
    let payloads = |number: u32| -> Vec<Vec<u8>> {
        top.iter()
            .filter_map(|(n, v)| match v {
                WV::Len(b) if *n == number => Some(b.clone()),
                _ => None,
            })
            .collect()
    };
    Ok(match kind {
        PayloadKind::Example => {
            let features = payloads(1);
            let mut entries = Vec::new();
            for b in &features {
                entries.extend(features_entries(b, sub(0)?, Schema::TensorFlow)?);
            }
            RecObs::Example {
                has_features: !features.is_empty(),
                features: to_map(&entries, feature_obs),
            }
        }
        PayloadKind::SequenceExample => {
            let mut context = Vec::new();
            let mut lists = Vec::new();
            let (mut has_context, mut has_lists) = (false, false);
            for (n, v) in &top {
                match (n, v) {
                    (1, WV::Len(b)) => {
                        has_context = true;
                        context.extend(features_entries(b, sub(0)?, Schema::TensorFlow)?);
                    }
                    (2, WV::Len(b)) => {
                        has_lists = true;
                        lists.extend(map_entries(b, sub(0)?, true, &feature_list_into)?);
                    }
                    _ => {}
                }
            }
            RecObs::Seq {
                has_context,
                has_lists,
                context: to_map(&context, feature_obs),
                lists: to_map(&lists, |l: &Vec<RFeature>| {
                    l.iter().map(feature_obs).collect()
                }),
            }
        }
        PayloadKind::OfRecord => {
            let entries = features_entries(data, 0, Schema::OneFlow)?;
            RecObs::Of(to_map(&entries, feature_obs))
        }
        PayloadKind::Raw => unreachable!("raw payloads are not decoded"),
    })
}

// ---------------------------------------------------------------------------
// Comparison, minimization
// ---------------------------------------------------------------------------

/// How the two decoders disagree on `input` as `kind`, if they do.
fn disagreement(kind: PayloadKind, input: &[u8]) -> Option<String> {
    let want = reference(kind, input);
    let got = observe(kind, input, BASE, Open::Parse);
    let lazy = observe(kind, input, BASE, Open::Lazy);
    match (want, got) {
        (Ok(want), Ok(Ok(got))) => {
            if want != got {
                return Some(format!(
                    "values differ:\n  reference: {want:?}\n  recordwire: {got:?}"
                ));
            }
            match lazy {
                Ok(Ok(l)) if l == got => None,
                other => Some(format!("lazy view differs from the parsed one: {other:?}")),
            }
        }
        (Ok(_), Ok(Err(ObsErr::Decode(e)))) => {
            Some(format!("parse succeeded but an accessor failed: {e}"))
        }
        (Ok(_), Ok(Err(ObsErr::Mismatch(m)))) => Some(format!("accessors disagree: {m}")),
        (Ok(want), Err(e)) => Some(format!(
            "reference accepts, recordwire rejects with {e}\n  reference: {want:?}"
        )),
        (Err(why), Ok(got)) => Some(format!(
            "reference rejects ({}), recordwire accepts: {got:?}",
            why.0
        )),
        (Err(_), Err(e)) => {
            // Both reject: the error must point into the input.
            let end = BASE + input.len() as u64;
            (!(BASE..=end).contains(&e.offset)).then(|| {
                format!(
                    "error offset {} outside the input [{BASE}, {end}]: {e}",
                    e.offset
                )
            })
        }
    }
}

/// Greedily shrinks `input` while `still` holds: drops chunks, then lowers bytes.
fn minimize(input: &[u8], still: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut cur = input.to_vec();
    let mut chunk = cur.len().max(1);
    while chunk > 0 {
        let mut i = 0;
        let mut progressed = false;
        while i < cur.len() {
            let mut cand = cur.clone();
            cand.drain(i..(i + chunk).min(cur.len()));
            if still(&cand) {
                cur = cand;
                progressed = true;
            } else {
                i += chunk;
            }
        }
        if !progressed {
            chunk /= 2;
        }
    }
    for i in 0..cur.len() {
        for b in [0x00, 0x01, 0x08, 0x0a] {
            if cur[i] > b {
                let mut cand = cur.clone();
                cand[i] = b;
                if still(&cand) {
                    cur = cand;
                    break;
                }
            }
        }
    }
    cur
}

/// The first payload kind for which the decoders disagree on `input`, and how.
fn first_disagreement(input: &[u8]) -> Option<(PayloadKind, String)> {
    KINDS
        .iter()
        .find_map(|&kind| disagreement(kind, input).map(|why| (kind, why)))
}

/// The report for a disagreement on `input`: the input and a minimal input
/// with a disagreement for the same payload kind, in hex.
fn report(input: &[u8]) -> Option<String> {
    let (kind, why) = first_disagreement(input)?;
    let min = minimize(input, |b| disagreement(kind, b).is_some());
    let min_why = disagreement(kind, &min).unwrap_or_default();
    Some(format!(
        "{kind:?}: recordwire and the reference decoder disagree: {why}\n\
         input ({} bytes): {}\n\
         minimal input ({} bytes): {}\n\
         on the minimal input: {min_why}",
        input.len(),
        hex(input),
        min.len(),
        hex(&min)
    ))
}

/// Runs a property: every generated input must decode alike in both decoders
/// as each payload kind. Proptest shrinks the generated value; the input of
/// the shrunk case is then minimized byte-wise and reported.
fn run_property<S: Strategy>(cases: u32, strategy: S, input_of: impl Fn(&S::Value) -> Vec<u8>) {
    let mut runner = TestRunner::new(common::config(cases));
    let result = runner.run(&strategy, |v| {
        let input = input_of(&v);
        match first_disagreement(&input) {
            None => Ok(()),
            Some((kind, why)) => Err(TestCaseError::fail(format!(
                "{kind:?}: {why}\ninput: {}",
                hex(&input)
            ))),
        }
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, value)) => {
            let input = input_of(&value);
            panic!(
                "{}\n(shrunk generated value: {value:?})",
                report(&input).unwrap_or_else(|| "no longer fails".into())
            );
        }
        Err(e) => panic!("{e}"),
    }
}

fn assert_agrees(input: &[u8]) {
    if let Some(r) = report(input) {
        panic!("{r}");
    }
}

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

/// Everything Google's parser accepts, plus some non-UTF-8 proto3 keys.
const VALID: Cfg = Cfg {
    google_only: true,
    bad_utf8: true,
    invalid: false,
};

/// As `VALID`, with deliberately invalid pieces at random places.
const NEAR_VALID: Cfg = Cfg {
    google_only: true,
    bad_utf8: true,
    invalid: true,
};

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(Index, u8),
    Truncate(Index),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Overwrite(Index, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), prop::collection::vec(any::<u8>(), 1..4))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<Index>(), 1usize..4).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Overwrite(i, b)),
    ]
}

fn mutate(mut input: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        if input.is_empty() {
            if let Mutation::Insert(_, b) = m {
                input.extend_from_slice(b);
            }
            continue;
        }
        match m {
            Mutation::FlipBit(i, bit) => {
                let i = i.index(input.len());
                input[i] ^= 1 << bit;
            }
            Mutation::Truncate(i) => input.truncate(i.index(input.len())),
            Mutation::Insert(i, b) => {
                let i = i.index(input.len() + 1);
                input.splice(i..i, b.iter().copied());
            }
            Mutation::Delete(i, n) => {
                let i = i.index(input.len());
                input.drain(i..(i + n).min(input.len()));
            }
            Mutation::Overwrite(i, b) => {
                let i = i.index(input.len());
                input[i] = *b;
            }
        }
    }
    input
}

/// Schema-agnostic well-formed wire trees: small field numbers, every wire
/// type, length-delimited payloads that are themselves such trees (so they
/// read as maps, entries, features and lists of all three schemas at once).
fn wire_tree() -> impl Strategy<Value = Vec<F>> {
    let leaf = common::wire_field(VALID, prop_oneof![6 => 1u32..=5, 1 => 6u32..=20].boxed(), 1);
    prop::collection::vec(leaf, 0..4).prop_recursive(5, 64, 4, |inner| {
        prop::collection::vec(
            prop_oneof![
                3 => (1u32..=5, inner).prop_map(|(n, body)| common::msg(n, body)),
                2 => common::wire_field(VALID, prop_oneof![6 => 1u32..=5, 1 => 6u32..=20].boxed(), 1),
            ],
            0..4,
        )
    })
}

#[test]
fn valid_encodings_decode_like_the_reference() {
    run_property(common::cases(256), common::any_record(VALID), |(_, rec)| {
        common::encode(rec)
    });
}

#[test]
fn near_valid_encodings_fail_or_succeed_like_the_reference() {
    run_property(
        common::cases(256),
        common::any_record(NEAR_VALID),
        |(_, rec)| common::encode(rec),
    );
}

#[test]
fn mutated_encodings_fail_or_succeed_like_the_reference() {
    let strategy = (
        common::any_record(VALID),
        prop::collection::vec(mutation(), 1..4),
    );
    run_property(common::cases(1024), strategy, |((_, rec), mutations)| {
        mutate(common::encode(rec), mutations)
    });
}

#[test]
fn random_wire_trees_decode_like_the_reference() {
    run_property(common::cases(256), wire_tree(), |tree| common::encode(tree));
}

#[test]
fn random_bytes_fail_or_succeed_like_the_reference() {
    run_property(
        common::cases(256),
        prop::collection::vec(any::<u8>(), 0..48),
        |b| b.clone(),
    );
}

// ---------------------------------------------------------------------------
// Deterministic cases
// ---------------------------------------------------------------------------

/// Nested groups placed at every level of every payload kind, for depths
/// around the limit: the reference and the views must agree on where it is.
#[test]
fn depth_limit_agrees_with_reference_at_every_level() {
    use common::{bytes, msg};
    for depth in 93..=102 {
        let g = F::Raw(common::nested_groups(11, depth));
        let list = vec![g.clone(), common::varint(1, 1)];
        let feature = vec![g.clone(), msg(3, list.clone())];
        let entry = vec![g.clone(), bytes(1, b"k"), msg(2, feature.clone())];
        let map = vec![g.clone(), msg(1, entry.clone())];
        let flist = vec![g.clone(), msg(1, feature.clone())];
        let fl_entry = vec![g.clone(), bytes(1, b"k"), msg(2, flist)];
        let inputs = [
            vec![g.clone(), msg(1, map.clone())],
            vec![msg(2, vec![g.clone(), msg(1, fl_entry)])],
            map.clone(),
            // OFRecord's int32 list is field 4 of its Feature
            vec![msg(
                1,
                vec![bytes(1, b"k"), msg(2, vec![msg(4, list.clone())])],
            )],
        ];
        for input in inputs {
            assert_agrees(&common::encode(&input));
        }
    }
}

#[test]
fn reference_decoder_accepts_and_rejects_what_section_3_says() {
    use common::{bytes, msg, varint};
    let ok = |input: &[u8]| {
        for kind in KINDS {
            assert!(
                reference(kind, input).is_ok(),
                "{kind:?} rejects {}",
                hex(input)
            );
        }
        assert_agrees(input);
    };
    let bad = |input: &[u8]| {
        for kind in KINDS {
            assert!(
                reference(kind, input).is_err(),
                "{kind:?} accepts {}",
                hex(input)
            );
        }
        assert_agrees(input);
    };
    ok(&[]);
    ok(&[
        0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
    ]); // 10 bytes, dirty top
    bad(&[
        0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
    ]); // 11 bytes
    ok(&[0x98, 0x80, 0x80, 0x80, 0x00, 0x01]); // 5-byte tag
    bad(&[0x98, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01]); // 6-byte tag
    bad(&[0x98, 0x80, 0x80, 0x80, 0x10, 0x01]); // tag above 2^32-1
    ok(&[0x1a, 0x80, 0x80, 0x80, 0x80, 0x00]); // 5-byte length
    bad(&[0x1a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]); // 6-byte length
    bad(&[0x00]);
    bad(&[0x1e]);
    bad(&[0x1f]);
    bad(&[0x1c]);
    bad(&[0x1b, 0x24]);
    bad(&[0x1b]);
    ok(&[0x1b, 0x23, 0x24, 0x1c]);
    bad(&[0x1d, 0x00, 0x00, 0x00]);
    // the same known field as varint: unknown, skipped, in all three kinds
    ok(&common::encode(&[varint(1, 3), varint(2, 4)]));
    // a packed float run of 3 bytes, in a cleared oneof member
    let input = common::encode(&[msg(
        1,
        vec![msg(
            1,
            vec![
                bytes(1, b"k"),
                msg(2, vec![msg(2, vec![bytes(1, &[0; 3])]), msg(1, vec![])]),
            ],
        )],
    )]);
    assert!(reference(PayloadKind::Example, &input).is_err());
    assert_agrees(&input);
}
