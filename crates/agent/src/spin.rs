//! `benchgate spin`: a deterministic CPU-bound workload whose time is proportional to its
//! iteration count. Tests and the demo benchmark it, so the "slower by a known factor" of a
//! head revision is simply a larger count.

/// Flags of the hidden `benchgate spin` subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct SpinArgs {
    /// Rounds of the xorshift generator to compute.
    #[arg(long, default_value_t = 10_000_000)]
    pub iterations: u64,
    /// Also print a modelled time, as a libtest bench line `test spin ... bench: T ns/iter`,
    /// with T = iterations ns × a log-normal factor of this relative spread (0.01 = 1%).
    /// Tests whose verdicts must not depend on how loaded the machine is gate on it.
    #[arg(long, value_name = "SPREAD", value_parser = spread)]
    pub modelled_spread: Option<f64>,
    /// Do this factor of the work (1.05 = 5% more): a planted canary sets it on head's runs.
    #[arg(long, env = "BENCHGATE_PLANTED", default_value_t = 1.0, value_parser = factor)]
    pub planted: f64,
    /// A modelled layout effect: the time also scales by a factor between 0.96 and 1.04 that
    /// depends only on the text of this file (a build step writes its salt there), so two
    /// builds with different salts differ as two code layouts would. Tests use it.
    #[arg(long, value_name = "FILE")]
    pub layout_file: Option<std::path::PathBuf>,
    /// Instead of a fixed count, spin on this many threads until `--for-ms` passed: work that
    /// ends on the clock, as a harness that picks its iteration count from measured time does,
    /// so its instruction count differs from run to run. Tests of the exact tier use it.
    #[arg(long, value_name = "N", requires = "for_ms")]
    pub threads: Option<usize>,
    /// How long `--threads` spin, in milliseconds.
    #[arg(long, value_name = "MS", requires = "threads")]
    pub for_ms: Option<u64>,
}

fn factor(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (0.01..=100.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "expected a factor of work between 0.01 and 100, found {text:?}"
        )),
    }
}

/// The modelled layout factor of a salt: 0.96 to 1.04, the same for the same text.
pub fn layout_factor(salt: &str) -> f64 {
    let h = salt.trim().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    0.96 + 0.08 * ((h % 10_001) as f64 / 10_000.0)
}

fn spread(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..=1.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "expected a fraction between 0 and 1, found {text:?}"
        )),
    }
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

/// Spins on `threads` threads in chunks of 1,000 steps until `limit` passed; the total steps
/// taken, which depends on the clock and the scheduler.
pub fn spin_until(threads: usize, limit: std::time::Duration) -> u64 {
    let deadline = std::time::Instant::now() + limit;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(move || {
                    let mut steps = 0u64;
                    while std::time::Instant::now() < deadline {
                        std::hint::black_box(spin(std::hint::black_box(1000)));
                        steps += 1000;
                    }
                    steps
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    })
}

/// Runs the workload and prints its checksum (printing keeps the work observable).
pub fn run(args: &SpinArgs) {
    if let (Some(threads), Some(ms)) = (args.threads, args.for_ms) {
        println!(
            "{}",
            spin_until(threads, std::time::Duration::from_millis(ms))
        );
        return;
    }
    let layout = args.layout_file.as_ref().map_or(1.0, |f| {
        layout_factor(&std::fs::read_to_string(f).unwrap_or_default())
    });
    let iterations = (args.iterations as f64 * args.planted * layout).round() as u64;
    println!("{}", spin(std::hint::black_box(iterations)));
    if let Some(spread) = args.modelled_spread {
        let ns = modelled_ns(iterations, spread, rand::random(), rand::random());
        println!("test spin ... bench: {ns:.1} ns/iter");
    }
}

/// `iterations` ns scaled by exp(spread · z), z standard normal from two uniforms (Box–Muller).
fn modelled_ns(iterations: u64, spread: f64, u1: f64, u2: f64) -> f64 {
    let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    iterations as f64 * (spread * z).exp()
}

#[cfg(test)]
mod tests {
    use super::{modelled_ns, spin};

    #[test]
    fn the_layout_factor_is_fixed_per_salt_and_within_four_percent() {
        use super::layout_factor;
        assert_eq!(layout_factor("a1"), layout_factor("a1\n"));
        let factors: Vec<f64> = (0..50)
            .map(|i| layout_factor(&format!("salt{i}")))
            .collect();
        assert!(factors.iter().all(|f| (0.96..=1.04).contains(f)));
        let spread = factors.iter().cloned().fold(f64::NAN, f64::max)
            - factors.iter().cloned().fold(f64::NAN, f64::min);
        assert!(spread > 0.04, "{spread}");
    }

    #[test]
    fn is_deterministic_and_depends_on_the_count() {
        assert_eq!(spin(1000), spin(1000));
        assert_ne!(spin(1000), spin(1001));
        assert_eq!(spin(0), 0x9E37_79B9_7F4A_7C15);
    }

    #[test]
    fn the_modelled_time_scales_with_the_count_and_spreads_as_asked() {
        // u2 = 0 takes z = sqrt(-2 ln(1 - u1)): u1 = 1 - e^{-1/2} gives z = 1.
        let u1 = 1.0 - (-0.5f64).exp();
        assert!((modelled_ns(1000, 0.02, u1, 0.0) - 1000.0 * 0.02f64.exp()).abs() < 1e-9);
        assert_eq!(modelled_ns(1000, 0.0, u1, 0.0), 1000.0);
        // u1 = 0 gives z = 0: no noise at all.
        assert_eq!(modelled_ns(2000, 0.5, 0.0, 0.3), 2000.0);
    }

    #[test]
    fn the_modelled_log_times_have_the_asked_spread() {
        // A fixed stream of uniforms (an LCG), so the check is exact to repeat.
        let mut state: u64 = 42;
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let logs: Vec<f64> = (0..100_000)
            .map(|_| (modelled_ns(1_000_000, 0.01, uniform(), uniform()) / 1e6).ln())
            .collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
        assert!(mean.abs() < 1e-4, "mean {mean}");
        assert!((var.sqrt() / 0.01 - 1.0).abs() < 0.02, "sd {}", var.sqrt());
    }
}
