//! Sizing the demo's workload on this machine so that a whole head run — process start-up
//! included — takes the known factor times as long as a base run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use benchgate_harness::sandbox::Sandbox;

/// Iterations of `benchgate spin` for each side.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    pub base_iterations: u64,
    pub head_iterations: u64,
}

/// Measures start-up and per-iteration cost with the real command the agent will run, then
/// solves `overhead + head·cost = factor · (overhead + base·cost)` with base ≈ `target`.
pub fn size(target: Duration, factor: f64) -> anyhow::Result<Workload> {
    let exe = std::env::current_exe().context("locating the benchgate binary")?;
    // The demo's agent runs with `--sandbox auto`: when bwrap works here, its start-up is part
    // of every run, so it must be part of the measured overhead too or the factor is diluted.
    let sandbox = Sandbox::from_path()
        .ok()
        .filter(|s| s.probe().is_ok())
        .map(|s| s.show(&exe));
    let scratch = std::env::temp_dir();
    // The same shape as the benchmark the agent runs (`sh bench.sh` → exec), so start-up is
    // measured as the agent will see it.
    let run = |iterations: u64| -> anyhow::Result<Duration> {
        let shell = [
            "sh".to_owned(),
            "-c".to_owned(),
            format!("exec '{}' spin --iterations {iterations}", exe.display()),
        ];
        let argv = match &sandbox {
            Some(sandbox) => sandbox.argv(&scratch, &shell),
            None => shell.to_vec(),
        };
        let start = Instant::now();
        let status = Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(Stdio::null())
            .status()
            .context("running the workload")?;
        if !status.success() {
            bail!("the workload exited with {status}");
        }
        Ok(start.elapsed())
    };
    // Medians, not minima: the factor must hold for a typical run, not the luckiest one.
    let typical = |iterations: u64, tries: usize| -> anyhow::Result<Duration> {
        let mut times = (0..tries)
            .map(|_| run(iterations))
            .collect::<anyhow::Result<Vec<_>>>()?;
        times.sort();
        Ok(times[tries / 2])
    };
    let overhead = typical(0, 7)?;
    let mut probe = 1_000_000u64;
    let mut work = typical(probe, 5)?.saturating_sub(overhead);
    while work < Duration::from_millis(30) && probe < 1 << 40 {
        probe *= 2;
        work = typical(probe, 5)?.saturating_sub(overhead);
    }
    let cost = work.as_secs_f64().max(1e-9) / probe as f64;
    let base_work = (target.as_secs_f64() - overhead.as_secs_f64()).max(target.as_secs_f64() / 2.0);
    let whole_base = overhead.as_secs_f64() + base_work;
    let head_work = factor * whole_base - overhead.as_secs_f64();
    if head_work <= 0.0 {
        bail!("--factor {factor} is too small for this machine's process start-up");
    }
    Ok(Workload {
        base_iterations: (base_work / cost).round() as u64,
        head_iterations: (head_work / cost).round() as u64,
    })
}
