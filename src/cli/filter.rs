//! `--features NAME,...` of `cat` and `get`: which of the names asked for
//! some record printed has, so that a name no record has (a typo) is said:
//! a note, or with `--strict` an error.

use std::io::Write;

use crate::frame::Record;
use crate::view::{PayloadKind, PayloadRef};

/// The names asked for, and whether a record printed had each.
pub(super) struct Wanted {
    names: Vec<Vec<u8>>,
    found: Vec<bool>,
}

impl Wanted {
    /// The names of `--features`, if given.
    pub(super) fn new(features: Option<&[String]>) -> Option<Wanted> {
        let names: Vec<Vec<u8>> = features?.iter().map(|n| n.as_bytes().to_vec()).collect();
        let found = vec![false; names.len()];
        Some(Wanted { names, found })
    }

    /// The names, as the JSON printer filters by them.
    pub(super) fn names(&self) -> &[Vec<u8>] {
        &self.names
    }

    /// Marks the names `record` has (as a feature, or a SequenceExample's
    /// feature list), read as `kind`.
    pub(super) fn mark(&mut self, kind: PayloadKind, record: &Record<'_>) {
        if self.found.iter().all(|&f| f) {
            return;
        }
        let payload = PayloadRef::new(kind, record.data, record.data_offset);
        for (name, seen) in self.names.iter().zip(self.found.iter_mut()) {
            if *seen {
                continue;
            }
            let in_features = payload
                .features()
                .is_some_and(|f| f.get(name).ok().flatten().is_some());
            let in_lists = payload
                .feature_lists()
                .is_some_and(|l| l.get(name).ok().flatten().is_some());
            *seen = in_features || in_lists;
        }
    }

    /// Says each name no record printed had (a note; an error with
    /// `strict`); whether there was one.
    pub(super) fn finish(&self, strict: bool, stderr: &mut dyn Write) -> bool {
        let mut missing = false;
        for (name, seen) in self.names.iter().zip(&self.found) {
            if !seen {
                missing = true;
                let _ = writeln!(
                    stderr,
                    "{}: no record printed has a feature named {}",
                    if strict { "error[usage_error]" } else { "note" },
                    crate::names::quoted(name)
                );
            }
        }
        missing
    }
}
