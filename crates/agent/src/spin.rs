//! `benchgate spin`: a deterministic CPU-bound workload whose time is proportional to its
//! iteration count. Tests and the demo benchmark it, so the "slower by a known factor" of a
//! head revision is simply a larger count.

/// Flags of the hidden `benchgate spin` subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct SpinArgs {
    /// Rounds of the xorshift generator to compute.
    #[arg(long, default_value_t = 10_000_000)]
    pub iterations: u64,
}

/// Runs `iterations` steps of xorshift64 and returns the final state. Each step depends on the
/// previous one, so the loop can be neither vectorised nor skipped: the time is linear in the
/// count on any optimisation level.
pub fn spin(iterations: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// Runs the workload and prints its checksum (printing keeps the work observable).
pub fn run(args: &SpinArgs) {
    println!("{}", spin(std::hint::black_box(args.iterations)));
}

#[cfg(test)]
mod tests {
    use super::spin;

    #[test]
    fn is_deterministic_and_depends_on_the_count() {
        assert_eq!(spin(1000), spin(1000));
        assert_ne!(spin(1000), spin(1001));
        assert_eq!(spin(0), 0x9E37_79B9_7F4A_7C15);
    }
}
