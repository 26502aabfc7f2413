//! The `benchgate` command line: subcommands only; each calls into a crate.

use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod demo;

/// Gate pull requests on benchmark claims: interleaved base/head rounds on dedicated runners,
/// each runner's own A/A noise floor, and intervals that stay valid however often you look.
#[derive(Parser)]
#[command(name = "benchgate", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server: webhooks, agent API, dashboard. Applies migrations first.
    Serve(Box<benchgate_server::ServeArgs>),
    /// Apply database migrations and exit.
    Migrate(MigrateArgs),
    // The argument structs' own doc comments give `compare --help` and `analyze --help` their
    // examples.
    #[command(after_help = benchgate_harness::cli::EXIT_CODES_HELP)]
    Compare(Box<benchgate_harness::cli::CompareArgs>),
    #[command(after_help = benchgate_harness::cli::EXIT_CODES_HELP)]
    Analyze(benchgate_harness::cli::AnalyzeArgs),
    /// Run a benchmark runner: claim jobs from the server, build both sides, run and upload rounds.
    Agent(AgentCommand),
    /// A deterministic CPU-bound workload (time proportional to --iterations), for tests and demos.
    #[command(hide = true)]
    Spin(benchgate_agent::SpinArgs),
    /// See benchgate work in one command: a throwaway repository whose head is slower by a
    /// known factor, a server, an agent, an A/A calibration, the comparison and its PR comment.
    Demo(demo::DemoArgs),
    /// Register, list and revoke benchmark runners (machines running `benchgate agent`).
    Runner(benchgate_server::runner_cli::RunnerArgs),
    /// Check a repository's `.benchgate.toml` locally.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// GitLab set-up: whether a project and its token are ready for `serve --gitlab-url`.
    #[command(subcommand)]
    Gitlab(GitlabCommand),
}

#[derive(Subcommand)]
enum GitlabCommand {
    /// Check a GitLab project before its hook points at benchgate: the token (user, `api`
    /// scope, expiry), the token's role in the project (Developer or above for commit
    /// statuses) and, with --hook-url, the hook's events. Exit 0 when nothing needs fixing, 1
    /// when something does, 2 when GitLab could not be asked.
    Check(GitlabCheckArgs),
}

#[derive(clap::Args)]
struct GitlabCheckArgs {
    /// The GitLab instance: gitlab.com or a self-managed host.
    #[arg(
        long,
        env = "BENCHGATE_GITLAB_URL",
        default_value = "https://gitlab.com"
    )]
    url: String,
    /// The project: `group/name` or its numeric id.
    #[arg(long)]
    project: String,
    /// A file holding the access token (a project or group access token, or a bot user's
    /// personal one). Without it the token comes from BENCHGATE_GITLAB_TOKEN; never a flag.
    #[arg(long, env = "BENCHGATE_GITLAB_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// Where the project's hook should deliver: benchgate's `/webhooks/gitlab` URL.
    #[arg(long, value_name = "URL")]
    hook_url: Option<String>,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Validate FILE and print its suites, runner labels and rules; exit 0 when valid, 2 with
    /// the error's line and column when not.
    Check {
        /// The file, e.g. `.benchgate.toml`.
        file: std::path::PathBuf,
    },
}

/// `benchgate agent`: the agent's own flags and how it logs.
#[derive(clap::Args)]
struct AgentCommand {
    #[command(flatten)]
    args: benchgate_agent::AgentArgs,
    /// Log format: `pretty` for a terminal, `json` (one object per line) for a log shipper.
    #[arg(long, env = "BENCHGATE_LOG_FORMAT", value_enum, default_value_t = benchgate_server::LogFormat::Pretty)]
    log_format: benchgate_server::LogFormat,
}

#[derive(clap::Args)]
struct MigrateArgs {
    /// Database URL: `sqlite://FILE` or `postgres://USER@HOST/DB`.
    #[arg(
        long,
        env = "BENCHGATE_DATABASE_URL",
        default_value = "sqlite://benchgate.db"
    )]
    database_url: String,
}

fn main() -> ExitCode {
    let matches = empty_env_is_unset(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Some(("serve", serve)) = matches.subcommand()
        && let Err(e) = benchgate_server::refuse_secrets_on_command_line(serve)
    {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    // Local measurement commands are synchronous: no runtime, no threads beside the benchmark.
    let cli = match cli.command {
        Command::Compare(args) => {
            return match local_plan(args.config.as_deref(), args.suite.as_deref()) {
                Ok(plan) => benchgate_harness::cli::run_compare(*args, plan),
                Err(e) => benchgate_harness::cli::usage_error(&e),
            };
        }
        Command::Analyze(args) => {
            return match local_plan(args.config.as_deref(), args.suite.as_deref()) {
                Ok(plan) => benchgate_harness::cli::run_analyze(args, plan),
                Err(e) => benchgate_harness::cli::usage_error(&e),
            };
        }
        Command::Spin(args) => {
            benchgate_agent::spin::run(&args);
            return ExitCode::SUCCESS;
        }
        Command::Config(ConfigCommand::Check { file }) => return config_check(&file),
        command => Cli { command },
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    };
    // Dropping the runtime would wait for every blocking thread, among them a benchmark run an
    // agent's drain abandoned; the drain's bound must be the process's.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => {
            init_tracing(args.log_format);
            let server =
                benchgate_server::start(*args, benchgate_server::shutdown_signal()).await?;
            server.wait().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(_) | Command::Analyze(_) | Command::Spin(_) | Command::Config(_) => {
            unreachable!("handled before the runtime")
        }
        Command::Gitlab(GitlabCommand::Check(args)) => Ok(gitlab_check(args).await),
        Command::Agent(AgentCommand { args, log_format }) => {
            init_tracing(log_format);
            match benchgate_agent::run(args).await {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("error: {e}");
                    Ok(ExitCode::from(e.exit_code()))
                }
            }
        }
        Command::Demo(args) => {
            init_tracing_at(
                benchgate_server::LogFormat::Pretty,
                "warn,benchgate_server::github_app=error",
            );
            demo::run(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Runner(args) => {
            benchgate_server::runner_cli::run(args).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate(args) => {
            init_tracing(benchgate_server::LogFormat::Pretty);
            let store = benchgate_store::connect(&args.database_url).await?;
            store.migrate().await.context("applying migrations")?;
            println!(
                "migrations applied to {}",
                benchgate_store::mask_url(&args.database_url)
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An empty `BENCHGATE_*` variable counts as unset: compose files and env files write
/// `BENCHGATE_GITHUB_APP_ID=` for "no App", which would otherwise be an invalid value.
fn empty_env_is_unset(cmd: clap::Command) -> clap::Command {
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let cmd = cmd.mut_args(|arg| match arg.get_env() {
        Some(name) if std::env::var_os(name).is_some_and(|v| v.is_empty()) => arg.env(None),
        _ => arg,
    });
    subcommands.iter().fold(cmd, |cmd, name| {
        cmd.mut_subcommand(name, empty_env_is_unset)
    })
}

/// `--config FILE [--suite NAME]` of `compare` and `analyze`: the suite as the scheduler stores
/// it for a pull request (build, run, rules, gate).
fn local_plan(
    config: Option<&std::path::Path>,
    suite: Option<&str>,
) -> Result<Option<benchgate_api::agent::ComparisonConfig>, String> {
    config
        .map(|path| benchgate_github::repo_config::local_plan(path, suite))
        .transpose()
}

/// `benchgate config check FILE`: the resolved config on stdout and warnings on stderr, or the
/// located error on stderr.
fn config_check(file: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    match benchgate_github::parse_repo_config(&text) {
        Ok(config) => {
            print!("{}", config.describe());
            let suites = config
                .suites
                .iter()
                .map(|s| (s.name().to_owned(), config.comparison_config(s).benchmark));
            let dir = file.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = dir.unwrap_or(std::path::Path::new("."));
            for warning in benchgate_harness::cli::config_check::warnings(suites, dir) {
                eprintln!("warning: {warning}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}", e.in_file(&file.display().to_string()));
            ExitCode::from(2)
        }
    }
}

/// Logs to stderr; `RUST_LOG` overrides the default `info` level.
fn init_tracing(format: benchgate_server::LogFormat) {
    init_tracing_at(format, "info")
}

/// Logs to stderr at `default_level` unless `RUST_LOG` says otherwise.
fn init_tracing_at(format: benchgate_server::LogFormat, default_level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour_logs())
        .with_writer(std::io::stderr);
    let _ = match format {
        benchgate_server::LogFormat::Json => builder.json().try_init(),
        benchgate_server::LogFormat::Pretty => builder.try_init(),
    };
}

/// Colour only for a person at a terminal: a log file, a pipe or journald gets plain text, and
/// `NO_COLOR` (any non-empty value, no-color.org) turns it off everywhere.
fn colour_logs() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    std::io::stderr().is_terminal() && !no_color
}

/// `benchgate gitlab check`: one line per finding, "ok" or "fix".
async fn gitlab_check(args: GitlabCheckArgs) -> ExitCode {
    let token = match &args.token_file {
        Some(path) => std::fs::read_to_string(path)
            .map(|t| t.trim().to_owned())
            .map_err(|e| format!("--token-file {}: {e}", path.display())),
        None => std::env::var("BENCHGATE_GITLAB_TOKEN")
            .map_err(|_| "no token: set BENCHGATE_GITLAB_TOKEN or --token-file FILE".to_owned()),
    };
    let client = token.and_then(|t| {
        benchgate_gitlab::GitlabClient::new(&args.url, &t).map_err(|e| e.to_string())
    });
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match benchgate_gitlab::check::check(&client, &args.project, args.hook_url.as_deref()).await {
        Ok(findings) => {
            for f in &findings {
                println!("{}  {}", if f.ok { "ok " } else { "fix" }, f.text);
            }
            if findings.iter().all(|f| f.ok) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
