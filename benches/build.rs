//! The code prost-build generates for Waymo's `scenario.proto` (the peer
//! "prost's generated code" of the `schema` bench), compiled with protox so
//! that no `protoc` is needed.

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/schema/waymo");
    println!("cargo:rerun-if-changed={}", root.display());
    let set = protox::compile(["waymo_open_dataset/protos/scenario.proto"], [&root])
        .expect("Waymo's protos compile");
    prost_build::Config::new()
        .compile_fds(set)
        .expect("prost-build generates the Scenario types");
}
