//! The official MCP Python SDK as a test's assistant (tests/fixtures/mcp/client.py): it starts
//! `warroom mcp` over stdio, lists the tools and makes the calls it is given.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The Python SDK, or a skip (a failure in CI, which installs it).
pub fn python_mcp() -> Option<()> {
    let found = Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(());
    }
    super::skip::missing(
        "the Python `mcp` package",
        "python3 -m pip install mcp==2.3.0",
    )
}

/// Runs the Python client with `calls` against `warroom --data-dir DATA mcp ARGS` (its config
/// `DATA/warroom.toml`, its actor `ana`, `env` besides); its JSON report: the server's name
/// and instructions, the tools, and each answer (`tool`, `error`, `text`).
pub fn python_client(data: &Path, args: &[&str], calls: &Value, env: &[(&str, &str)]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/client.py");
    let mut all = vec!["--data-dir".to_string(), data.display().to_string()];
    all.extend([
        "--log-file".into(),
        data.join("mcp.log").display().to_string(),
    ]);
    all.extend(args.iter().map(std::string::ToString::to_string));
    let config = data.join("warroom.toml").display().to_string();
    let path = std::env::var("PATH").unwrap_or_default();
    let base = [
        ("WARROOM_CONFIG", config.as_str()),
        ("WARROOM_ACTOR", "ana"),
        ("PATH", path.as_str()),
    ];
    let env: serde_json::Map<String, Value> = (base.iter().chain(env))
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let spec = serde_json::json!({
        "command": env!("CARGO_BIN_EXE_warroom"),
        "args": all,
        "env": env,
        "cwd": data,
        "calls": calls,
    });
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "the client's report ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The text of answer `i` as JSON; it must not be an error.
pub fn answer(report: &Value, i: usize) -> Value {
    let a = &report["answers"][i];
    assert_eq!(a["error"], false, "answer {i}: {a}");
    serde_json::from_str(a["text"].as_str().unwrap()).unwrap()
}
