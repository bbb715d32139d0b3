//! Command-line arguments (docs/FORMAT.md §9).

use std::ffi::OsStr;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::str::FromStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use crate::frame::{ErrorPolicy, Framing};
use crate::index::IndexFormat;
use crate::io::Compression;
use crate::names::{Auto, OptionName, ParseNameError};
use crate::order::{ModeName, Tail};
use crate::view::PayloadKind;

pub use super::schema_args::{SchemaArgs, SchemaSource};

/// Read, check and inspect TFRecord and OFRecord files.
#[derive(Debug, Parser)]
#[command(name = "recordwire", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// A clap value parser for a library option type `T`: the value is parsed by
/// `T`'s `FromStr` (so the names have one home, [`OptionName`]), and `--help`
/// lists the names `names` gives.
#[derive(Clone)]
pub struct Named<T> {
    names: fn() -> Vec<&'static str>,
    value: PhantomData<fn() -> T>,
}

/// The parser of an option type.
fn named<T: OptionName>() -> Named<T> {
    Named {
        names: T::names,
        value: PhantomData,
    }
}

/// The parser of an option type that may also be `auto`.
fn auto<T: OptionName>() -> Named<Auto<T>> {
    Named {
        names: Auto::<T>::names,
        value: PhantomData,
    }
}

impl<T> TypedValueParser for Named<T>
where
    T: FromStr<Err = ParseNameError> + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        text.parse::<T>().map_err(|e| {
            let arg = arg.map_or_else(|| "...".to_owned(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value '{text}' for '{arg}': {e}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.names)().into_iter().map(PossibleValue::new)))
    }
}

/// Options shared by the commands that read record files.
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// Framing of the input (auto: from its first bytes and its name, `.tfrecord`, `.ofrecord`, `part-N`).
    #[arg(long, value_parser = auto::<Framing>(), default_value = "auto")]
    pub framing: Auto<Framing>,
    /// Payload type; auto: ofrecord for OFRecord, and for TFRecord
    /// sequence_example when the first records have feature_lists, else example.
    #[arg(long, value_parser = auto::<PayloadKind>(), default_value = "auto")]
    pub payload: Auto<PayloadKind>,
    /// Compression of the input.
    #[arg(long, value_parser = named::<Compression>(), default_value = "auto")]
    pub compression: Compression,
    /// Strict mode: also report duplicate keys, unknown fields and mixed packing.
    #[arg(long)]
    pub strict: bool,
    /// Read files with plain reads instead of a memory map (in chunks, in
    /// constant memory, where the command reads records in file order).
    #[arg(long)]
    pub no_mmap: bool,
    /// Do not check the data CRCs of TFRecord frames (length CRCs are always checked).
    #[arg(long)]
    pub no_data_crc: bool,
    /// An option of the stores that remote inputs are read from, KEY=VALUE,
    /// repeatable (its help lists the keys, from the tables of
    /// [`StorageOptions`](crate::io::remote::StorageOptions)).
    #[cfg(feature = "remote")]
    #[arg(
        long = "storage-option",
        value_name = "KEY=VALUE",
        value_parser = key_value,
        help = storage_option_help(),
    )]
    pub storage_option: Vec<(String, String)>,
}

/// `--storage-option`'s help: every key of recordwire's own and the
/// timeouts, with their defaults, from the tables of
/// [`StorageOptions`](crate::io::remote::StorageOptions), so that it lists
/// what the code reads.
#[cfg(feature = "remote")]
pub(crate) fn storage_option_help() -> String {
    use crate::io::remote::{OWN_KEYS, TIMEOUT_KEYS};
    let list = |keys: &[(&str, &str)]| {
        keys.iter()
            .map(|(k, default)| format!("{k} ({default})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "An option of the stores that remote inputs (s3://, gs://, az://, https://) are read \
         from, KEY=VALUE, repeatable: object_store's keys (aws_endpoint, aws_region, \
         allow_http=true for a plain http:// endpoint, aws_skip_signature=true for a public \
         bucket, ...), which override the environment; the timeouts of each try of a request: \
         {}; and recordwire's own: {}",
        list(&TIMEOUT_KEYS),
        list(&OWN_KEYS),
    )
}

impl ReadArgs {
    /// The `--storage-option` pairs.
    #[cfg(feature = "remote")]
    pub(crate) fn storage_pairs(&self) -> &[(String, String)] {
        &self.storage_option
    }

    /// No `--storage-option` without feature `remote`.
    #[cfg(not(feature = "remote"))]
    pub(crate) fn storage_pairs(&self) -> &[(String, String)] {
        &[]
    }
}

/// The options of the store a remote output is written to (`pack`,
/// `encode`, `import`; the commands that read take them with
/// [`ReadArgs`]).
#[derive(Debug, Clone, Default, Args)]
pub struct StoreArgs {
    /// An option of the store that a remote output (s3://, gs://, az://)
    /// is written to, KEY=VALUE, repeatable, as for reading (aws_endpoint,
    /// aws_region, allow_http, ...).
    #[cfg(feature = "remote")]
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = key_value)]
    pub storage_option: Vec<(String, String)>,
}

impl StoreArgs {
    /// The `--storage-option` pairs.
    #[cfg(feature = "remote")]
    pub(crate) fn storage_pairs(&self) -> &[(String, String)] {
        &self.storage_option
    }

    /// No `--storage-option` without feature `remote`.
    #[cfg(not(feature = "remote"))]
    pub(crate) fn storage_pairs(&self) -> &[(String, String)] {
        &[]
    }
}

/// `KEY=VALUE`.
#[cfg(feature = "remote")]
fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{s:?} is not KEY=VALUE")),
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every record as one line of JSON (JSON Lines).
    Cat(CatCommand),
    /// Print one bare serialized message (no framing) as one JSON object.
    Decode(DecodeCommand),
    /// Print the annotated wire tree of records, offset by offset.
    Dump(DumpCommand),
    /// Check every frame, CRC and payload; print one line per problem.
    Verify(VerifyCommand),
    /// Print the number of records.
    ///
    /// From the index when there is a current one (--index, or the
    /// FILE.rwindex sidecar), else by reading every record as verify does
    /// (both CRCs checked unless --no-data-crc; compressed files and pipes in
    /// constant memory).
    Count(CountCommand),
    /// Encode one JSON object as one bare serialized message (no framing).
    Encode(EncodeCommand),
    /// Write JSON Lines (one record per line) as a record file.
    Pack(PackCommand),
    /// Copy records to another framing, compression or payload type.
    Convert(ConvertCommand),
    /// Build an offset index of a record file.
    Index(IndexCommand),
    /// Print the records with these ids as JSON Lines, through the index.
    Get(GetCommand),
    /// Print one epoch's order of record ids, one per line.
    Order(OrderCommand),
    /// Print the record count, size statistics and the schema.
    ///
    /// With several files, one summary of them as a dataset: the number of
    /// files and their sizes, records in all and per file, the mix of
    /// framings, compressions and payloads, record sizes, and one schema over
    /// every record of every file (--per-file: a report for each file).
    Inspect(InspectCommand),
    /// Decode every record with a spec and write the columns: one Parquet
    /// file, or a directory of .npy files. With --message instead of --spec,
    /// read every record as that message of a schema and write Parquet
    /// columns by field path (--columns).
    ///
    /// The inputs are one dataset, read in order; one row per record. A
    /// record that does not fit the spec (or the schema) stops the export
    /// (exit 1) and nothing is left at OUT: the output is written under a
    /// temporary name and renamed at the end.
    Export(ExportCommand),
    /// Write the rows of a Parquet file as a record file: the reverse of
    /// `export`.
    ///
    /// One record per row, one feature per column in column order: ints ->
    /// int64_list, floats -> float_list, binary and strings -> bytes_list,
    /// lists (and fixed-size lists, nested) of those -> the flattened list;
    /// a null row leaves its feature out. Any other type is an error naming
    /// the column. The output is written under a temporary name and renamed.
    Import(ImportCommand),
    /// Measure read throughput and random-access latency percentiles on this machine.
    #[command(after_long_help = super::bench::HELP)]
    Bench(BenchCommand),
}

/// The arguments of `cat`.
#[derive(Debug, Args)]
pub struct CatCommand {
    /// Record files (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// What to print.
    #[command(flatten)]
    pub options: CatArgs,
}

/// The arguments of `decode`.
#[derive(Debug, Args)]
pub struct DecodeCommand {
    /// The message (`-` or nothing for stdin).
    pub file: Option<PathBuf>,
    /// Payload type of the message.
    #[arg(long, value_parser = named::<PayloadKind>(), default_value = "example")]
    pub payload: PayloadKind,
    /// Strict mode.
    #[arg(long)]
    pub strict: bool,
}

/// The arguments of `dump`.
#[derive(Debug, Args)]
pub struct DumpCommand {
    /// Record files (`-` for stdin), one after the other.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Only this record id.
    #[arg(long)]
    pub record: Option<u64>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Records of any protobuf message, annotated by a schema given here.
    #[command(flatten)]
    pub schema: SchemaSource,
}

/// The arguments of `verify`.
#[derive(Debug, Args)]
pub struct VerifyCommand {
    /// Record files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Threads checking the CRCs and records of a file held in memory
    /// (default: the number of cores); the output is the same for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// The arguments of `count`.
#[derive(Debug, Args)]
pub struct CountCommand {
    /// Record files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Threads checking the CRCs and records of a file held in memory
    /// (default: the number of cores); the output is the same for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Index to use, with a single file: native, DALI text or raw offset
    /// table (told apart by content).
    #[arg(long)]
    pub index: Option<PathBuf>,
}

/// The arguments of `encode`.
#[derive(Debug, Args)]
pub struct EncodeCommand {
    /// The JSON object (`-` or nothing for stdin).
    pub input: Option<PathBuf>,
    /// Where to write the bytes (`-` or nothing for stdout).
    pub output: Option<PathBuf>,
    /// Payload type of the message (default: example).
    #[arg(long, value_parser = named::<PayloadKind>())]
    pub payload: Option<PayloadKind>,
    /// Write map entries sorted by key instead of input order.
    #[arg(long)]
    pub sorted: bool,
    /// The store of a remote output.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Any protobuf message, by a schema given here (instead of --payload):
    /// the JSON is read as protobuf's JSON mapping and written as its
    /// deterministic serialization.
    #[command(flatten)]
    pub schema: SchemaSource,
}

/// The arguments of `pack`.
#[derive(Debug, Args)]
pub struct PackCommand {
    /// JSON Lines input (`-` for stdin).
    pub input: PathBuf,
    /// Record file to write (`-` for stdout).
    pub output: PathBuf,
    /// Framing of the output (default: from the output's name, `.ofrecord`/`part-N` or `.tfrecord`/`.tfrec`; else ofrecord for --payload ofrecord, else tfrecord).
    #[arg(long, value_parser = auto::<Framing>())]
    pub framing: Option<Auto<Framing>>,
    /// Payload type of the records (default: ofrecord for OFRecord framing, else example).
    #[arg(long, value_parser = named::<PayloadKind>())]
    pub payload: Option<PayloadKind>,
    /// Compression of the output (default: from the file name, `.gz` or `.zlib`/`.zz`, else none).
    #[arg(long, value_parser = named::<Compression>())]
    pub compression: Option<Compression>,
    /// Write map entries sorted by key instead of input order.
    #[arg(long)]
    pub sorted: bool,
    /// Pad so that no record smaller than a page of N bytes crosses a page
    /// boundary. The pad frames are for recordwire's readers, which pass
    /// over them; other readers (tf.data, the tfrecord package, DALI) see
    /// each one as an empty record.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(64..))]
    pub pad_to_page: Option<u64>,
    /// Block-compressed GZIP output: end a GZIP member after every N bytes
    /// or so of uncompressed records, each member holding whole records
    /// (like BGZF). Still one GZIP stream to any reader (tf.data, gzip
    /// -d); `recordwire index` then reads any record by inflating one
    /// member. Sets the output compression to gzip.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub gzip_blocks: Option<u64>,
    /// The store of a remote output.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Records of any protobuf message, by a schema given here (instead of
    /// --payload): each line is read as protobuf's JSON mapping and written
    /// as its deterministic serialization.
    #[command(flatten)]
    pub schema: SchemaSource,
}

/// The arguments of `import`.
#[derive(Debug, Args)]
pub struct ImportCommand {
    /// Parquet file to read.
    pub input: PathBuf,
    /// Record file to write (`-` for stdout).
    pub output: PathBuf,
    /// Payload of the records: example (tf.Example, TFRecord framing) or
    /// ofrecord (OFRecord framing; Int8-32 columns -> int32_list, Float64
    /// -> double_list). Default: ofrecord when the output's name says
    /// OFRecord, else example.
    #[arg(long, value_parser = named::<PayloadKind>())]
    pub payload: Option<PayloadKind>,
    /// Compression of the output (default: from the file name, `.gz` or `.zlib`/`.zz`, else none).
    #[arg(long, value_parser = named::<Compression>())]
    pub compression: Option<Compression>,
    /// Block-compressed GZIP output, a member every N bytes or so (as `pack`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub gzip_blocks: Option<u64>,
    /// Rows read from the Parquet file at once.
    #[arg(long, value_name = "N", default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    pub batch_size: u64,
    /// The store of a remote output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertCommand {
    /// Input record file (`-` for stdin).
    pub input: PathBuf,
    /// Output record file (`-` for stdout).
    pub output: PathBuf,
    /// How to read the input.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Framing of the output (default: from the output's name, `.ofrecord`/`part-N` or `.tfrecord`/`.tfrec`; else the input's).
    #[arg(long = "out-framing", value_parser = auto::<Framing>())]
    pub out_framing: Option<Auto<Framing>>,
    /// Payload type of the output (default: the input's, example ↔ ofrecord when the framing changes).
    #[arg(long = "out-payload", value_parser = named::<PayloadKind>())]
    pub out_payload: Option<PayloadKind>,
    /// Output options.
    #[command(flatten)]
    pub write: WriteArgs,
    /// OFRecord to tf.Example: write double_list features as float_list (rounding).
    #[arg(long)]
    pub narrow_doubles: bool,
    /// OFRecord to tf.Example: write int32_list features as int64_list.
    #[arg(long)]
    pub widen_int32: bool,
}

/// The arguments of `index`.
#[derive(Debug, Args)]
pub struct IndexCommand {
    /// Record files: each gets its own index (`--out` goes with one file).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Index format: native (binary, checked against the data at every
    /// open), dali (DALI's / the tfrecord package's text index) or lirs
    /// (the raw u64 offset table of the LIRS thesis on random-access
    /// TFRecord: each record's start, nothing else).
    #[arg(long, value_parser = named::<IndexFormat>(), default_value = "native")]
    pub format: IndexFormat,
    /// Where to write it (`-` for stdout; default: `FILE.rwindex` for
    /// native, `FILE.idx` for dali, `FILE.offsets` for lirs).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// For a GZIP or ZLIB file (native format): a checkpoint every N bytes
    /// of decompressed output (with the 32 KiB window before it), from
    /// which any record is read by inflating at most about N bytes.
    #[arg(long, value_name = "N", default_value_t = crate::index::DEFAULT_SPACING,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub spacing: u64,
}

/// The arguments of `get`.
#[derive(Debug, Args)]
pub struct GetCommand {
    /// Record file.
    pub file: PathBuf,
    /// More record files (several are one dataset: global ids over the
    /// files in order), then record ids (0-based); an argument of digits
    /// only is an id (write a file named so `./123`), and `-` reads more
    /// ids from stdin (separated by white space, as `order` prints them).
    #[arg(required_unless_present = "ids_file")]
    pub ids: Vec<String>,
    /// Read the ids from this file (separated by white space), after
    /// those given as arguments: for more ids than a command line holds.
    #[arg(long, value_name = "PATH")]
    pub ids_file: Option<PathBuf>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Index to use: native, DALI text or raw offset table (told apart by
    /// content); default: the sidecar `FILE.rwindex` when it is current,
    /// else one built in memory.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Only these features (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// Records of any protobuf message, by a schema given here.
    #[command(flatten)]
    pub schema: SchemaArgs,
}

/// The arguments of `order`.
#[derive(Debug, Args)]
pub struct OrderCommand {
    /// Record files: several are one dataset, whose global ids run over
    /// the files in order (the page modes keep each file's pages apart).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Index to use: native, DALI text or raw offset table (told apart by
    /// content); default: the current sidecar, else built in memory.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Order of the ids: file order, shuffled (the default, as Python's
    /// `Dataset.order` and the library's), shuffled by page, or shuffled by
    /// page within windows of pages.
    #[arg(long, value_parser = named::<ModeName>(), default_value = "shuffle")]
    pub mode: ModeName,
    /// Seed of the shuffles.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Epoch number.
    #[arg(long, default_value_t = 0)]
    pub epoch: u64,
    /// This rank.
    #[arg(long, default_value_t = 0)]
    pub rank: u32,
    /// Number of ranks.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub world: u32,
    /// This data-loader worker.
    #[arg(long, default_value_t = 0)]
    pub worker: u32,
    /// Data-loader workers per rank.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: u32,
    /// Page size of the page modes; for a GZIP/ZLIB file, 0 makes each
    /// checkpoint span a page (each inflated once per window).
    #[arg(long, default_value_t = crate::order::DEFAULT_PAGE_SIZE)]
    pub page_size: u64,
    /// Pages open at once (quasi-random).
    #[arg(long, default_value_t = crate::order::DEFAULT_WINDOW)]
    pub window: u32,
    /// What to do when the ids do not split evenly among the ranks: pad
    /// (equal parts, the first ids read twice; the default, as PyTorch's
    /// DistributedSampler), drop-last (equal parts) or keep (every id
    /// once, parts may differ by one).
    #[arg(long, value_parser = named::<Tail>(), default_value = "pad")]
    pub tail: Tail,
}

/// The arguments of `inspect`.
#[derive(Debug, Args)]
pub struct InspectCommand {
    /// Record files: several are summarised as one dataset (--per-file: a
    /// report for each).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print the report (or the summary) as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// With several files: a report for each file, one after the other
    /// (with --json, one object per line), instead of the summary.
    #[arg(long, conflicts_with = "spec")]
    pub per_file: bool,
    /// Instead of the report: the spec of a batch decode inferred from
    /// every record of all the files (one spec), as `export --spec`
    /// reads it; notes on features left out go to stderr.
    #[arg(long, conflicts_with = "json")]
    pub spec: bool,
    /// How --spec prints: json (the spec file of `export --spec`) or tf
    /// (TensorFlow Python, `features = {...}`).
    #[arg(long, value_parser = named::<SpecFormat>(), default_value = "json", requires = "spec")]
    pub spec_format: SpecFormat,
    /// Records of any protobuf message: the report is per field path (in
    /// how many records each is set, how many values it holds).
    #[command(flatten)]
    pub schema: SchemaSource,
}

/// The arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportCommand {
    /// Record files (`-` for stdin), read in order as one dataset.
    #[arg(required = true, value_name = "IN")]
    pub inputs: Vec<PathBuf>,
    /// Where to write: a `.parquet` file, or a directory of `.npy` files
    /// (with `index.json` and `spec.json`).
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    /// The spec: a spec JSON file (as `inspect --spec` prints), or
    /// `auto` to infer it first with a pass over the inputs. Not with
    /// --message, which reads the records by a schema instead.
    #[arg(
        long,
        value_name = "FILE|auto",
        required_unless_present = "message",
        conflicts_with = "message"
    )]
    pub spec: Option<PathBuf>,
    /// Records as a message of a schema given at run time (Parquet only):
    /// the columns of --columns, or without it each top-level field as a
    /// column.
    #[command(flatten)]
    pub schema: SchemaSource,
    /// With --message: the field paths to export, one column each
    /// (`tracks.states.center_x`, dot-separated field names; an empty path
    /// is the whole message as one struct column).
    #[arg(
        long,
        value_name = "PATH[,PATH...]",
        value_delimiter = ',',
        requires = "message"
    )]
    pub columns: Option<Vec<String>>,
    /// With --message: enums as their names (strings) instead of their
    /// numbers.
    #[arg(long, requires = "message")]
    pub enum_names: bool,
    /// Output format (default: parquet when OUT ends in `.parquet`, else npy).
    #[arg(long, value_parser = named::<ExportFormat>())]
    pub format: Option<ExportFormat>,
    /// Records decoded at once.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    pub batch_size: u64,
    /// Decoding threads (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Replace OUT when it exists (a file, or a directory that is not empty).
    #[arg(long)]
    pub force: bool,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// The arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchCommand {
    /// Record file (a regular file: it is read several times).
    pub file: PathBuf,
    /// Read options.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Index to use: native, DALI text or raw offset table (told apart by
    /// content); default: the current sidecar, else built in memory.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Timed sequential passes (the median and the best are reported).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub passes: u32,
    /// Random accesses to time, one by one (0: none).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    pub samples: u64,
    /// Seed of the random record ids and offsets.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print the results as one JSON object (keys in `--help`).
    #[arg(long)]
    pub json: bool,
}

/// Whether an argument of `get` is an id (digits only) or `-` (ids from
/// stdin), rather than a record file.
pub(crate) fn is_id_word(arg: &str) -> bool {
    arg == "-" || (!arg.is_empty() && arg.bytes().all(|b| b.is_ascii_digit()))
}

/// The options of `cat` beyond the read options.
#[derive(Debug, Clone, Args)]
pub struct CatArgs {
    /// Stop at the first damaged record, or skip damaged records.
    #[arg(long, value_parser = named::<ErrorPolicy>(), default_value = "fail")]
    pub on_error: ErrorPolicy,
    /// With --on-error skip: give up after this many errors.
    #[arg(long)]
    pub max_errors: Option<u64>,
    /// Only these features (comma-separated names); a name that no record
    /// has is reported on stderr (and is an error with --strict).
    #[arg(long, value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// Pass over the first N records (of all the files, in order).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip: u64,
    /// Print at most N records, then stop.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Start each line with the file and the record id, tab-separated:
    /// `FILE<TAB>ID<TAB>{…}`.
    #[arg(long)]
    pub with_id: bool,
    /// Records of any protobuf message, by a schema given here.
    #[command(flatten)]
    pub schema: SchemaArgs,
}

/// How `inspect --spec` prints the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecFormat {
    /// The spec JSON (`batch::Spec::to_json`), which `export --spec` reads.
    Json,
    /// TensorFlow Python (`batch::Spec::to_tensorflow`).
    Tf,
}

impl OptionName for SpecFormat {
    const WHAT: &'static str = "spec format";
    const ALL: &'static [Self] = &[SpecFormat::Json, SpecFormat::Tf];

    fn name(self) -> &'static str {
        match self {
            SpecFormat::Json => "json",
            SpecFormat::Tf => "tf",
        }
    }
}

crate::option_names!(SpecFormat);

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One Parquet file.
    Parquet,
    /// A directory of `.npy` files.
    Npy,
}

impl OptionName for ExportFormat {
    const WHAT: &'static str = "export format";
    const ALL: &'static [Self] = &[ExportFormat::Parquet, ExportFormat::Npy];

    fn name(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "parquet",
            ExportFormat::Npy => "npy",
        }
    }
}

crate::option_names!(ExportFormat);

/// Output options of the commands that write record files.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Compression of the output (default: from the file name, `.gz` or `.zlib`/`.zz`, else none).
    #[arg(long = "out-compression", value_parser = named::<Compression>())]
    pub out_compression: Option<Compression>,
    /// Write map entries sorted by key (C++ deterministic order) instead of input order.
    #[arg(long)]
    pub sorted: bool,
    /// Block-compressed GZIP output: end a GZIP member after every N bytes
    /// or so of uncompressed records, each member holding whole records
    /// (like BGZF). Still one GZIP stream to any reader (tf.data, gzip
    /// -d); `recordwire index` then reads any record by inflating one
    /// member. Sets the output compression to gzip.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub gzip_blocks: Option<u64>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    /// `--storage-option`'s help names every key of recordwire's own and
    /// the timeouts, with their defaults: it is made from the same tables
    /// as the code that reads them, so it cannot fall behind.
    #[cfg(feature = "remote")]
    #[test]
    fn the_storage_option_help_lists_every_key_of_recordwire() {
        use crate::io::remote::{OWN_KEYS, TIMEOUT_KEYS};
        use clap::CommandFactory;
        let mut cli = super::Cli::command();
        for command in ["count", "cat", "get"] {
            let sub = cli.find_subcommand_mut(command).expect(command);
            let help = sub.render_long_help().to_string();
            let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
            for (key, default) in OWN_KEYS.iter().chain(&TIMEOUT_KEYS) {
                let default = default.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(
                    help.contains(&format!("{key} ({default}")),
                    "{command} --help lacks {key}: {help}"
                );
            }
        }
    }
}
