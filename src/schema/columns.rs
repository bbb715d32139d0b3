//! Columns of a message by field path, as Arrow (feature `arrow`): for a
//! [`Schema`] and a list of paths (`"tracks.states.center_x"`,
//! `"scenario_id"`, `""` for the whole message), one Arrow column per path
//! and one row per record ([`Columns`], [`schema_columns`]).
//!
//! A path's steps are the names (the `.proto` names, not the JSON names) of
//! fields; every step but the last is a message (or group) field, whose
//! value the next step is read in. Only the fields on the paths (and the
//! members of their oneofs, to know which member came last) are read; every
//! other field is skipped by its length, so a record damaged only inside a
//! field no path reads is not an error here.
//!
//! The values are those of Google's parser (as [`Schema::write_json`]): the
//! last occurrence of a singular scalar wins, the occurrences of a singular
//! message merge, packed and unpacked runs of a repeated field join, the
//! last entry of a map key wins, the last member of a oneof wins (the
//! others are absent), a field whose wire type does not match its
//! declaration is an unknown field, and so is an unknown value of a closed
//! (proto2) enum.
//!
//! | field | Arrow type | value |
//! |---|---|---|
//! | `double`, `float` | `Float64`, `Float32` | |
//! | `int32`, `sint32`, `sfixed32` | `Int32` | |
//! | `int64`, `sint64`, `sfixed64` | `Int64` | |
//! | `uint32`, `fixed32` | `UInt32` | |
//! | `uint64`, `fixed64` | `UInt64` | |
//! | `bool` | `Boolean` | |
//! | `string` | `LargeUtf8` | a proto2 `string` that is not UTF-8 has each bad sequence replaced by U+FFFD (a proto3 one is a decode error, as Google's parser says) |
//! | `bytes` | `LargeBinary` | |
//! | enum | `Int32`, or with [`ColumnOptions::enum_names`] `LargeUtf8` | the number; or its name (the first name of the number), the number in decimal where the enum has no name for it (an open enum) |
//! | message, group | `Struct` of all its fields in number order, each named as the field | the merged occurrences |
//! | message of a type already being built around it (recursion) | `LargeBinary` | the sub-message's bytes as they came (a singular one's occurrences concatenated, which parse as their merge) |
//! | `repeated T` | `LargeList<T>` (items never null) | every occurrence in order |
//! | `map<K, V>` | `Map<K, V>` (keys and values never null, keys not sorted) | entries in the order of each key's first occurrence, each with the value of the key's last entry; a missing key or value is its zero |
//!
//! Presence: a singular field without presence (proto3 implicit presence)
//! that is absent is its zero (`0`, `""`, `false`, the enum's number 0);
//! a field with presence (messages, `optional`, proto2 fields, oneof
//! members) that is absent is null. A path through a message field that is
//! absent is null from there on: `"inner.a"` is null where `inner` is
//! absent, `a`'s value otherwise. A step through a repeated field (or one
//! below it) makes a list of what the rest of the path gives for each
//! element: `"tracks.states.center_x"` is `LargeList<LargeList<Float64>>`.
//! A map ends a path (its whole value).
//!
//! The well-known types (`Timestamp`, `Duration`, the wrappers, `Struct`,
//! `Value`, `ListValue`, `FieldMask`, `Any`, `Empty`) are their plain
//! message structure, not their JSON forms: a `Timestamp` is
//! `Struct{seconds: Int64, nanos: Int32}`, an `Any` `Struct{type_url,
//! value: LargeBinary}`, and a `Value` inside a `Struct` inside a `Value` is
//! its bytes (the recursion rule). An `Empty` is a struct of no fields,
//! which Parquet cannot store.
//!
//! A column is named as its path; the whole message (`""`) is named as the
//! message's full name.
//!
//! ```
//! use recordwire::schema::{schema_columns, ColumnOptions, Schema};
//!
//! let dir = tempfile::tempdir()?;
//! let proto = dir.path().join("t.proto");
//! std::fs::write(
//!     &proto,
//!     "syntax = \"proto3\"; package demo;
//!      message Track { repeated float x = 1; }
//!      message Scene { string id = 1; repeated Track tracks = 2; }",
//! )?;
//! let schema = Schema::from_proto(&[&proto], &[dir.path()], "demo.Scene")?;
//! // id = "a"; tracks = [{x: [1.0]}, {x: []}]
//! let record: &[u8] = b"\x0a\x01a\x12\x06\x0a\x04\x00\x00\x80\x3f\x12\x00";
//! let batch = schema_columns(
//!     &schema,
//!     &["id", "tracks.x"],
//!     [(record, 0)],
//!     &ColumnOptions::default(),
//! )?;
//! assert_eq!(batch.num_rows(), 1);
//! assert_eq!(
//!     batch.schema().field(1).data_type().to_string(),
//!     "LargeList(non-null LargeList(non-null Float32))"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod build;
mod walk;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Fields, SchemaRef};

use super::plan::{FieldKind, FieldPlan, Plan};
use super::Schema;
use crate::error::Error;
use build::Col;

/// How [`Columns`] maps values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ColumnOptions {
    /// Enums as their names (`LargeUtf8`) instead of their numbers (`Int32`).
    pub enum_names: bool,
}

impl ColumnOptions {
    /// Options with [`enum_names`](Self::enum_names) set to `yes`.
    pub fn with_enum_names(mut self, yes: bool) -> Self {
        self.enum_names = yes;
        self
    }
}

/// One value of a field (without its repetition).
#[derive(Debug, Clone)]
enum Node {
    Scalar(FieldKind),
    /// A message of a type already being built around it: its bytes.
    Cut,
    /// A whole message: each field (index into the plan's fields) and how it
    /// is taken.
    Struct {
        m: usize,
        members: Vec<(usize, Sel)>,
    },
    /// A path step: of message `m`, only field `index`, taken as `sel`.
    Pick {
        m: usize,
        index: usize,
        sel: Box<Sel>,
    },
}

/// How a field is taken from its message.
#[derive(Debug, Clone)]
enum Sel {
    /// A singular field: null where absent (`nullable`) or its zero.
    Single {
        nullable: bool,
        node: Node,
    },
    Repeated(Node),
    Map {
        key: FieldKind,
        value: Node,
    },
}

/// Paths of a schema compiled to their Arrow columns: made once, then
/// [`Columns::decode`] any number of batches of records.
#[derive(Debug, Clone)]
pub struct Columns {
    schema: Schema,
    sels: Vec<Sel>,
    arrow: SchemaRef,
    options: ColumnOptions,
}

/// Records decoded by `paths` of `schema`: one column per path, one row per
/// record (`records`: each record's bytes and the absolute offset of its
/// first byte, for errors). See the module for the mapping.
///
/// Errors: `usage_error` for a path the schema does not have (naming the
/// step and the fields there are); `decode_error` at the byte offset of a
/// record that is not a well-formed message where a path reads it.
pub fn schema_columns<'a>(
    schema: &Schema,
    paths: &[&str],
    records: impl IntoIterator<Item = (&'a [u8], u64)>,
    options: &ColumnOptions,
) -> Result<RecordBatch, Error> {
    Columns::new(schema, paths, options)?.decode(records)
}

impl Columns {
    /// Compiles `paths` of `schema` (see [`schema_columns`] for the errors).
    pub fn new(schema: &Schema, paths: &[&str], options: &ColumnOptions) -> Result<Columns, Error> {
        let plan = schema.plan();
        let mut sels = Vec::with_capacity(paths.len());
        let mut fields = Vec::with_capacity(paths.len());
        for &path in paths {
            let sel = compile_path(plan, schema.message_name(), path)?;
            let (data_type, nullable) = sel_type(plan, &sel, options);
            let name = if path.is_empty() {
                schema.message_name()
            } else {
                path
            };
            fields.push(Field::new(name, data_type, nullable));
            sels.push(sel);
        }
        Ok(Columns {
            schema: schema.clone(),
            sels,
            arrow: Arc::new(arrow_schema::Schema::new(fields)),
            options: options.clone(),
        })
    }

    /// The Arrow schema of the batches [`Columns::decode`] gives.
    pub fn arrow_schema(&self) -> SchemaRef {
        Arc::clone(&self.arrow)
    }

    /// One row per record of `records` (bytes, absolute offset of the first).
    pub fn decode<'a>(
        &self,
        records: impl IntoIterator<Item = (&'a [u8], u64)>,
    ) -> Result<RecordBatch, Error> {
        let arrow_err = |e: arrow_schema::ArrowError| {
            Error::io(std::io::Error::other(format!("schema columns: {e}")))
        };
        let mut cols = self
            .arrow
            .fields()
            .iter()
            .map(|f| Col::new(f.data_type(), f.is_nullable()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(arrow_err)?;
        let walker = walk::Walker {
            plan: self.schema.plan(),
            enum_names: self.options.enum_names,
        };
        let mut rows = 0usize;
        for (record, base) in records {
            for (sel, col) in self.sels.iter().zip(cols.iter_mut()) {
                walker.root(sel, col, record, base)?;
            }
            rows += 1;
        }
        let arrays = cols
            .into_iter()
            .map(Col::finish)
            .collect::<Result<Vec<_>, _>>()
            .map_err(arrow_err)?;
        RecordBatch::try_new_with_options(
            Arc::clone(&self.arrow),
            arrays,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(arrow_err)
    }
}

/// The kind of a field's values, in words, for errors.
fn kind_name(f: &FieldPlan) -> String {
    let base = match f.kind {
        FieldKind::Message(_) | FieldKind::Group(_) => "a message",
        FieldKind::Enum(_) => "an enum",
        FieldKind::String { .. } => "a string",
        FieldKind::Bytes => "bytes",
        FieldKind::Bool => "a bool",
        _ => "a number",
    };
    if f.map {
        "a map".to_owned()
    } else if f.repeated {
        format!("repeated, {base}")
    } else {
        base.to_owned()
    }
}

/// The selection of `path` in the root message (`root`: its name, for
/// errors).
fn compile_path(plan: &Plan, root: &str, path: &str) -> Result<Sel, Error> {
    if path.is_empty() {
        return Ok(Sel::Single {
            nullable: false,
            node: whole(plan, 0, &mut Vec::new()),
        });
    }
    let steps: Vec<&str> = path.split('.').collect();
    Ok(Sel::Single {
        nullable: false,
        node: step(plan, 0, root, path, &steps)?,
    })
}

/// Steps `steps` of `path` from message `m` (named `at`): of `m`, the field
/// of the first step, taken whole at the last step, else as the value the
/// rest of the path gives in it (a list of them through a repeated field).
fn step(plan: &Plan, m: usize, at: &str, path: &str, steps: &[&str]) -> Result<Node, Error> {
    let msg = &plan.messages[m];
    let Some((&name, rest)) = steps.split_first() else {
        return Err(Error::usage(format!("schema columns: empty path {path:?}")));
    };
    let Some(index) = msg.fields.iter().position(|f| f.name == name) else {
        let names: Vec<&str> = msg.fields.iter().map(|f| f.name.as_str()).collect();
        return Err(Error::usage(format!(
            "schema columns: path {path:?}: {at} has no field {name:?} (its fields: {})",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let f = &msg.fields[index];
    let sel = if rest.is_empty() {
        field_sel(plan, f, &mut Vec::new())
    } else {
        let sub = match f.kind {
            FieldKind::Message(sub) | FieldKind::Group(sub) if !f.map => sub,
            _ => {
                return Err(Error::usage(format!(
                    "schema columns: path {path:?}: {at}.{name} is {}: a path goes on only through message fields",
                    kind_name(f)
                )))
            }
        };
        let node = step(plan, sub, &format!("{at}.{name}"), path, rest)?;
        if f.repeated {
            Sel::Repeated(node)
        } else {
            Sel::Single {
                nullable: true,
                node,
            }
        }
    };
    Ok(Node::Pick {
        m,
        index,
        sel: Box::new(sel),
    })
}

/// How field `f` is taken whole (`stack`: the message types being built
/// around it).
fn field_sel(plan: &Plan, f: &FieldPlan, stack: &mut Vec<usize>) -> Sel {
    if f.map {
        if let FieldKind::Message(entry) = f.kind {
            let e = &plan.messages[entry];
            if let (Some(k), Some(v)) = (e.field(1), e.field(2)) {
                return Sel::Map {
                    key: e.fields[k].kind,
                    value: value_node(plan, e.fields[v].kind, stack),
                };
            }
        }
    }
    let node = value_node(plan, f.kind, stack);
    if f.repeated {
        Sel::Repeated(node)
    } else {
        Sel::Single {
            nullable: f.presence,
            node,
        }
    }
}

fn value_node(plan: &Plan, kind: FieldKind, stack: &mut Vec<usize>) -> Node {
    match kind {
        FieldKind::Message(m) | FieldKind::Group(m) => whole(plan, m, stack),
        k => Node::Scalar(k),
    }
}

/// Message `m` as a struct of all its fields, or its bytes when it is in
/// `stack` already.
fn whole(plan: &Plan, m: usize, stack: &mut Vec<usize>) -> Node {
    if stack.contains(&m) {
        return Node::Cut;
    }
    stack.push(m);
    let members = plan.messages[m]
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (i, field_sel(plan, f, stack)))
        .collect();
    stack.pop();
    Node::Struct { m, members }
}

fn scalar_type(plan: &Plan, kind: FieldKind, options: &ColumnOptions) -> DataType {
    let _ = plan;
    match kind {
        FieldKind::Double => DataType::Float64,
        FieldKind::Float => DataType::Float32,
        FieldKind::Int32 | FieldKind::Sint32 | FieldKind::Sfixed32 => DataType::Int32,
        FieldKind::Int64 | FieldKind::Sint64 | FieldKind::Sfixed64 => DataType::Int64,
        FieldKind::Uint32 | FieldKind::Fixed32 => DataType::UInt32,
        FieldKind::Uint64 | FieldKind::Fixed64 => DataType::UInt64,
        FieldKind::Bool => DataType::Boolean,
        FieldKind::String { .. } => DataType::LargeUtf8,
        FieldKind::Enum(_) if options.enum_names => DataType::LargeUtf8,
        FieldKind::Enum(_) => DataType::Int32,
        FieldKind::Bytes | FieldKind::Message(_) | FieldKind::Group(_) => DataType::LargeBinary,
    }
}

/// The Arrow type of a node's values, and whether they may be null.
fn node_type(plan: &Plan, node: &Node, options: &ColumnOptions) -> (DataType, bool) {
    match node {
        Node::Scalar(kind) => (scalar_type(plan, *kind, options), false),
        Node::Cut => (DataType::LargeBinary, false),
        Node::Struct { m, members } => {
            let fields: Fields = members
                .iter()
                .map(|(i, sel)| {
                    let (t, n) = sel_type(plan, sel, options);
                    Field::new(plan.messages[*m].fields[*i].name.as_str(), t, n)
                })
                .collect();
            (DataType::Struct(fields), false)
        }
        Node::Pick { sel, .. } => sel_type(plan, sel, options),
    }
}

/// The Arrow type of a field taken as `sel`, and whether it may be null.
fn sel_type(plan: &Plan, sel: &Sel, options: &ColumnOptions) -> (DataType, bool) {
    match sel {
        Sel::Single { nullable, node } => {
            let (t, n) = node_type(plan, node, options);
            (t, *nullable || n)
        }
        Sel::Repeated(node) => {
            let (t, n) = node_type(plan, node, options);
            (
                DataType::LargeList(Arc::new(Field::new("item", t, n))),
                false,
            )
        }
        Sel::Map { key, value } => {
            let (vt, vn) = node_type(plan, value, options);
            let entries = Fields::from(vec![
                Field::new("key", scalar_type(plan, *key, options), false),
                Field::new("value", vt, vn),
            ]);
            let field = Field::new("entries", DataType::Struct(entries), false);
            (DataType::Map(Arc::new(field), false), false)
        }
    }
}
