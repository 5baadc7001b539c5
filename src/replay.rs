//! `warroom replay ID [--speed N]`: the dashboard and timeline of an incident as they were,
//! read-only, from its journal and panel snapshots.
//!
//! [`load`] reads the incident without its lock and without writing (a recorder may be writing
//! it now); a [`cursor::Cursor`] is the replay's "now", moving from the first record to the end
//! at `--speed` replay seconds per wall second (default 60: a two-hour incident plays in two
//! minutes); [`scene`] puts the console's own `Model` at the cursor, so the console's views draw
//! the replay unchanged; [`session`] turns keys and wall time into cursor moves (no I/O, tested
//! with simulated keys); [`view`] draws. The terminal is set up and restored as the console's
//! is (`ratatui::init`, which also restores it on a panic).

pub mod cursor;
pub mod keys;
pub mod load;
pub mod scene;
pub mod session;
pub mod view;

pub use load::{Loaded, ReplayError};
pub use session::{Msg, Replay, update};

use crate::app::model::Quit;
use crate::config::Config;
use crate::incident::Store;
use crate::theme::Theme;
use color_eyre::eyre::{WrapErr, eyre};
use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use std::process::ExitCode;
use std::time::Duration;
use tokio::time::{Instant, MissedTickBehavior};

/// How often a playing replay moves its cursor (and redraws, when it moved).
pub const TICK: Duration = Duration::from_millis(50);

/// Run `warroom replay`: load the incident (errors come before the terminal is touched), then
/// play it until `q` or a signal.
pub async fn run(
    config: &Config,
    store: &Store,
    id: &str,
    speed: f64,
) -> color_eyre::Result<ExitCode> {
    let speed = cursor::check_speed(speed)?;
    let loaded = load::load(store, id)?;
    let (theme, warning) = Theme::for_terminal(&config.theme);
    let mut replay = Replay::new(config, theme, loaded, speed);
    if let Some(w) = warning {
        replay.scene.model.notify(w, true, None);
    }
    let mut terminal = crate::tui::enter("warroom replay")?;
    let size = terminal.size().unwrap_or_default();
    update(
        &mut replay,
        Msg::Resize {
            width: size.width,
            height: size.height,
        },
    );
    let result = play(&mut terminal, &mut replay).await;
    crate::tui::restore();
    result?;
    Ok(match replay.quit {
        Some(Quit::Signal(signal)) => crate::signals::exit_code(signal),
        _ => ExitCode::SUCCESS,
    })
}

/// The replay's loop: keys, resizes, signals and a tick; a frame whenever something changed.
async fn play(terminal: &mut crate::tui::Term, replay: &mut Replay) -> color_eyre::Result<()> {
    let mut input = crate::tui::gated::WakeGated::new(EventStream::new());
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_tick = Instant::now();
    let mut signals = crate::signals::Signals::new();
    let mut first = true;
    loop {
        if replay.dirty() {
            terminal
                .draw(|f| view::draw(f, replay))
                .map_err(|e| eyre!("drawing failed: {e}"))?;
            replay.scene.model.dirty = false;
            if first {
                crate::tui::first_frame("replay");
            }
            first = false;
        }
        if replay.quit.is_some() {
            return Ok(());
        }
        let msg = tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(Event::Key(k))) => Some(Msg::Key(k)),
                Some(Ok(Event::Resize(width, height))) => Some(Msg::Resize { width, height }),
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e).wrap_err("reading terminal input failed"),
                // No more input: nobody can press a key again.
                None => return Ok(()),
            },
            _ = tick.tick() => {
                let now = Instant::now();
                let wall = now - last_tick;
                last_tick = now;
                Some(Msg::Tick(wall))
            }
            name = signals.next() => Some(Msg::Interrupted(name)),
        };
        if let Some(msg) = msg {
            update(replay, msg);
        }
    }
}
