//! Which payload the records of an input are read as (`--payload`, default
//! `auto`: docs/FORMAT.md §2.4), and the notes on stderr when the records may
//! not be that message (§9.5).

use std::io::{Cursor, Read, Write};
use std::path::Path;

use super::{Failure, ReadArgs, EXIT_USAGE};
use crate::error::Error;
use crate::frame::{is_pad, ErrorPolicy, Framing, Record};
use crate::io::{OpenOptions, RecordFile, Source, STDIN_NAME};
use crate::view::{PayloadKind, PayloadNotes, PayloadSniffer, RawHint, UnknownField};

/// The bytes of a pipe read ahead, at most, to find the first records.
const MAX_LOOKAHEAD: u64 = 16 << 20;

/// The payload kind the records of one input are read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chosen {
    /// The kind.
    pub kind: PayloadKind,
    /// Named with `--payload` (not detected).
    pub forced: bool,
    /// The record whose `feature_lists` made it a SequenceExample.
    evidence: Option<u64>,
    /// A message the records were detected to be that the payload views
    /// do not read (a TensorBoard `tensorflow.Event`, an ELWC): `kind` is
    /// then raw, and the records are printed by the built-in schema of
    /// that name.
    pub message: Option<&'static str>,
}

impl Chosen {
    fn forced(kind: PayloadKind) -> Self {
        Chosen {
            kind,
            forced: true,
            evidence: None,
            message: None,
        }
    }

    fn by_framing(framing: Framing) -> Self {
        Chosen {
            kind: match framing {
                Framing::TfRecord => PayloadKind::Example,
                Framing::OfRecord => PayloadKind::OfRecord,
            },
            forced: false,
            evidence: None,
            message: None,
        }
    }

    /// What a sniffer that has seen the first records chose; `evidence`:
    /// the id of the record that made it a SequenceExample.
    fn sniffed(sniffer: &PayloadSniffer, evidence: Option<u64>) -> Self {
        let message = sniffer.message();
        Chosen {
            kind: if message.is_some() {
                PayloadKind::Raw
            } else {
                sniffer.kind()
            },
            forced: false,
            evidence,
            message,
        }
    }

    /// The choice with no detected message: records read as tf.Example,
    /// as the views read an Event or an ELWC (for `--features`, which picks
    /// tf.Example features).
    pub fn without_message(self) -> Self {
        match self.message {
            Some(_) => Chosen {
                kind: PayloadKind::Example,
                message: None,
                ..self
            },
            None => self,
        }
    }

    /// Says on stderr what `auto` chose, when it is not what the framing
    /// alone gives (tf.Example for TFRecord).
    pub fn announce(&self, name: &str, stderr: &mut dyn Write) {
        if let (false, Some(id)) = (self.forced, self.evidence) {
            let _ = writeln!(
                stderr,
                "note: {name}: records read as {} (field 2 feature_lists in record {id}); --payload to force",
                self.kind.name()
            );
        }
    }
}

/// Feeds records to a sniffer until it decides; returns the id of the record
/// that decided for a SequenceExample.
struct Sniff {
    sniffer: PayloadSniffer,
    evidence: Option<u64>,
}

impl Sniff {
    fn new(name: &str) -> Self {
        Sniff {
            sniffer: PayloadSniffer::new().with_name(name),
            evidence: None,
        }
    }

    /// Looks at one record; `true` when decided.
    fn feed(&mut self, record: &Record<'_>) -> bool {
        if is_pad(record.data) {
            return false;
        }
        let done = self.sniffer.feed(record.data);
        if self.evidence.is_none() && self.sniffer.evidence().is_some() {
            self.evidence = Some(record.id);
        }
        done
    }

    fn walk(mut self, source: &mut Source) -> Self {
        while let Some(item) = source.next_record() {
            if let Ok(record) = item {
                if self.feed(&record) {
                    break;
                }
            }
        }
        self
    }

    fn chosen(&self) -> Chosen {
        Chosen::sniffed(&self.sniffer, self.evidence)
    }
}

/// Read options for looking ahead: damaged frames are passed over, up to
/// as many as the records looked for.
fn lookahead(options: &OpenOptions) -> OpenOptions {
    let mut options = options.clone();
    options.read = options.read.with_policy(ErrorPolicy::Skip {
        max_errors: Some(PayloadSniffer::RECORDS as u64),
    });
    options.read.skip_pads = true;
    options
}

impl ReadArgs {
    /// Opens `path` with `options` and chooses the payload its records are
    /// read as: `--payload` when given, else OFRecord for OFRecord files and
    /// for TFRecord files what the first records are (docs/FORMAT.md §2.4),
    /// which is said on stderr when it is not tf.Example.
    ///
    /// A pipe (or stdin) is read ahead into memory to find its first records
    /// (at most 16 MiB), then read from the start.
    pub(crate) fn open_payload(
        &self,
        path: &Path,
        options: &OpenOptions,
        stderr: &mut dyn Write,
    ) -> Result<(Source, Chosen), Failure> {
        let fatal = |e: Error| Failure::Fatal(e, EXIT_USAGE);
        if let Some(kind) = self.payload.get() {
            let source = Source::open(path, options).map_err(fatal)?;
            return Ok((source, Chosen::forced(kind)));
        }
        // A pipe, a device or stdin cannot be read twice. (A path that cannot
        // be opened goes to `Source::open`, which says why.)
        let is_stream =
            path == Path::new("-") || std::fs::metadata(path).is_ok_and(|m| !m.is_file());
        let (source, chosen) = if is_stream {
            open_stream(path, options)?
        } else {
            let source = Source::open(path, options).map_err(fatal)?;
            let chosen = match (source.framing(), source.as_file()) {
                (Framing::OfRecord, _) => Chosen::by_framing(Framing::OfRecord),
                (Framing::TfRecord, Some(file)) => sniff_file(file, source.name()),
                (Framing::TfRecord, None) => {
                    // A compressed file: its first records, from a second reader.
                    let mut again = Source::open(path, &lookahead(options)).map_err(fatal)?;
                    Sniff::new(source.name()).walk(&mut again).chosen()
                }
            };
            (source, chosen)
        };
        chosen.announce(source.name(), stderr);
        Ok((source, chosen))
    }

    /// Opens `path` with the read options and `policy`: [`Self::open_payload`].
    pub(crate) fn open_with_payload(
        &self,
        path: &Path,
        policy: ErrorPolicy,
        stderr: &mut dyn Write,
    ) -> Result<(Source, Chosen), Failure> {
        self.open_payload(path, &self.open_options(policy), stderr)
    }
}

impl ReadArgs {
    /// The payload of a shard opened for random access (plain or
    /// compressed), chosen as [`Self::open_payload`] does, from its first
    /// records ([`Shard::sniff`](crate::dataset::Shard::sniff)); the shard is
    /// then read as it.
    pub(crate) fn payload_of_shard(
        &self,
        shard: &mut crate::dataset::Shard,
        stderr: &mut dyn Write,
    ) -> Chosen {
        let chosen = match (self.payload.get(), shard.framing()) {
            (Some(kind), _) => Chosen::forced(kind),
            (None, Framing::OfRecord) => Chosen::by_framing(Framing::OfRecord),
            (None, Framing::TfRecord) => {
                let sniffer = shard.sniff();
                Chosen::sniffed(&sniffer, sniffer.evidence().map(|e| e as u64))
            }
        };
        shard.set_payload(chosen.kind);
        chosen.announce(shard.name(), stderr);
        chosen
    }
}

fn sniff_file(file: &RecordFile, name: &str) -> Chosen {
    let opts = lookahead(&OpenOptions::default()).read;
    let opts = crate::frame::ReadOptions {
        check_data_crc: file.read_options().check_data_crc,
        ..opts
    };
    let mut sniff = Sniff::new(name);
    for record in file.records_with(opts).flatten() {
        if sniff.feed(&record) {
            break;
        }
    }
    sniff.chosen()
}

/// Opens a pipe or stdin, reading ahead until its first records are known.
fn open_stream(path: &Path, options: &OpenOptions) -> Result<(Source, Chosen), Failure> {
    let name = if path == Path::new("-") {
        STDIN_NAME.to_string()
    } else {
        path.display().to_string()
    };
    let fatal =
        |e: std::io::Error| Failure::Fatal(Error::io(e).with_file(name.as_str()), EXIT_USAGE);
    let mut reader: Box<dyn Read + Send> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path).map_err(fatal)?)
    };
    let mut prefix = Vec::new();
    let mut want = 64u64 << 10;
    let chosen = loop {
        let have = prefix.len() as u64;
        let got = reader
            .by_ref()
            .take(want - have)
            .read_to_end(&mut prefix)
            .map_err(fatal)? as u64;
        let ended = have + got < want;
        let mut ahead = Source::from_reader(
            Cursor::new(prefix.clone()),
            name.as_str(),
            &lookahead(options),
        )
        .map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
        if ahead.framing() == Framing::OfRecord {
            break Chosen::by_framing(Framing::OfRecord);
        }
        let sniff = Sniff::new(&name).walk(&mut ahead);
        if ended || sniff.sniffer.is_decided() || want >= MAX_LOOKAHEAD {
            break sniff.chosen();
        }
        want *= 4;
    };
    let source = Source::from_reader(Cursor::new(prefix).chain(reader), name.as_str(), options)
        .map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
    Ok((source, chosen))
}

/// What one input's records showed about their payload: the library's
/// [`PayloadNotes`] (shared with the Python package), said on stderr by
/// [`Notes::finish`], once per input.
#[derive(Debug)]
pub(crate) struct Notes(PayloadNotes);

impl Notes {
    pub fn new(chosen: Chosen) -> Self {
        Notes(PayloadNotes::new(chosen.kind, chosen.forced))
    }

    /// A record that decoded as the chosen payload: looks at its top level.
    pub fn record(&mut self, id: u64, data: &[u8], base: u64) {
        self.0.record(id, data, base);
    }

    /// A record that did not decode as the chosen payload.
    pub fn bad(&mut self, id: u64, data: &[u8]) {
        self.0.bad(id, data);
    }

    /// Adds what `later` saw (the notes of the records after these, whose
    /// ids count from `shift`).
    pub fn absorb(&mut self, later: Notes, shift: u64) {
        self.0.absorb(later.0, shift);
    }

    /// Records with unknown top-level fields, and the first (record id, field).
    pub fn unknown(&self) -> (u64, Option<(u64, UnknownField)>) {
        self.0.unknown()
    }

    /// Says on stderr what the records showed, if anything (docs/FORMAT.md
    /// §9.5). Nothing is said when the payload was named with `--payload`,
    /// but the note on garbled names.
    pub fn finish(&self, name: &str, stderr: &mut dyn Write) {
        for line in self.0.lines(name, RawHint::Cli) {
            let _ = writeln!(stderr, "note: {line}");
        }
    }
}
