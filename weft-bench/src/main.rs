//! Head-to-head harness against Tokio. Filled in by the benchmark issue.
fn main() {
    println!("weft-bench: no workloads yet");
}
