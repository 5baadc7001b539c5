//! Runbooks: the executor, gates, batches, HTTP and exec steps, the journal of a run, resume.

#[path = "../support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod faulty_journal;
    pub mod kube;
    pub mod prometheus;
    pub mod realstack;
    pub mod redis;
    pub mod runbook_run;
    pub mod sim;
    pub mod skip;
}

mod runbook_batch;
mod runbook_e2e;
mod runbook_exec;
mod runbook_exec_setsid;
mod runbook_executor;
mod runbook_gate;
mod runbook_haproxy;
mod runbook_http;
mod runbook_injection;
mod runbook_journal;
mod runbook_journal_faults;
mod runbook_journal_kill;
mod runbook_kubernetes;
mod runbook_prometheus;
mod runbook_real;
mod runbook_real_bad;
mod runbook_redis;
mod runbook_resume;
mod runbook_safety;
mod runbook_sql;
