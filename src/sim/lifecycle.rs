//! Faults firing, deploys rolling out, instances restarting: the changes of state that happen
//! to the fleet, from the scenario's schedule or from the team's actions.

use super::fleet::CRASHED;
use super::model::{Event, Sim};
use super::scenario::FaultKind;

impl Sim {
    /// Fire the scenario's faults that are due.
    pub(crate) fn fire_faults(&mut self, now: f64) {
        while let Some(f) = self.sc.faults.get(self.next_fault).cloned() {
            if f.at_s > now {
                break;
            }
            self.next_fault += 1;
            let until = f.until_s.unwrap_or(f64::INFINITY);
            match f.kind {
                FaultKind::Deploy => {
                    if let Some(v) = f
                        .version
                        .as_ref()
                        .and_then(|v| self.sc.version_index(v.get_ref()))
                    {
                        self.deploy_index(v);
                    }
                }
                FaultKind::Surge => self.surge = (f.factor.unwrap_or(1.0), until),
                FaultKind::Latency => self.extra_hold = (f.hold_ms.unwrap_or(0.0) / 1000.0, until),
            }
            self.events.push(Event {
                at_s: now,
                what: format!("fault: {}", f.note),
                mitigation: false,
                wrong: None,
            });
        }
    }

    /// Roll a version out over the instances, one after another within `rollout_s`.
    pub(crate) fn deploy_index(&mut self, v: usize) {
        let now = self.now();
        if self.deployed.last() != Some(&v) {
            self.deployed.push(v);
        }
        let n = self.instances.len().max(1) as f64;
        let rollout = self.sc.fleet.rollout_s;
        for (i, inst) in self.instances.iter_mut().enumerate() {
            inst.pending_version = Some((v, now + rollout * (i as f64 + 1.0) / n));
        }
    }

    /// Stop an instance for a restart; its waiting requests fail.
    pub(crate) fn restart_instance(&mut self, i: usize) {
        let now = self.now();
        let restart_s = self.sc.fleet.restart_s;
        let Some(inst) = self.instances.get_mut(i) else {
            return;
        };
        let lost = inst.stop(now, restart_s);
        for w in lost {
            for (k, &m) in w.mass.iter().enumerate() {
                inst.codes[CRASHED] += m;
                self.ledger.fail_fast(w.step, k, m);
            }
        }
    }
}
