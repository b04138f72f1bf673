//! Generates Rust types from the `.proto` schemas in `proto/` with
//! prost-build, using the vendored `protoc` (no system protoc needed).
//! The native format's schema is the log crate's
//! (`crates/underlay-log/proto/underlay.proto`, built by its own build.rs).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["proto/thesis.proto", "proto/ssl.proto"];
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc);
    config.compile_protos(&protos, &["proto"])?;
    Ok(())
}
