//! `benchgate agent` end to end (issue 5's "Done when"): the real server, real agent processes,
//! a real local git repository whose head does twice the work of its base, and the failures an
//! agent must survive — a crashed agent, a restarted server, a lost lease, a revoked token and
//! a SIGTERM in the middle of a job.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::support::agent::{
    AgentProcess, BenchRepo, FINISH, LABEL, add_runner, comparison, comparison_samples,
    create_comparison, job_errors, runner_cli, spawn_server_at, wait_finished, wall_time_rounds,
};
use crate::support::{http, measuring_turn, sqlite_url, wait_until};
use benchgate_api::VerdictKind;
use benchgate_api::agent::ComparisonStatus;

/// The headline runner's wall-time result.
fn headline_wall_time(status: &ComparisonStatus) -> (&str, &benchgate_api::BenchmarkResult) {
    headline_result(status, "wall_time")
}

/// The headline runner's result for one metric of the whole-process benchmark.
fn headline_result<'a>(
    status: &'a ComparisonStatus,
    metric: &str,
) -> (&'a str, &'a benchgate_api::BenchmarkResult) {
    let headline = status
        .runners
        .iter()
        .find(|r| r.headline)
        .expect("a headline runner");
    let result = headline
        .report
        .benchmarks
        .iter()
        .find(|b| b.name == "command" && b.metric == metric)
        .unwrap_or_else(|| panic!("no {metric} result: {status:?}"));
    (&headline.runner, result)
}

#[tokio::test]
async fn two_agents_complete_a_comparison_with_the_right_verdict_and_no_secret_leaks() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let repo = BenchRepo::create(dir.path());
    let tokens = [add_runner(&db, "alpha"), add_runner(&db, "beta")];
    let agents = [
        AgentProcess::spawn("alpha", &server, &tokens[0], dir.path(), &[]),
        AgentProcess::spawn("beta", &server, &tokens[1], dir.path(), &[]),
    ];

    // Relative: the run is sandboxed, so its own worktree is the one place it can write.
    let req = repo.comparison(12, vec!["ENV_DUMP=bench-env.txt".into()]);
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, FINISH, &[&agents[0], &agents[1]]).await;

    assert_eq!(status.state, "done", "{status:?}");
    // CPU time is the process's own work, so it settles the claim even when the test machine is
    // busy; wall time on a loaded machine may honestly need more rounds, but never says faster.
    let (runner, cpu) = headline_result(&status, "cpu_time");
    assert_eq!(cpu.n, 12, "{cpu:?}");
    assert_eq!(cpu.verdict, VerdictKind::Slower, "{cpu:?}");
    let lower = cpu.interval_pct[0].expect("a bounded interval");
    assert!(lower > 0.0, "head does three times the work: {cpu:?}");
    let (_, wall) = headline_wall_time(&status);
    assert_eq!(wall.n, 12, "{wall:?}");
    assert!(wall.change_pct.is_some_and(|p| p > 0.0), "{wall:?}");
    assert!(
        matches!(wall.verdict, VerdictKind::Slower | VerdictKind::NoResultYet),
        "{wall:?}"
    );
    let series = comparison_samples(&db, created.id).await;
    assert_eq!(series.len(), 1, "one job, one runner's series");
    assert_eq!(series[0].runner_name, runner);
    assert_eq!(wall_time_rounds(&series[0]).len(), 12);
    let build = series[0]
        .samples
        .iter()
        .filter(|s| s.metric == "build_time")
        .count();
    assert_eq!(build, 2, "build time of each side is recorded");

    // Neither the builds nor the benchmark runs see the token or the machine's secrets: a build,
    // then a run, prints its environment and fails, so the job's log tail keeps what it saw.
    for phase in ["build", "run"] {
        let mut failing = repo.comparison(2, Vec::new());
        if phase == "build" {
            failing.config.benchmark.build = Some("env; exit 1".into());
        } else {
            failing.config.benchmark.run = "sh -c 'env >&2; exit 1'".into();
        }
        let created = create_comparison(&server, &failing).await;
        let ended = wait_finished(&server, created.id, FINISH, &[&agents[0], &agents[1]]).await;
        assert_eq!(ended.state, "failed", "{ended:?}");
        let env = job_errors(&db, created.id).await.join("\n");
        let expected = if phase == "build" {
            "PATH=" // the build's allow-list
        } else {
            "BENCHGATE_BIN=" // the job's own env reaches the run
        };
        assert!(env.contains(expected), "the {phase} saw: {env}");
        for token in &tokens {
            assert!(!env.contains(token.as_str()), "a runner token leaked");
        }
        assert!(!env.contains("BENCHGATE_TOKEN"), "{env}");
        assert!(!env.contains("machine-secret-never-passed"), "{env}");
    }
    for agent in &agents {
        for token in &tokens {
            assert!(
                !agent.logs().contains(token.as_str()),
                "a token reached the log"
            );
        }
    }
}

/// Two runners of one hardware class share one comparison's rounds: one verdict from both,
/// stratified by runner, with every pair measured on one machine.
/// An A/A comparison of one commit builds it once and runs both sides in that build.
#[tokio::test]
async fn an_a_a_of_one_commit_builds_it_once() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let repo = BenchRepo::create(dir.path());
    let token = add_runner(&db, "solo");
    let agent = AgentProcess::spawn("solo", &server, &token, dir.path(), &[]);
    let mut req = repo.comparison(4, Vec::new());
    req.head = req.base.clone();
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, FINISH, &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
    let (_, wall) = headline_wall_time(&status);
    assert_eq!(wall.n, 4, "{wall:?}");
    assert!(
        agent.logged("one build for both sides (the same commit, built the same way)"),
        "{}",
        agent.logs()
    );
    let series = comparison_samples(&db, created.id).await;
    assert!(
        series[0].samples.iter().all(|s| s.metric != "build_time"),
        "one build has no build time to compare"
    );
}

#[tokio::test]
async fn two_runners_of_one_hardware_class_reach_one_verdict_together() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let repo = BenchRepo::create(dir.path());
    let tokens = [add_runner(&db, "alpha"), add_runner(&db, "beta")];
    let mut req = repo.comparison(12, Vec::new());
    req.jobs = Some(2);
    let created = create_comparison(&server, &req).await;
    // Alpha takes the first job (then its first A/A session, which goes first for it); beta,
    // started while alpha measures, takes the second.
    let mut alpha = AgentProcess::spawn("alpha", &server, &tokens[0], dir.path(), &[]);
    alpha.wait_for_log("round=1", FINISH);
    let beta = AgentProcess::spawn("beta", &server, &tokens[1], dir.path(), &[]);
    let status = wait_finished(&server, created.id, FINISH, &[&alpha, &beta]).await;
    assert_eq!(status.state, "done", "{status:?}");

    let series = comparison_samples(&db, created.id).await;
    let mut names: Vec<&str> = series.iter().map(|s| s.runner_name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["alpha", "beta"], "each runner measured one job");
    for s in &series {
        assert_eq!(wall_time_rounds(s).len(), 6, "{}", s.runner_name);
    }
    assert_eq!(status.runners.len(), 1, "one report for both: {status:?}");
    let (runner, cpu) = headline_result(&status, "cpu_time");
    assert_eq!(runner, "alpha + beta");
    assert_eq!(cpu.n, 12, "both runners' pairs: {cpu:?}");
    assert_eq!(cpu.runners, ["alpha", "beta"]);
    assert_eq!(cpu.verdict, VerdictKind::Slower, "{cpu:?}");
    assert!(cpu.interval_pct[0].is_some_and(|l| l > 0.0), "{cpu:?}");
}

#[tokio::test]
async fn a_killed_agents_job_is_finished_by_the_other_after_the_lease_expires() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 3);
    let repo = BenchRepo::create(dir.path());
    let (ta, tb) = (add_runner(&db, "doomed"), add_runner(&db, "survivor"));
    let created = create_comparison(&server, &repo.comparison(8, vec!["PAUSE=0.1".into()])).await;

    // The first agent alone, so it is the one holding the job when it dies.
    let mut doomed = AgentProcess::spawn("doomed", &server, &ta, dir.path(), &[]);
    doomed.wait_for_log("round=1", FINISH);
    doomed.signal("KILL");
    doomed.wait_exit(Duration::from_secs(10));
    let survivor = AgentProcess::spawn("survivor", &server, &tb, dir.path(), &[]);

    let status = wait_finished(&server, created.id, FINISH, &[&doomed, &survivor]).await;
    assert_eq!(status.state, "done", "{status:?}");
    let (runner, wall) = headline_wall_time(&status);

    let series = comparison_samples(&db, created.id).await;
    // Both agents run on this machine, one hardware class: what the dead one measured before
    // it died is combined with the survivor's series, stratified by runner.
    let doomed_rounds = series
        .iter()
        .find(|s| s.runner_name == "doomed")
        .map_or(0, |s| wall_time_rounds(s).len());
    if doomed_rounds == 0 {
        assert_eq!(runner, "survivor");
    } else {
        assert_eq!(runner, "doomed + survivor");
    }
    assert_eq!(wall.n, 8 + doomed_rounds, "{wall:?}");
    let survivor_rounds = series
        .iter()
        .find(|s| s.runner_name == "survivor")
        .map(wall_time_rounds)
        .unwrap();
    assert_eq!(
        survivor_rounds.len(),
        8,
        "no round lost: {survivor_rounds:?}"
    );
    let attempts: BTreeSet<i64> = survivor_rounds.iter().map(|(a, _)| *a).collect();
    assert_eq!(attempts.len(), 1, "one attempt's series: {attempts:?}");
    if let Some(doomed_series) = series.iter().find(|s| s.runner_name == "doomed") {
        // What the dead agent uploaded stays its own series: no pair mixes two machines.
        assert!(wall_time_rounds(doomed_series).len() < 8);
        let d_attempt = doomed_series.samples[0].attempt;
        assert!(!attempts.contains(&d_attempt), "attempts are never reused");
    }
}

#[tokio::test]
async fn the_agent_carries_on_when_the_server_restarts_mid_job() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 20);
    let addr = server.addr.to_string();
    let repo = BenchRepo::create(dir.path());
    let token = add_runner(&db, "steady");
    let created = create_comparison(&server, &repo.comparison(10, vec!["PAUSE=0.1".into()])).await;
    let mut agent = AgentProcess::spawn("steady", &server, &token, dir.path(), &[]);

    agent.wait_for_log("round=1", FINISH);
    drop(server); // SIGKILL: no graceful shutdown.
    // The server comes back once the agent has met the outage.
    wait_until("the agent to see the outage", FINISH, async || {
        let saw = ["retrying", "kept and retried", "heartbeat failed"];
        if saw.iter().any(|line| agent.logged(line)) {
            Ok(())
        } else {
            Err(agent.logs())
        }
    })
    .await;
    let server = spawn_server_at(&addr, &db, 20);

    let status = wait_finished(&server, created.id, FINISH, &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", agent.logs());
    let series = comparison_samples(&db, created.id).await;
    assert_eq!(series.len(), 1);
    assert_eq!(
        wall_time_rounds(&series[0]).len(),
        10,
        "no round lost or doubled"
    );
    assert_eq!(headline_wall_time(&status).1.n, 10);
}

#[tokio::test]
async fn wrong_or_revoked_tokens_get_401_and_a_lost_lease_stops_the_job_cleanly() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 2);

    // A wrong token: 401 on the wire, and the agent exits with a clear message.
    let resp = http()
        .post(server.url("/api/v1/jobs/claim"))
        .bearer_auth("not-a-token")
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let mut wrong = AgentProcess::spawn("wrong", &server, "not-a-token", dir.path(), &[]);
    let status = wrong.wait_exit(Duration::from_secs(30));
    assert!(!status.success());
    assert!(wrong.logged("401"), "{}", wrong.logs());

    // A revoked token: the idle agent's next claim gets 401 and it exits.
    let revoked_token = add_runner(&db, "revoked");
    let mut revoked = AgentProcess::spawn("revoked", &server, &revoked_token, dir.path(), &[]);
    revoked.wait_for_log("machine fingerprint", FINISH);
    runner_cli(&db, &["revoke", "revoked"]);
    let status = revoked.wait_exit(Duration::from_secs(30));
    assert!(!status.success());
    assert!(revoked.logged("401"), "{}", revoked.logs());

    // A lost lease: the agent is frozen past its lease, another takes the job over, and the
    // first one's late writes get 409: it drops the job without completing it.
    let repo = BenchRepo::create(dir.path());
    let (ts, tt) = (add_runner(&db, "stalled"), add_runner(&db, "taker"));
    let created = create_comparison(&server, &repo.comparison(8, vec!["PAUSE=0.1".into()])).await;
    let mut stalled = AgentProcess::spawn("stalled", &server, &ts, dir.path(), &[]);
    stalled.wait_for_log("round=1", FINISH);
    stalled.signal("STOP");
    let mut taker = AgentProcess::spawn("taker", &server, &tt, dir.path(), &[]);
    taker.wait_for_log("job claimed", FINISH);
    stalled.signal("CONT");

    let status = wait_finished(&server, created.id, FINISH, &[&stalled, &taker]).await;
    assert_eq!(status.state, "done", "{status:?}");
    stalled.wait_for_log("lease lost; leaving the job to its new holder", FINISH);
    let span = format!("job{{job={} attempt=1}}", created.jobs[0]);
    let completed = stalled
        .logs()
        .lines()
        .any(|l| l.contains(&span) && l.contains("completing the job"));
    assert!(!completed, "{}", stalled.logs());
    let series = comparison_samples(&db, created.id).await;
    let taker_rounds = series
        .iter()
        .find(|s| s.runner_name == "taker")
        .map(wall_time_rounds)
        .unwrap();
    assert_eq!(taker_rounds.len(), 8);
    // One machine, one hardware class: rounds the stalled agent stored before it lost the
    // lease are combined with the taker's, stratified by runner.
    let stalled_stored = series.iter().any(|s| s.runner_name == "stalled");
    let analysed = comparison(&server, created.id).await;
    let expected = if stalled_stored {
        "stalled + taker"
    } else {
        "taker"
    };
    assert_eq!(headline_wall_time(&analysed).0, expected);
}

#[tokio::test]
async fn sigterm_mid_job_releases_it_and_the_other_agent_finishes_it() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 30);
    let repo = BenchRepo::create(dir.path());
    let (tq, tr) = (add_runner(&db, "quitter"), add_runner(&db, "relief"));
    let created = create_comparison(&server, &repo.comparison(8, vec!["PAUSE=0.1".into()])).await;

    let mut quitter = AgentProcess::spawn("quitter", &server, &tq, dir.path(), &[]);
    quitter.wait_for_log("round=1", FINISH);
    quitter.signal("TERM");
    let exit = quitter.wait_exit(Duration::from_secs(30));
    assert!(
        exit.success(),
        "SIGTERM exits 0: {exit:?}\n{}",
        quitter.logs()
    );
    assert!(quitter.logged("releasing the job"), "{}", quitter.logs());
    // Released, not expired: the job is back in the queue at once, long before its 30 s lease.
    let relief = AgentProcess::spawn("relief", &server, &tr, dir.path(), &[]);
    let status = wait_finished(
        &server,
        created.id,
        Duration::from_secs(25),
        &[&quitter, &relief],
    )
    .await;
    assert_eq!(status.state, "done", "{status:?}");
    // One hardware class (one machine): the quitter's uploaded rounds count, stratified.
    assert_eq!(headline_wall_time(&status).0, "quitter + relief");

    // Every round the quitter measured was uploaded before it exited.
    let measured = quitter.logs().matches("round measured").count();
    let series = comparison_samples(&db, created.id).await;
    let quitter_rounds = series
        .iter()
        .find(|s| s.runner_name == "quitter")
        .map(wall_time_rounds)
        .unwrap_or_default();
    assert!(measured >= 2, "{}", quitter.logs());
    assert_eq!(quitter_rounds.len(), measured, "{}", quitter.logs());
    let _ = comparison(&server, created.id).await;
}

#[tokio::test]
async fn a_cancelled_job_stops_after_the_current_round_and_ends_cancelled() {
    let _turn = measuring_turn().await;
    use benchgate_store::{JobState, NewComparison, NewJob, NewRepository};
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = spawn_server_at("127.0.0.1:0", &db, 3);
    let repo = BenchRepo::create(dir.path());
    let token = add_runner(&db, "obedient");

    // A PR's comparison, made as the scheduler makes it, so closing the PR can cancel it.
    let store = benchgate_store::connect(&db).await.unwrap();
    let path = repo.path.to_string_lossy().into_owned();
    let repository = store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: None,
            full_name: path.clone(),
            clone_url: path,
            forge: benchgate_store::model::Forge::GitHub,
        })
        .await
        .unwrap();
    let req = repo.comparison(20, vec!["PAUSE=0.1".into()]);
    let created = store
        .create_comparison(
            &NewComparison::new(
                repository.id,
                &repo.base,
                &repo.head,
                LABEL,
                req.config.clone().into(),
            )
            .pr(7)
            .jobs(1, NewJob::rounds(20)),
        )
        .await
        .unwrap();

    let mut agent = AgentProcess::spawn("obedient", &server, &token, dir.path(), &[]);
    agent.wait_for_log("round=1", FINISH);
    store.cancel_pull_request(repository.id, 7).await.unwrap();
    // "releasing the job end=Cancelled" comes before the release call; this comes after it.
    agent.wait_for_log("job ended end=Cancelled", FINISH);

    let job = store.job(created.jobs[0]).await.unwrap().unwrap();
    assert_eq!(job.state, JobState::Cancelled, "{job:?}");
    // Only this job's rounds: the agent may go on to its first calibration job.
    let span = format!("job{{job={} attempt=1}}", created.jobs[0]);
    let measured = agent
        .logs()
        .lines()
        .filter(|l| l.contains(&span) && l.contains("round measured"))
        .count();
    assert!(measured < 20, "stopped early: {}", agent.logs());
    let series = comparison_samples(&db, created.id.0).await;
    assert_eq!(
        wall_time_rounds(&series[0]).len(),
        measured,
        "every measured round uploaded"
    );
}

/// The audit on the real agent: a suite with `layout_salt` gets its layout sessions (each side
/// built with its own salt, which the modelled workload turns into a speed), and the idle
/// runner runs canaries, the planted one doing 25% more work through `BENCHGATE_PLANTED`:
/// beyond any layout band eight salted sessions can give here (2·tau_layout ≤ 0.19 on the log
/// scale; 25% is 0.22), where 10% was not (CI once saw 10% held inside the band).
#[tokio::test]
async fn layout_sessions_and_canaries_run_on_the_real_agent() {
    let _turn = measuring_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_url(dir.path());
    let server = crate::support::spawn_server_on(
        "127.0.0.1:0",
        &db,
        &[
            ("BENCHGATE_ADMIN_TOKEN", crate::support::agent::ADMIN),
            ("BENCHGATE_CLAIM_WAIT", "2"),
            ("BENCHGATE_CANARY_EVERY", "1s"),
            ("BENCHGATE_CANARY_PLANTED", "25"),
            ("BENCHGATE_CANARY_ROUNDS", "8"),
        ],
    );
    let path = dir.path().join("salted");
    std::fs::create_dir_all(&path).unwrap();
    // The modelled time scales with the build's salt (0.96–1.04) and BENCHGATE_PLANTED.
    std::fs::write(
        path.join("bench.sh"),
        "#!/bin/sh\nexec \"$BENCHGATE_BIN\" spin --iterations 200000 --modelled-spread 0.003 \
         --layout-file salt.txt\n",
    )
    .unwrap();
    std::fs::write(path.join(".gitignore"), "salt.txt\n").unwrap();
    crate::support::git(&path, &["init", "-q"]);
    crate::support::git(&path, &["add", "."]);
    crate::support::git(&path, &["commit", "-qm", "suite"]);
    let sha = crate::support::git(&path, &["rev-parse", "HEAD"]);
    let token = add_runner(&db, "salty");
    let agent = AgentProcess::spawn("salty", &server, &token, dir.path(), &[]);

    let repo = BenchRepo {
        path: path.clone(),
        base: sha.clone(),
        head: sha.clone(),
    };
    let mut req = repo.comparison(6, Vec::new());
    req.config.benchmark.build = Some("printf %s \"$SALT\" > salt.txt".into());
    req.config.benchmark.run = "sh bench.sh".into();
    req.config.benchmark.format = "libtest".into();
    req.config.benchmark.layout_salt = Some("SALT={salt}".into());
    req.config.benchmark.canary_work = true;
    let created = create_comparison(&server, &req).await;
    let status = wait_finished(&server, created.id, FINISH, &[&agent]).await;
    assert_eq!(status.state, "done", "{status:?}");

    let runner_json = async || {
        let resp = http()
            .get(server.url("/api/v1/runners/salty"))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        resp.json::<serde_json::Value>()
            .await
            .map_err(|e| e.to_string())
    };
    // Two A/A canaries, then the planted one, each started when the runner is idle.
    let audit = wait_until("three scored canaries", FINISH, async || {
        let audit = runner_json().await?["audit"].clone();
        if audit["canaries"].as_u64() >= Some(3) {
            Ok(audit)
        } else {
            Err(format!("{audit}\n{}", agent.logs()))
        }
    })
    .await;
    // Read after the canaries, which start only once the runner is idle: the floor then pools
    // all eight layout sessions (only then it has a layout figure, which salts of nearly
    // the same speed could make small).
    let floor = wait_until("a layout floor", FINISH, async || {
        let runner = runner_json().await?;
        let floor = runner["floors"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["benchmark"] == "spin").cloned());
        match floor {
            Some(f) if f["layout_pct"].is_number() => Ok(f),
            other => Err(format!("{other:?}\n{}", agent.logs())),
        }
    })
    .await;
    // Builds salted apart differ by up to ±4% in the model; the sessions see some of that.
    let layout = floor["layout_pct"].as_f64().unwrap();
    assert!(layout > 0.3, "{floor}");
    assert_eq!(
        floor["sessions"], 1,
        "the layout sessions are kept apart: {floor}"
    );
    assert!(agent.logged("the sides differ beyond their commits"));

    assert_eq!(audit["aa"]["trials"], 2, "{audit}");
    assert_eq!(audit["aa"]["hits"], 0, "{audit}");
    let planted = &audit["planted"][0];
    assert_eq!(planted["planted_pct"], 25.0, "{audit}");
    assert_eq!(
        planted["found"]["hits"], 1,
        "25% more work is found: {audit}"
    );
    assert_eq!(audit["flagged"], false);
    let direct = http()
        .get(server.url("/api/v1/runners/salty/audit"))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(direct["runner"], "salty");
    let page = http()
        .get(server.url("/runners/salty"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("A/A canaries claiming a change"), "{page}");
    // The flag's rule in words, where it stands, and the layout interval.
    assert!(page.contains("not fired; evidence now"), "{page}");
    assert!(page.contains("however often it is looked at"), "{page}");
    assert_eq!(audit["flag"]["bar"], 20.0, "{audit}");
    assert_eq!(
        audit["flag"]["fired_at_canary"],
        serde_json::Value::Null,
        "{audit}"
    );
    let (lower, upper) = (
        floor["layout_lower_pct"].as_f64().unwrap(),
        floor["layout_upper_pct"].as_f64().unwrap(),
    );
    assert!(lower <= layout && layout <= upper, "{floor}");
    assert!(
        page.contains(&format!("{lower:.2}%–{upper:.2}%")),
        "the floor's layout interval: {page}"
    );

    // A recalibration by hand: a fresh A/A session, and the flag's count starts afresh.
    let answer = http()
        .post(server.url("/api/v1/runners/salty/recalibrate"))
        .bearer_auth(crate::support::agent::ADMIN)
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(
        answer["calibrations"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
    let audit = runner_json().await.unwrap()["audit"].clone();
    assert_eq!(audit["aa_since_recalibration"]["trials"], 0, "{audit}");
    let unknown = http()
        .post(server.url("/api/v1/runners/nobody/recalibrate"))
        .bearer_auth(crate::support::agent::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status().as_u16(), 404);
}
