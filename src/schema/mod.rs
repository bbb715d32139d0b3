//! Any protobuf message, read by a schema given at run time: `.proto` sources
//! compiled in-process ([`protox`]) or a binary `FileDescriptorSet`
//! (`protoc --include_imports -o x.pb`), with prost-reflect's
//! `DescriptorPool` as the descriptor model. A [`Schema`] is one root message
//! type compiled once into a plan that threads share; records are read
//! straight from their bytes, with Google's parser's semantics (see
//! [`Schema::write_json`]; docs/FORMAT.md §14), the well-known types in
//! their JSON forms. With the `arrow` feature, [`columns`] decodes records
//! into Arrow columns by field path.
//!
//! ```
//! use recordwire::schema::Schema;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(
//!     dir.path().join("point.proto"),
//!     "syntax = \"proto3\"; package demo; message Point { int64 x = 1; string label = 2; }",
//! )
//! .unwrap();
//! let schema = Schema::from_proto(&[dir.path().join("point.proto")], &[dir.path()], "demo.Point")?;
//! let mut json = Vec::new();
//! // x = 7 (field 1, varint), label = "a" (field 2, length-delimited)
//! schema.write_json(&mut json, b"\x08\x07\x12\x01a", 0, &Default::default())?;
//! assert_eq!(json, br#"{"x":"7","label":"a"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Some schemas are built in ([`Schema::builtin`], [`BUILTIN_MESSAGES`]):
//! TensorBoard's `tensorflow.Event` with everything it reaches (`Summary`,
//! `TensorProto`, ...), TensorFlow Serving's `tensorflow.serving.ExampleList`,
//! `ExampleListWithContext` (TensorFlow Ranking's ELWC) and `Input`, and the
//! Example family (`tensorflow.Example`, `SequenceExample`, `Features`, ...),
//! transcribed from TensorFlow's own `.proto` files:
//!
//! ```
//! use recordwire::schema::{Schema, BUILTIN_MESSAGES};
//!
//! assert!(BUILTIN_MESSAGES.contains(&"tensorflow.Event"));
//! let schema = Schema::builtin("tensorflow.Event")?;
//! // wall_time = 1.5 (field 1, double), step = 3 (field 2, varint),
//! // file_version = "brain.Event:2" (field 3)
//! let mut event = vec![0x09];
//! event.extend_from_slice(&1.5f64.to_le_bytes());
//! event.extend_from_slice(b"\x10\x03\x1a\x0dbrain.Event:2");
//! let mut json = Vec::new();
//! schema.write_json(&mut json, &event, 0, &Default::default())?;
//! assert_eq!(json, br#"{"wall_time":1.5,"step":"3","file_version":"brain.Event:2"}"#);
//! assert!(Schema::builtin("tensorflow.NoSuchThing").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builtin;
#[cfg(feature = "arrow")]
#[cfg_attr(docsrs, doc(cfg(feature = "arrow")))]
pub mod columns;
mod encode;
mod encode_wkt;
mod field;
mod json;
pub(crate) mod plan;
mod view;
mod well_known;

use std::path::Path;
use std::sync::Arc;

use prost_reflect::DescriptorPool;

use crate::error::Error;
pub use builtin::BUILTIN_MESSAGES;
#[cfg(feature = "arrow")]
pub use columns::{schema_columns, ColumnOptions, Columns};
pub(crate) use field::{next_packed, scalar_of};
pub use field::{Entries, FieldRef, FieldType, ValueRef, Values, WireValues};
pub use json::JsonOptions;
use plan::Plan;
pub use view::{MessageRef, RawFields, UnknownFields};

/// A root message type and the plan of every type it reaches.
#[derive(Clone)]
pub struct Schema {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    plan: Plan,
    pool: DescriptorPool,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("message", &self.inner.name)
            .finish_non_exhaustive()
    }
}

impl Schema {
    /// Compiles `files` (`.proto` sources; their imports found under
    /// `includes`, which must also hold the files themselves, as `protoc -I`;
    /// the well-known types are built in) and picks the message `message`
    /// (its full name, `package.Message`).
    ///
    /// Errors (`usage_error`): a file that cannot be read or does not compile,
    /// said in one line with its file, line and column; a message the files do
    /// not define.
    pub fn from_proto(
        files: &[impl AsRef<Path>],
        includes: &[impl AsRef<Path>],
        message: &str,
    ) -> Result<Schema, Error> {
        let mut includes: Vec<&Path> = includes.iter().map(AsRef::as_ref).collect();
        // A file given outside every include folder is found from its own.
        for f in files {
            let parent = f.as_ref().parent().unwrap_or(Path::new("."));
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            if !includes.iter().any(|i| f.as_ref().starts_with(i)) {
                includes.push(parent);
            }
        }
        let compiled = protox::Compiler::new(&includes)
            .and_then(|mut c| {
                c.include_imports(true);
                c.open_files(files.iter().map(AsRef::as_ref))?;
                Ok(c)
            })
            .map_err(|e| Error::usage(format!("schema: {}", compile_error(&e))))?;
        Schema::from_pool(&compiled.descriptor_pool(), message)
    }

    /// Reads a binary `FileDescriptorSet` (with its imports: `protoc
    /// --include_imports -o set.pb`) and picks the message `message`.
    ///
    /// Errors (`usage_error`): bytes that are not such a set, or a set whose
    /// files do not link; a message it does not define.
    pub fn from_descriptor_set(bytes: &[u8], message: &str) -> Result<Schema, Error> {
        let pool = DescriptorPool::decode(bytes)
            .map_err(|e| Error::usage(format!("schema: not a FileDescriptorSet: {e}")))?;
        Schema::from_pool(&pool, message)
    }

    /// The message `message` of `pool`.
    pub fn from_pool(pool: &DescriptorPool, message: &str) -> Result<Schema, Error> {
        let name = message.strip_prefix('.').unwrap_or(message);
        let Some(root) = pool.get_message_by_name(name) else {
            let mut known: Vec<String> = pool
                .all_messages()
                .map(|m| m.full_name().to_owned())
                .collect();
            known.retain(|n| !n.starts_with("google.protobuf."));
            known.truncate(12);
            return Err(Error::usage(format!(
                "schema: no message {name} (the schema defines {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        };
        Ok(Schema {
            inner: Arc::new(Inner {
                name: root.full_name().to_owned(),
                plan: Plan::compile(pool, &root),
                pool: pool.clone(),
            }),
        })
    }

    /// The root message's full name.
    pub fn message_name(&self) -> &str {
        &self.inner.name
    }

    /// The schema's files as a binary `FileDescriptorSet`, which
    /// [`from_descriptor_set`](Self::from_descriptor_set) reads back (with
    /// [`message_name`](Self::message_name)): how a schema travels to
    /// another process.
    pub fn descriptor_set(&self) -> Vec<u8> {
        self.inner.pool.encode_to_vec()
    }

    /// The descriptors the schema was made from.
    pub fn pool(&self) -> &DescriptorPool {
        &self.inner.pool
    }

    /// The names of the root message's fields, in field-number order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.plan().messages[0]
            .fields
            .iter()
            .map(|f| f.name.as_str())
    }

    pub(crate) fn plan(&self) -> &Plan {
        &self.inner.plan
    }
}

/// A protox error in one line: `FILE:LINE:COLUMN: message`, where the error
/// points into a file.
fn compile_error(e: &protox::Error) -> String {
    use miette::Diagnostic as _;
    let mut at = e.file().map(str::to_owned).unwrap_or_default();
    if let (Some(source), Some(label)) = (e.source_code(), e.labels().and_then(|mut l| l.next())) {
        if let Ok(span) = source.read_span(label.inner(), 0, 0) {
            if let Some(name) = span.name() {
                at = name.to_owned();
            }
            at = format!("{at}:{}:{}", span.line() + 1, span.column() + 1);
        }
    }
    if at.is_empty() {
        e.to_string()
    } else {
        format!("{at}: {e}")
    }
}

#[cfg(test)]
mod encode_tests;
#[cfg(test)]
mod tests;
