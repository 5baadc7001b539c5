//! A stream polled again only after it woke its task (issue 20: idle means idle).
//!
//! crossterm's `EventStream::poll_next` starts with `poll_internal(Some(0))`, which takes the
//! global event reader with parking_lot's `try_lock_for(0)`. While no key is pressed that lock is
//! held by the stream's own reader thread (blocked in `poll(None)` on the terminal), and
//! parking_lot spins before it honours a zero timeout: 3 rounds of `pause`, then 7
//! `sched_yield`. The console's loop polls every branch of its `select!` each time it wakes
//! (its 250 ms tick, every answer, every signal), so an idle console made some 40 to 60
//! `sched_yield` a second for nothing: the stream had not woken it.
//!
//! [`WakeGated`] passes a poll on to the stream only when the stream asked to be polled: after
//! it returned an item (there may be more buffered), or after it woke the task. Otherwise it
//! returns `Pending` at once, keeping the latest waker so the stream's wake still reaches the
//! task.

use futures::Stream;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

struct Gate {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wake for Gate {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        if let Ok(task) = self.task.lock()
            && let Some(w) = task.as_ref()
        {
            w.wake_by_ref();
        }
    }
}

/// `inner`, polled only when it has something to say. See the module's documentation.
pub struct WakeGated<S> {
    inner: S,
    gate: Arc<Gate>,
    waker: Waker,
    /// The inner stream must be polled next time whatever the gate says: at the start, and
    /// after an item.
    open: bool,
}

impl<S> WakeGated<S> {
    pub fn new(inner: S) -> WakeGated<S> {
        let gate = Arc::new(Gate {
            woken: AtomicBool::new(false),
            task: Mutex::new(None),
        });
        WakeGated {
            inner,
            waker: Waker::from(gate.clone()),
            gate,
            open: true,
        }
    }

    /// Whether the next poll reaches the inner stream.
    #[cfg(test)]
    fn is_open(&self) -> bool {
        self.open || self.gate.woken.load(Ordering::Acquire)
    }
}

impl<S: Stream + Unpin> Stream for WakeGated<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = &mut *self;
        if let Ok(mut task) = this.gate.task.lock()
            && !task.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
        {
            *task = Some(cx.waker().clone());
        }
        // Take the wake before polling: a wake during the poll opens the next one.
        let woken = this.gate.woken.swap(false, Ordering::AcqRel);
        if !this.open && !woken {
            return Poll::Pending;
        }
        let mut inner_cx = Context::from_waker(&this.waker);
        match Pin::new(&mut this.inner).poll_next(&mut inner_cx) {
            Poll::Ready(item) => {
                this.open = true;
                Poll::Ready(item)
            }
            Poll::Pending => {
                this.open = false;
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A stream that counts its polls and yields an item whenever `ready` says so, waking
    /// the last waker it was given when `ready` is set from outside.
    #[derive(Clone, Default)]
    struct Probe {
        polls: Arc<AtomicUsize>,
        ready: Arc<AtomicUsize>,
        waker: Arc<Mutex<Option<Waker>>>,
    }

    impl Probe {
        fn push(&self) {
            self.ready.fetch_add(1, Ordering::AcqRel);
            if let Some(w) = self.waker.lock().unwrap().take() {
                w.wake();
            }
        }
    }

    impl Stream for Probe {
        type Item = u32;
        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
            self.polls.fetch_add(1, Ordering::AcqRel);
            if self
                .ready
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok()
            {
                return Poll::Ready(Some(7));
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    struct CountWake(AtomicUsize);
    impl Wake for CountWake {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::AcqRel);
        }
    }

    #[test]
    fn idle_polls_do_not_reach_the_stream_and_a_wake_still_does() {
        let probe = Probe::default();
        let mut gated = WakeGated::new(probe.clone());
        let task = Arc::new(CountWake(AtomicUsize::new(0)));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut gated).poll_next(&mut cx).is_pending());
        assert_eq!(
            probe.polls.load(Ordering::Acquire),
            1,
            "the first poll goes through"
        );
        // A hundred wakeups of the task for other reasons (ticks, answers): none reaches it.
        for _ in 0..100 {
            assert!(Pin::new(&mut gated).poll_next(&mut cx).is_pending());
        }
        assert_eq!(probe.polls.load(Ordering::Acquire), 1);
        assert!(!gated.is_open());
        // Input arrives: the stream wakes the task, and the next poll reads it.
        probe.push();
        probe.push();
        assert_eq!(
            task.0.load(Ordering::Acquire),
            1,
            "the stream's wake reached the task"
        );
        assert_eq!(
            Pin::new(&mut gated).poll_next(&mut cx),
            Poll::Ready(Some(7))
        );
        // After an item the stream is polled again (more may be buffered) until it is pending.
        assert_eq!(
            Pin::new(&mut gated).poll_next(&mut cx),
            Poll::Ready(Some(7))
        );
        assert!(Pin::new(&mut gated).poll_next(&mut cx).is_pending());
        let polls = probe.polls.load(Ordering::Acquire);
        assert!(Pin::new(&mut gated).poll_next(&mut cx).is_pending());
        assert_eq!(probe.polls.load(Ordering::Acquire), polls);
    }

    #[test]
    fn a_wake_reaches_the_latest_task() {
        let probe = Probe::default();
        let mut gated = WakeGated::new(probe.clone());
        let first = Arc::new(CountWake(AtomicUsize::new(0)));
        let second = Arc::new(CountWake(AtomicUsize::new(0)));
        let w1 = Waker::from(first.clone());
        let w2 = Waker::from(second.clone());
        assert!(
            Pin::new(&mut gated)
                .poll_next(&mut Context::from_waker(&w1))
                .is_pending()
        );
        // Polled from another task (the future was moved): the gate keeps the new waker.
        assert!(
            Pin::new(&mut gated)
                .poll_next(&mut Context::from_waker(&w2))
                .is_pending()
        );
        probe.push();
        assert_eq!(first.0.load(Ordering::Acquire), 0);
        assert_eq!(second.0.load(Ordering::Acquire), 1);
    }
}
