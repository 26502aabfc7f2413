//! A CPU-bound workload for A/A measurements (docs/performance.md): a fixed number of rounds of
//! an xorshift generator, so every run does the same work and the spread is the machine's.
//! Usage: `spin [ITERATIONS]` (default 50 million).

fn main() {
    let iterations: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50_000_000);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    // Printing the result keeps the loop from being optimised away.
    println!("{x}");
}
