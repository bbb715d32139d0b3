//! [`PayloadNotes`]: what the records of one file showed about their payload
//! (records with top-level fields their message does not have, records that
//! do not decode, and which other message they look like), as the notes of
//! docs/FORMAT.md §9.5. The CLI prints them on stderr; the Python package
//! warns them. One implementation, so that both say the same.

use super::shape::{clean_message, garbled_name, is_elwc, is_event};
use super::{PayloadKind, PayloadRef, UnknownField};

/// How a note names the way to see the bytes: the CLI's flag or the Python
/// argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawHint {
    /// `--payload raw shows the bytes`.
    Cli,
    /// `payload="raw" shows the bytes`.
    Python,
}

impl RawHint {
    fn raw(self) -> &'static str {
        match self {
            RawHint::Cli => "--payload raw",
            RawHint::Python => "payload=\"raw\"",
        }
    }

    fn payload(self, kind: PayloadKind) -> String {
        match self {
            RawHint::Cli => format!("--payload {}", kind.name()),
            RawHint::Python => format!("payload=\"{}\"", kind.name()),
        }
    }
}

/// What one input's records showed about their payload: records with
/// top-level fields their message does not have, and records that do not
/// decode. [`PayloadNotes::lines`] gives the notes, once per input.
#[derive(Debug, Clone)]
pub struct PayloadNotes {
    kind: PayloadKind,
    /// Named by the user (not detected).
    forced: bool,
    /// Records looked at.
    records: u64,
    /// Records with an unknown top-level field, and the first one.
    unknown: u64,
    first_unknown: Option<(u64, UnknownField)>,
    /// The message the first record with an unknown field looks like
    /// ([`looks_like`]).
    looks_like: Option<&'static str>,
    /// Records that did not decode, and the first one.
    bad: u64,
    first_bad: Option<u64>,
    /// The message the first of them looks like ([`looks_like`]).
    bad_looks_like: Option<&'static str>,
    /// Under a payload named by the user: records that decode, but with
    /// feature names that are not clean text; the first (record id, name),
    /// and a payload that reads that record with clean names.
    garbled: u64,
    first_garbled: Option<(u64, Vec<u8>, Option<PayloadKind>)>,
}

/// A name for a note: quoted, and cut to its first 32 bytes when longer
/// (a garbled name can be a whole record).
fn short_name(name: &[u8]) -> String {
    const SHOWN: usize = 32;
    match name.get(..SHOWN) {
        Some(head) if name.len() > SHOWN => {
            format!("{}... ({} bytes)", crate::names::quoted(head), name.len())
        }
        _ => crate::names::quoted(name),
    }
}

/// A payload other than `kind` that reads `data` whole, with clean names
/// (and at least one feature).
fn reads_cleanly(kind: PayloadKind, data: &[u8], base: u64) -> Option<PayloadKind> {
    [
        PayloadKind::Example,
        PayloadKind::SequenceExample,
        PayloadKind::OfRecord,
    ]
    .into_iter()
    .filter(|&k| k != kind)
    .find(|&k| clean_message(k, data, base))
}

/// The message that `data` (a record that is not the message it was read
/// as) looks like, when its top-level fields tell: a TensorBoard
/// `tensorflow.Event` (field 1 a double `wall_time`, field 2 a varint
/// `step`, fields 3 to 10 length-delimited), or a TensorFlow Ranking
/// `ExampleListWithContext` (only fields 1, `examples`, and 2, `context`,
/// each a whole tf.Example with clean feature names). A guess from the
/// shape of the bytes, not a schema: `None` when neither fits.
///
/// ```
/// use recordwire::view::looks_like;
///
/// let mut event = vec![0x09];
/// event.extend_from_slice(&1.7e9f64.to_le_bytes());
/// event.extend_from_slice(&[0x10, 0x03]);
/// assert_eq!(looks_like(&event), Some("TensorBoard tensorflow.Event"));
/// assert_eq!(looks_like(b"hello world"), None);
/// ```
pub fn looks_like(data: &[u8]) -> Option<&'static str> {
    if is_event(data) {
        return Some("TensorBoard tensorflow.Event");
    }
    if is_elwc(data) {
        return Some("TensorFlow Ranking ExampleListWithContext (ELWC)");
    }
    None
}

impl PayloadNotes {
    /// Notes on records read as `kind`; `forced`: named by the user (then
    /// only the note on garbled names is given).
    pub fn new(kind: PayloadKind, forced: bool) -> Self {
        PayloadNotes {
            kind,
            forced,
            records: 0,
            unknown: 0,
            first_unknown: None,
            looks_like: None,
            bad: 0,
            first_bad: None,
            bad_looks_like: None,
            garbled: 0,
            first_garbled: None,
        }
    }

    /// A record that decoded as the chosen payload: looks at its top level.
    pub fn record(&mut self, id: u64, data: &[u8], base: u64) {
        self.records += 1;
        let payload = PayloadRef::new(self.kind, data, base);
        if let Ok(Some(field)) = payload.unknown_top_field() {
            self.unknown += 1;
            if self.first_unknown.is_none() {
                self.first_unknown = Some((id, field));
                self.looks_like = looks_like(data);
            }
        }
        // A named payload is not second-guessed by detection: but records
        // that decode under it only with junk for names say it is wrong.
        if self.forced && self.kind != PayloadKind::Raw {
            if let Ok(Some(name)) = garbled_name(&payload) {
                self.garbled += 1;
                if self.first_garbled.is_none() {
                    let other = reads_cleanly(self.kind, data, base);
                    self.first_garbled = Some((id, name, other));
                }
            }
        }
    }

    /// A record (`data`) that did not decode as the chosen payload: the
    /// first one is also asked which other message it looks like (an ELWC
    /// fails as a tf.Example when its context's bytes do not parse as
    /// `Features`).
    pub fn bad(&mut self, id: u64, data: &[u8]) {
        self.records += 1;
        self.bad += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some(id);
            self.bad_looks_like = looks_like(data);
        }
    }

    /// Adds what `later` saw (the notes of the records after these, whose
    /// ids count from `shift`).
    pub fn absorb(&mut self, later: PayloadNotes, shift: u64) {
        let shifted = |id: u64| id.saturating_add(shift);
        self.records += later.records;
        self.unknown += later.unknown;
        self.bad += later.bad;
        self.garbled += later.garbled;
        if self.first_unknown.is_none() {
            self.first_unknown = later.first_unknown.map(|(id, f)| (shifted(id), f));
            self.looks_like = later.looks_like;
        }
        if self.first_bad.is_none() {
            self.first_bad = later.first_bad.map(shifted);
            self.bad_looks_like = later.bad_looks_like;
        }
        if self.first_garbled.is_none() {
            self.first_garbled = later
                .first_garbled
                .map(|(id, name, other)| (shifted(id), name, other));
        }
    }

    /// Records with unknown top-level fields, and the first (record id, field).
    pub fn unknown(&self) -> (u64, Option<(u64, UnknownField)>) {
        (self.unknown, self.first_unknown)
    }

    /// The message the first record with an unknown field looks like
    /// ([`looks_like`]), or where every record failed to decode, the first
    /// of them.
    pub fn looks_like(&self) -> Option<&'static str> {
        self.looks_like
            .or(self.bad_looks_like.filter(|_| self.bad == self.records))
    }

    /// The notes (docs/FORMAT.md §9.5) on the file `name`, without the
    /// `note: ` the CLI begins each with; `hint` names the way to read the
    /// bytes raw. None when the payload was named, except the note on
    /// garbled names.
    pub fn lines(&self, name: &str, hint: RawHint) -> Vec<String> {
        let mut out = Vec::new();
        if self.forced {
            if let Some((id, bad, Some(other))) = &self.first_garbled {
                out.push(format!(
                    "{name}: {} of {} records decode as {} only with feature names that are not text (first: record {id}, name {}), and they read cleanly as {}: is {} right? ({} reads them so)",
                    self.garbled,
                    self.records,
                    self.kind.message(),
                    short_name(bad),
                    other.message(),
                    hint.payload(self.kind),
                    hint.payload(*other),
                ));
            }
            return out;
        }
        let message = self.kind.message();
        let a = if message.starts_with('O') { "an" } else { "a" };
        let records = |n: u64| if n == 1 { "record" } else { "records" };
        let raw = hint.raw();
        if let Some((id, field)) = self.first_unknown {
            let like = self
                .looks_like
                .map(|m| format!(", they look like {m} messages"))
                .unwrap_or_default();
            out.push(format!(
                "{name}: {} of {} {} hold{} fields {message} does not have (first: field {}, wire type {}, in record {id}): this may not be {a} {message} file{like}; {raw} shows the bytes",
                self.unknown,
                self.records,
                records(self.records),
                if self.unknown == 1 { "s" } else { "" },
                field.number,
                field.wire_type as u8
            ));
        }
        // A damaged record among good ones is damage, not another message.
        let none_decoded = self.bad == self.records;
        if let (Some(id), true) = (self.first_bad, none_decoded) {
            let what = match self.bad {
                1 => format!("record {id} does not decode as {message}"),
                n => format!(
                    "{n} of {} records do not decode as {message} (first: record {id})",
                    self.records
                ),
            };
            let like = self
                .bad_looks_like
                .map(|m| format!(", they look like {m} messages"))
                .unwrap_or_default();
            out.push(format!(
                "{name}: {what}: this may not be {a} {message} file{like}; {raw} shows the bytes"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{Example, Feature, Features};

    fn example(name: &str) -> Vec<u8> {
        let features: Features = [(name, Feature::Int64(vec![1, 2]))].into_iter().collect();
        Example::with_features(features).to_bytes().unwrap()
    }

    fn len_field(number: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, body.len() as u8];
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn an_example_list_with_context_is_told_and_an_example_is_not() {
        let mut elwc = len_field(1, &example("doc_tokens"));
        elwc.extend(len_field(1, &example("doc_tokens")));
        elwc.extend(len_field(2, &example("query_tokens")));
        assert_eq!(
            looks_like(&elwc),
            Some("TensorFlow Ranking ExampleListWithContext (ELWC)")
        );
        // Read as a tf.Example, field 2 is unknown: the note says what it looks like.
        let mut notes = PayloadNotes::new(PayloadKind::Example, false);
        notes.record(0, &elwc, 0);
        let lines = notes.lines("f", RawHint::Python);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].ends_with(", they look like TensorFlow Ranking ExampleListWithContext (ELWC) messages; payload=\"raw\" shows the bytes"),
            "{lines:?}"
        );
        // A tf.Example, a SequenceExample-like context and raw text are not.
        assert_eq!(looks_like(&example("label")), None);
        assert_eq!(looks_like(&len_field(2, b"\x0a\x03abc")), None);
        assert_eq!(looks_like(b"hello world"), None);
        // An Event needs its wall_time.
        assert_eq!(looks_like(&[0x10, 0x03]), None);
    }

    #[test]
    fn records_that_fail_as_tf_example_still_say_what_they_look_like() {
        // As tfrbert_elwc_test.tfrecord: every record fails as a tf.Example
        // (the context's bytes are no `Features`), yet each is an ELWC.
        let mut elwc = len_field(1, &example("doc_tokens"));
        elwc.extend(len_field(2, &example("query_tokens")));
        let mut notes = PayloadNotes::new(PayloadKind::Example, false);
        notes.bad(0, &elwc);
        notes.bad(1, b"not a message");
        let elwc_name = "TensorFlow Ranking ExampleListWithContext (ELWC)";
        assert_eq!(notes.looks_like(), Some(elwc_name));
        assert_eq!(
            notes.lines("f", RawHint::Cli),
            [format!("f: 2 of 2 records do not decode as tf.Example (first: record 0): this may not be a tf.Example file, they look like {elwc_name} messages; --payload raw shows the bytes")]
        );
        // Carried over from a later part, as the first of the whole.
        let mut first = PayloadNotes::new(PayloadKind::Example, false);
        first.bad(0, b"x");
        let mut later = PayloadNotes::new(PayloadKind::Example, false);
        later.bad(0, &elwc);
        first.absorb(later, 1);
        assert_eq!(
            first.looks_like(),
            None,
            "the first bad record is the one asked"
        );
        let mut empty = PayloadNotes::new(PayloadKind::Example, false);
        empty.absorb(notes, 5);
        assert_eq!(empty.looks_like(), Some(elwc_name));
        // A damaged record among good ones is damage: nothing is said of it.
        let mut mixed = PayloadNotes::new(PayloadKind::Example, false);
        mixed.record(0, &example("label"), 0);
        mixed.bad(1, &elwc);
        assert_eq!(mixed.looks_like(), None);
    }

    #[test]
    fn the_python_hint_names_the_argument() {
        let mut notes = PayloadNotes::new(PayloadKind::Example, false);
        notes.bad(3, b"");
        assert_eq!(
            notes.lines("f", RawHint::Python),
            ["f: record 3 does not decode as tf.Example: this may not be a tf.Example file; payload=\"raw\" shows the bytes"]
        );
        assert_eq!(
            notes.lines("f", RawHint::Cli),
            ["f: record 3 does not decode as tf.Example: this may not be a tf.Example file; --payload raw shows the bytes"]
        );
    }
}
