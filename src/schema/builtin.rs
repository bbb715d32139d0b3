//! The built-in schemas: TensorFlow's `.proto` files for TensorBoard event
//! files, TensorFlow Ranking's ELWC and the Example family, transcribed
//! under `builtin/` (each file names its source, version and license),
//! compiled once by protox from memory and shared by every
//! [`Schema::builtin`].

use std::sync::OnceLock;

use prost_reflect::DescriptorPool;

use super::Schema;
use crate::error::Error;

/// The messages [`Schema::builtin`] is meant for, by full name (the other
/// messages they reach, such as `tensorflow.Summary`, can be asked for
/// too).
pub const BUILTIN_MESSAGES: &[&str] = &[
    "tensorflow.Event",
    "tensorflow.Example",
    "tensorflow.SequenceExample",
    "tensorflow.Features",
    "tensorflow.Feature",
    "tensorflow.FeatureList",
    "tensorflow.FeatureLists",
    "tensorflow.BytesList",
    "tensorflow.FloatList",
    "tensorflow.Int64List",
    "tensorflow.serving.ExampleList",
    "tensorflow.serving.ExampleListWithContext",
    "tensorflow.serving.Input",
];

/// The files, by the names their imports use, and their text.
const FILES: &[(&str, &str)] = &[
    (
        "tensorflow/core/util/event.proto",
        include_str!("builtin/event.proto"),
    ),
    (
        "tensorflow/core/framework/summary.proto",
        include_str!("builtin/summary.proto"),
    ),
    (
        "xla/tsl/protobuf/histogram.proto",
        include_str!("builtin/histogram.proto"),
    ),
    (
        "tensorflow/core/framework/tensor.proto",
        include_str!("builtin/tensor.proto"),
    ),
    (
        "tensorflow/core/framework/tensor_shape.proto",
        include_str!("builtin/tensor_shape.proto"),
    ),
    (
        "tensorflow/core/framework/resource_handle.proto",
        include_str!("builtin/resource_handle.proto"),
    ),
    (
        "tensorflow/core/framework/types.proto",
        include_str!("builtin/types.proto"),
    ),
    (
        "tensorflow/core/example/example.proto",
        include_str!("builtin/example.proto"),
    ),
    (
        "tensorflow/core/example/feature.proto",
        include_str!("builtin/feature.proto"),
    ),
    (
        "tensorflow_serving/apis/input.proto",
        include_str!("builtin/input.proto"),
    ),
];

/// The files that hold the roots; the others come in as their imports.
const ROOTS: &[&str] = &[
    "tensorflow/core/util/event.proto",
    "tensorflow_serving/apis/input.proto",
    "tensorflow/core/example/example.proto",
];

/// Finds the built-in files by name, in memory.
struct Resolver;

impl protox::file::FileResolver for Resolver {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match FILES.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => protox::file::File::from_source(n, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// The pool of the built-in files, compiled on first use. The files are
/// fixed, so an error here is a bug of this crate; it is still an error,
/// not a panic.
fn pool() -> Result<&'static DescriptorPool, Error> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut compiler = protox::Compiler::with_file_resolver(Resolver);
        compiler.include_imports(true);
        compiler
            .open_files(ROOTS)
            .map_err(|e| super::compile_error(&e))?;
        Ok(compiler.descriptor_pool())
    })
    .as_ref()
    .map_err(|e| Error::usage(format!("schema: the built-in schemas do not compile: {e}")))
}

impl Schema {
    /// A built-in schema, with no `.proto` at hand: `message` is one of
    /// [`BUILTIN_MESSAGES`] (a TensorBoard `tensorflow.Event`, a TensorFlow
    /// Serving/Ranking `tensorflow.serving.ExampleListWithContext`, the
    /// Example family), or another message they reach.
    ///
    /// Errors (`usage_error`): a name the built-in files do not define,
    /// said with the list of [`BUILTIN_MESSAGES`].
    pub fn builtin(message: &str) -> Result<Schema, Error> {
        let pool = pool()?;
        let name = message.strip_prefix('.').unwrap_or(message);
        if pool.get_message_by_name(name).is_none() {
            return Err(Error::usage(format!(
                "schema: {name} is not a built-in message (they are {}); give its schema: --proto FILE.proto or --descriptor-set FILE.pb",
                BUILTIN_MESSAGES.join(", ")
            )));
        }
        Schema::from_pool(pool, name)
    }
}
