//! Several CPUs: where each process runs (ps, getcpu) and the kernel's
//! own measurements (kbench).

use super::*;

/// The CPUs the kernel runs (sched_getaffinity's mask, which has them all).
pub(super) fn running_cpus() -> Result<u32, String> {
    let mut mask = 0u64;
    raw(
        nr::SCHED_GETAFFINITY,
        &[0, 8, &mut mask as *mut u64 as usize],
    )
    .map_err(|e| e.message())?;
    Ok(mask.count_ones())
}

/// ps's CPU column (proclist's `cpu`, /proc/PID/stat's processor): the
/// caller's own row names the CPU getcpu says it runs on, an exited child
/// that is not yet reaped names none, and children spinning at once are
/// each on a CPU of their own (a thread runs on one CPU at a time, and
/// none is a CPU the machine lacks).
pub(super) fn ps_shows_the_cpu_each_process_runs_on() -> Outcome {
    let cpus = running_cpus()?;
    let rows = || -> Result<alloc::vec::Vec<ProcInfo>, String> {
        let mut rows = [ProcInfo::default(); 64];
        let n = sys::proclist(&mut rows).map_err(|e| e.message())?.min(64);
        Ok(rows[..n].to_vec())
    };
    let me = sys::getpid();
    // The scheduler may move the caller between two looks; a look whose
    // getcpu before and after agree must agree with the row too.
    let mut agreed = false;
    for _ in 0..50 {
        let before = sys::getcpu().map_err(|e| e.message())?;
        let row = rows()?.into_iter().find(|p| p.pid == me).map(|p| p.cpu);
        let after = sys::getcpu().map_err(|e| e.message())?;
        if before == after {
            ensure!(
                row == Some(before),
                "getcpu says CPU {before}, ps's row says {row:?}"
            );
            agreed = true;
            break;
        }
    }
    ensure!(agreed, "getcpu never gave the same CPU twice in a row");
    expect_err(
        "getcpu with a bad pointer",
        raw(nr::GETCPU, &[16, 0, 0]),
        Errno::EFAULT,
    )?;

    let zombie = sys::fork().map_err(|e| e.message())?;
    if zombie == 0 {
        sys::exit(0);
    }
    // Spinners, one per CPU but this one's.
    let mut spinners = alloc::vec::Vec::new();
    for _ in 1..cpus {
        let pid = sys::fork().map_err(|e| e.message())?;
        if pid == 0 {
            loop {
                core::hint::spin_loop();
            }
        }
        spinners.push(pid);
    }
    let t0 = sys::monotonic_nanos();
    let mut zombie_row = None;
    let mut checked = 0;
    while sys::monotonic_nanos() - t0 < 300_000_000 {
        let rows = rows()?;
        zombie_row = rows.iter().find(|p| p.pid == zombie).copied();
        for p in rows.iter().filter(|p| p.state == PROC_RUNNING) {
            ensure!(
                p.cpu < cpus,
                "pid {} runs on CPU {}, of {cpus}",
                p.pid,
                p.cpu
            );
            // (A process of several threads shows its leader's CPU, which
            // another thread of it need not be on.)
            let twin = rows.iter().find(|q| {
                q.pid != p.pid
                    && q.state == PROC_RUNNING
                    && q.cpu == p.cpu
                    && p.threads == 1
                    && q.threads == 1
            });
            if let Some(q) = twin {
                return Err(format!(
                    "pids {} and {} both run on CPU {}",
                    p.pid, q.pid, p.cpu
                ));
            }
        }
        checked += 1;
    }
    for &pid in &spinners {
        sys::kill(pid as i32, SIGKILL).map_err(|e| e.message())?;
        sys::waitpid(pid as i32).map_err(|e| e.message())?;
    }
    sys::waitpid(zombie as i32).map_err(|e| e.message())?;
    ensure!(checked > 0, "ps was never read");
    let zombie_row = zombie_row.ok_or("the exited child had no row")?;
    ensure!(
        zombie_row.state == PROC_ZOMBIE && zombie_row.cpu == PROC_NO_CPU,
        "an exited child: state {}, cpu {}",
        zombie_row.state,
        zombie_row.cpu
    );
    Ok(())
}

/// kbench (call 1007): a lock measurement comes back ordered (first
/// quartile, median, third) and above zero; a shootdown needs a second CPU
/// (ENXIO on one); a bad kind, no rounds or too many are EINVAL, and a bad
/// pointer EFAULT, with nothing measured.
pub(super) fn kbench_measures_and_refuses_bad_requests() -> Outcome {
    let mut out = KBench::default();
    let call =
        |what: u32, rounds: usize, out: usize| raw(nr::KBENCH, &[what as usize, rounds, out]);
    let at = &mut out as *mut KBench as usize;
    call(KBENCH_LOCK, 20, at).map_err(|e| format!("lock: {}", e.message()))?;
    ensure!(
        0 < out.q1_ps && out.q1_ps <= out.median_ps && out.median_ps <= out.q3_ps,
        "lock: {out:?}"
    );
    let shootdown = call(KBENCH_SHOOTDOWN, 5, at);
    if running_cpus()? > 1 {
        shootdown.map_err(|e| format!("shootdown: {}", e.message()))?;
        ensure!(out.median_ps > 0, "shootdown: {out:?}");
    } else {
        expect_err("a shootdown on one CPU", shootdown, Errno::ENXIO)?;
    }
    expect_err("kbench of kind 9", call(9, 5, at), Errno::EINVAL)?;
    expect_err(
        "kbench of 0 rounds",
        call(KBENCH_LOCK, 0, at),
        Errno::EINVAL,
    )?;
    expect_err(
        "kbench of too many rounds",
        call(KBENCH_LOCK, KBENCH_MAX_ROUNDS as usize + 1, at),
        Errno::EINVAL,
    )?;
    expect_err(
        "kbench into a bad pointer",
        call(KBENCH_LOCK, 5, 16),
        Errno::EFAULT,
    )
}
