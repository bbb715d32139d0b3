//! Wide maps (issue 15): the effective map, `len`, `get` and strict mode's
//! duplicate check of maps of any width, against references built from
//! `entries()` — duplicate names, names whose hashes collide, damaged
//! entries anywhere — and the literal scan that `Effective` replaced, which
//! fixes what a damaged map yields.

use super::*;
use crate::view::dedup::Walk;
use crate::view::hash_name;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Names with colliding hashes: `COLLIDING` in groups of two or more with
/// the same 32-bit hash, `SAME_SLOT` all with the same home slot in every
/// table (their low 11 bits agree), found by a birthday search.
struct Collisions {
    colliding: Vec<Vec<u8>>,
    same_slot: Vec<Vec<u8>>,
}

static COLLISIONS: LazyLock<Collisions> = LazyLock::new(|| {
    let mut seen: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut colliding = Vec::new();
    let mut same_slot = Vec::new();
    for i in 0..400_000u32 {
        let name = format!("k{i}").into_bytes();
        let h = hash_name(&name);
        if h & 2047 == 0 && same_slot.len() < 200 {
            same_slot.push(name.clone());
        }
        match seen.get(&h) {
            Some(other) => {
                colliding.push(other.clone());
                colliding.push(name);
            }
            None => {
                seen.insert(h, name);
            }
        }
    }
    assert!(colliding.len() >= 8, "{} colliding names", colliding.len());
    assert!(
        same_slot.len() >= 100,
        "{} same-slot names",
        same_slot.len()
    );
    Collisions {
        colliding,
        same_slot,
    }
});

#[test]
fn collisions_are_real() {
    let c = &*COLLISIONS;
    for pair in c.colliding.chunks(2) {
        assert_eq!(hash_name(&pair[0]), hash_name(&pair[1]));
        assert_ne!(pair[0], pair[1]);
    }
    assert!(c.same_slot.iter().all(|n| hash_name(n) & 2047 == 0));
}

/// How the entry at a position is damaged.
#[derive(Clone, Copy, Debug)]
enum Damage {
    /// A field of wire type 7 after the key: the entry does not parse.
    BadFieldInEntry,
    /// The key's length runs past the entry.
    KeyOverrun,
    /// A tag of wire type 7 in the map message, between two entries.
    BadTagInMap,
    /// A bad list inside the value: the entry itself is sound, so the
    /// map walks on (only reading the value fails).
    BadValue,
}

/// A map to build: the names of its entries in wire order, and a damage.
#[derive(Clone, Debug)]
struct Spec {
    names: Vec<Vec<u8>>,
    damage: Option<(usize, Damage)>,
}

/// A deterministic generator for the names of one case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `count` names drawn from a pool of `distinct` names, a share of them
/// (in percent) from the colliding ones.
fn names(count: usize, distinct: usize, colliding: usize, seed: u64) -> Vec<Vec<u8>> {
    let c = &*COLLISIONS;
    let mut rng = Rng(seed | 1);
    let pool: Vec<Vec<u8>> = (0..distinct.max(1))
        .map(|j| {
            if rng.below(100) < colliding {
                let from = if rng.below(2) == 0 {
                    &c.colliding
                } else {
                    &c.same_slot
                };
                from[rng.below(from.len())].clone()
            } else {
                // Lengths from 0 to 20 bytes, so both the word loop of the
                // hash and its tail are exercised.
                let mut n = format!("f{j}").into_bytes();
                n.resize(n.len() + rng.below(14), b'_');
                if rng.below(50) == 0 {
                    n.clear();
                }
                n
            }
        })
        .collect();
    (0..count)
        .map(|_| pool[rng.below(pool.len())].clone())
        .collect()
}

/// The value of the entry at `i`: a Feature, or a FeatureList of one.
fn value(i: usize, lists: bool, bad: bool) -> M {
    let f = if bad {
        M::new().msg(3, M::new().raw(&[0x0f]))
    } else {
        feature_int64(&[i as i64])
    };
    if lists {
        M::new().msg(1, f)
    } else {
        f
    }
}

/// The map message (a `Features` or a `FeatureLists`) of `spec`.
fn map_bytes(spec: &Spec, lists: bool) -> M {
    let mut map = M::new();
    for (i, name) in spec.names.iter().enumerate() {
        match spec.damage {
            Some((at, d)) if at == i => match d {
                Damage::BadFieldInEntry => {
                    map = map.msg(1, M::new().len(1, name).raw(&[0x0f]));
                }
                Damage::KeyOverrun => map = map.len(1, &[0x0a, 0x05, b'a']),
                Damage::BadTagInMap => map = map.raw(&[0x0f]),
                Damage::BadValue => {
                    map = map.msg(1, M::new().len(1, name).msg(2, value(i, lists, true)));
                }
            },
            _ => map = map.msg(1, M::new().len(1, name).msg(2, value(i, lists, false))),
        }
    }
    map
}

/// What `entries()` yields: names and offsets up to the first error.
type Wire = Vec<Result<(Vec<u8>, u64), DecodeError>>;

fn wire_features(fs: FeaturesRef<'_>) -> Wire {
    fs.entries()
        .map(|e| e.map(|e| (e.name().to_vec(), e.entry.offset)))
        .collect()
}

fn wire_lists(fl: FeatureListsRef<'_>) -> Wire {
    fl.entries()
        .map(|e| e.map(|e| (e.name().to_vec(), e.entry.offset)))
        .collect()
}

/// The effective map from a hash map of each name's last entry: the
/// entries that are their name's last, in wire order; with a damaged
/// entry, its error for each distinct name before it, then once more.
fn reference(wire: &Wire) -> Vec<Result<u64, DecodeError>> {
    let mut last: HashMap<&[u8], usize> = HashMap::new();
    let mut error = None;
    for (i, e) in wire.iter().enumerate() {
        match e {
            Ok((name, _)) => {
                last.insert(name, i);
            }
            Err(e) => error = Some(*e),
        }
    }
    match error {
        Some(e) => vec![Err(e); last.len() + 1],
        None => wire
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match e {
                Ok((name, offset)) if last[name.as_slice()] == i => Some(Ok(*offset)),
                _ => None,
            })
            .collect(),
    }
}

/// The effective map as the scan `Effective` replaced computed it: for each
/// entry, the later entries are read until one has its name (the entry is
/// replaced) or one is damaged (its error comes out instead).
fn old_scan(wire: &Wire) -> Vec<Result<u64, DecodeError>> {
    let mut out = Vec::new();
    for (i, e) in wire.iter().enumerate() {
        let (name, offset) = match e {
            Ok(e) => e,
            Err(e) => {
                out.push(Err(*e));
                break;
            }
        };
        let mut verdict = Some(Ok(*offset));
        for l in &wire[i + 1..] {
            match l {
                Ok((n, _)) if n == name => {
                    verdict = None;
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    verdict = Some(Err(*e));
                    break;
                }
            }
        }
        out.extend(verdict);
    }
    out
}

/// Strict mode's duplicate check as the pairwise scan did it: the first
/// entry with a later duplicate, reported at that next entry; a damaged
/// entry met first is its error.
fn old_first_duplicate(wire: &Wire) -> Result<Option<u64>, DecodeError> {
    for (i, e) in wire.iter().enumerate() {
        let (name, _) = e.as_ref().map_err(|e| *e)?;
        for l in &wire[i + 1..] {
            let (n, offset) = l.as_ref().map_err(|e| *e)?;
            if n == name {
                return Ok(Some(*offset));
            }
        }
    }
    Ok(None)
}

/// The same from the first and second entry of each name (no damage).
fn first_duplicate(wire: &Wire) -> Option<u64> {
    let mut first: HashMap<&[u8], usize> = HashMap::new();
    let mut best: Option<(usize, u64)> = None;
    for (i, e) in wire.iter().enumerate() {
        let Ok((name, offset)) = e else { break };
        match first.get(name.as_slice()) {
            None => {
                first.insert(name, i);
            }
            Some(&f) => {
                if best.is_none_or(|(b, _)| f < b) {
                    best = Some((f, *offset));
                }
            }
        }
    }
    best.map(|(_, offset)| offset)
}

/// `len()` as the iteration answers it: the first error, or the count.
fn expected_len(effective: &[Result<u64, DecodeError>]) -> Result<usize, DecodeError> {
    match effective.first() {
        Some(Err(e)) => Err(*e),
        _ => Ok(effective.len()),
    }
}

/// `get(name)`: the last entry with the name, or the first error.
fn expected_get(wire: &Wire, name: &[u8]) -> Result<Option<u64>, DecodeError> {
    let mut found = None;
    for e in wire {
        let (n, offset) = e.as_ref().map_err(|e| *e)?;
        if n == name {
            found = Some(*offset);
        }
    }
    Ok(found)
}

/// Names to look up: some of the map's and one it lacks.
fn probes(spec: &Spec) -> impl Iterator<Item = &Vec<u8>> {
    static MISSING: LazyLock<Vec<u8>> = LazyLock::new(|| b"not a key".to_vec());
    spec.names.iter().step_by(97).take(20).chain([&*MISSING])
}

/// Checks every accessor of the map of `spec`, as features and as feature
/// lists, against the references.
fn check(spec: &Spec) -> Result<(), TestCaseError> {
    let scan = spec.names.len() <= 300;
    for lists in [false, true] {
        let map = map_bytes(spec, lists);
        let record = if lists {
            M::new().msg(2, map)
        } else {
            M::new().msg(1, map)
        };
        let (wire, got, len, gets, walk_dup) = if lists {
            let fl = SequenceExampleRef::new(&record.0, 0).feature_lists();
            let wire = wire_lists(fl);
            let got: Vec<_> = fl.iter().map(|e| e.map(|e| e.entry.offset)).collect();
            let gets: Vec<_> = probes(spec)
                .map(|n| (n.clone(), fl.get(n).map(|l| l.is_some())))
                .collect();
            (
                wire,
                got,
                fl.len(),
                gets,
                Walk::first_duplicate(fl.map.entries()),
            )
        } else {
            let fs = ExampleRef::new(&record.0, 0).features();
            let wire = wire_features(fs);
            let got: Vec<_> = fs.iter().map(|e| e.map(|e| e.entry.offset)).collect();
            let gets: Vec<_> = probes(spec)
                .map(|n| (n.clone(), fs.get(n).map(|f| f.is_some())))
                .collect();
            (
                wire,
                got,
                fs.len(),
                gets,
                Walk::first_duplicate(fs.map.entries()),
            )
        };
        let want = reference(&wire);
        prop_assert_eq!(&got, &want, "iter(), lists: {}", lists);
        if scan {
            prop_assert_eq!(&got, &old_scan(&wire), "iter() vs the old scan");
            prop_assert_eq!(walk_dup, old_first_duplicate(&wire), "first duplicate");
        } else if wire.iter().all(|e| e.is_ok()) {
            prop_assert_eq!(walk_dup, Ok(first_duplicate(&wire)));
        }
        prop_assert_eq!(len, expected_len(&want), "len()");
        for (name, got) in gets {
            let want = expected_get(&wire, &name);
            prop_assert_eq!(got, want.map(|w| w.is_some()), "get({:?})", name);
        }
        check_parsed(spec, &record.0, lists, &got, len.as_ref().ok().copied())?;
        // Strict mode reports the first duplicate, at its next entry.
        if spec.damage.is_none() {
            let strict = DecodeOptions { strict: true };
            let r = if lists {
                SequenceExampleRef::parse_with(&record.0, 0, strict).map(|_| ())
            } else {
                ExampleRef::parse_with(&record.0, 0, strict).map(|_| ())
            };
            match first_duplicate(&wire) {
                None => prop_assert!(r.is_ok(), "{:?}", r),
                Some(offset) => {
                    prop_assert_eq!(r, Err(DecodeError::new(offset, DecodeReason::DuplicateKey)))
                }
            }
        }
    }
    Ok(())
}

/// A parsed (validated) view iterates and counts its map from what its
/// check found (the effective entries, for maps of at most 64 entries):
/// the same as the lazy view (`got`, `len`), when the record parses. The
/// map split over two fields (`features` twice, `context` twice), an
/// OFRecord (the record is the map) and a SequenceExample's context agree
/// too.
fn check_parsed(
    spec: &Spec,
    record: &[u8],
    lists: bool,
    got: &[Result<u64, DecodeError>],
    len: Option<usize>,
) -> Result<(), TestCaseError> {
    let count = spec.names.len();
    // What parse can know: a map of 1 to 64 entries whose names' hashes
    // all differ (the others are walked as the lazy view walks them).
    let mut hashes: Vec<u32> = spec.names.iter().map(|n| hash_name(n).max(1)).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let knowable = (1..=64).contains(&count) && hashes.len() == count;
    if spec.damage.is_none() {
        let parses = if lists {
            SequenceExampleRef::parse(record, 0).is_ok()
        } else {
            ExampleRef::parse(record, 0).is_ok()
        };
        prop_assert!(parses, "an undamaged map parses");
    }
    let offsets = |it: &mut dyn Iterator<Item = Result<u64, DecodeError>>| it.collect::<Vec<_>>();
    if lists {
        if let Ok(seq) = SequenceExampleRef::parse(record, 0) {
            prop_assert_eq!(seq.known[1] != 0, knowable, "known");
            let fl = seq.feature_lists();
            prop_assert_eq!(
                &offsets(&mut fl.iter().map(|e| e.map(|e| e.entry.offset))),
                got,
                "parsed feature lists"
            );
            prop_assert_eq!(fl.len().ok(), len, "parsed len()");
        }
        return Ok(());
    }
    let map = map_bytes(spec, false);
    // The same map as a context, as an OFRecord (a `Feature` value is
    // what both hold), and split over two `features` fields.
    let context = M::new().msg(1, M(map.0.clone()));
    let half = map.0.len() / 2;
    let cut = (0..count)
        .map(|i| {
            map_bytes(
                &Spec {
                    names: spec.names[..i].to_vec(),
                    damage: spec.damage,
                },
                false,
            )
            .0
            .len()
        })
        .find(|&at| at >= half)
        .unwrap_or(map.0.len());
    let split = M::new()
        .msg(1, M(map.0[..cut].to_vec()))
        .msg(1, M(map.0[cut..].to_vec()));
    let lazy = |fs: FeaturesRef<'_>| offsets(&mut fs.iter().map(|e| e.map(|e| e.entry.offset)));
    if let Ok(ex) = ExampleRef::parse(record, 0) {
        prop_assert_eq!(ex.known != 0, knowable, "known");
        prop_assert_eq!(&lazy(ex.features()), got, "parsed features");
        prop_assert_eq!(ex.features().len().ok(), len, "parsed len()");
    }
    for (what, parsed, plain) in [
        (
            "context",
            SequenceExampleRef::parse(&context.0, 0).map(|s| s.context()),
            SequenceExampleRef::new(&context.0, 0).context(),
        ),
        (
            "OFRecord",
            OfRecordRef::parse(&map.0, 0).map(|o| o.features()),
            OfRecordRef::new(&map.0, 0).features(),
        ),
        (
            "split map",
            ExampleRef::parse(&split.0, 0).map(|e| e.features()),
            ExampleRef::new(&split.0, 0).features(),
        ),
    ] {
        if let Ok(parsed) = parsed {
            prop_assert_eq!(lazy(parsed), lazy(plain), "{}", what);
            prop_assert_eq!(parsed.len(), plain.len(), "{} len()", what);
            let known = parsed.map.effective != 0;
            prop_assert_eq!(known, what != "split map" && knowable, "{} known", what);
        }
    }
    Ok(())
}

fn damage() -> impl Strategy<Value = Option<(usize, Damage)>> {
    prop_oneof![
        3 => Just(None),
        1 => (0usize..2100, prop_oneof![
            Just(Damage::BadFieldInEntry),
            Just(Damage::KeyOverrun),
            Just(Damage::BadTagInMap),
            Just(Damage::BadValue),
        ]).prop_map(Some),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    let count = prop_oneof![
        4 => 0usize..2000,
        1 => prop::sample::select(vec![15, 16, 17, 63, 64, 65, 128, 129, 1000, 1024, 1025, 2000]),
    ];
    (count, 1usize..2100, 0usize..=100, any::<u64>(), damage()).prop_map(
        |(count, distinct, colliding, seed, damage)| Spec {
            names: names(count, distinct.min(count.max(1)), colliding, seed),
            damage: damage.map(|(at, d)| (at % (count + 1), d)),
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 96 },
        ..crate::test_util::proptest_config()
    })]

    /// Maps of 0 to 2 000 entries, few or many distinct names, hash
    /// collisions, a damaged entry anywhere.
    #[test]
    fn wide_maps_agree_with_references(spec in spec()) {
        check(&spec)?;
    }

    /// Small maps with many duplicates, against the old scan too.
    #[test]
    fn small_maps_agree_with_the_old_scan(
        count in 0usize..80,
        distinct in 1usize..20,
        colliding in 0usize..=100,
        seed: u64,
        damage in damage(),
    ) {
        let spec = Spec {
            names: names(count, distinct, colliding, seed),
            damage: damage.map(|(at, d)| (at % (count + 1), d)),
        };
        check(&spec)?;
    }
}

/// The widths around each table size and window, with and without
/// duplicates and damage, every time (not only when proptest draws them).
#[test]
fn widths_around_the_table_sizes() {
    for count in [
        0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 1023, 1024, 1025, 2049, 3100,
    ] {
        for (distinct, colliding) in [(count, 0), (count, 30), (count / 2 + 1, 10), (7, 50)] {
            let names = names(count, distinct.max(1), colliding, count as u64 + 7);
            for damage in [
                None,
                Some((count / 2, Damage::KeyOverrun)),
                Some((count, Damage::BadTagInMap)),
            ] {
                let spec = Spec {
                    names: names.clone(),
                    damage,
                };
                check(&spec).unwrap_or_else(|e| panic!("{count} entries, {distinct} names: {e}"));
            }
        }
    }
}

/// Names that all start at one slot of the table (and pairs with the same
/// hash), more than the two smaller tables hold, then half of them again:
/// the probe sequences are as long as they get.
#[test]
fn names_in_one_slot() {
    let c = &*COLLISIONS;
    let mut names: Vec<Vec<u8>> = c.same_slot.iter().chain(&c.colliding).cloned().collect();
    let n = names.len();
    assert!(n > 128, "{n} names");
    names.extend_from_within(..n / 2);
    let spec = Spec {
        names,
        damage: None,
    };
    check(&spec).unwrap_or_else(|e| panic!("{e}"));
}

/// A clone of the iterator taken halfway goes on from there, across the
/// window boundary.
#[test]
fn clones_resume_across_windows() {
    let names = names(2500, 1800, 5, 42);
    let spec = Spec {
        names,
        damage: None,
    };
    let record = M::new().msg(1, map_bytes(&spec, false));
    let fs = ExampleRef::new(&record.0, 0).features();
    let all: Vec<u64> = fs.iter().map(|e| e.unwrap().entry.offset).collect();
    let mut it = fs.iter();
    for k in 0..all.len() {
        if k % 397 == 0 {
            let rest: Vec<u64> = it.clone().map(|e| e.unwrap().entry.offset).collect();
            assert_eq!(rest, all[k..]);
        }
        assert_eq!(it.next().unwrap().unwrap().entry.offset, all[k]);
    }
    assert!(it.next().is_none());
    assert!(it.next().is_none());
}
