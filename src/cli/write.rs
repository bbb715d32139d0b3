//! The commands that write: `encode`, `pack` and `convert`.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::Path;

use super::{
    next_or_fail, read_input, report, CmdResult, ConvertCommand, EncodeCommand, Failure,
    PackCommand, EXIT_USAGE,
};
use crate::encode::{
    feature_from_view, rewrite_features, EncodeError, Feature, Message, RecordWriter, Rewrite,
    ViewEncodeError, WriterOptions,
};
use crate::error::Error;
use crate::frame::{ErrorPolicy, Framing};
use crate::json::read::message_from_json;
use crate::names::Auto;
use crate::view::PayloadRef;
use crate::view::{DecodeOptions, ExampleRef, FeaturesRef, OfRecordRef, PayloadKind, Schema};

/// A problem with the input that is not a record-file error: printed as
/// `error[kind]: file: line N: message`, exit 1.
pub(super) fn input_error(
    stderr: &mut dyn Write,
    kind: &str,
    file: &str,
    line: Option<u64>,
    msg: &str,
) -> Failure {
    match line {
        Some(n) => {
            let _ = writeln!(stderr, "error[{kind}]: {file}: line {n}: {msg}");
        }
        None => {
            let _ = writeln!(stderr, "error[{kind}]: {file}: {msg}");
        }
    }
    Failure::Data
}

/// `--gzip-blocks N`: block-compressed GZIP output.
pub(super) fn with_blocks(options: WriterOptions, blocks: Option<u64>) -> WriterOptions {
    match blocks {
        Some(n) => options.with_gzip_blocks(n),
        None => options,
    }
}

/// The framing `pack` and `convert` write to `output`
/// ([`encode::output_framing`](crate::encode::output_framing), the rule
/// Python's `Writer` follows too): a contradiction between a named payload
/// and the name is a usage error telling to name `option`.
pub(super) fn output_framing(
    named: Option<Framing>,
    payload: Option<PayloadKind>,
    output: &Path,
    option: &str,
    otherwise: impl FnOnce() -> Framing,
) -> Result<Framing, Failure> {
    crate::encode::output_framing(named, payload, output, otherwise)
        .map_err(|c| Failure::Usage(c.message(option)))
}

/// The output of a writing command: a file replaced atomically, or stdout.
pub(super) enum Output<'o> {
    File(RecordWriter<File>),
    Stdout(RecordWriter<&'o mut dyn Write>),
}

impl<'o> Output<'o> {
    pub(super) fn open(
        path: &Path,
        options: WriterOptions,
        stdout: &'o mut dyn Write,
    ) -> Result<Self, Failure> {
        if path == Path::new("-") {
            Ok(Output::Stdout(RecordWriter::new(stdout, options)))
        } else {
            RecordWriter::create(path, options)
                .map(Output::File)
                .map_err(|e| {
                    Failure::Fatal(
                        Error::io(e).with_file(path.display().to_string()),
                        EXIT_USAGE,
                    )
                })
        }
    }

    pub(super) fn write(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Output::File(w) => w.write_record(data),
            Output::Stdout(w) => w.write_record(data),
        }
    }

    /// Finishes the file; returns the number of records and of pad frames.
    pub(super) fn finish(self) -> io::Result<(u64, u64)> {
        match self {
            Output::File(w) => {
                let n = (w.records(), w.pads().0);
                w.finish().map(|_| n)
            }
            Output::Stdout(w) => {
                let n = (w.records(), w.pads().0);
                w.finish().map(|_| n)
            }
        }
    }
}

pub(super) fn write_failure(path: &Path, e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return Failure::Closed;
    }
    Failure::Fatal(
        Error::io(e).with_file(path.display().to_string()),
        EXIT_USAGE,
    )
}

/// Runs `encode`.
pub(super) fn encode(
    c: &EncodeCommand,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let (input, output) = (c.input.as_deref(), c.output.as_deref());
    let (payload, sorted) = (c.payload.unwrap_or(PayloadKind::Example), c.sorted);
    let schema = message_schema(&c.schema, c.payload.is_some())?;
    let (text, name) = read_input(input)?;
    let mut bytes = Vec::new();
    if let Some(schema) = &schema {
        schema
            .encode_json_text(&text, &mut bytes)
            .map_err(|e| input_error(stderr, "invalid_json", &name, None, &e.to_string()))?;
    } else {
        let mut m = message_from_json(payload, &text)
            .map_err(|e| input_error(stderr, "invalid_json", &name, None, &e.to_string()))?;
        if sorted {
            m.sort_maps();
        }
        bytes.reserve(m.encoded_len().unwrap_or(0));
        m.encode_to(&mut bytes)
            .map_err(|e| input_error(stderr, "encode_error", &name, None, &e.to_string()))?;
    }
    match output {
        None => stdout.write_all(&bytes)?,
        Some(p) if p == Path::new("-") => stdout.write_all(&bytes)?,
        Some(p) => {
            let destination = super::output::Destination::new(p, c.store.storage_pairs())?;
            write_atomic(destination.local(), &bytes)?;
            destination.finish()?;
        }
    }
    Ok(())
}

/// The schema of `--message` for `encode` and `pack`, or `None`; `payload`:
/// `--payload` was given, which a schema replaces.
fn message_schema(
    args: &super::SchemaSource,
    payload: bool,
) -> Result<Option<crate::schema::Schema>, Failure> {
    if args.message.is_some() && payload {
        return Err(Failure::Usage(
            "--payload names a tf.Example or OFRecord payload; with --message the records are that message".to_owned(),
        ));
    }
    args.load()
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    crate::encode::write_file_atomic(path, bytes).map_err(|e| {
        Failure::Fatal(
            Error::io(e).with_file(path.display().to_string()),
            EXIT_USAGE,
        )
    })
}

/// Runs `pack`.
pub(super) fn pack(c: PackCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    let PackCommand {
        input,
        output,
        framing,
        payload,
        compression,
        sorted,
        pad_to_page,
        gzip_blocks,
        store,
        schema,
    } = c;
    let schema = message_schema(&schema, payload.is_some())?;
    let (input, output) = (input.as_path(), output.as_path());
    let framing = output_framing(
        framing.and_then(Auto::get),
        payload,
        output,
        "--framing",
        || match payload {
            Some(PayloadKind::OfRecord) => Framing::OfRecord,
            _ => Framing::TfRecord,
        },
    )?;
    let payload: PayloadKind = match (payload, framing) {
        (Some(p), _) => p,
        (None, Framing::OfRecord) => PayloadKind::OfRecord,
        (None, Framing::TfRecord) => PayloadKind::Example,
    };
    let name = input.display().to_string();
    let reader: Box<dyn BufRead> = if input == Path::new("-") {
        Box::new(io::BufReader::new(io::stdin()))
    } else {
        Box::new(io::BufReader::new(File::open(input).map_err(|e| {
            Failure::Fatal(Error::io(e).with_file(name.as_str()), EXIT_USAGE)
        })?))
    };
    let options = with_blocks(
        WriterOptions::new(framing)
            .with_compression(crate::encode::output_compression(compression, output))
            .with_pad_to_page(pad_to_page),
        gzip_blocks,
    );
    let destination = super::output::Destination::new(output, store.storage_pairs())?;
    let mut out = Output::open(destination.local(), options, stdout)?;
    let mut line = Vec::new();
    let mut bytes = Vec::new();
    let mut reader = reader;
    let mut n = 0u64;
    let total = (input != Path::new("-"))
        .then(|| std::fs::metadata(input).ok().map(|m| m.len()))
        .flatten();
    let progress = super::progress::Progress::new("packing", total);
    let mut consumed = 0u64;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line);
        match read {
            Ok(0) => break,
            Ok(k) => {
                consumed += k as u64;
                progress.update(consumed);
            }
            Err(e) => {
                return Err(Failure::Fatal(
                    Error::io(e).with_file(name.as_str()),
                    EXIT_USAGE,
                ))
            }
        }
        n += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        bytes.clear();
        if let Some(schema) = &schema {
            schema
                .encode_json_text(&line, &mut bytes)
                .map_err(|e| input_error(stderr, "invalid_json", &name, Some(n), &e.to_string()))?;
        } else {
            let mut m = message_from_json(payload, &line)
                .map_err(|e| input_error(stderr, "invalid_json", &name, Some(n), &e.to_string()))?;
            if sorted {
                m.sort_maps();
            }
            bytes.reserve(m.encoded_len().unwrap_or(0));
            m.encode_to(&mut bytes)
                .map_err(|e| input_error(stderr, "encode_error", &name, Some(n), &e.to_string()))?;
        }
        out.write(&bytes).map_err(|e| write_failure(output, e))?;
    }
    let (_, pads) = out.finish().map_err(|e| write_failure(output, e))?;
    destination.finish()?;
    if pads > 0 {
        let _ = writeln!(stderr, "{}", padding_note(output, pads));
    }
    Ok(())
}

/// What `pack --pad-to-page` says when it wrote pad frames: they are for
/// recordwire's readers only.
fn padding_note(output: &Path, pads: u64) -> String {
    format!(
        "note: {}: {pads} pad frame{} written (--pad-to-page): recordwire's readers pass over them, \
         but other readers (tf.data, the tfrecord package, DALI) see each one as an empty record",
        output.display(),
        if pads == 1 { "" } else { "s" }
    )
}

/// How to turn one payload kind into another.
struct Conversion {
    from: PayloadKind,
    to: PayloadKind,
    sorted: bool,
    narrow_doubles: bool,
    widen_int32: bool,
    strict: bool,
}

impl Conversion {
    fn check(&self) -> Result<(), String> {
        use PayloadKind::*;
        match (self.from, self.to) {
            (a, b) if a == b => Ok(()),
            (Raw, _) | (_, Raw) => Ok(()),
            (Example, OfRecord) | (OfRecord, Example) => Ok(()),
            (a, b) => Err(format!(
                "cannot convert {} payloads to {}",
                a.name(),
                b.name()
            )),
        }
    }

    /// Converts one record's payload into `out`.
    fn run(
        &self,
        data: &[u8],
        base: u64,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), ConvertError> {
        use PayloadKind::*;
        let options = DecodeOptions {
            strict: self.strict,
        };
        match (self.from, self.to) {
            (from, to) if (from == to && !self.sorted) || to == Raw || from == Raw => {
                // Same message (or raw bytes): checked, then copied unchanged.
                let kind = if from == Raw { to } else { from };
                kind.validate(data, base, options)?;
                out.extend_from_slice(data);
            }
            (from, to) => {
                from.validate(data, base, options)?;
                if self.sorted || from == SequenceExample {
                    let mut m = owned(from, data, base)?;
                    if self.sorted {
                        m.sort_maps();
                    }
                    let m = match (m, to) {
                        (Message::Example(e), OfRecord) => {
                            Message::OfRecord(crate::encode::OfRecord {
                                features: e.features.unwrap_or_default(),
                            })
                        }
                        (Message::OfRecord(r), Example) => {
                            let mut features = r.features;
                            let mut changed = crate::encode::Features::new();
                            for (name, f) in features.iter() {
                                changed.insert(name, self.map_feature(name, f.clone())?);
                            }
                            features = changed;
                            // An empty OFRecord maps to an Example without features.
                            Message::Example(crate::encode::Example {
                                features: (!features.is_empty()).then_some(features),
                            })
                        }
                        (m, _) => m,
                    };
                    m.encode_to(out)?;
                    return Ok(());
                }
                let (features, schema) = match from {
                    Example => (ExampleRef::new(data, base).features(), Schema::OneFlow),
                    _ => (OfRecordRef::new(data, base).features(), Schema::TensorFlow),
                };
                scratch.clear();
                self.write_entries(features, schema, scratch)?;
                if to == Example && !scratch.is_empty() {
                    crate::encode::put_tag_len(out, 1, scratch.len());
                }
                out.extend_from_slice(scratch);
            }
        }
        Ok(())
    }

    fn map_feature(&self, name: &[u8], f: Feature) -> Result<Feature, ConvertError> {
        Ok(match f {
            Feature::Double(v) if self.narrow_doubles => Feature::Float(v.into_iter().map(|x| x as f32).collect()),
            Feature::Int32(v) if self.widen_int32 => Feature::Int64(v.into_iter().map(i64::from).collect()),
            f @ (Feature::Double(_) | Feature::Int32(_)) => {
                return Err(ConvertError::Unmappable(format!(
                    "feature {} is an {} which tf.Example has no equivalent for (use --{} to convert it)",
                    crate::names::quoted(name),
                    f.kind().map_or("", |k| k.name()),
                    if matches!(f, Feature::Double(_)) { "narrow-doubles" } else { "widen-int32" }
                )))
            }
            f => f,
        })
    }

    /// Writes the effective entries of `features`, each value re-encoded for
    /// `schema` straight from the view; kinds the schema lacks are mapped by
    /// [`map_feature`](Self::map_feature) or refused.
    fn write_entries(
        &self,
        features: FeaturesRef<'_>,
        schema: Schema,
        out: &mut Vec<u8>,
    ) -> Result<(), ConvertError> {
        let mut refused = None;
        let r = rewrite_features(features, schema, out, |name, f| match f.kind() {
            Ok(Some(kind)) if schema.field_of(kind).is_none() => {
                match feature_from_view(f)
                    .map_err(ConvertError::from)
                    .and_then(|v| self.map_feature(name, v))
                {
                    Ok(v) => Rewrite::Replace(v),
                    Err(e) => {
                        refused.get_or_insert(e);
                        Rewrite::Drop
                    }
                }
            }
            _ => Rewrite::Keep,
        });
        if let Some(e) = refused {
            return Err(e);
        }
        match r {
            Ok(()) => Ok(()),
            Err(ViewEncodeError::Decode(e)) => Err(e.into()),
            Err(ViewEncodeError::Encode(e)) => Err(e.into()),
        }
    }
}

fn owned(kind: PayloadKind, data: &[u8], base: u64) -> Result<Message, crate::DecodeError> {
    crate::encode::message_from_view(PayloadRef::new(kind, data, base))
}

#[derive(Debug)]
enum ConvertError {
    Decode(crate::DecodeError),
    Encode(EncodeError),
    Unmappable(String),
}

impl From<crate::DecodeError> for ConvertError {
    fn from(e: crate::DecodeError) -> Self {
        ConvertError::Decode(e)
    }
}

impl From<EncodeError> for ConvertError {
    fn from(e: EncodeError) -> Self {
        ConvertError::Encode(e)
    }
}

/// Runs `convert`.
pub(super) fn convert(
    c: &ConvertCommand,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    let ConvertCommand {
        input,
        output,
        read,
        out_framing,
        out_payload,
        write,
        narrow_doubles,
        widen_int32,
    } = c;
    let (input, output) = (input.as_path(), output.as_path());
    let (out_framing, out_payload) = (*out_framing, *out_payload);
    let (narrow_doubles, widen_int32) = (*narrow_doubles, *widen_int32);
    let destination = super::output::Destination::new(output, read.storage_pairs())?;
    let (mut source, chosen) = read.open_with_payload(input, ErrorPolicy::Fail, stderr)?;
    let name = source.name().to_string();
    let from = chosen.kind;
    let framing = output_framing(
        out_framing.and_then(Auto::get),
        out_payload,
        output,
        "--out-framing",
        || source.framing(),
    )?;
    let to: PayloadKind = match out_payload {
        Some(p) => p,
        None if from == PayloadKind::Example && framing == Framing::OfRecord => {
            PayloadKind::OfRecord
        }
        None if from == PayloadKind::OfRecord && framing == Framing::TfRecord => {
            PayloadKind::Example
        }
        None => from,
    };
    let conv = Conversion {
        from,
        to,
        sorted: write.sorted,
        narrow_doubles,
        widen_int32,
        strict: read.strict,
    };
    conv.check().map_err(Failure::Usage)?;
    let options = with_blocks(
        WriterOptions::new(framing).with_compression(crate::encode::output_compression(
            write.out_compression,
            output,
        )),
        write.gzip_blocks,
    );
    let mut out = Output::open(destination.local(), options, stdout)?;
    let (mut bytes, mut scratch) = (Vec::new(), Vec::new());
    let progress = super::progress::Progress::over("converting", &source);
    while let Some(record) = next_or_fail(&mut source, stderr)? {
        progress.update(record.end);
        bytes.clear();
        match conv.run(record.data, record.data_offset, &mut bytes, &mut scratch) {
            Ok(()) => {}
            Err(ConvertError::Decode(e)) => {
                report(stderr, &record.context(e));
                return Err(Failure::Data);
            }
            Err(ConvertError::Encode(e)) => {
                return Err(input_error(
                    stderr,
                    "encode_error",
                    &name,
                    None,
                    &format!("record {}: {e}", record.id),
                ));
            }
            Err(ConvertError::Unmappable(m)) => {
                return Err(input_error(
                    stderr,
                    "unmappable_feature",
                    &name,
                    None,
                    &format!("record {}: {m}", record.id),
                ));
            }
        }
        out.write(&bytes).map_err(|e| write_failure(output, e))?;
    }
    let (_, pads) = out.finish().map_err(|e| write_failure(output, e))?;
    destination.finish()?;
    if pads > 0 {
        let _ = writeln!(stderr, "{}", padding_note(output, pads));
    }
    Ok(())
}
