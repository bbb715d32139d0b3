//! The options that give a schema at run time (`--message`, `--proto`,
//! `-I`, `--descriptor-set`), which the commands that print records take,
//! and `encode` and `pack`, which write them.

use std::path::PathBuf;

use clap::Args;

/// A schema given at run time: records are read as `--message` of the
/// `.proto` files of `--proto` (imports under `-I`) or of the binary
/// descriptor set of `--descriptor-set`.
#[derive(Debug, Clone, Default, Args)]
pub struct SchemaArgs {
    /// Each record is this message (its full name, package.Message) of the
    /// schema that --proto or --descriptor-set gives.
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
    /// With a schema: the JSON mapping's lowerCamelCase names instead of the
    /// fields' own names.
    #[arg(long)]
    pub json_names: bool,
    /// With a schema: print the fields that have no presence at their
    /// defaults too (0, "", [], {}).
    #[arg(long)]
    pub print_defaults: bool,
}

impl SchemaArgs {
    /// The schema and JSON options asked for, or `None` without one;
    /// `features`: the command was given `--features`, which a schema
    /// cannot go with.
    pub(crate) fn load(
        &self,
        features: bool,
    ) -> Result<Option<(crate::schema::Schema, crate::schema::JsonOptions)>, super::Failure> {
        use super::{Failure, EXIT_USAGE};
        use crate::schema::{JsonOptions, Schema};
        let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
        let Some(message) = &self.message else {
            if !self.proto.is_empty() || self.descriptor_set.is_some() {
                return usage(
                    "--proto and --descriptor-set need --message NAME (the record's message type)",
                );
            }
            return Ok(None);
        };
        if features {
            return usage(
                "--features picks tf.Example features; with --message every field is printed",
            );
        }
        let schema =
            match (&self.descriptor_set, self.proto.is_empty()) {
                (Some(_), false) => return usage("give --proto or --descriptor-set, not both"),
                (None, true) => return usage(
                    "--message needs the schema: --proto FILE.proto or --descriptor-set FILE.pb",
                ),
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
        let options = JsonOptions::default()
            .with_json_names(self.json_names)
            .with_defaults(self.print_defaults);
        Ok(Some((schema, options)))
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
