//! The one place a test decides it cannot run here: a component it needs (a binary, a cgroup) is
//! missing. In CI (`CI` set) that is a failure naming the component and how to install it, since
//! CI installs everything; elsewhere the test prints one line to stderr,
//! `SKIPPED <test>: <component> is not installed (<install>)`, returns early and passes. The
//! same goes for what is not a package (a cgroup only root can make), where the caller says
//! whether CI must have it.
//!
//! The line goes to file descriptor 2 itself, past libtest's capture of a passing test's output.
//! A passing test that skipped is still easy to miss in a long run, so each skip is counted, and
//! when the binary exits it prints `N tests skipped in this binary:` and their names (nothing
//! when none was). Rust's test harness has no "after all tests" hook: the summary runs as a process
//! destructor (the `dtor` crate), after the harness has printed its own result.
//!
//! ```ignore
//! let Some(bin) = skip::require_binary("haproxy") else { return };
//! ```

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// The tests of this process that skipped, by name.
pub struct Skips(Mutex<BTreeSet<String>>);

impl Skips {
    pub const fn new() -> Skips {
        Skips(Mutex::new(BTreeSet::new()))
    }

    /// Judge one test that cannot run here, `reason` and what would `remedy` it: a panic when
    /// `must_run` (CI), else the SKIPPED line to print, and `test` counted as skipped.
    pub fn judge(&self, must_run: bool, test: &str, reason: &str, remedy: &str) -> String {
        if must_run {
            panic!("{test}: {reason}, and CI must run this test ({remedy})");
        }
        self.names().insert(test.to_string());
        format!("SKIPPED {test}: {reason} ({remedy})")
    }

    /// How many tests skipped.
    pub fn count(&self) -> usize {
        self.names().len()
    }

    /// The end-of-binary line, or `None` when nothing skipped.
    pub fn summary(&self) -> Option<String> {
        let names = self.names();
        let list: String = names.iter().map(|n| format!("\n  {n}")).collect();
        match names.len() {
            0 => None,
            1 => Some(format!("1 test skipped in this binary:{list}")),
            n => Some(format!("{n} tests skipped in this binary:{list}")),
        }
    }

    fn names(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        // A test that panicked while holding the lock poisoned it; the set is still whole.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// This process's skips.
static SKIPS: Skips = Skips::new();

/// Whether this run is CI's, where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// The running test's name: libtest names each test's thread after it. Outside a test (a bench's
/// main thread, a runtime's worker) the executable's name stands for it.
fn test_name() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) if name != "main" && !name.starts_with("tokio-") => name.to_string(),
        _ => std::env::args()
            .next()
            .and_then(|a| Some(std::path::Path::new(&a).file_name()?.to_str()?.to_string()))
            .unwrap_or_else(|| "this process".to_string()),
    }
}

/// A component the calling test needs is missing: in CI a panic; elsewhere the SKIPPED line on
/// stderr, the test counted, and `None` for the caller to return on. `component` is said as
/// given (`` `haproxy` ``); `install` says how to get it.
pub fn missing<T>(component: &str, install: &str) -> Option<T> {
    unavailable(in_ci(), &format!("{component} is not installed"), install)
}

/// The calling test cannot run here for `reason` (not a package: a cgroup, a privilege), which
/// `remedy` would mend; `must_run` says whether this run must have it (CI, in the setups CI
/// has). A panic then; else as [`missing`].
pub fn unavailable<T>(must_run: bool, reason: &str, remedy: &str) -> Option<T> {
    let line = SKIPS.judge(must_run, &test_name(), reason, remedy);
    to_terminal(&line);
    None
}

/// `line` on file descriptor 2 itself: libtest captures `eprintln!` of a passing test, and a
/// skip must show in a plain `cargo test`.
fn to_terminal(line: &str) {
    let _ = nix::unistd::write(std::io::stderr(), format!("{line}\n").as_bytes());
}

/// `name` on PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// `name` on PATH, or [`missing`] with how to install it.
pub fn require_binary(name: &str) -> Option<PathBuf> {
    on_path(name).or_else(|| missing(&format!("`{name}`"), &install_hint(name)))
}

/// How to install the binary `name` (as `.ci/run` does).
fn install_hint(name: &str) -> String {
    match name {
        "promtool" => "apt-get install prometheus".to_string(),
        "initdb" | "postgres" | "psql" | "pgbench" => "apt-get install postgresql".to_string(),
        "setsid" => "apt-get install util-linux".to_string(),
        "pgbouncer-exporter" => "pip install --no-deps prometheus-pgbouncer-exporter==2.1.2 \
                                 and its dependencies, as .ci/run does"
            .to_string(),
        package => format!("apt-get install {package}"),
    }
}

/// At exit, the count and names of the tests that skipped, after the harness's own summary.
/// `unsafe`: code after main must not rely on std's runtime; this reads a static under a plain
/// mutex and writes to file descriptor 2 directly (no stderr lock, no thread-locals).
#[dtor::dtor(unsafe)]
fn print_skip_summary() {
    if let Some(line) = SKIPS.summary() {
        to_terminal(&format!("\n{line}"));
    }
}
