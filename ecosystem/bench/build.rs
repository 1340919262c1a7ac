// The gRPC code for counter.proto (needs protoc).
fn main() {
    tonic_build::compile_protos("counter.proto").expect("protoc compiles counter.proto");
}
