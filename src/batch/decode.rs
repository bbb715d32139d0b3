//! The batched decoder: one pass over each record, values from the wire
//! straight into the columns.

use std::sync::Arc;

use super::column::{slot, Batch, Column, PartWindows};
use super::fast::fast_map;
use super::shape::{Fail, Shape};
use super::spec::{FeatureSpec, NameTable, Spec};
use crate::error::{Error, ErrorKind};
use crate::frame::Record;
use crate::view::{ExampleRef, FeaturesRef, OfRecordRef, PayloadKind, SequenceExampleRef};
use crate::wire::DecodeError;

/// A record to decode: its payload, where the payload starts in its file
/// (the base of error offsets), its id and its file.
///
/// Implemented for [`Record`] (from a reader, an index or a
/// dataset) and for plain payload slices
/// (`&[u8]`: offsets from the payload's start, the id is the position in
/// the batch).
pub trait Input<'a>: Sync {
    /// The serialized payload.
    fn payload(&self) -> &'a [u8];
    /// Absolute offset of the payload's first byte.
    fn base(&self) -> u64;
    /// The record id (`position` is the record's place in the batch).
    fn id(&self, position: usize) -> u64;
    /// The file, when known.
    fn file(&self) -> Option<&'a Arc<str>>;
}

impl<'a> Input<'a> for Record<'a> {
    fn payload(&self) -> &'a [u8] {
        self.data
    }
    fn base(&self) -> u64 {
        self.data_offset
    }
    fn id(&self, _: usize) -> u64 {
        self.id
    }
    fn file(&self) -> Option<&'a Arc<str>> {
        self.file
    }
}

impl<'a> Input<'a> for &'a [u8] {
    fn payload(&self) -> &'a [u8] {
        self
    }
    fn base(&self) -> u64 {
        0
    }
    fn id(&self, position: usize) -> u64 {
        position as u64
    }
    fn file(&self) -> Option<&'a Arc<str>> {
        None
    }
}

/// Decodes one record's feature map into `columns` (a placed column's row
/// into its window, at `row`); `stamp` marks the columns touched in this
/// row.
fn decode_map<'a>(
    columns: &mut [Column<'a>],
    features: &[FeatureSpec],
    table: &NameTable,
    map: FeaturesRef<'a>,
    stamp: u64,
    no_kind_is_absent: bool,
    (windows, row): (PartWindows<'_, '_>, usize),
) -> Result<bool, DecodeError> {
    let mut failed = false;
    for nf in map.entries() {
        let nf = nf?;
        let Some(c) = table.find(features, nf.entry.name) else {
            continue;
        };
        let col = &mut columns[c];
        let shape = col.form;
        let list = nf.feature.list();
        // parse_example reads a fixed_len Feature with no list as no entry
        // at all: the default fills it, an earlier entry of the name stays.
        // (A SequenceExample's context reads it as zero values.)
        if no_kind_is_absent && matches!((shape, &list), (Shape::Fixed { .. }, Ok(None))) {
            continue;
        }
        col.begin_entry(stamp);
        let at = slot(windows, c, row, col);
        let r = list
            .map_err(Fail::from)
            .and_then(|list| col.append_feature(shape, list, nf.entry.offset, at));
        failed |= col.end_entry(r);
    }
    Ok(failed)
}

/// Decodes one SequenceExample's feature lists into `columns`.
fn decode_lists<'a>(
    columns: &mut [Column<'a>],
    features: &[FeatureSpec],
    table: &NameTable,
    lists: crate::view::FeatureListsRef<'a>,
    stamp: u64,
) -> Result<bool, DecodeError> {
    let mut failed = false;
    for nl in lists.entries() {
        let nl = nl?;
        let Some(c) = table.find(features, nl.entry.name) else {
            continue;
        };
        let col = &mut columns[c];
        let shape = col.form;
        col.begin_entry(stamp);
        let r = col.append_frames(shape, nl.list, nl.entry.offset);
        failed |= col.end_entry(r);
    }
    Ok(failed)
}

/// Decodes `records` into `batch` (not finished: no padding, no sparse
/// form); the placed columns' rows go to `windows` (by column; empty when
/// none is placed). On an error, the rows before the failing record stay.
pub(super) fn decode_rows<'a, R: Input<'a>>(
    records: &[R],
    first: usize,
    spec: &'a Spec,
    batch: &mut Batch<'a>,
    windows: PartWindows<'_, '_>,
) -> Result<(), Error> {
    batch.reset(spec);
    for (i, r) in records.iter().enumerate() {
        if let Err(e) = decode_record(r, first + i, spec, batch, &mut *windows) {
            let rows = batch.rows;
            truncate(batch, rows);
            return Err(e);
        }
        batch.rows += 1;
    }
    Ok(())
}

fn truncate(batch: &mut Batch<'_>, rows: usize) {
    for c in batch.columns.iter_mut().chain(batch.sequence.iter_mut()) {
        c.truncate_rows(rows, c.form);
        c.pending = None;
    }
}

fn decode_record<'a, R: Input<'a>>(
    r: &R,
    position: usize,
    spec: &'a Spec,
    batch: &mut Batch<'a>,
    windows: PartWindows<'_, '_>,
) -> Result<(), Error> {
    let (payload, base) = (r.payload(), r.base());
    // Stamps are never 0 (a fresh column's `seen`).
    let stamp = batch.rows as u64 + 1;
    let row = batch.rows;
    let wire = match spec.payload() {
        PayloadKind::Example => {
            let map = ExampleRef::new(payload, base).features();
            let fast = map.plain_bytes().is_some_and(|(bytes, _, depth)| {
                fast_map(
                    &mut batch.columns,
                    spec.features(),
                    &spec.table,
                    (bytes, depth),
                    stamp,
                    (&mut *windows, row),
                )
            });
            if fast {
                Ok(false)
            } else {
                decode_map(
                    &mut batch.columns,
                    spec.features(),
                    &spec.table,
                    map,
                    stamp,
                    true,
                    (&mut *windows, row),
                )
            }
        }
        PayloadKind::OfRecord | PayloadKind::Raw => {
            let map = OfRecordRef::new(payload, base).features();
            decode_map(
                &mut batch.columns,
                spec.features(),
                &spec.table,
                map,
                stamp,
                true,
                (&mut *windows, row),
            )
        }
        PayloadKind::SequenceExample => {
            let seq = SequenceExampleRef::new(payload, base);
            decode_map(
                &mut batch.columns,
                spec.features(),
                &spec.table,
                seq.context(),
                stamp,
                false,
                (&mut *windows, row),
            )
            .and_then(|context_failed| {
                decode_lists(
                    &mut batch.sequence,
                    spec.sequence(),
                    &spec.sequence_table,
                    seq.feature_lists(),
                    stamp,
                )
                .map(|lists_failed| context_failed || lists_failed)
            })
        }
    };
    let tag = |e: Error| {
        let e = e.with_record(r.id(position));
        match r.file() {
            Some(f) => e.with_file(Arc::clone(f)),
            None => e,
        }
    };
    let failed = match wire {
        Ok(failed) => failed,
        Err(e) => return Err(tag(Error::new(ErrorKind::Decode(e.reason), e.offset))),
    };
    // TensorFlow's order: an error in a present feature (the last one on the
    // wire when there are several) before a missing one.
    // (Only when an entry failed: the scan costs a look at every column.)
    let mut worst: Option<(u64, usize, bool)> = None;
    let failing = [(false, &batch.columns), (true, &batch.sequence)];
    for (in_sequence, columns) in failing.into_iter().filter(|_| failed) {
        for (c, col) in columns.iter().enumerate() {
            if let Some(fail) = &col.pending {
                let at = fail.offset();
                if worst.is_none_or(|(w, _, _)| at > w) {
                    worst = Some((at, c, in_sequence));
                }
            }
        }
    }
    if let Some((_, c, in_sequence)) = worst {
        let (col, f) = if in_sequence {
            (&mut batch.sequence[c], &spec.sequence()[c])
        } else {
            (&mut batch.columns[c], &spec.features()[c])
        };
        if let Some(fail) = col.pending.take() {
            return Err(tag(fail.into_error(f)));
        }
    }
    let parts = [
        (&mut batch.columns, spec.features(), true),
        (&mut batch.sequence, spec.sequence(), false),
    ];
    for (columns, features, placed) in parts {
        for (c, (col, f)) in columns.iter_mut().zip(features).enumerate() {
            // A fixed_len feature the record held: nothing to do (the usual
            // case, checked here without the call).
            if col.seen == stamp && matches!(col.form, Shape::Fixed { .. }) && col.pending.is_none()
            {
                continue;
            }
            let at = if placed {
                slot(windows, c, row, col)
            } else {
                None
            };
            if let Err(fail) = col.end_row(f, col.form, stamp, base, at) {
                return Err(tag(fail.into_error(f)));
            }
        }
    }
    Ok(())
}

/// Decodes `records` into `batch` with `spec`, on this thread.
///
/// One pass over each record: every map entry is matched against the spec's
/// names with one hash probe and its values go from the wire into the
/// column. The rules are TensorFlow's `parse_example` /
/// `parse_sequence_example` (and OneFlow's raw decoder for
/// [`Form::OfRecordRaw`](super::Form::OfRecordRaw)): see the module docs.
/// On an error (a [`feature_error`](ErrorKind::Feature) or a
/// [`decode_error`](ErrorKind::Decode) naming the record, its file and the
/// byte offset), the batch holds the rows before the failing record,
/// finished.
pub fn decode<'a, R: Input<'a>>(
    records: &[R],
    spec: &'a Spec,
    batch: &mut Batch<'a>,
) -> Result<(), Error> {
    let r = decode_rows(records, 0, spec, batch, &mut []);
    batch.finish(spec);
    r
}
