//! The body of every fuzz target, one function each (`fuzz_targets/<name>.rs`
//! calls `targets::<name>`), so that `tests/files/fuzz_regressions.rs` of the main
//! crate can run the saved crashes and the corpus kept in `testdata/` through
//! the very same checks without libFuzzer.

use recordwire::frame::{detect, Detected, Framing};
use recordwire::io::Compression;
use recordwire::view::{DecodeOptions, ExampleRef, OfRecordRef, Payload, SequenceExampleRef};

use super::{
    feature_list, features, is_error_line, named_lists, ok, reencode, validations, walk_slice,
    MISSING, PAYLOADS, POLICIES,
};

/// The names of the targets, as `cargo fuzz list` gives them.
pub const NAMES: [&str; 16] = [
    "framing",
    "stream",
    "example_view",
    "sequence_example_view",
    "ofrecord_view",
    "json",
    "json_read",
    "dump",
    "roundtrip",
    "index",
    "order",
    "batch_decode",
    "arch_kernels",
    "deflate",
    "gz_index",
    "schema_json",
];

/// Runs the target `name` on `data`; `false` when there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "framing" => framing(data),
        "stream" => stream(data),
        "example_view" => example_view(data),
        "sequence_example_view" => sequence_example_view(data),
        "ofrecord_view" => ofrecord_view(data),
        "json" => json(data),
        "json_read" => json_read(data),
        "dump" => dump(data),
        "roundtrip" => roundtrip(data),
        "index" => index(data),
        "order" => order(data),
        "batch_decode" => super::batch::batch_decode(data),
        "arch_kernels" => arch_kernels(data),
        "deflate" => deflate(data),
        "gz_index" => super::gz::gz_index(data),
        "schema_json" => super::schema::schema_json(data),
        _ => return false,
    }
    true
}

/// The CPU kernels (the ones this CPU runs) against their scalar twins:
/// `recordwire::__internals::check_kernels`, which lives beside the kernels
/// since they are private to the crate.
pub fn arch_kernels(data: &[u8]) {
    recordwire::__internals::check_kernels(data);
}

/// The inflater against miniz_oxide, on the input as a raw deflate stream
/// and on flate2's compression of it, with restarts at block starts:
/// `recordwire::__internals::check_inflate`, which lives beside the
/// inflater since it is private to the crate.
pub fn deflate(data: &[u8]) {
    recordwire::__internals::check_inflate(data);
}

/// The frame walk over any bytes: TFRecord and OFRecord, every error policy,
/// with and without data CRCs; the invariants are checked in `walk`.
pub fn framing(data: &[u8]) {
    let _ = detect(data);
    for framing in [Framing::TfRecord, Framing::OfRecord] {
        for policy in POLICIES {
            walk_slice(data, framing, policy, true);
        }
        walk_slice(data, framing, POLICIES[3], false);
    }
}

/// The streaming reader (`Source::from_reader`, fed in chunks) against the
/// in-memory walk `RecordFile::from_bytes(..).records()` over the same bytes,
/// with every error policy and several read sizes: read as plain input they
/// must agree exactly; input that starts like GZIP or ZLIB is also read
/// decompressed (see `same_walk` for what must agree there).
pub fn stream(data: &[u8]) {
    let compressed = matches!(detect(data), Detected::Gzip | Detected::Zlib);
    for (policy, step) in POLICIES.into_iter().zip([1, 7, 4096, usize::MAX]) {
        super::stream_matches_file(data, policy, step, Compression::None);
        if compressed {
            super::stream_matches_file(data, policy, step, Compression::Auto);
        }
    }
}

/// A payload view of `data` at `base`, with whether it parses plainly and
/// strictly: `parse`/`parse_with`, the lazy view's `validate` and the same
/// view as a `PayloadRef` must all agree.
fn checked_view<'a, P: Payload<'a>>(data: &'a [u8], base: u64) -> (P, bool, bool) {
    let strict_options = DecodeOptions { strict: true };
    let (parsed, strict) = validations(
        P::parse(data, base).map(drop),
        P::parse_with(data, base, strict_options).map(drop),
    );
    let view = P::new(data, base);
    let any = view.into_ref();
    for validate in [
        |v: &P, o| v.validate(o).is_ok(),
        |v: &P, o| v.into_ref().validate(o).is_ok(),
    ] {
        assert_eq!(
            (
                validate(&view, DecodeOptions::default()),
                validate(&view, strict_options)
            ),
            (parsed, strict)
        );
    }
    assert_eq!(any.kind(), P::KIND);
    assert_eq!(any.bytes(), data);
    (view, parsed, strict)
}

/// tf.Example views: `parse` (plain and strict) and the lazy `new`, then
/// every accessor to the end. After a successful `parse` every accessor must
/// succeed and the counts must agree (see `features`).
pub fn example_view(data: &[u8]) {
    let (ex, parsed, strict) = checked_view::<ExampleRef>(data, 7);
    let _ = ok(ex.has_features(), parsed);
    let _ = ok(ex.get(MISSING), parsed);
    features(ex.features(), parsed, strict);
    if let Ok(p) = ExampleRef::parse(data, 7) {
        same_map(p.features().iter(), ex.features().iter());
        assert_eq!(p.features().len(), ex.features().len());
    }
}

/// A parsed view iterates its maps from what its check found (which names
/// repeat): the same entries (names, offsets) as the lazy view's walk.
fn same_map<'a, V, I: Iterator<Item = Result<V, recordwire::DecodeError>>>(parsed: I, lazy: I)
where
    V: HasEntry<'a>,
{
    let key = |r: Result<V, recordwire::DecodeError>| r.map(|v| v.entry_key());
    assert!(
        parsed.map(key).eq(lazy.map(key)),
        "the parsed view's map differs from the lazy view's"
    );
}

/// The entry of a map item, as compared by [`same_map`].
trait HasEntry<'a> {
    fn entry_key(&self) -> (&'a [u8], u64);
}

impl<'a> HasEntry<'a> for recordwire::view::NamedFeature<'a> {
    fn entry_key(&self) -> (&'a [u8], u64) {
        (self.entry.name, self.entry.offset)
    }
}

impl<'a> HasEntry<'a> for recordwire::view::NamedFeatureList<'a> {
    fn entry_key(&self) -> (&'a [u8], u64) {
        (self.entry.name, self.entry.offset)
    }
}

/// tf.SequenceExample views: `parse` (plain and strict) and the lazy `new`,
/// then every accessor to the end: the context features, and every feature
/// list with every feature in it. After a successful `parse` every accessor
/// must succeed and the counts must agree.
pub fn sequence_example_view(data: &[u8]) {
    let (seq, parsed, strict) = checked_view::<SequenceExampleRef>(data, 12);
    let _ = ok(seq.has_parts(), parsed);
    if let Ok(p) = SequenceExampleRef::parse(data, 12) {
        same_map(p.context().iter(), seq.context().iter());
        same_map(p.feature_lists().iter(), seq.feature_lists().iter());
        assert_eq!(p.feature_lists().len(), seq.feature_lists().len());
    }
    features(seq.context(), parsed, strict);
    for list in named_lists(seq.feature_lists(), parsed, strict) {
        feature_list(list, parsed, strict);
    }
}

/// OFRecord views: `parse` (plain and strict) and the lazy `new`, then every
/// accessor to the end. After a successful `parse` every accessor must
/// succeed and the counts must agree (see `features`).
pub fn ofrecord_view(data: &[u8]) {
    let (rec, parsed, strict) = checked_view::<OfRecordRef>(data, 8);
    let _ = ok(rec.get(MISSING), parsed);
    if let Ok(p) = OfRecordRef::parse(data, 8) {
        same_map(p.features().iter(), rec.features().iter());
        assert_eq!(p.features().len(), rec.features().len());
    }
    features(rec.features(), parsed, strict);
}

/// JSON of every payload kind (plain and strict, all features or a filter):
/// it succeeds exactly when the record validates, and then it is one line of
/// valid JSON (RFC 8259; OFRecord names that are not UTF-8 use `\udcXX`
/// escapes, which are valid JSON that serde_json's `Value` refuses).
pub fn json(data: &[u8]) {
    use recordwire::json::write_record;
    let filter = [b"label".to_vec(), Vec::new()];
    for kind in PAYLOADS {
        for (strict, filter) in [(false, None), (true, None), (false, Some(&filter[..]))] {
            let mut out = b"[prefix]".to_vec();
            let result = write_record(&mut out, kind, data, 3, strict, filter);
            let valid = kind.validate(data, 3, DecodeOptions { strict });
            assert_eq!(
                result.is_ok(),
                valid.is_ok(),
                "{kind:?} strict={strict}: {result:?}"
            );
            if result.is_ok() {
                super::check_json(&out[8..], kind);
            }
        }
    }
}

/// The JSON reader of `pack` and `encode` over any bytes, for every payload
/// kind. What it accepts and the encoder can write (a tf.Example has no
/// double_list, for one) prints as JSON that reads back to the same bytes.
pub fn json_read(data: &[u8]) {
    use recordwire::json::{read::message_from_json, write_record};
    for kind in PAYLOADS {
        let Ok(message) = message_from_json(kind, data) else {
            continue;
        };
        let mut bytes = Vec::new();
        if message.encode_to(&mut bytes).is_err() {
            continue;
        }
        assert_eq!(
            message.encoded_len().ok(),
            Some(bytes.len()),
            "{kind:?}: encoded_len"
        );
        let mut json = Vec::new();
        write_record(&mut json, kind, &bytes, 0, true, None).expect("the encoding validates");
        let again = message_from_json(kind, &json).expect("printed JSON reads back");
        let mut bytes_again = Vec::new();
        again
            .encode_to(&mut bytes_again)
            .expect("it encoded before");
        assert_eq!(
            bytes_again,
            bytes,
            "{kind:?}: {}",
            String::from_utf8_lossy(&json)
        );
    }
}

/// The annotated wire tree of every payload kind: it never panics, and its
/// last line is an error line (`OFFSET  error: REASON`) exactly when it
/// returns the error, which is the only error line.
pub fn dump(data: &[u8]) {
    use recordwire::dump::dump_payload;
    for kind in PAYLOADS {
        let mut out = String::new();
        let result = dump_payload(&mut out, kind, data, 5);
        assert!(out.is_empty() || out.ends_with('\n'), "unterminated line");
        let errors: Vec<&str> = out.lines().filter(|l| is_error_line(l)).collect();
        match result {
            Ok(()) => assert!(errors.is_empty(), "{kind:?}: Ok, but {errors:?}"),
            Err(e) => {
                let last = format!("{:08x}  error: {}", e.offset, e.reason);
                assert_eq!(
                    (errors.len(), out.lines().last()),
                    (1, Some(last.as_str())),
                    "{kind:?}"
                );
            }
        }
    }
}

/// Decode, encode, decode: a valid record of any payload kind, turned into
/// the owned message and encoded again, gives a record that passes strict
/// validation, holds the same values bit for bit (`record_values`: names,
/// list kinds, every value, NaN payloads included), shows the same JSON, and
/// encodes to itself.
pub fn roundtrip(data: &[u8]) {
    use recordwire::json::write_record;
    for kind in PAYLOADS {
        if kind.validate(data, 0, DecodeOptions::default()).is_err() {
            continue;
        }
        let bytes = reencode(kind, data);
        let strict = kind.validate(&bytes, 0, DecodeOptions { strict: true });
        assert!(
            strict.is_ok(),
            "{kind:?}: the encoding is not canonical: {strict:?}"
        );
        assert_eq!(
            reencode(kind, &bytes),
            bytes,
            "{kind:?}: encoding is not a fixpoint"
        );
        assert_eq!(
            super::record_values(kind, &bytes),
            super::record_values(kind, data),
            "{kind:?}: the values changed"
        );
        let (mut before, mut after) = (Vec::new(), Vec::new());
        write_record(&mut before, kind, data, 0, false, None).expect("valid");
        write_record(&mut after, kind, &bytes, 0, false, None).expect("valid");
        assert_eq!(
            String::from_utf8_lossy(&before),
            String::from_utf8_lossy(&after),
            "{kind:?}"
        );
    }
}

/// Offsets indexes. The input is a data file and an index file (the first
/// two bytes give the index's length): the index, read as native, DALI and
/// raw-offset files, is accepted or rejected without a panic, and an
/// accepted one fetches every record without one. An index built from the
/// data writes and reads back to the same offsets in every format.
pub fn index(input: &[u8]) {
    use recordwire::index::Index;
    let Some((len, rest)) = input.split_first_chunk::<2>() else {
        return;
    };
    let (index, data) = rest.split_at((u16::from_le_bytes(*len) as usize).min(rest.len()));
    for framing in [Framing::TfRecord, Framing::OfRecord] {
        super::use_index(Index::open_native(index.to_vec().into(), data), data);
        super::use_index(Index::read_dali(index, data, framing), data);
        super::use_index(Index::read_lirs(index, data, framing), data);
        if let Ok(built) = Index::build(data, framing, true) {
            super::index_formats_round_trip(&built, data);
        }
    }
}

/// Epoch orders and shards (see `order::check`).
pub fn order(data: &[u8]) {
    super::order::check(data);
}
