// The gRPC code for ../proto/counter.proto (needs protoc). bench.sh copies
// the proto beside its Tokio build of this crate the same way.
fn main() {
    tonic_build::compile_protos("../proto/counter.proto")
        .expect("protoc compiles ../proto/counter.proto");
}
