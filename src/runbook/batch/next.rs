//! The rollout's decision of what happens next.

use super::*;

impl Rollout {
    /// What to do at `now`. Call it after every report; it never starts an action after the
    /// run deadline or beyond the budget.
    pub fn next(&mut self, now: Duration) -> Next {
        match self.phase.clone() {
            Phase::Finished(f) => Next::Finished(f),
            Phase::Paused(p) => Next::WaitOperator(p),
            Phase::Gate => Next::Gate { batch: self.batch },
            Phase::InBatch => self.watch(now),
            Phase::Ready => self.start_batch(now),
        }
    }

    fn watch(&mut self, now: Duration) -> Next {
        let mut flying = Vec::new();
        let mut lost_now = Vec::new();
        for k in 0..self.in_batch.len() {
            let i = self.in_batch[k];
            if let State::InFlight { started } = self.instances[i].state {
                if now.saturating_sub(started) > self.cfg.instance_deadline {
                    self.instances[i].state = State::Lost;
                    self.lost += 1;
                    self.refresh(i);
                    lost_now.push(i);
                    self.events.push(BatchEvent::InstanceLost {
                        target: self.instances[i].name.clone(),
                    });
                } else {
                    flying.push(self.instances[i].name.clone());
                }
            }
        }
        if !flying.is_empty() {
            return Next::Watch(flying);
        }
        let lost: Vec<String> = self
            .in_batch
            .iter()
            .filter(|&&i| self.instances[i].state == State::Lost)
            .map(|&i| self.instances[i].name.clone())
            .collect();
        if !lost.is_empty() {
            self.pause(Pause::InstancesLost {
                batch: self.batch,
                targets: lost.clone(),
            });
            return Next::WaitOperator(Pause::InstancesLost {
                batch: self.batch,
                targets: lost,
            });
        }
        if self.cfg.gated {
            self.phase = Phase::Gate;
            Next::Gate { batch: self.batch }
        } else {
            self.phase = Phase::Ready;
            self.start_batch(now)
        }
    }

    fn start_batch(&mut self, now: Duration) -> Next {
        let waiting_left = !self.requeue.is_empty()
            || self.instances[self.cursor..]
                .iter()
                .any(|x| x.state == State::Waiting);
        if !waiting_left {
            self.finish(Finished::Completed);
            return Next::Finished(Finished::Completed);
        }
        if self.lost > 0 && self.lost >= self.cfg.failure_budget {
            let f = Finished::Stopped {
                reason: format!(
                    "failure budget spent: {} instance(s) did not come back, budget {}; no further batch starts",
                    self.lost, self.cfg.failure_budget
                ),
            };
            self.finish(f.clone());
            return Next::Finished(f);
        }
        if now >= self.deadline {
            let p = Pause::RunDeadline {
                after: self.cfg.run_deadline,
            };
            self.pause(p.clone());
            return Next::WaitOperator(p);
        }
        // Budget 0 starts nothing; over budget already (instances down before the start),
        // nothing starts either, not even instances that are down anyway.
        let mut room =
            if self.cfg.max_unavailable == 0 || self.unavailable > self.cfg.max_unavailable {
                0
            } else {
                self.cfg.max_unavailable - self.unavailable
            };
        let over = self.cfg.max_unavailable == 0 || self.unavailable > self.cfg.max_unavailable;
        let mut chosen = Vec::new();
        // Candidates: requeued lost instances first, then waiting ones in order.
        let mut candidates: Vec<usize> = std::mem::take(&mut self.requeue);
        let mut scan = self.cursor;
        while chosen.len() < self.cfg.batch_size {
            let (i, requeued) = if !candidates.is_empty() {
                (candidates.remove(0), true)
            } else {
                while scan < self.instances.len() && self.instances[scan].state != State::Waiting {
                    scan += 1;
                }
                if scan >= self.instances.len() {
                    break;
                }
                scan += 1;
                (scan - 1, false)
            };
            // An instance already unavailable costs nothing more to act on.
            let cost = usize::from(!self.instances[i].unavailable);
            if over || cost > room {
                // A waiting instance stays waiting and is found again by the next scan.
                if requeued {
                    candidates.insert(0, i);
                }
                break;
            }
            room -= cost;
            chosen.push(i);
        }
        self.requeue = candidates;
        if chosen.is_empty() {
            let p = Pause::BudgetExhausted {
                unavailable: self.unavailable,
                already_unhealthy: self.already_unhealthy,
                budget: self.cfg.max_unavailable,
            };
            self.pause(p.clone());
            return Next::WaitOperator(p);
        }
        self.batch += 1;
        let mut names = Vec::with_capacity(chosen.len());
        for &i in &chosen {
            self.instances[i].state = State::InFlight { started: now };
            self.instances[i].healthy_since = None;
            self.refresh(i);
            names.push(self.instances[i].name.clone());
        }
        while self.cursor < self.instances.len()
            && self.instances[self.cursor].state != State::Waiting
        {
            self.cursor += 1;
        }
        self.in_batch = chosen;
        self.phase = Phase::InBatch;
        self.events.push(BatchEvent::BatchStarted {
            batch: self.batch,
            targets: names.clone(),
        });
        Next::Act {
            batch: self.batch,
            targets: names,
        }
    }
}
