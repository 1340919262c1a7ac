// Generates the gRPC server and client from ../proto/counter.proto (needs
// protoc: Debian's protobuf-compiler).
fn main() {
    tonic_build::compile_protos("../proto/counter.proto")
        .expect("protoc compiles ../proto/counter.proto");
}
