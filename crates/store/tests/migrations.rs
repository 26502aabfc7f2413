//! Both migration directories describe the same schema history.

use std::collections::BTreeSet;
use std::path::Path;

fn migrations(dialect: &str) -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../migrations")
        .join(dialect);
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sql"))
        .collect()
}

#[test]
fn postgres_and_sqlite_hold_the_same_versions_and_names() {
    let postgres = migrations("postgres");
    let sqlite = migrations("sqlite");
    assert!(!postgres.is_empty(), "no migrations found");
    assert_eq!(
        postgres, sqlite,
        "migrations/postgres and migrations/sqlite differ"
    );
    for name in &postgres {
        let (version, _) = name.split_once('_').expect("VERSION_name.sql");
        assert!(
            version.parse::<u64>().is_ok(),
            "{name}: version must be a number"
        );
    }
}
