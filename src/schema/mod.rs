//! Any protobuf message, read by a schema given at run time: `.proto` sources
//! compiled in-process ([`protox`]) or a binary `FileDescriptorSet`
//! (`protoc --include_imports -o x.pb`), with prost-reflect's
//! `DescriptorPool` as the descriptor model. A [`Schema`] is one root message
//! type compiled once into a plan that threads share; records are read
//! straight from their bytes, with Google's parser's semantics (see
//! [`Schema::write_json`]; docs/FORMAT.md §14), the well-known types in
//! their JSON forms.
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

mod encode;
mod encode_wkt;
mod json;
mod plan;
mod well_known;

use std::path::Path;
use std::sync::Arc;

use prost_reflect::DescriptorPool;

use crate::error::Error;
pub use json::JsonOptions;
use plan::Plan;

/// A root message type and the plan of every type it reaches.
#[derive(Clone)]
pub struct Schema {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    plan: Plan,
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
            }),
        })
    }

    /// The root message's full name.
    pub fn message_name(&self) -> &str {
        &self.inner.name
    }

    fn plan(&self) -> &Plan {
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
