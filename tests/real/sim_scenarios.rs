//! Scenario files: built-ins by name, any other argument a path, broken files reported as
//! file:line:col by the command itself.

use std::process::Command;
use warroom::sim::Scenario;
use warroom::sim::scenario::BUILTIN;

#[test]
fn a_path_loads_a_file_and_errors_point_into_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, text) = BUILTIN[2];
    let good = dir.path().join("my-loop.toml");
    std::fs::write(
        &good,
        text.replace("name = \"crash-loop\"", "name = \"my-loop\""),
    )
    .expect("write");
    let sc = Scenario::load(good.to_str().expect("utf-8 path")).expect("loads");
    assert_eq!(sc.name, "my-loop");

    let broken = dir.path().join("broken.toml");
    let bad = text.replace("capacity = 400.0", "capacity = 400.0\nshards = 4");
    std::fs::write(&broken, &bad).expect("write");
    let line = bad
        .lines()
        .position(|l| l == "shards = 4")
        .expect("inserted")
        + 1;
    let d = Scenario::load(broken.to_str().expect("utf-8 path")).expect_err("unknown key");
    assert_eq!((d.line, d.col), (line, 1), "{d}");
    assert!(d.file.ends_with("broken.toml"));

    // The command says where, and exits non-zero without serving.
    let out = Command::new(env!("CARGO_BIN_EXE_warroom"))
        .args(["sim", "serve"])
        .arg(&broken)
        .args(["--listen", "127.0.0.1:0"])
        .arg("--log-file")
        .arg(dir.path().join("log"))
        .output()
        .expect("run warroom");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("broken.toml:{line}:1")), "{err}");
    assert!(err.contains("shards"), "{err}");
}

#[test]
fn unknown_scenarios_say_what_exists() {
    let d = Scenario::load("no-such-scenario").expect_err("not a file either");
    for (name, _) in BUILTIN {
        assert!(d.message.contains(name), "{d}");
    }
}
