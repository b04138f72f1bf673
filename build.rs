//! Generates Rust types from the `.proto` schemas in `proto/` with
//! prost-build, using the vendored `protoc` (no system protoc needed).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["proto/underlay.proto", "proto/thesis.proto", "proto/ssl.proto"];
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc);
    config.compile_protos(&protos, &["proto"])?;
    Ok(())
}
