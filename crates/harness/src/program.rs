//! Finding a benchmark's program in the child's own `PATH`, as `execvp` in the child would.
//!
//! Done by the harness before the clock starts: given a bare name, the child's `execvp` tries
//! each `PATH` entry in turn (on a typical runner, several failed `execve` calls before the right
//! one), and that search would be measured as part of the benchmark.

use std::path::{Path, PathBuf};

use rustix::fs::{Access, access};

/// `execvp`'s search path when `PATH` is unset (glibc's `confstr(_CS_PATH)`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// The executable `program` names in `path` (the child's `PATH`), or `None` where the child's
/// own `execvp` must decide: a name with a slash is already a path; a relative `PATH` entry
/// before any match depends on the child's working directory; nothing found is its error to
/// report.
pub fn find_program(program: &str, path: Option<&str>) -> Option<PathBuf> {
    if program.contains('/') {
        return None;
    }
    for dir in path.unwrap_or(DEFAULT_PATH).split(':') {
        // An empty entry is the working directory, as for execvp.
        let dir = Path::new(dir);
        if !dir.is_absolute() {
            return None;
        }
        let candidate = dir.join(program);
        // Like execvp, skip what cannot be executed and keep searching.
        if candidate.is_file() && access(&candidate, Access::EXEC_OK).is_ok() {
            return Some(candidate);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn file(dir: &Path, name: &str, mode: u32) {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn searches_the_given_path_in_order_like_execvp() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for dir in [&a, &b] {
            std::fs::create_dir(dir).unwrap();
        }
        file(&a, "bench", 0o644);
        file(&b, "bench", 0o755);
        file(&a, "first", 0o755);
        file(&b, "first", 0o755);
        std::fs::create_dir(a.join("dir")).unwrap();
        let path = format!("{}:{}", a.display(), b.display());
        let found = |program: &str, path: &str| find_program(program, Some(path));

        let cases: [(&str, &str, Option<PathBuf>); 7] = [
            ("first", &path, Some(a.join("first"))),
            ("bench", &path, Some(b.join("bench"))), // a/bench is not executable
            ("dir", &path, None),                    // a directory is not a program
            ("missing", &path, None),
            ("./first", &path, None),                // a path already
            ("first", &format!("rel:{path}"), None), // depends on the child's cwd
            ("first", &format!(":{path}"), None),    // the empty entry is the cwd
        ];
        for (program, path, expected) in cases {
            assert_eq!(found(program, path), expected, "{program} in {path}");
        }
        assert_eq!(find_program("sh", None), Some(PathBuf::from("/bin/sh")));
    }
}
