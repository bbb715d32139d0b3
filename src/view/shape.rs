//! The shapes of messages, told from a record's bytes without a schema:
//! feature names that are clean text, a TensorBoard `tensorflow.Event`, a
//! TensorFlow Ranking `ExampleListWithContext`. The notes (§9.5) and the
//! payload detection (§2.4) share them.

use super::{PayloadKind, PayloadRef};
use crate::wire::{FieldReader, Value};

/// The first feature name of `payload` that is not clean text (not UTF-8,
/// or holding control characters): the mark of records decoded as the
/// wrong payload, whose bytes happen to parse. `Err` when it does not
/// decode.
pub(super) fn garbled_name(payload: &PayloadRef<'_>) -> Result<Option<Vec<u8>>, ()> {
    let clean =
        |name: &[u8]| std::str::from_utf8(name).is_ok_and(|s| !s.chars().any(char::is_control));
    if let Some(features) = payload.features() {
        for named in features.iter() {
            let named = named.map_err(|_| ())?;
            if !clean(named.name()) {
                return Ok(Some(named.name().to_vec()));
            }
        }
    }
    if let Some(lists) = payload.feature_lists() {
        for named in lists.iter() {
            let named = named.map_err(|_| ())?;
            if !clean(named.name()) {
                return Ok(Some(named.name().to_vec()));
            }
        }
    }
    Ok(None)
}

/// Whether `data` reads whole as `kind`, with at least one feature (or
/// feature list) and every name clean text.
pub(super) fn clean_message(kind: PayloadKind, data: &[u8], base: u64) -> bool {
    let Ok(p) = PayloadRef::parse(kind, data, base) else {
        return false;
    };
    let named = p.features().is_some_and(|f| f.iter().next().is_some())
        || p.feature_lists().is_some_and(|l| l.iter().next().is_some());
    named && garbled_name(&p) == Ok(None)
}

/// Whether `data` has the shape of a TensorBoard `tensorflow.Event`: field
/// 1 (`wall_time`) a double and present, 2 (`step`) a varint, 3 to 10
/// (`file_version` ... `source_metadata`) length-delimited, nothing else.
/// `Some(true)` when it also has the `file_version` `brain.Event:…` that
/// begins every event file.
pub(super) fn event_shape(data: &[u8]) -> Option<bool> {
    let mut wall_time = false;
    let mut version = false;
    for f in FieldReader::new(data, 0, 0) {
        let f = f.ok()?;
        match (f.number, &f.value) {
            (1, Value::Fixed64(_)) => wall_time = true,
            (2, Value::Varint(_)) => {}
            (3, Value::Len(v)) => version = v.starts_with(b"brain.Event:"),
            (4..=10, Value::Len(_)) => {}
            _ => return None,
        }
    }
    wall_time.then_some(version)
}

/// Whether `data` has the shape of a `tensorflow.Event` ([`event_shape`]).
pub(super) fn is_event(data: &[u8]) -> bool {
    event_shape(data).is_some()
}

/// Whether `data` has the shape of a TensorFlow Ranking
/// `ExampleListWithContext`: only fields 1 (`examples`) and 2 (`context`),
/// each a whole tf.Example with clean feature names (or empty), and at
/// least one example. `Some(true)` when it has a context.
pub(super) fn elwc_shape(data: &[u8]) -> Option<bool> {
    let mut examples = 0;
    let mut context = false;
    for f in FieldReader::new(data, 0, 0) {
        let f = f.ok()?;
        match (f.number, &f.value) {
            (1 | 2, Value::Len(v)) => {
                if !v.is_empty() && !clean_message(PayloadKind::Example, v, 0) {
                    return None;
                }
                examples += usize::from(f.number == 1);
                context |= f.number == 2;
            }
            _ => return None,
        }
    }
    (examples > 0).then_some(context)
}

/// Whether `data` has the shape of an `ExampleListWithContext`
/// ([`elwc_shape`]).
pub(super) fn is_elwc(data: &[u8]) -> bool {
    elwc_shape(data).is_some()
}
