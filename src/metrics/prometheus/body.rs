//! Reading an answer's body within a byte bound (issue 20).
//!
//! Two bounds hold while a body is read, chunk by chunk:
//! - one answer is refused once it passes its own cap (`MAX_BODY`, or less for label lists);
//! - all the answers one client is reading at once share one [`Budget`] of `MAX_BODY` bytes, so
//!   four hostile 200 MB answers in flight (eight panels refreshing) hold about 32 MiB together,
//!   not four times that. What is charged is what the buffer holds resident, and it is given
//!   back when the body is dropped.
//!
//! A small body grows by doubling in the heap, as any `Vec`. Past [`SPILL_AT`] it moves, once,
//! to one reservation of its whole cap: the allocator maps that from the system (it is larger
//! than glibc's largest mmap threshold for the 32 MiB cap), pages become resident only as bytes
//! are written, it is never reallocated (no copy held twice, no freed half left behind in a
//! thread's arena), and dropping it unmaps it: a refused hostile answer leaves nothing resident.
//! Measured before this (tests/real/prometheus_body_memory.rs): four hostile answers took the
//! process 76 to 108 MiB above its baseline; with a shared budget alone, 44 to 62 MiB, up to
//! 30 MiB of it still resident afterwards in glibc's arenas.

use crate::metrics::source::SourceError;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A body larger than this moves to one reservation of its whole cap (see the module's
/// documentation).
pub const SPILL_AT: usize = 1 << 20;

/// Bytes the bodies of one client may hold together.
#[derive(Debug)]
pub struct Budget {
    left: AtomicUsize,
}

impl Budget {
    pub fn new(total: usize) -> Arc<Budget> {
        Arc::new(Budget {
            left: AtomicUsize::new(total),
        })
    }

    /// Take `n` bytes; false (nothing taken) when fewer are left.
    fn take(&self, n: usize) -> bool {
        self.left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(n)
            })
            .is_ok()
    }

    fn give(&self, n: usize) {
        self.left.fetch_add(n, Ordering::AcqRel);
    }
}

/// A body being read or read: its bytes and the share of the budget they hold.
#[derive(Debug)]
pub struct Body {
    bytes: Vec<u8>,
    /// The buffer is one reservation of the whole cap (resident: what was written).
    spilled: bool,
    charged: usize,
    budget: Arc<Budget>,
}

impl Body {
    /// An empty body, charged to `budget` as it grows.
    pub fn new(budget: Arc<Budget>) -> Body {
        Body {
            bytes: Vec::new(),
            spilled: false,
            charged: 0,
            budget,
        }
    }

    /// Reserve room for `n` bytes at once (an announced `Content-Length`); false when `n`
    /// passes `max_bytes` or the budget.
    pub fn expect(&mut self, n: usize, max_bytes: usize) -> bool {
        if n > max_bytes {
            return false;
        }
        if n > SPILL_AT {
            // Resident as it is written: charged chunk by chunk.
            self.bytes = Vec::with_capacity(n);
            self.spilled = true;
            return true;
        }
        if !self.charge(n) {
            return false;
        }
        self.bytes.reserve_exact(n);
        true
    }

    /// Append a chunk; false (and nothing appended) when it would pass `max_bytes` or the
    /// budget.
    pub fn push(&mut self, chunk: &[u8], max_bytes: usize) -> bool {
        let need = self.bytes.len() + chunk.len();
        if need > max_bytes {
            return false;
        }
        if self.spilled || need > SPILL_AT {
            if !self.charge(need) {
                return false;
            }
            if need > self.bytes.capacity() {
                // Move once to the whole cap: never reallocated after this.
                let mut whole = Vec::with_capacity(max_bytes);
                whole.extend_from_slice(&self.bytes);
                self.bytes = whole;
                self.spilled = true;
            }
        } else if need > self.bytes.capacity() {
            let cap = self
                .bytes
                .capacity()
                .saturating_mul(2)
                .max(16 * 1024)
                .min(max_bytes)
                .max(need);
            if !self.charge(cap) {
                return false;
            }
            self.bytes.reserve_exact(cap - self.bytes.len());
        }
        self.bytes.extend_from_slice(chunk);
        true
    }

    /// Hold `resident` bytes of the budget in all (more is taken, never given back here).
    fn charge(&mut self, resident: usize) -> bool {
        if resident <= self.charged {
            return true;
        }
        if !self.budget.take(resident - self.charged) {
            return false;
        }
        self.charged = resident;
        true
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }
}

/// Read the body of `resp` within `max_bytes` (its announced length first, then chunk by
/// chunk), charged to `budget`: the one bounded reader of every HTTP answer warroom reads
/// (Prometheus, and the alert endpoints). Past the cap it is refused with
/// [`SourceError::TooLarge`] and what was read is freed at once; `transport` says what a
/// connection error means to the caller.
pub async fn read(
    resp: &mut reqwest::Response,
    budget: Arc<Budget>,
    max_bytes: usize,
    transport: impl Fn(reqwest::Error) -> SourceError,
) -> Result<Body, SourceError> {
    // With gzip the announced length is the compressed one (and reqwest hides it): the bound
    // is always on the bytes decoded.
    let mut body = Body::new(budget);
    if let Some(n) = resp.content_length()
        && !body.expect(usize::try_from(n).unwrap_or(usize::MAX), max_bytes)
    {
        return Err(SourceError::TooLarge(max_bytes));
    }
    while let Some(chunk) = resp.chunk().await.map_err(&transport)? {
        if !body.push(&chunk, max_bytes) {
            // Dropping `body` frees what was read and gives its share back at once.
            return Err(SourceError::TooLarge(max_bytes));
        }
    }
    Ok(body)
}

impl Drop for Body {
    fn drop(&mut self) {
        // Free the bytes before the budget says they are free.
        self.bytes = Vec::new();
        self.budget.give(self.charged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_body_is_refused_past_its_cap_and_gives_its_share_back() {
        let budget = Budget::new(1 << 20);
        let mut b = Body::new(budget.clone());
        assert!(b.push(&[1; 1000], 4096));
        assert!(b.push(&[2; 3096], 4096));
        assert!(!b.push(&[3; 1], 4096), "one byte past the cap");
        assert_eq!(b.bytes.len(), 4096);
        assert_eq!(b.charged, 4096, "a buffer never grows past its cap");
        assert_eq!(budget.left.load(Ordering::Acquire), (1 << 20) - b.charged);
        drop(b);
        assert_eq!(budget.left.load(Ordering::Acquire), 1 << 20);
    }

    #[test]
    fn bodies_together_stay_within_the_budget() {
        let budget = Budget::new(64 * 1024);
        let chunk = [0u8; 1024];
        let mut a = Body::new(budget.clone());
        let mut b = Body::new(budget.clone());
        let (mut a_ok, mut b_ok) = (true, true);
        for _ in 0..200 {
            a_ok = a_ok && a.push(&chunk, 1 << 20);
            b_ok = b_ok && b.push(&chunk, 1 << 20);
        }
        assert!(!a_ok && !b_ok, "200 KiB each cannot fit in 64 KiB together");
        assert!(!b.push(&chunk, 1 << 20), "the budget is spent");
        assert!(a.charged + b.charged <= 64 * 1024);
        assert!(a.bytes.len() + b.bytes.len() <= 64 * 1024);
        drop(a);
        // Freed room is usable by the other.
        assert!(b.push(&chunk, 1 << 20));
        drop(b);
        assert_eq!(budget.left.load(Ordering::Acquire), 64 * 1024);
    }

    #[test]
    fn an_announced_length_is_reserved_exactly_or_refused() {
        let budget = Budget::new(1 << 20);
        let mut b = Body::new(budget.clone());
        assert!(!b.expect(5000, 4096));
        assert!(b.expect(3000, 4096));
        assert_eq!(b.charged, 3000);
        assert!(b.push(&[0; 3000], 4096));
        assert_eq!(
            b.charged, 3000,
            "no growth past an announced length that was right"
        );
    }

    #[test]
    fn a_large_body_moves_once_to_its_whole_cap_and_is_charged_as_written() {
        let cap = 8 << 20;
        let budget = Budget::new(cap);
        let mut b = Body::new(budget.clone());
        let chunk = vec![7u8; 64 * 1024];
        while b.bytes.len() + chunk.len() <= SPILL_AT {
            assert!(b.push(&chunk, cap));
        }
        assert!(!b.spilled);
        assert!(b.push(&chunk, cap));
        assert!(b.spilled, "past SPILL_AT the body moves to its whole cap");
        assert_eq!(b.bytes.capacity(), cap);
        let at = b.bytes.as_ptr();
        while b.bytes.len() + chunk.len() <= cap {
            assert!(b.push(&chunk, cap));
            assert_eq!(b.charged, b.bytes.len(), "charged as written");
        }
        assert_eq!(b.bytes.as_ptr(), at, "never reallocated");
        assert!(!b.push(&chunk, cap));
        assert!(b.as_slice().iter().all(|&x| x == 7));
        drop(b);
        assert_eq!(budget.left.load(Ordering::Acquire), cap);
    }

    #[test]
    fn an_announced_large_length_is_charged_as_written() {
        let budget = Budget::new(4 << 20);
        let mut b = Body::new(budget.clone());
        assert!(b.expect(3 << 20, 4 << 20));
        assert_eq!(b.charged, 0);
        assert!(b.push(&[1; 1000], 4 << 20));
        assert_eq!(b.charged, 1000);
        assert!(!Body::new(budget).expect(5 << 20, 4 << 20), "past the cap");
    }
}
