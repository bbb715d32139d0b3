//! Which message a file's payloads are, from their bytes: [`PayloadSniffer`]
//! tells tf.Example from tf.SequenceExample by the first records
//! (docs/FORMAT.md §2.4), and TensorBoard events and TensorFlow Ranking's
//! ELWC from both (their [`message`](PayloadSniffer::message)), and [`PayloadRef::unknown_top_field`] finds the
//! top-level fields a payload's message does not have.

use super::shape::{elwc_shape, event_shape};
use super::{DecodeOptions, PayloadKind, PayloadRef, SequenceExampleRef};
use crate::wire::{DecodeError, FieldReader, Value, WireType};

/// A top-level field of a payload that its message does not have: not in the
/// schema, or a known number with another wire type (docs/FORMAT.md §3.3).
/// Google's parser skips it, and so do the views; a payload that has one may
/// not be the message it is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownField {
    /// The field number.
    pub number: u32,
    /// Its wire type.
    pub wire_type: WireType,
    /// The absolute offset of its tag.
    pub offset: u64,
}

impl<'a> PayloadRef<'a> {
    /// The first field at the top level of the payload that its message does
    /// not have, if any: a tf.Example has only `features` (field 1,
    /// length-delimited), a SequenceExample `context` (1) and `feature_lists`
    /// (2), an OFRecord its map entries (1); raw bytes have no fields.
    ///
    /// One walk over the top-level tags (nested messages are not read), so it
    /// is cheap; the values are those of Google's parser whatever it finds,
    /// since unknown fields are skipped. Errors: a top-level field that does
    /// not decode.
    ///
    /// ```
    /// use recordwire::view::{PayloadKind, PayloadRef};
    /// use recordwire::wire::WireType;
    ///
    /// // A TensorBoard `Event { wall_time: 1.0, step: 3 }`: field 1 is a
    /// // double (wire type 1), field 2 a varint.
    /// let mut event = vec![0x09];
    /// event.extend_from_slice(&1f64.to_le_bytes());
    /// event.extend_from_slice(&[0x10, 0x03]);
    /// let payload = PayloadRef::new(PayloadKind::Example, &event, 0);
    /// let unknown = payload.unknown_top_field()?.expect("not a tf.Example field");
    /// assert_eq!((unknown.number, unknown.wire_type, unknown.offset), (1, WireType::Fixed64, 0));
    /// // Read as tf.Example, it is an empty one (`{}`).
    /// assert_eq!(payload.features().unwrap().len()?, 0);
    /// # Ok::<(), recordwire::DecodeError>(())
    /// ```
    pub fn unknown_top_field(&self) -> Result<Option<UnknownField>, DecodeError> {
        let (bytes, base, last_known) = match self {
            PayloadRef::Example(v) => (v.bytes, v.base, 1),
            PayloadRef::SequenceExample(v) => (v.bytes, v.base, 2),
            PayloadRef::OfRecord(v) => (v.bytes, v.base, 1),
            PayloadRef::Raw(_) => return Ok(None),
        };
        for f in FieldReader::new(bytes, base, 0) {
            let f = f?;
            let known = matches!(f.value, Value::Len(_)) && (1..=last_known).contains(&f.number);
            if !known {
                return Ok(Some(UnknownField {
                    number: f.number,
                    wire_type: f.value.wire_type(),
                    offset: f.offset,
                }));
            }
        }
        Ok(None)
    }
}

/// Tells a file of tf.Examples from a file of tf.SequenceExamples by its
/// first records (docs/FORMAT.md §2.4): feed it the payloads in file order
/// until [`feed`](Self::feed) says it has decided, or the records run out.
///
/// The rule: a record is a SequenceExample when it has a top-level
/// `feature_lists` (field 2) that holds a feature list, and has the shape of
/// one: only fields 1 and 2 at the top, both length-delimited maps (each
/// field a map entry holding only its key and its value), some entry of
/// `feature_lists` with its value, and the record valid as a
/// SequenceExample. One such record among the first
/// [`RECORDS`](Self::RECORDS) makes the file a SequenceExample file; else it
/// is a tf.Example file. A tf.Example has only field 1, so nothing of it is
/// lost either way; a SequenceExample whose first records have no feature
/// list reads as a tf.Example (its `context` shown as `features`). The
/// shape rules out other messages with a field 2: a TensorFlow Ranking
/// `ExampleListWithContext` (`repeated Example examples = 1; Example context
/// = 2`) parses as a SequenceExample, but its `context` read as
/// `FeatureLists` has entries without values.
///
/// ```
/// use recordwire::view::{PayloadKind, PayloadSniffer};
///
/// // `SequenceExample { feature_lists { feature_list { key: "t" value {} } } }`
/// let sequence = [0x12, 0x07, 0x0a, 0x05, 0x0a, 0x01, b't', 0x12, 0x00];
/// // `Example { features {} }`
/// let example = [0x0a, 0x00];
///
/// let mut sniffer = PayloadSniffer::new();
/// assert!(!sniffer.feed(&example)); // not decided yet
/// assert!(sniffer.feed(&sequence)); // decided
/// assert_eq!(sniffer.kind(), PayloadKind::SequenceExample);
/// assert_eq!(sniffer.evidence(), Some(1)); // the second record fed
///
/// assert_eq!(recordwire::view::detect_payload([&example[..], &example]), PayloadKind::Example);
/// ```
///
/// Two other messages are told apart too, and named by
/// [`message`](Self::message) (their [`kind`](Self::kind) stays
/// [`PayloadKind::Example`], the views' reading of them):
///
/// - a TensorBoard event file ([`EVENT`]): every record looked at has the
///   shape of a `tensorflow.Event` (a double `wall_time` as field 1, a
///   varint `step` as field 2, fields 3 to 10 length-delimited, nothing
///   else; a tf.Example's field 1 is never a double), and either the first
///   is the `file_version` record (`brain.Event:…`) that begins every event
///   file, or the file's name has `events.out.tfevents.`
///   ([`with_name`](Self::with_name));
/// - a file of TensorFlow Ranking ELWC records ([`ELWC`]): every record
///   looked at has only fields 1 (`examples`) and 2 (`context`), each a
///   whole tf.Example with clean feature names, and some record has a
///   context or the file's name has `elwc` (without either, the records
///   could as well be TensorFlow Serving `ExampleList`s, which have the
///   same bytes and print the same).
///
/// ```
/// use recordwire::view::{PayloadKind, PayloadSniffer, EVENT};
///
/// // `Event { wall_time: 1.5, file_version: "brain.Event:2" }`
/// let mut event = vec![0x09];
/// event.extend_from_slice(&1.5f64.to_le_bytes());
/// event.extend_from_slice(b"\x1a\x0dbrain.Event:2");
/// let mut sniffer = PayloadSniffer::new();
/// assert!(sniffer.feed(&event)); // the first record of an event file decides
/// assert_eq!(sniffer.message(), Some(EVENT));
/// assert_eq!(sniffer.kind(), PayloadKind::Example);
///
/// // Without its file_version record, the name tells.
/// let mut step = vec![0x09];
/// step.extend_from_slice(&1.5f64.to_le_bytes());
/// step.extend_from_slice(&[0x10, 0x03]);
/// let mut named = PayloadSniffer::new().with_name("run/events.out.tfevents.1700000000.host");
/// named.feed(&step);
/// assert_eq!(named.message(), Some(EVENT));
/// let mut unnamed = PayloadSniffer::new();
/// unnamed.feed(&step);
/// assert_eq!(unnamed.message(), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct PayloadSniffer {
    fed: usize,
    evidence: Option<usize>,
    /// The file's name has `events.out.tfevents.`; `elwc`.
    events_name: bool,
    elwc_name: bool,
    /// Records fed that have an Event's shape; whether the first is a
    /// `brain.Event:` file_version record.
    events: usize,
    event_version: bool,
    /// Records fed that have an ELWC's shape; whether some has a context.
    elwcs: usize,
    elwc_context: bool,
}

/// The full name of a TensorBoard event ([`PayloadSniffer::message`]).
pub const EVENT: &str = "tensorflow.Event";

/// The full name of a TensorFlow Ranking ELWC ([`PayloadSniffer::message`]).
pub const ELWC: &str = "tensorflow.serving.ExampleListWithContext";

impl PayloadSniffer {
    /// How many records are looked at, at most.
    pub const RECORDS: usize = 16;

    /// A sniffer that has seen nothing (and says tf.Example).
    pub fn new() -> Self {
        Self::default()
    }

    /// The same, for the file `name` (a path or a file name): a name with
    /// `events.out.tfevents.` (TensorBoard's) or `elwc` (any case) helps
    /// tell an event file or an ELWC file (see [`message`](Self::message)).
    pub fn with_name(mut self, name: &str) -> Self {
        self.events_name = name.contains("events.out.tfevents.");
        self.elwc_name = name.to_ascii_lowercase().contains("elwc");
        self
    }

    /// Looks at the next record's payload; returns `true` once the answer is
    /// decided (a SequenceExample was seen, or [`RECORDS`](Self::RECORDS)
    /// records were fed), when more records would not change it.
    pub fn feed(&mut self, payload: &[u8]) -> bool {
        if self.is_decided() {
            return true;
        }
        if written_sequence_example(payload) {
            self.evidence = Some(self.fed);
        }
        if let Some(version) = event_shape(payload) {
            self.events += 1;
            self.event_version |= self.fed == 0 && version;
        } else if let Some(context) = elwc_shape(payload) {
            self.elwcs += 1;
            self.elwc_context |= context;
        }
        self.fed += 1;
        self.is_decided()
    }

    /// Whether more records would not change [`kind`](Self::kind) and
    /// [`message`](Self::message).
    pub fn is_decided(&self) -> bool {
        self.evidence.is_some()
            || self.fed >= Self::RECORDS
            || (self.event_version && self.events == self.fed)
    }

    /// The message the records fed so far are, where their bytes tell one
    /// that is not a tf.Example or a SequenceExample: [`EVENT`] or [`ELWC`]
    /// (see above); `None` for the others.
    pub fn message(&self) -> Option<&'static str> {
        if self.evidence.is_some() || self.fed == 0 {
            None
        } else if self.events == self.fed && (self.event_version || self.events_name) {
            Some(EVENT)
        } else if self.elwcs == self.fed && (self.elwc_context || self.elwc_name) {
            Some(ELWC)
        } else {
            None
        }
    }

    /// The payload kind of the records fed so far:
    /// [`PayloadKind::SequenceExample`] or [`PayloadKind::Example`].
    pub fn kind(&self) -> PayloadKind {
        if self.evidence.is_some() {
            PayloadKind::SequenceExample
        } else {
            PayloadKind::Example
        }
    }

    /// Which record (0-based, in the order fed) made it a SequenceExample.
    pub fn evidence(&self) -> Option<usize> {
        self.evidence
    }

    /// How many records were looked at.
    pub fn records(&self) -> usize {
        self.fed
    }
}

/// The payload kind of a TFRecord file whose first payloads are `first`
/// (only the first [`PayloadSniffer::RECORDS`] are read): see
/// [`PayloadSniffer`].
pub fn detect_payload<'a>(first: impl IntoIterator<Item = &'a [u8]>) -> PayloadKind {
    let mut sniffer = PayloadSniffer::new();
    for payload in first {
        if sniffer.feed(payload) {
            break;
        }
    }
    sniffer.kind()
}

/// Whether `payload` is a SequenceExample with `feature_lists` (see
/// [`PayloadSniffer`]).
fn written_sequence_example(payload: &[u8]) -> bool {
    let mut lists = false;
    for f in FieldReader::new(payload, 0, 0) {
        let Ok(f) = f else { return false };
        let (number, Value::Len(map)) = (f.number, f.value) else {
            return false;
        };
        match (number, map_shape(map)) {
            (1 | 2, None) | (3.., _) => return false,
            (2, Some(values)) => lists |= values,
            _ => {}
        }
    }
    lists
        && SequenceExampleRef::new(payload, 0)
            .validate(DecodeOptions::default())
            .is_ok()
}

/// Whether `map` has the shape of a protobuf map: only entries (field 1,
/// length-delimited) holding only a key (1) and a value (2), both
/// length-delimited. `Some(true)` when some entry has its value: another
/// message read as a map, such as a tf.Example read as `FeatureLists`, has
/// entries without one.
fn map_shape(map: &[u8]) -> Option<bool> {
    let mut values = false;
    for entry in FieldReader::new(map, 0, 1) {
        let entry = entry.ok()?;
        let (1, Value::Len(body)) = (entry.number, entry.value) else {
            return None;
        };
        for f in FieldReader::new(body, 0, 2) {
            let f = f.ok()?;
            match (f.number, f.value) {
                (1, Value::Len(_)) => {}
                (2, Value::Len(_)) => values = true,
                _ => return None,
            }
        }
    }
    Some(values)
}
