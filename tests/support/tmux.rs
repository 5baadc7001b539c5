//! A real terminal for tests: a private tmux server running one command in a pane of a fixed
//! size, driven with `send-keys` and read with `capture-pane`. Killed when dropped.

#![allow(dead_code)]

use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

impl Tmux {
    /// Start `command` (a shell command line) in a `width`×`height` pane, or `None` (with a
    /// message) where tmux is missing outside CI. The pane stays after the command exits so its
    /// exit status and last screen can be read.
    pub fn start(command: &str, width: u16, height: u16) -> Option<Tmux> {
        super::skip::require_binary("tmux")?;
        let socket = format!(
            "warroom-test-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        let t = Tmux { socket };
        let out = t.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "w",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-e",
            "TERM=xterm-256color",
            "sh",
            "-c",
            &format!("{command}; echo \"[exited $?]\"; sleep 600"),
        ]);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    /// Send keys as tmux names them (`q`, `Enter`, `Escape`, `C-c`, `Tab`).
    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "w"];
        args.extend_from_slice(keys);
        let out = self.tmux(&args);
        assert!(out.status.success(), "send-keys failed");
    }

    /// Answer a dialog that came up by itself (a step's confirmation): a person reads it
    /// first. The console drops the rest of a burst of keys begun before such a dialog came up
    /// (`warroom::app::typing`: keys closer than 300 ms), so the answer waits as long.
    pub fn answer(&self, text: &str) {
        self.read_pause();
        self.type_text(text);
    }

    /// The time a person takes to read what came up by itself before pressing a key.
    pub fn read_pause(&self) {
        std::thread::sleep(Duration::from_millis(350));
    }

    /// Type literal text.
    pub fn type_text(&self, text: &str) {
        let out = self.tmux(&["send-keys", "-t", "w", "-l", text]);
        assert!(out.status.success(), "send-keys -l failed");
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "w"]).stdout).into_owned()
    }

    /// The visible screen with escape sequences for colours and attributes.
    pub fn screen_with_escapes(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-e", "-t", "w"]).stdout)
            .into_owned()
    }

    /// Let the program set tmux's clipboard with OSC 52 (`set-clipboard on`; tmux's default,
    /// `external`, ignores a program's copies).
    pub fn accept_copies(&self) {
        let out = self.tmux(&["set-option", "-s", "set-clipboard", "on"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// What the program last copied (OSC 52) into tmux's buffer, if anything.
    pub fn copied(&self) -> Option<String> {
        let out = self.tmux(&["show-buffer"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A tmux format value of the pane, e.g. `#{alternate_on}`.
    pub fn format(&self, fmt: &str) -> String {
        String::from_utf8_lossy(&self.tmux(&["display-message", "-p", "-t", "w", fmt]).stdout)
            .trim()
            .to_string()
    }

    /// Wait (bounded) until the screen satisfies `pred`; returns the screen, or `None` on timeout.
    pub fn wait_for(&self, within: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + within;
        loop {
            let s = self.screen();
            if pred(&s) {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait until the screen contains `text`, or fail the test showing the screen.
    pub fn expect(&self, text: &str, within: Duration) -> String {
        match self.wait_for(within, |s| s.contains(text)) {
            Some(s) => s,
            None => panic!(
                "waited {within:?} for {text:?}; the screen:\n{}",
                self.screen()
            ),
        }
    }
}

/// `warroom demo --speed SPEED` with an empty config, its log and data in `dir`, started in a
/// `width`×`height` pane and past its briefing (`None` where tmux is missing outside CI).
pub fn demo_past_briefing(
    dir: &std::path::Path,
    speed: u32,
    width: u16,
    height: u16,
) -> Option<Tmux> {
    std::fs::write(dir.join("w.toml"), "").unwrap();
    let cmd = format!(
        "{} --config {} --log-file {} --data-dir {} demo --speed {speed}",
        env!("CARGO_BIN_EXE_warroom"),
        dir.join("w.toml").display(),
        dir.join("log").display(),
        dir.join("data").display(),
    );
    let term = Tmux::start(&cmd, width, height)?;
    term.expect("Briefing", Duration::from_secs(10));
    term.send(&["Escape"]);
    term.wait_for(Duration::from_secs(5), |s| !s.contains("Briefing"))
        .expect("the briefing closes");
    Some(term)
}
