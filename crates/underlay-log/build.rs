//! With the `reference` feature, generates the native format's Rust types
//! (`src/proto.rs` includes them) from `proto/underlay.proto` with
//! prost-build, using the vendored `protoc` (no system protoc needed).
//! Without it there is nothing to build.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/underlay.proto";
    println!("cargo:rerun-if-changed={proto}");
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "reference")]
    {
        let mut config = prost_build::Config::new();
        config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
        config.compile_protos(&[proto], &["proto"])?;
    }
    Ok(())
}
