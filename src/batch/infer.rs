//! [`SpecInference`]: a [`Spec`] inferred from records (what `recordwire
//! inspect --spec` prints).

use std::collections::HashMap;
use std::ops::Range;

use super::spec::{DType, DefaultValue, FeatureSpec, Form, Spec};
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

    /// The spec of a sample of the records, made permissive where the sample
    /// cannot be sure: what [`finish`](Self::finish) gives, but each
    /// `fixed_len` feature (held by every sampled record) with a default of
    /// zeros (empty strings for bytes), so that a record the sample did not
    /// see without it still reads, and each `fixed_len_sequence` with
    /// `allow_missing`. A feature some sampled record lacks is `var_len`
    /// already. Records holding another number of values than the sample
    /// saw still fail at their batch; [`finish`](Self::finish) over every
    /// record is the exact spec.
    pub fn finish_sample(self) -> (Spec, Vec<String>) {
        let (spec, notes) = self.finish();
        let lenient = |f: &FeatureSpec| -> FeatureSpec {
            let f = f.clone();
            if matches!(f.form, Form::FixedLen { default: None, .. }) {
                let n = f.elements();
                let zeros = match f.dtype {
                    DType::Bytes => DefaultValue::Bytes(vec![Vec::new(); n]),
                    DType::Float32 | DType::Float64 => DefaultValue::Float(vec![0.0; n]),
                    _ => DefaultValue::Int(vec![0; n]),
                };
                f.default_value(zeros)
            } else {
                f.allow_missing(true)
            }
        };
        let features = spec.features().iter().map(lenient).collect();
        let sequence = spec.sequence().iter().map(lenient).collect();
        match Spec::new(spec.payload(), features, sequence) {
            Ok(lenient) => (lenient, notes),
            Err(_) => (spec, notes),
        }
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

/// The records a sampled inference reads: runs of neighbouring records
/// spread evenly over every file (the first records of each among them),
/// about `max_records` in all and about `max_bytes` of data (each file's
/// records taken as of its average size), at least one run per non-empty
/// file. `files`: each file's records and data bytes, in id order; the runs
/// are ranges of global ids, in id order. Runs of neighbours keep a remote
/// read to one request per run, and a compressed one to a span per run.
/// Where the budget holds every record, the one run of each file is all of
/// it.
///
/// ```
/// use recordwire::batch::sample_runs;
///
/// // Two files of 1,000 and 10 records: every record of the small one.
/// let runs = sample_runs(&[(1_000, 100_000), (10, 1_000)], 64, 1 << 20);
/// assert_eq!(runs.first(), Some(&(0..16)));
/// assert_eq!(runs.last(), Some(&(1_000..1_010)));
/// assert!(runs.iter().map(|r| r.end - r.start).sum::<u64>() <= 64 + 16);
/// ```
pub fn sample_runs(files: &[(u64, u64)], max_records: u64, max_bytes: u64) -> Vec<Range<u64>> {
    /// Records per run.
    const RUN: u64 = 16;
    let total: u64 = files.iter().map(|f| f.0).sum();
    let bytes: u64 = files.iter().map(|f| f.1).sum();
    let nonempty = files.iter().filter(|f| f.0 > 0).count() as u64;
    if total == 0 {
        return Vec::new();
    }
    // The budget in records: the record cap, and the byte cap at the
    // average record size.
    let by_bytes = (u128::from(max_bytes) * u128::from(total) / u128::from(bytes.max(1)))
        .min(u128::from(u64::MAX)) as u64;
    let budget = max_records.min(by_bytes).max(1);
    let per_file = (budget / nonempty).max(1);
    let mut runs = Vec::new();
    let mut base = 0u64;
    for &(n, _) in files {
        if n > 0 {
            if per_file >= n {
                runs.push(base..base + n);
            } else {
                let run = per_file.min(RUN);
                let count = (per_file / run).max(1);
                for k in 0..count {
                    let start = (u128::from(k) * u128::from(n) / u128::from(count)) as u64;
                    runs.push(base + start..base + (start + run).min(n));
                }
            }
        }
        base += n;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{Example, Feature, Features};

    fn record(i: i64, with_x: bool) -> Vec<u8> {
        let mut features: Features = [("label", Feature::Int64(vec![i]))].into_iter().collect();
        if with_x {
            features.insert("x", Feature::Float(vec![1.0, 2.0]));
        }
        Example::with_features(features).to_bytes().unwrap()
    }

    #[test]
    fn a_sample_gives_fixed_len_features_a_default_and_keeps_var_len() {
        let mut inference = SpecInference::new(PayloadKind::Example);
        for i in 0..10 {
            inference.add(&record(i, i != 3), 0).unwrap();
        }
        inference.add(&record(10, true), 0).unwrap();
        let mut sample = SpecInference::new(PayloadKind::Example);
        for i in 0..10 {
            sample.add(&record(i, true), 0).unwrap();
        }
        let (exact, _) = inference.finish();
        assert_eq!(exact.features()[1].form, Form::VarLen);
        let (lenient, notes) = sample.finish_sample();
        assert!(notes.is_empty());
        assert_eq!(
            lenient.features()[0].form,
            Form::FixedLen {
                shape: vec![],
                default: Some(DefaultValue::Int(vec![0]))
            }
        );
        assert_eq!(
            lenient.features()[1].form,
            Form::FixedLen {
                shape: vec![2],
                default: Some(DefaultValue::Float(vec![0.0, 0.0]))
            }
        );
    }

    #[test]
    fn sample_runs_are_bounded_and_spread() {
        // Ten files of 20,000 records of ~920 bytes: 4,096 records at most.
        let files = vec![(20_000u64, 18_400_000u64); 10];
        let runs = sample_runs(&files, 4096, 16 << 20);
        let read: u64 = runs.iter().map(|r| r.end - r.start).sum();
        assert!((3900..=4096).contains(&read), "{read}");
        for f in 0..10u64 {
            assert!(runs.iter().any(|r| r.start == f * 20_000), "file {f}");
        }
        assert!(runs.windows(2).all(|w| w[0].end <= w[1].start));
        // Large records: the byte cap rules.
        let runs = sample_runs(&[(1_000, 100 << 20)], 4096, 16 << 20);
        let read: u64 = runs.iter().map(|r| r.end - r.start).sum();
        assert!(read <= 176, "{read}");
        // Everything fits: each file whole.
        assert_eq!(
            sample_runs(&[(5, 50), (0, 0), (7, 70)], 4096, 1 << 20),
            vec![0..5, 5..12]
        );
        assert!(sample_runs(&[(0, 0)], 4096, 1 << 20).is_empty());
    }
}
