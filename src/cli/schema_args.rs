//! The options that give a schema at run time (`--message`, `--proto`,
//! `-I`, `--descriptor-set`), which the commands that print records take,
//! and `encode` and `pack`, which write them.

use std::path::PathBuf;

use clap::Args;

/// Where a schema given at run time comes from: records are read as
/// `--message` of the `.proto` files of `--proto` (imports under `-I`), of
/// the binary descriptor set of `--descriptor-set`, or with neither, of the
/// built-in schemas (`tensorflow.Event`,
/// `tensorflow.serving.ExampleListWithContext`, the Example family).
#[derive(Debug, Clone, Default, Args)]
pub struct SchemaSource {
    /// Read each record as this message (its full name, package.Message) of
    /// the schema that --proto or --descriptor-set gives; without them, a
    /// built-in one: tensorflow.Event (TensorBoard event files),
    /// tensorflow.serving.ExampleListWithContext (ELWC) or ExampleList,
    /// tensorflow.Example, tensorflow.SequenceExample, ...
    #[arg(long, value_name = "NAME")]
    pub message: Option<String>,
    /// A .proto file of the schema (repeatable); its imports are found
    /// under the folders of -I, and the well-known types are built in.
    #[arg(long, value_name = "FILE.proto")]
    pub proto: Vec<PathBuf>,
    /// A folder that imports are found in (repeatable), as protoc's -I.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// A binary FileDescriptorSet (`protoc --include_imports -o FILE.pb`).
    #[arg(long, value_name = "FILE.pb")]
    pub descriptor_set: Option<PathBuf>,
}

/// A schema given at run time, and how the commands that print records
/// print them by it.
#[derive(Debug, Clone, Default, Args)]
pub struct SchemaArgs {
    /// The schema.
    #[command(flatten)]
    pub source: SchemaSource,
    /// With a schema: the JSON mapping's lowerCamelCase names instead of the
    /// fields' own names.
    #[arg(long)]
    pub json_names: bool,
    /// With a schema: print the fields that have no presence at their
    /// defaults too (0, "", [], {}).
    #[arg(long)]
    pub print_defaults: bool,
}

impl SchemaSource {
    /// The schema asked for, or `None` without `--message` (and then
    /// without --proto or --descriptor-set).
    pub(crate) fn load(&self) -> Result<Option<crate::schema::Schema>, super::Failure> {
        use super::{Failure, EXIT_USAGE};
        use crate::schema::Schema;
        let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
        let Some(message) = &self.message else {
            if !self.proto.is_empty() || self.descriptor_set.is_some() {
                return usage(
                    "--proto and --descriptor-set need --message NAME (the record's message type)",
                );
            }
            return Ok(None);
        };
        let schema = match (&self.descriptor_set, self.proto.is_empty()) {
            (Some(_), false) => return usage("give --proto or --descriptor-set, not both"),
            (None, true) => Schema::builtin(message),
            (Some(set), true) => {
                let bytes = std::fs::read(set).map_err(|e| {
                    Failure::Fatal(
                        crate::Error::io(e).with_file(set.display().to_string()),
                        EXIT_USAGE,
                    )
                })?;
                Schema::from_descriptor_set(&bytes, message)
            }
            (None, false) => Schema::from_proto(&self.proto, &self.include, message),
        }
        .map_err(|e| Failure::Fatal(e, EXIT_USAGE))?;
        Ok(Some(schema))
    }
}

/// A schema and the JSON options its records are printed with.
pub(crate) type Loaded = (crate::schema::Schema, crate::schema::JsonOptions);

impl SchemaArgs {
    /// The schema and JSON options asked for, or `None` without one;
    /// `features`: the command was given `--features`, which a schema
    /// cannot go with.
    pub(crate) fn load(&self, features: bool) -> Result<Option<Loaded>, super::Failure> {
        if features && self.source.message.is_some() {
            return Err(super::Failure::Usage(
                "--features picks tf.Example features; with --message every field is printed"
                    .to_owned(),
            ));
        }
        let Some(schema) = self.source.load()? else {
            return Ok(None);
        };
        Ok(Some((schema, self.json_options())))
    }

    fn json_options(&self) -> crate::schema::JsonOptions {
        crate::schema::JsonOptions::default()
            .with_json_names(self.json_names)
            .with_defaults(self.print_defaults)
    }

    /// The built-in schema of the message that payload detection found
    /// in the input `name` (`chosen.message`: a TensorBoard event file,
    /// ELWC records), where no schema was `given`: its records are printed
    /// by it, which is said on `stderr`.
    pub(crate) fn detected(
        &self,
        given: Option<&Loaded>,
        chosen: &super::payload::Chosen,
        name: &str,
        stderr: &mut dyn std::io::Write,
    ) -> Result<Option<Loaded>, super::Failure> {
        let (None, Some(message)) = (given, chosen.message) else {
            return Ok(None);
        };
        let schema = crate::schema::Schema::builtin(message)
            .map_err(|e| super::Failure::Fatal(e, super::EXIT_USAGE))?;
        let _ = writeln!(
            stderr,
            "note: {name}: records read as {message} (detected by their fields), by its built-in schema; --payload or --message to force"
        );
        Ok(Some((schema, self.json_options())))
    }
}

/// Appends `record` to `line` as JSON: by the schema where one was given
/// (`--message`), else as the payload it is read as, with only the
/// tf.Example features of `filter`.
pub(crate) fn write_json(
    schema: Option<&(crate::schema::Schema, crate::schema::JsonOptions)>,
    line: &mut Vec<u8>,
    payload: crate::view::PayloadKind,
    record: &crate::frame::Record<'_>,
    strict: bool,
    filter: crate::json::FeatureFilter<'_>,
) -> Result<(), crate::wire::DecodeError> {
    match schema {
        Some((schema, options)) => {
            schema.write_json(line, record.data, record.data_offset, options)
        }
        None => crate::json::write_record(
            line,
            payload,
            record.data,
            record.data_offset,
            strict,
            filter,
        ),
    }
}
