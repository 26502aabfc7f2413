//! Dashboard speed with a large database: seeds one million samples through the Store (once;
//! a rerun reuses the file), starts the real server on it, then times sequential requests per
//! page and prints median, p99 and max. docs/performance.md records the figures.
//!
//! ```text
//! cargo run --release --example dashboard_load -- [--samples 1000000] [--requests 300] [--db FILE]
//! ```

#[path = "../tests/support/dashboard_seed.rs"]
#[allow(
    dead_code,
    reason = "the seeds of the page tests this example does not use"
)]
mod dashboard_seed;

use std::time::{Duration, Instant};

use clap::Parser;

#[derive(Parser)]
struct Cli {
    /// Samples to seed (25 benchmarks × 10 rounds × 2 sides per comparison).
    #[arg(long, default_value_t = 1_000_000)]
    samples: usize,
    /// Timed requests per page, after 10 untimed ones.
    #[arg(long, default_value_t = 300)]
    requests: usize,
    /// SQLite file; seeded when it does not exist yet.
    #[arg(long, default_value = "target/dashboard-load.db")]
    db: String,
}

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: benchgate_server::ServeArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let url = format!("sqlite://{}", cli.db);
    let fresh = !std::path::Path::new(&cli.db).exists();
    let store = benchgate_store::connect(&url).await?;
    store.migrate().await?;
    if fresh {
        let started = Instant::now();
        dashboard_seed::seed_bulk(store.as_ref(), cli.samples).await;
        dashboard_seed::seed_small(store.as_ref()).await;
        eprintln!("seeded in {:.1} s", started.elapsed().as_secs_f64());
    }
    let newest_bulk = store
        .recent_comparisons(10)
        .await?
        .iter()
        .find(|c| c.pr_number.is_some_and(|n| n >= 1000))
        .map(|c| c.id.0)
        .expect("bulk comparisons");
    drop(store);

    let serve = Serve::parse_from(["serve", "--listen", "127.0.0.1:0", "--database-url", &url]);
    let server = benchgate_server::start(serve.args, std::future::pending()).await?;
    let base = format!("http://{}", server.addr);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();

    let pages = [
        "/".to_string(),
        "/runners/bulk-0".into(),
        format!("/comparisons/{newest_bulk}"),
        "/comparisons/1".into(),
        "/queue".into(),
        "/api/v1/runners".into(),
        "/api/v1/runners/bulk-0".into(),
        "/api/v1/queue".into(),
        "/api/v1/comparisons?limit=50".into(),
        format!("/api/v1/comparisons/{newest_bulk}/samples.csv"),
        "/metrics".into(),
    ];
    println!("| page | median ms | p99 ms | max ms | bytes |");
    println!("|---|---:|---:|---:|---:|");
    for page in &pages {
        let url = format!("{base}{page}");
        let mut bytes = 0;
        for _ in 0..10 {
            bytes = client
                .get(&url)
                .send()
                .await?
                .error_for_status()?
                .bytes()
                .await?
                .len();
        }
        let mut times: Vec<Duration> = Vec::with_capacity(cli.requests);
        for _ in 0..cli.requests {
            let t = Instant::now();
            let body = client
                .get(&url)
                .send()
                .await?
                .error_for_status()?
                .bytes()
                .await?;
            times.push(t.elapsed());
            // Ages ("9 s ago") change the size by a byte now and then; the last size is shown.
            bytes = body.len();
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let at =
            |q: f64| times[((q * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1];
        println!(
            "| `{page}` | {:.2} | {:.2} | {:.2} | {bytes} |",
            ms(at(0.5)),
            ms(at(0.99)),
            ms(*times.last().unwrap()),
        );
    }
    Ok(())
}
