//! [`SpecInference`]: a [`Spec`] inferred from records (what `recordwire
//! inspect --spec` prints).

use std::collections::HashMap;

use super::spec::{DType, FeatureSpec, Spec};
use crate::view::{ExampleRef, FeaturesRef, Kind, OfRecordRef, PayloadKind, SequenceExampleRef};
use crate::wire::DecodeError;

/// What was seen of one feature.
#[derive(Debug, Clone)]
struct Seen {
    name: Vec<u8>,
    /// The list kinds met (a bit per kind).
    kinds: u8,
    /// Records holding the feature.
    records: u64,
    /// Values per record (per frame for sequence features): the least and most.
    min: u64,
    max: u64,
}

fn kind_bit(k: Kind) -> u8 {
    1 << (k as u8)
}

const KINDS: [Kind; 5] = [
    Kind::Bytes,
    Kind::Float,
    Kind::Double,
    Kind::Int32,
    Kind::Int64,
];

#[derive(Debug, Default)]
struct Table {
    seen: Vec<Seen>,
    by_name: HashMap<Vec<u8>, usize>,
}

impl Table {
    /// One record's feature: the kinds of its lists (a bit each) and the
    /// least and most values per record (per frame).
    fn note(&mut self, name: &[u8], kinds: u8, counts: (u64, u64)) {
        let i = match self.by_name.get(name) {
            Some(&i) => i,
            None => {
                self.seen.push(Seen {
                    name: name.to_vec(),
                    kinds: 0,
                    records: 0,
                    min: u64::MAX,
                    max: 0,
                });
                self.by_name.insert(name.to_vec(), self.seen.len() - 1);
                self.seen.len() - 1
            }
        };
        let s = &mut self.seen[i];
        s.kinds |= kinds;
        s.records += 1;
        s.min = s.min.min(counts.0);
        s.max = s.max.max(counts.1);
    }

    fn features(&mut self, map: FeaturesRef<'_>) -> Result<(), DecodeError> {
        for f in map.iter() {
            let f = f?;
            let list = f.feature.list()?;
            let n = match list {
                Some(l) => l.len()? as u64,
                None => 0,
            };
            self.note(f.name(), list.map_or(0, |l| kind_bit(l.kind())), (n, n));
        }
        Ok(())
    }
}

/// Infers a [`Spec`] from records: `fixed_len` where every record holds the
/// feature with the same number of values (shape `[]` for one value, `[n]`
/// otherwise), `var_len` otherwise; a SequenceExample's feature lists give
/// `fixed_len_sequence` where every frame holds the same number of values
/// (`allow_missing` when some records lack the list), `var_len` otherwise.
///
/// ```
/// use recordwire::batch::{Form, SpecInference};
/// use recordwire::encode::{Example, Feature, Features};
/// use recordwire::view::PayloadKind;
///
/// let mut inference = SpecInference::new(PayloadKind::Example);
/// for i in 0..3i64 {
///     let features: Features = [
///         ("label", Feature::Int64(vec![i])),
///         ("tokens", Feature::Int64((0..i).collect())),
///     ]
///     .into_iter()
///     .collect();
///     inference.add(&Example::with_features(features).to_bytes().unwrap(), 0).unwrap();
/// }
/// let (spec, notes) = inference.finish();
/// assert!(notes.is_empty());
/// assert_eq!(spec.features()[0].form, Form::FixedLen { shape: vec![], default: None });
/// assert_eq!(spec.features()[1].form, Form::VarLen);
/// ```
#[derive(Debug)]
pub struct SpecInference {
    payload: PayloadKind,
    records: u64,
    features: Table,
    sequence: Table,
}

impl SpecInference {
    /// An inference over payloads of `payload` (example, sequence_example or ofrecord).
    pub fn new(payload: PayloadKind) -> Self {
        SpecInference {
            payload,
            records: 0,
            features: Table::default(),
            sequence: Table::default(),
        }
    }

    /// Records seen so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Takes one payload into account (`base`: its offset, for errors).
    /// Allocates only for a name not seen before.
    pub fn add(&mut self, payload: &[u8], base: u64) -> Result<(), DecodeError> {
        match self.payload {
            PayloadKind::Example => self
                .features
                .features(ExampleRef::new(payload, base).features())?,
            PayloadKind::OfRecord | PayloadKind::Raw => self
                .features
                .features(OfRecordRef::new(payload, base).features())?,
            PayloadKind::SequenceExample => {
                let seq = SequenceExampleRef::new(payload, base);
                self.features.features(seq.context())?;
                for l in seq.feature_lists().iter() {
                    let l = l?;
                    let (mut kinds, mut min, mut max) = (0u8, u64::MAX, 0);
                    for frame in l.list.iter() {
                        let list = frame?.list()?;
                        let n = match list {
                            Some(v) => v.len()? as u64,
                            None => 0,
                        };
                        (min, max) = (min.min(n), max.max(n));
                        if let Some(v) = list {
                            kinds |= kind_bit(v.kind());
                        }
                    }
                    // An empty list has no frame to learn the size from:
                    // (u64::MAX, 0) leaves the feature's sizes as they are.
                    self.sequence.note(l.name(), kinds, (min, max));
                }
            }
        }
        self.records += 1;
        Ok(())
    }

    /// The spec, and notes on features left out (no list ever set, or lists
    /// of several kinds).
    pub fn finish(self) -> (Spec, Vec<String>) {
        let mut notes = Vec::new();
        let payload = match self.payload {
            PayloadKind::Raw => PayloadKind::OfRecord,
            p => p,
        };
        let records = self.records;
        let mut make = |t: Table, sequence: bool| -> Vec<FeatureSpec> {
            let mut out = Vec::new();
            for s in t.seen {
                let name = String::from_utf8_lossy(&s.name).into_owned();
                // Notes quote the name (it may hold any bytes), as `inspect` does.
                let quoted = crate::names::quoted(&s.name);
                let kinds: Vec<Kind> = KINDS
                    .into_iter()
                    .filter(|&k| s.kinds & kind_bit(k) != 0)
                    .collect();
                let kind = match kinds.as_slice() {
                    [k] => *k,
                    [] => {
                        notes.push(format!(
                            "{quoted}: left out, no record sets its list (the type is unknown)"
                        ));
                        continue;
                    }
                    _ => {
                        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                        notes.push(format!(
                            "{quoted}: left out, it holds {} in different {}",
                            names.join(" and "),
                            if sequence { "frames" } else { "records" }
                        ));
                        continue;
                    }
                };
                let dtype = DType::of_kind(kind);
                let everywhere = s.records == records;
                let same = s.min == s.max;
                let shape = if s.max == 1 {
                    vec![]
                } else {
                    vec![s.max as usize]
                };
                out.push(match (sequence, same) {
                    (false, true) if everywhere => FeatureSpec::fixed_len(name, dtype, &shape),
                    (true, true) => FeatureSpec::fixed_len_sequence(name, dtype, &shape)
                        .allow_missing(!everywhere),
                    _ => FeatureSpec::var_len(name, dtype),
                });
            }
            out
        };
        let features = make(self.features, false);
        let sequence = make(self.sequence, true);
        let spec = Spec::new(payload, features, sequence).unwrap_or_else(|e| {
            // Every inferred feature is allowed for its payload; a failure here
            // is a bug, reported rather than hidden.
            notes.push(format!("inference produced an invalid spec: {e}"));
            Spec::new(payload, Vec::new(), Vec::new()).unwrap_or_else(|_| unreachable!())
        });
        (spec, notes)
    }
}
