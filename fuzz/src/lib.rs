//! Checks shared by the fuzz targets in `fuzz_targets/`.
//!
//! The targets drive every path of the library to the end of the input and
//! never assert what valid-but-odd input could violate. What they do assert
//! is the library's own promises: the documented invariants of the frame
//! walk, that the streaming reader agrees with the slice iterator, and that a
//! record that `parse` accepted answers every accessor without an error, with
//! counts that agree with each other.

use recordwire::frame::{records, ErrorPolicy, Framing, ReadOptions, Records};
use recordwire::io::{Compression, OpenOptions, RecordFile, Source};
use recordwire::view::{
    Element, FeatureListRef, FeatureListsRef, FeatureRef, FeaturesRef, ListRef, NumList,
    PayloadKind, PayloadRef,
};
use recordwire::{DecodeError, Error, ErrorKind};

pub mod batch;
pub mod gz;
pub mod order;
pub mod schema;
pub mod targets;

/// The read options the frame targets try: both policies, and skip with and
/// without a limit on errors.
pub const POLICIES: [ErrorPolicy; 4] = [
    ErrorPolicy::Fail,
    ErrorPolicy::Skip {
        max_errors: Some(0),
    },
    ErrorPolicy::Skip {
        max_errors: Some(3),
    },
    ErrorPolicy::Skip { max_errors: None },
];

/// A reader of a copy of some bytes that gives at most `step` bytes per read,
/// as a pipe or a decompressor may.
#[derive(Debug)]
pub struct Chunked {
    data: Vec<u8>,
    at: usize,
    step: usize,
}

impl Chunked {
    /// A reader of a copy of `data`, `step` bytes at a time (at least 1).
    pub fn new(data: &[u8], step: usize) -> Self {
        Chunked {
            data: data.to_vec(),
            at: 0,
            step: step.max(1),
        }
    }
}

impl std::io::Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.data[self.at..];
        let n = buf.len().min(self.step).min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

/// Every payload kind.
pub const PAYLOADS: [PayloadKind; 4] = [
    PayloadKind::Example,
    PayloadKind::SequenceExample,
    PayloadKind::OfRecord,
    PayloadKind::Raw,
];

/// One item of a walk: a record (id, offset, data offset, end, data) or an
/// error, with what the walk says it skipped after it.
pub type Item = (
    Result<(u64, u64, u64, u64, Vec<u8>), Error>,
    Option<(u64, u64)>,
);

/// Walks `it` over `input` to the end, checking the invariants documented on
/// [`Records`], and returns what it yielded.
///
/// - each record's data is the subslice of `input` at its `data_offset`;
/// - ids are consecutive from 0 (a damaged frame or skipped range uses one id)
///   and every error carries the id and start offset of the frame being read;
/// - the records' frames, the skipped ranges and the pad frames the walk
///   passes over without an item (docs/FORMAT.md §7.5) tile the input from 0 up to
///   where the walk stops; an error that skips nothing ends the walk, and a
///   walk that ends without such an error has consumed the whole input;
/// - the error count and limit are kept, and the walk terminates (each item
///   consumes at least one byte) and stays ended.
pub fn walk(input: &[u8], mut it: Records<'_>, policy: ErrorPolicy) -> Vec<Item> {
    let framing = it.framing();
    let (mut pos, mut id, mut errors, mut out) = (0u64, 0u64, 0u64, Vec::new());
    let mut ended_by_error = false;
    while let Some(item) = it.next() {
        assert!(
            !ended_by_error,
            "an item after an error that skipped nothing"
        );
        assert!(out.len() <= input.len(), "more items than bytes");
        match &item {
            Ok(r) => {
                pos = pads_between(input, framing, pos, r.offset);
                let at = usize::try_from(r.data_offset).expect("data offset");
                let data = input
                    .get(at..at + r.data.len())
                    .expect("data inside the input");
                assert_eq!((data.as_ptr(), data.len()), (r.data.as_ptr(), r.data.len()));
                assert_eq!((r.id, r.offset), (id, pos));
                assert!(r.offset < r.data_offset && r.data_offset + r.data.len() as u64 <= r.end);
                assert!(it.skipped().is_none());
                pos = r.end;
            }
            Err(e) => {
                errors += 1;
                let at = e.offset().expect("a framing error has an offset");
                if at > pos {
                    pos = pads_between(input, framing, pos, at);
                }
                assert_eq!((e.record(), at), (Some(id), pos), "{e}");
                match it.skipped() {
                    Some((start, end)) => {
                        assert!(
                            start == pos && end > start,
                            "skipped {start}..{end} at {pos}"
                        );
                        pos = end;
                    }
                    None => ended_by_error = true,
                }
            }
        }
        id += 1;
        assert_eq!(it.errors(), errors);
        if !ended_by_error {
            // (After the last error nothing more is promised about these.)
            assert_eq!((it.position(), it.next_id()), (pos, id));
            assert_eq!(it.remaining(), &input[pos as usize..]);
        }
        out.push((
            item.map(|r| (r.id, r.offset, r.data_offset, r.end, r.data.to_vec())),
            it.skipped(),
        ));
    }
    assert!(it.next().is_none() && it.next().is_none(), "not fused");
    if !ended_by_error {
        pos = pads_between(input, framing, pos, input.len() as u64);
    }
    assert!(
        ended_by_error || pos == input.len() as u64,
        "ended cleanly at {pos} of {}",
        input.len()
    );
    match policy {
        ErrorPolicy::Fail => assert!(errors <= 1),
        ErrorPolicy::Skip {
            max_errors: Some(m),
        } => assert!(errors <= m.max(1)),
        ErrorPolicy::Skip { max_errors: None } => {}
    }
    out
}

/// Checks that `input[from..to]` is a run of whole pad frames of `framing`
/// (none when `from == to`), which a walk that skips pads passes over without
/// an item; returns `to`.
fn pads_between(input: &[u8], framing: Framing, from: u64, to: u64) -> u64 {
    assert!(from <= to, "went back from {from} to {to}");
    let gap = &input[from as usize..to as usize];
    // Data CRCs are not asked for: the walk checked them if it was told to.
    let opts = ReadOptions::default()
        .with_skip_pads(false)
        .with_data_crc(false);
    let mut end = 0;
    for frame in records(gap, framing, opts) {
        let frame = frame.unwrap_or_else(|e| panic!("{from}..{to} is not pads: {e}"));
        assert!(
            recordwire::index::is_pad(frame.data),
            "a frame at {} in a gap left without an item is not a pad",
            from + frame.offset
        );
        end = frame.end;
    }
    assert_eq!(
        end,
        gap.len() as u64,
        "{from}..{to} is not whole pad frames"
    );
    to
}

/// [`walk`] over the whole of `input` with `framing` and `policy`.
pub fn walk_slice(
    input: &[u8],
    framing: Framing,
    policy: ErrorPolicy,
    data_crc: bool,
) -> Vec<Item> {
    let opts = ReadOptions::default()
        .with_policy(policy)
        .with_data_crc(data_crc);
    walk(input, records(input, framing, opts), policy)
}

/// `r`'s value; an error is allowed only when the record was not `parse`d.
pub fn ok<T>(r: Result<T, DecodeError>, parsed: bool) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                !parsed,
                "an accessor failed on a record that parse accepted: {e}"
            );
            None
        }
    }
}

/// Iterates `it` to its end (or its first error), and returns the values
/// before the error and whether there was one. Checks that the iterator is
/// fused after an error when `fused`.
fn drain<T>(
    mut it: impl Iterator<Item = Result<T, DecodeError>>,
    parsed: bool,
    fused: bool,
) -> (Vec<T>, bool) {
    let mut values = Vec::new();
    while let Some(v) = it.next() {
        match ok(v, parsed) {
            Some(v) => values.push(v),
            None => {
                if fused {
                    assert!(it.next().is_none(), "iterator not fused after an error");
                }
                return (values, true);
            }
        }
    }
    (values, false)
}

fn same<T: Element>(a: T, b: T) -> bool {
    #[allow(clippy::eq_op)]
    let both_nan = a != a && b != b;
    a == b || both_nan
}

fn num_list<T: Element>(l: NumList<'_, T>, parsed: bool, strict: bool) {
    let (values, failed) = drain(l.iter(), parsed, true);
    let len = ok(l.len(), parsed);
    if let Some(len) = len {
        if !failed {
            assert_eq!(len, values.len(), "len() and iter() disagree");
        }
    }
    let _ = ok(l.is_empty(), parsed);
    if let Some(mixed) = ok(l.is_mixed(), parsed) {
        assert!(!(strict && mixed), "strict parse accepted mixed packing");
    }
    if let Some(Some(packed)) = ok(l.packed_bytes(), parsed) {
        if let (Some(len), 4 | 8) = (len, T::WIDTH) {
            assert_eq!(packed.len(), len * T::WIDTH);
        }
    }
    let mut small = [T::default(); 2];
    let n_small = ok(l.copy_to_slice(&mut small), parsed);
    let mut large = vec![T::default(); len.unwrap_or(values.len()) + 3];
    let n_large = ok(l.copy_to_slice(&mut large), parsed);
    if let (Some(len), Some(a), Some(b)) = (len, n_small, n_large) {
        assert_eq!((a, b), (len, len), "copy_to_slice and len() disagree");
        if !failed {
            for (i, v) in values.iter().enumerate() {
                assert!(same(*v, large[i]), "value {i}: {v:?} != {:?}", large[i]);
            }
            for (i, v) in values.iter().take(2).enumerate() {
                assert!(same(*v, small[i]));
            }
            let mut extended = vec![T::default()];
            if ok(l.extend_vec(&mut extended), parsed).is_some() {
                assert_eq!(extended.len(), len + 1);
            }
        }
    }
}

/// Every accessor of a list.
pub fn list(list: ListRef<'_>, parsed: bool, strict: bool) {
    let len = ok(list.len(), parsed);
    let _ = ok(list.is_empty(), parsed);
    let _ = ok(list.is_mixed(), parsed);
    match list {
        ListRef::Bytes(l) => {
            let (values, failed) = drain(l.iter(), parsed, false);
            let mut with_offsets = l.iter();
            while let Some(Ok(_)) = with_offsets.next_with_offset() {}
            if let (Some(len), false) = (len, failed) {
                assert_eq!(len, values.len());
                assert_eq!(ok(l.len(), parsed), Some(len));
            }
        }
        ListRef::Float(l) => num_list(l, parsed, strict),
        ListRef::Double(l) => num_list(l, parsed, strict),
        ListRef::Int32(l) => num_list(l, parsed, strict),
        ListRef::Int64(l) => num_list(l, parsed, strict),
    }
}

/// Every accessor of a feature, and of its list.
pub fn feature(f: FeatureRef<'_>, parsed: bool, strict: bool) {
    let l = ok(f.list(), parsed);
    if let (Some(l), Some(kind)) = (l, ok(f.kind(), parsed)) {
        assert_eq!(l.map(|l| l.kind()), kind);
    }
    let typed = [
        ok(f.bytes_list(), parsed).map(|x| x.is_some()),
        ok(f.float_list(), parsed).map(|x| x.is_some()),
        ok(f.double_list(), parsed).map(|x| x.is_some()),
        ok(f.int32_list(), parsed).map(|x| x.is_some()),
        ok(f.int64_list(), parsed).map(|x| x.is_some()),
    ];
    if let (Some(l), true) = (l, typed.iter().all(Option::is_some)) {
        let set = typed.iter().filter(|x| **x == Some(true)).count();
        assert_eq!(
            set,
            usize::from(l.is_some()),
            "typed getters disagree with list()"
        );
    }
    let _ = ok(f.validate(false), parsed);
    let _ = f.validate(true);
    if let Some(Some(l)) = l {
        list(l, parsed, strict);
    }
}

/// A name no fuzz input is likely to use (checked anyway).
pub const MISSING: &[u8] = b"\0recordwire-fuzz: no such feature\xff";

/// Every accessor of a features map, and of each feature.
pub fn features(fs: FeaturesRef<'_>, parsed: bool, strict: bool) {
    let (effective, failed) = drain(fs.iter(), parsed, false);
    let (entries, entries_failed) = drain(fs.entries(), parsed, true);
    if let Some(len) = ok(fs.len(), parsed) {
        if !failed {
            assert_eq!(len, effective.len(), "len() and iter() disagree");
        }
        if strict && parsed {
            assert_eq!(len, entries.len(), "strict parse accepted a duplicate key");
        }
    }
    if let (Some(empty), false) = (ok(fs.is_empty(), parsed), entries_failed) {
        assert_eq!(empty, entries.is_empty());
    }
    for e in &effective {
        let _ = e.entry.name_str();
        let got = ok(fs.get(e.name()), parsed);
        assert!(
            !matches!(got, Some(None)),
            "get() misses a feature that iter() shows"
        );
        feature(e.feature, parsed, strict);
    }
    for e in &entries {
        let _ = ok(fs.get(e.name()), parsed);
        feature(e.feature, parsed, strict);
    }
    if !entries_failed && !entries.iter().any(|e| e.name() == MISSING) {
        assert!(ok(fs.get(MISSING), parsed).flatten().is_none());
    }
    let _ = ok(fs.validate(false), parsed);
    let _ = fs.validate(true);
}

/// Every accessor of a `FeatureLists` map; returns every list in it (the
/// effective ones, then every entry in wire order) for [`feature_list`].
pub fn named_lists<'a>(
    ls: FeatureListsRef<'a>,
    parsed: bool,
    strict: bool,
) -> Vec<FeatureListRef<'a>> {
    let (effective, failed) = drain(ls.iter(), parsed, false);
    let (entries, entries_failed) = drain(ls.entries(), parsed, true);
    if let (Some(len), false) = (ok(ls.len(), parsed), failed) {
        assert_eq!(len, effective.len(), "len() and iter() disagree");
        if strict && parsed {
            assert_eq!(len, entries.len(), "strict parse accepted a duplicate key");
        }
    }
    if let (Some(empty), false) = (ok(ls.is_empty(), parsed), entries_failed) {
        assert_eq!(empty, entries.is_empty());
    }
    for e in effective.iter().chain(&entries) {
        let _ = e.entry.name_str();
        let got = ok(ls.get(e.name()), parsed);
        assert!(
            !matches!(got, Some(None)),
            "get() misses a list that iter() shows"
        );
    }
    if !entries_failed && !entries.iter().any(|e| e.name() == MISSING) {
        assert!(ok(ls.get(MISSING), parsed).flatten().is_none());
    }
    effective.iter().chain(&entries).map(|e| e.list).collect()
}

/// Every accessor of a feature list, and of each feature in it.
pub fn feature_list(l: FeatureListRef<'_>, parsed: bool, strict: bool) {
    let (fs, failed) = drain(l.iter(), parsed, false);
    if let (Some(len), false) = (ok(l.len(), parsed), failed) {
        assert_eq!(len, fs.len());
    }
    let _ = ok(l.is_empty(), parsed);
    for f in fs {
        feature(f, parsed, strict);
    }
}

/// Checks that `strict` validation implies the plain one, and returns
/// whether (plain, strict) validation succeeds.
pub fn validations(
    plain: Result<(), DecodeError>,
    strict: Result<(), DecodeError>,
) -> (bool, bool) {
    let (p, s) = (plain.is_ok(), strict.is_ok());
    assert!(
        p || !s,
        "strict validation accepted what plain validation rejects"
    );
    (p, s)
}

/// Checks the JSON that `json::write_record` wrote for a `kind` payload: one
/// line, UTF-8, one JSON object (RFC 8259).
///
/// Only OFRecord names may be non-UTF-8, written as `\udcXX` escapes (lone
/// surrogates): valid JSON, which serde_json parses only when ignoring the
/// value, so that is the syntax check; when no such escape can be present the
/// output must also parse as a `serde_json::Value` object.
pub fn check_json(out: &[u8], kind: PayloadKind) {
    assert!(!out.contains(&b'\n'), "not one line");
    let text = std::str::from_utf8(out).expect("JSON is UTF-8");
    if let Err(e) = json_syntax(text) {
        panic!("invalid JSON ({e}): {text}");
    }
    let may_escape = kind == PayloadKind::OfRecord && text.contains("\\udc");
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => assert!(v.is_object(), "not an object: {text}"),
        Err(e) => assert!(may_escape, "invalid JSON ({e}): {text}"),
    }
}

/// Checks that `text` is JSON, lone surrogates allowed.
#[cfg(fuzzing)]
pub(crate) fn json_syntax(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).map(drop)
}

/// Checks that `text` is JSON, lone surrogates allowed. (Outside the fuzz
/// build, in `tests/files/fuzz_regressions.rs`, there is no `serde` to ignore the
/// value with: the `\udcXX` escapes, the only surrogates the writer uses,
/// are turned into `\u00XX`, which keeps the text valid exactly when it was.)
#[cfg(not(fuzzing))]
pub(crate) fn json_syntax(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<serde_json::Value>(&text.replace("\\udc", "\\u00")).map(drop)
}

/// Whether a line of `dump_payload` is its error line: `OFFSET  error: ...`
/// (other lines have hex bytes or spaces after the offset).
pub fn is_error_line(line: &str) -> bool {
    let Some((offset, rest)) = line.split_once("  ") else {
        return false;
    };
    offset.len() >= 8
        && offset.bytes().all(|b| b.is_ascii_hexdigit())
        && rest.starts_with("error: ")
}

/// Reads `data` with `Source::from_reader` (fed `step` bytes per read, or
/// more for long inputs) and checks it against `RecordFile::from_bytes`'s walk
/// ([`walk`]) with [`same_walk`].
pub fn stream_matches_file(
    data: &[u8],
    policy: ErrorPolicy,
    step: usize,
    compression: Compression,
) {
    let (expected, file) = file_walk(data, policy, compression);
    let (got, source) = stream_walk(data, policy, step, compression);
    assert_eq!(source, file);
    same_walk(&got, &expected, file.1);
}

/// The walk of `RecordFile::from_bytes(data).records()` ([`walk`]), and the
/// framing and compression the file detected.
pub fn file_walk(
    data: &[u8],
    policy: ErrorPolicy,
    compression: Compression,
) -> (Vec<Item>, (Framing, Compression)) {
    let opts = OpenOptions::default()
        .with_read(ReadOptions::default().with_policy(policy))
        .with_compression(compression);
    let file = RecordFile::from_bytes(data.to_vec().into(), "in", &opts);
    let items = walk(file.bytes(), file.records(), policy);
    (items, (file.framing(), file.compression()))
}

/// The records of `Source::from_reader` over `data` fed `step` bytes per
/// read (or more for long inputs), and the framing and compression it
/// detected.
pub fn stream_walk(
    data: &[u8],
    policy: ErrorPolicy,
    step: usize,
    compression: Compression,
) -> (Vec<Item>, (Framing, Compression)) {
    let opts = OpenOptions::default()
        .with_read(ReadOptions::default().with_policy(policy))
        .with_compression(compression);
    // At most ~16 reads: each read costs the reader a 64 KiB zero-fill.
    let chunked = Chunked::new(data, step.max(data.len() / 16));
    let mut source = Source::from_reader(chunked, "in", &opts).expect("no read error");
    let detected = (source.framing(), source.compression());
    let mut got: Vec<Item> = Vec::new();
    while let Some(item) = source.next_record() {
        let item = item.map(|r| (r.id, r.offset, r.data_offset, r.end, r.data.to_vec()));
        got.push((item, source.skipped()));
    }
    (got, detected)
}

/// Checks that two walks of the same input agree: plain input entirely; and
/// compressed input entirely too, except after damage to the compressed
/// data itself.
///
/// There, how much of the output decompressed just before the damage comes
/// out depends on how the input was read: flate2's inflater (miniz_oxide)
/// decompresses into its 32 KiB window and reports nothing of what the call
/// that meets the damage put there, and where that call starts depends on
/// the reads (`testdata/fuzz-regressions/stream-gzip-window-lost*.bin`: the
/// file reader's data ended 30 709 bytes before the pipe's, or the pipe's
/// ended before the file's). So when the walks differ and one of them ends in
/// a `compression_error`, they must agree on every item that ends before the
/// earliest such error (the records, errors and skipped ranges both had
/// whole data for). (Before
/// `io::Inflater` (eb3332e) the file reader also lost what flate2
/// decompressed in the whole read that met the damage: see
/// `testdata/fuzz-regressions/stream-zlib-*.bin`, which now agree exactly.)
pub fn same_walk(got: &[Item], expected: &[Item], compression: Compression) {
    if got == expected {
        return;
    }
    let damaged = |w: &[Item]| match w.last() {
        Some((Err(e), _)) if matches!(e.kind(), ErrorKind::Compression { .. }) => e.offset(),
        _ => None,
    };
    // The walk with less data ends in the compression_error; the other may
    // end there too, or go on and stop later for another reason (the error
    // budget, say), or earlier, within data both had (then both must stop).
    let Some(cut) = [damaged(got), damaged(expected)]
        .into_iter()
        .flatten()
        .min()
    else {
        panic!("{compression:?}: the walks differ\n  got: {got:?}\n expected: {expected:?}");
    };
    assert_ne!(
        compression,
        Compression::None,
        "plain input must agree exactly"
    );
    let before = |w: &[Item]| -> Vec<Item> {
        w.iter()
            .take_while(|(item, skipped)| {
                let end = match (item, skipped) {
                    (_, Some((_, end))) => *end,
                    (Ok(r), None) => r.3,
                    (Err(e), None) => e.offset().unwrap_or(u64::MAX),
                };
                end < cut
            })
            .cloned()
            .collect()
    };
    assert_eq!(
        before(got),
        before(expected),
        "{compression:?}, before byte {cut}"
    );
}

/// The record `bytes` of payload `kind` (one that validates), decoded into
/// the owned message and encoded again; encoding a valid record cannot fail.
pub fn reencode(kind: PayloadKind, bytes: &[u8]) -> Vec<u8> {
    recordwire::encode::message_from_view(PayloadRef::new(kind, bytes, 0))
        .map(|m| m.to_bytes())
        .expect("a valid record decodes")
        .expect("a valid record encodes")
}

/// The values of one feature, bit for bit (floats as their bits, so NaN
/// payloads and the sign of zero count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Values {
    /// No list (an empty `Feature`).
    None,
    /// A bytes list.
    Bytes(Vec<Vec<u8>>),
    /// A float list, as bits.
    Float(Vec<u32>),
    /// A double list, as bits.
    Double(Vec<u64>),
    /// An int32 list.
    Int32(Vec<i32>),
    /// An int64 list.
    Int64(Vec<i64>),
}

/// The values of a feature of a record that validates.
pub fn feature_values(f: FeatureRef<'_>) -> Values {
    let all = "a valid record";
    match f.list().expect(all) {
        None => Values::None,
        Some(ListRef::Bytes(l)) => Values::Bytes(
            l.iter()
                .map(|v| v.map(<[u8]>::to_vec))
                .collect::<Result<_, _>>()
                .expect(all),
        ),
        Some(ListRef::Float(l)) => Values::Float(
            l.iter()
                .map(|v| v.map(f32::to_bits))
                .collect::<Result<_, _>>()
                .expect(all),
        ),
        Some(ListRef::Double(l)) => Values::Double(
            l.iter()
                .map(|v| v.map(f64::to_bits))
                .collect::<Result<_, _>>()
                .expect(all),
        ),
        Some(ListRef::Int32(l)) => Values::Int32(l.iter().collect::<Result<_, _>>().expect(all)),
        Some(ListRef::Int64(l)) => Values::Int64(l.iter().collect::<Result<_, _>>().expect(all)),
    }
}

/// The effective features of a map, by name, in iteration order.
fn features_values(fs: FeaturesRef<'_>) -> Vec<(Vec<u8>, Values)> {
    fs.iter()
        .map(|e| {
            let e = e.expect("a valid record");
            (e.name().to_vec(), feature_values(e.feature))
        })
        .collect()
}

/// Everything a record of `kind` that validates holds, bit for bit: the
/// effective features (for a tf.SequenceExample, the context's, then every
/// feature list's, each list's features in order); the bytes for `Raw`.
pub fn record_values(kind: PayloadKind, bytes: &[u8]) -> Vec<(Vec<u8>, Vec<Values>)> {
    let payload = PayloadRef::new(kind, bytes, 0);
    let Some(features) = payload.features() else {
        return vec![(bytes.to_vec(), Vec::new())];
    };
    let mut out: Vec<_> = features_values(features)
        .into_iter()
        .map(|(name, v)| (name, vec![v]))
        .collect();
    if let Some(lists) = payload.feature_lists() {
        out.push((b"--feature_lists--".to_vec(), Vec::new()));
        for e in lists.iter() {
            let e = e.expect("a valid record");
            let list = e
                .list
                .iter()
                .map(|f| feature_values(f.expect("a valid record")))
                .collect();
            out.push((e.name().to_vec(), list));
        }
    }
    out
}

/// Fetches every record (up to 256) through an index that was accepted for
/// `data`, and checks its table: sorted offsets inside the data.
pub fn use_index(index: Result<recordwire::index::Index, Error>, data: &[u8]) {
    let Ok(index) = index else { return };
    let offsets = index.offsets();
    assert!(
        offsets.windows(2).all(|w| w[0] <= w[1]),
        "unsorted offsets {offsets:?}"
    );
    assert!(
        offsets.last().is_none_or(|&end| end <= data.len() as u64),
        "offsets past the data"
    );
    for id in 0..index.len().min(256) {
        if let Ok(Some(record)) = index.get(data, id, &ReadOptions::default()) {
            assert_eq!(Some(record.offset), index.offset(id));
        }
    }
    assert!(matches!(
        index.get(data, index.len(), &ReadOptions::default()),
        Ok(None)
    ));
}

/// Writes `index` (built from `data`) in every format and reads it back.
pub fn index_formats_round_trip(index: &recordwire::index::Index, data: &[u8]) {
    use recordwire::index::{Index, IndexFormat};
    // What the CLI's --index would take each written file for: its format
    // (an empty DALI file and an empty raw table are the same, no records).
    let detected = |bytes: &[u8], format: IndexFormat| {
        assert!(
            bytes.is_empty() || IndexFormat::detect(bytes) == format,
            "a {format} index detected as {}",
            IndexFormat::detect(bytes)
        );
    };
    let mut native = Vec::new();
    index.write_native(&mut native).expect("write to a Vec");
    detected(&native, IndexFormat::Native);
    let back = Index::open_native(native.into(), data).expect("native index reads back");
    assert_eq!(back.offsets(), index.offsets());
    let mut dali = Vec::new();
    if index.write_dali(data, &mut dali).is_ok() {
        detected(&dali, IndexFormat::Dali);
        let back = Index::read_dali(&dali, data, index.framing()).expect("DALI index reads back");
        assert_eq!(back.offsets(), index.offsets());
    }
    let mut lirs = Vec::new();
    if index.write_lirs(&mut lirs).is_ok() {
        detected(&lirs, IndexFormat::Lirs);
        let back = Index::read_lirs(&lirs, data, index.framing()).expect("offset table reads back");
        assert_eq!(back.starts(), index.starts());
    }
    use_index(Ok(back), data);
}
