//! When the console draws (pure: no I/O, `now` passed in). The loop in [`super::runtime`] asks
//! before each wait whether a frame is due and when to wake for the next one, and tells the
//! pacer what woke it.
//!
//! - At most one frame per [`FRAME_INTERVAL`]; the first goes at once.
//! - The answers of one refresh make one frame: the first answer that lands while others are
//!   in flight starts a gather, which ends when nothing is in flight any more, or [`GATHER`]
//!   later. A key or a resize ends it: those draw at once.
//! - A tick's own changes draw only when they change what the clock alone shows (the idle
//!   key, `ui::idle`). A change it does make just before a refresh is held for that refresh's
//!   frame ([`HOLD`] at most); anything but a tick ends the hold (issue 20).
//! - The first wave (the first fetches and the runbook list) goes [`FIRST_WAVE_AFTER`] the
//!   first frame.

use std::time::{Duration, Instant};

/// Shortest time between two frames (the render cap).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Longest a frame waits for the rest of a refresh's answers once the first has landed.
pub const GATHER: Duration = Duration::from_millis(60);
/// The slow tick: clocks, staleness ages, refresh scheduling.
pub const TICK: Duration = Duration::from_millis(250);
/// Longest a change the clock alone makes (the status bar's minute, an age, a notice expiring)
/// waits to be drawn with the frame of a refresh that is coming, instead of a frame of its
/// own: the idle console then draws once per refresh (issue 20).
pub const HOLD: Duration = Duration::from_secs(5);
/// How long after the first frame the first fetches (and the runbook list) start. The terminal
/// still has to show that frame, and on a small machine beside a local Prometheus, eight range
/// queries answered in the same milliseconds took its CPU: the boxes showed 2 ms later than
/// grafatui's with a live Prometheus and no later with a dead one (issue 20). One frame
/// interval is not seen, and the data still comes several times sooner than grafatui's.
pub const FIRST_WAVE_AFTER: Duration = FRAME_INTERVAL;

/// The loop's pacing state.
#[derive(Debug, Clone, Default)]
pub struct Pacer {
    last_draw: Option<Instant>,
    /// What the clock alone changes on screen, as last drawn (`ui::idle::key`).
    idle_key: Option<u64>,
    /// While the answers of one refresh land, the frame waits until then for the last of them.
    gather_until: Option<Instant>,
    /// A change the clock alone made waits until then for the next refresh's frame.
    hold_until: Option<Instant>,
    /// When the first wave goes, once the first frame is drawn (and until it has gone).
    first_wave_at: Option<Instant>,
}

/// What woke the loop, other than its tick ([`Pacer::tick_changed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A key or a resize: drawn at once.
    Key,
    /// A query's answer: drawn with the rest of its refresh.
    Answer,
    /// Anything else (another worker's message, a signal, the render or first-wave timer).
    Other,
}

/// What becomes of a change a tick made to a model that had nothing left to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickChange {
    /// Nothing the clock alone shows reads differently: no frame.
    Unseen,
    /// Drawn with the frame of the refresh that is coming (or when the hold runs out).
    Held,
    /// Drawn as soon as the frame interval allows.
    Drawn,
}

impl Pacer {
    /// Whether to draw at `now` a model that is `dirty`, with `in_flight` queries out. A gather
    /// ends here once nothing is in flight or its time is up, a hold once its time is up.
    pub fn draw_now(&mut self, now: Instant, dirty: bool, in_flight: usize) -> bool {
        if self
            .gather_until
            .is_some_and(|g| now >= g || in_flight == 0)
        {
            self.gather_until = None;
        }
        if self.hold_until.is_some_and(|h| now >= h) {
            self.hold_until = None;
        }
        dirty && self.gather_until.is_none() && self.hold_until.is_none() && now >= self.due(now)
    }

    /// A frame was drawn at `now`, showing what `idle_key` covers. Returns whether it was the
    /// first: the first wave is then due [`FIRST_WAVE_AFTER`] it.
    pub fn drawn(&mut self, now: Instant, idle_key: u64) -> bool {
        self.idle_key = Some(idle_key);
        let first = self.last_draw.replace(now).is_none();
        if first {
            self.first_wave_at = Some(now + FIRST_WAVE_AFTER);
        }
        first
    }

    /// When a model with something to draw should wake the loop: the frame interval, a gather
    /// and a hold all passed (`now` when none is pending).
    pub fn render_at(&self, now: Instant) -> Instant {
        self.due(now)
            .max(self.gather_until.unwrap_or(now))
            .max(self.hold_until.unwrap_or(now))
    }

    /// When the first wave is to go: `None` before the first frame and once it has gone.
    pub fn first_wave_at(&self) -> Option<Instant> {
        self.first_wave_at
    }

    /// The first wave went.
    pub fn first_wave_gone(&mut self) {
        self.first_wave_at = None;
    }

    /// A tick at `now` changed a model that had nothing left to draw; `idle_key` is what the
    /// clock alone now shows and `refresh_due_in` when the next refresh goes (the model's).
    /// The refresh goes on the first tick at or after it is due, so a hold lasts until a tick
    /// and a gather past that (a hold already running is kept).
    pub fn tick_changed(
        &mut self,
        now: Instant,
        idle_key: u64,
        refresh_due_in: Option<Duration>,
    ) -> TickChange {
        if self.idle_key == Some(idle_key) {
            return TickChange::Unseen;
        }
        match refresh_due_in.filter(|d| *d <= HOLD) {
            Some(due) => {
                self.hold_until.get_or_insert(now + due + TICK + GATHER);
                TickChange::Held
            }
            None => TickChange::Drawn,
        }
    }

    /// Something but a tick woke the loop, and `update` has had it: the model was `was_dirty`
    /// before and is `dirty` now, with `in_flight` queries out. It ends a hold; a key ends a
    /// gather too, and a refresh's answer that has others in flight starts one (unless the
    /// frame was waiting already for something else).
    pub fn woke(
        &mut self,
        now: Instant,
        wake: Wake,
        was_dirty: bool,
        dirty: bool,
        in_flight: usize,
    ) {
        let held = self.hold_until.take().is_some();
        match wake {
            Wake::Key => self.gather_until = None,
            Wake::Answer if (!was_dirty || held) && dirty && in_flight > 0 => {
                self.gather_until.get_or_insert(now + GATHER);
            }
            Wake::Answer | Wake::Other => {}
        }
    }

    /// When the frame interval allows the next frame (`now` before the first).
    fn due(&self, now: Instant) -> Instant {
        self.last_draw.map_or(now, |t| t + FRAME_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop on simulated time: a model reduced to what the pacer reads, and a clock that
    /// only moves when a test says so.
    struct Sim {
        pacer: Pacer,
        start: Instant,
        now: Instant,
        dirty: bool,
        in_flight: usize,
        /// What the clock alone shows, as the model has it now.
        idle_key: u64,
        /// When each frame was drawn, from the start.
        frames: Vec<Duration>,
    }

    impl Sim {
        fn new() -> Self {
            let start = Instant::now();
            Sim {
                pacer: Pacer::default(),
                start,
                now: start,
                dirty: true,
                in_flight: 0,
                idle_key: 1,
                frames: Vec::new(),
            }
        }

        /// The first frame drawn, and `d` gone by since.
        fn drawn_then(d: Duration) -> Self {
            let mut sim = Sim::new();
            sim.frame();
            sim.now += d;
            sim
        }

        fn at(&self) -> Duration {
            self.now - self.start
        }

        /// The top of the loop: draw when the pacer says so. Returns whether it drew.
        fn frame(&mut self) -> bool {
            if !self.pacer.draw_now(self.now, self.dirty, self.in_flight) {
                return false;
            }
            self.pacer.drawn(self.now, self.idle_key);
            self.dirty = false;
            self.frames.push(self.at());
            true
        }

        /// Let `d` pass, waking (and drawing) whenever the loop's render timer would fire.
        fn run(&mut self, d: Duration) {
            let end = self.now + d;
            loop {
                self.frame();
                let wake = self.pacer.render_at(self.now);
                if !self.dirty || wake > end {
                    break;
                }
                self.now = wake.max(self.now);
                self.pacer
                    .woke(self.now, Wake::Other, true, true, self.in_flight);
                let drew = self.frame();
                assert!(
                    drew || self.pacer.render_at(self.now) > self.now,
                    "woken with nothing left to wait for, and nothing drawn"
                );
            }
            self.now = end;
            self.frame();
        }

        /// Something but a tick changes the model (`in_flight` then).
        fn wake(&mut self, wake: Wake, in_flight: usize) {
            let was_dirty = self.dirty;
            self.dirty = true;
            self.in_flight = in_flight;
            self.pacer
                .woke(self.now, wake, was_dirty, self.dirty, in_flight);
        }

        /// A tick changes the model: what the clock shows becomes `idle_key`.
        fn tick(&mut self, idle_key: u64, refresh_due_in: Option<Duration>) -> TickChange {
            self.idle_key = idle_key;
            if self.dirty {
                // A frame is coming anyway: the loop asks the pacer nothing.
                return TickChange::Drawn;
            }
            let change = self.pacer.tick_changed(self.now, idle_key, refresh_due_in);
            self.dirty = change != TickChange::Unseen;
            change
        }
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_first_frame_draws_at_once() {
        let mut sim = Sim::new();
        assert_eq!(sim.pacer.render_at(sim.now), sim.now);
        assert!(sim.frame());
        assert_eq!(sim.frames, [Duration::ZERO]);
        // Drawn: nothing more until something changes.
        sim.run(Duration::from_secs(1));
        assert_eq!(sim.frames, [Duration::ZERO]);
    }

    #[test]
    fn a_second_change_within_the_frame_interval_waits_for_it() {
        let mut sim = Sim::drawn_then(5 * MS);
        sim.wake(Wake::Key, 0);
        assert!(!sim.frame(), "drawn 5 ms after the last frame");
        assert_eq!(sim.pacer.render_at(sim.now), sim.start + FRAME_INTERVAL);
        sim.run(FRAME_INTERVAL);
        assert_eq!(sim.frames, [Duration::ZERO, FRAME_INTERVAL]);
        // Past the interval a change draws at once.
        sim.now += Duration::from_secs(1);
        sim.wake(Wake::Key, 0);
        assert!(sim.frame());
    }

    #[test]
    fn the_answers_of_one_refresh_make_one_frame() {
        let mut sim = Sim::drawn_then(Duration::from_secs(5));
        // Four answers 10 ms apart: the first starts the gather, the last ends it.
        for left in (0..4).rev() {
            sim.wake(Wake::Answer, left);
            sim.run(10 * MS);
        }
        assert_eq!(sim.frames, [Duration::ZERO, Duration::from_millis(5030)]);
    }

    #[test]
    fn a_gather_ends_when_nothing_is_in_flight_or_at_most_gather_later() {
        // The last answer lands: drawn at once, with no wait for the gather's end.
        let mut sim = Sim::drawn_then(Duration::from_secs(1));
        sim.wake(Wake::Answer, 1);
        assert!(!sim.frame());
        sim.now += MS;
        sim.wake(Wake::Answer, 0);
        assert!(sim.frame(), "nothing is in flight: the gather is over");
        // One answer hangs: the frame goes GATHER after the first.
        let mut sim = Sim::drawn_then(Duration::from_secs(1));
        let first = sim.at();
        sim.wake(Wake::Answer, 3);
        sim.run(Duration::from_secs(1));
        assert_eq!(sim.frames, [Duration::ZERO, first + GATHER]);
    }

    #[test]
    fn a_key_ends_a_gather() {
        let mut sim = Sim::drawn_then(Duration::from_secs(1));
        sim.wake(Wake::Answer, 3);
        sim.now += MS;
        sim.wake(Wake::Key, 3);
        assert!(sim.frame(), "the key waited for the refresh");
    }

    #[test]
    fn a_tick_that_changes_nothing_the_clock_shows_draws_nothing() {
        let mut sim = Sim::new();
        sim.frame();
        // The seconds move; the screen shows minutes.
        for _ in 0..4 {
            sim.now += TICK;
            assert_eq!(sim.tick(1, None), TickChange::Unseen);
            sim.run(Duration::ZERO);
        }
        assert_eq!(sim.frames.len(), 1);
        // The minute turns, no refresh is coming: drawn.
        sim.now += TICK;
        assert_eq!(sim.tick(2, None), TickChange::Drawn);
        assert!(sim.frame());
    }

    #[test]
    fn a_tick_change_before_a_refresh_waits_for_its_frame_and_a_key_ends_the_wait() {
        let mut sim = Sim::drawn_then(Duration::from_secs(10));
        let turned = sim.at();
        // The minute turns 2 s before a refresh: held.
        assert_eq!(sim.tick(2, Some(Duration::from_secs(2))), TickChange::Held);
        sim.run(Duration::from_secs(1));
        assert_eq!(sim.frames.len(), 1, "the held change drew alone");
        // The refresh's answers end the hold and draw it, gathered.
        sim.now += Duration::from_secs(1);
        sim.wake(Wake::Answer, 1);
        sim.run(5 * MS);
        sim.wake(Wake::Answer, 0);
        sim.run(Duration::ZERO);
        assert_eq!(sim.frames.len(), 2);
        assert_eq!(sim.frames[1], turned + Duration::from_millis(2005));

        // Held again; a key ends the hold at once.
        sim.now += Duration::from_secs(10);
        assert_eq!(sim.tick(3, Some(Duration::from_secs(4))), TickChange::Held);
        sim.run(Duration::from_secs(1));
        assert_eq!(sim.frames.len(), 2);
        sim.wake(Wake::Key, 0);
        assert!(sim.frame());
    }

    #[test]
    fn a_held_change_draws_when_the_refresh_does_not_come() {
        let mut sim = Sim::drawn_then(Duration::from_secs(10));
        let turned = sim.at();
        let due = Duration::from_secs(3);
        assert_eq!(sim.tick(2, Some(due)), TickChange::Held);
        // A later tick keeps the first hold's end.
        sim.now += TICK;
        assert_eq!(
            sim.pacer.tick_changed(sim.now, 3, Some(due)),
            TickChange::Held
        );
        sim.run(Duration::from_secs(10));
        assert_eq!(sim.frames, [Duration::ZERO, turned + due + TICK + GATHER]);
        // A refresh further off than HOLD: no hold.
        sim.now += TICK;
        assert_eq!(sim.tick(4, Some(HOLD + MS)), TickChange::Drawn);
    }

    #[test]
    fn the_first_wave_goes_a_frame_interval_after_the_first_frame() {
        let mut pacer = Pacer::default();
        let t0 = Instant::now();
        assert_eq!(pacer.first_wave_at(), None, "due before the first frame");
        let t1 = t0 + Duration::from_millis(3);
        assert!(pacer.draw_now(t1, true, 0));
        assert!(pacer.drawn(t1, 1), "the first frame");
        assert_eq!(pacer.first_wave_at(), Some(t1 + FIRST_WAVE_AFTER));
        let t2 = t1 + Duration::from_secs(1);
        assert!(!pacer.drawn(t2, 1), "a second first frame");
        assert_eq!(pacer.first_wave_at(), Some(t1 + FIRST_WAVE_AFTER));
        pacer.first_wave_gone();
        assert_eq!(pacer.first_wave_at(), None);
    }
}
