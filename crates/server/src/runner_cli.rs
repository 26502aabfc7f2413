//! `benchgate runner add | list | revoke`: register benchmark machines and manage their tokens.

use anyhow::Context;

/// Flags of `benchgate runner`.
#[derive(Debug, clap::Args)]
pub struct RunnerArgs {
    /// Database URL: `sqlite://FILE` or `postgres://USER@HOST/DB` (the server's database).
    #[arg(
        long,
        global = true,
        env = "BENCHGATE_DATABASE_URL",
        default_value = "sqlite://benchgate.db"
    )]
    pub database_url: String,

    #[command(subcommand)]
    pub command: RunnerCommand,
}

/// What to do with runners.
#[derive(Debug, clap::Subcommand)]
pub enum RunnerCommand {
    /// Register a runner and print its token (shown this once).
    Add {
        /// A unique name, e.g. the machine's host name.
        name: String,
        /// Labels whose jobs it runs, comma-separated (the `runner` of `.benchgate.toml`).
        #[arg(long, value_delimiter = ',', required = true)]
        labels: Vec<String>,
    },
    /// List runners: name, labels, last seen, revoked.
    List,
    /// Revoke a runner's token; its agent gets 401 from then on.
    Revoke {
        /// The runner's name.
        name: String,
    },
}

/// Runs `benchgate runner …` (migrating the database first, so a fresh one works).
pub async fn run(args: RunnerArgs) -> anyhow::Result<()> {
    let store = benchgate_store::connect(&args.database_url).await?;
    store.migrate().await.context("applying migrations")?;
    match args.command {
        RunnerCommand::Add { name, labels } => {
            let labels: Vec<String> = labels
                .into_iter()
                .map(|l| l.trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect();
            anyhow::ensure!(!labels.is_empty(), "give at least one label with --labels");
            let added = store
                .add_runner(&name, &labels)
                .await
                .with_context(|| format!("cannot add runner {name:?}"))?;
            println!("runner {name} added with labels {}", labels.join(","));
            println!("token: {}", added.token.expose());
            println!(
                "This token is shown once. On the runner machine, put it in a file only the \
                 agent's user can read (chmod 600) and start `benchgate agent --token-file FILE` \
                 (or BENCHGATE_TOKEN_FILE=FILE), or set BENCHGATE_TOKEN in the agent's \
                 environment. Never pass it on the command line: other users can read that."
            );
        }
        RunnerCommand::List => {
            let runners = store.list_runners().await?;
            println!(
                "{:<24} {:<32} {:<22} REVOKED",
                "NAME", "LABELS", "LAST SEEN"
            );
            for r in runners {
                let when = |t: Option<chrono::DateTime<chrono::Utc>>| {
                    t.map_or_else(
                        || "-".to_owned(),
                        |t| t.format("%Y-%m-%d %H:%M:%SZ").to_string(),
                    )
                };
                println!(
                    "{:<24} {:<32} {:<22} {}",
                    r.name,
                    r.labels.join(","),
                    when(r.last_seen_at),
                    when(r.revoked_at)
                );
            }
        }
        RunnerCommand::Revoke { name } => {
            store
                .revoke_runner(&name)
                .await
                .with_context(|| format!("cannot revoke runner {name:?}"))?;
            println!("runner {name} revoked");
        }
    }
    Ok(())
}
