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
/// quartile, median, third) and above zero, as do a function call and a
/// sample of the kernel's profile (in cycles); a shootdown needs a second CPU
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
    ensure!(out.median_cycles > 0, "lock in cycles: {out:?}");
    for (what, name) in [
        (KBENCH_CALL, "a call"),
        (KBENCH_KPROF_TICK, "a kernel sample"),
    ] {
        call(what, 20, at).map_err(|e| format!("{name}: {}", e.message()))?;
        ensure!(
            out.q1_ps <= out.median_ps && out.median_ps <= out.q3_ps && out.median_cycles > 0,
            "{name}: {out:?}"
        );
    }
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

/// kgmon(2), the kernel's own profile (kernel/src/kprof.rs): only root
/// may start, stop, reset or extract it; nothing to extract before the
/// first start; a second start is EALREADY; one spinner pinned to each
/// CPU makes every CPU's histogram count; the extract is a gmon.out whose
/// bins add up to the CPUs' sample counts, over the kernel's text; a
/// short buffer is ERANGE, a bad one EFAULT; a reset zeroes it all.
pub(super) fn the_kernel_profiles_itself_on_every_cpu() -> Outcome {
    let k = |op: u32, buf: usize, len: usize| raw(nr::KGMON, &[op as usize, buf, len]);
    if k(KGMON_STATE, 0, 0) == Ok(KGMON_NEVER) {
        expect_err(
            "extract before any start",
            k(KGMON_EXTRACT, 0, 0),
            Errno::ENODATA,
        )?;
        expect_err(
            "samples before any start",
            k(KGMON_CPU_SAMPLES, 0, 0),
            Errno::ENODATA,
        )?;
    }
    let child = sys::fork().map_err(|e| e.message())?;
    if child == 0 {
        if raw(nr::SETUID, &[1000]).is_err() {
            sys::exit(10);
        }
        let refused = [
            KGMON_START,
            KGMON_STOP,
            KGMON_RESET,
            KGMON_EXTRACT,
            KGMON_LOST_ARCS,
            KGMON_IRQS_OFF,
        ]
        .iter()
        .all(|&op| k(op, 0, 0) == Err(Errno::EPERM));
        sys::exit(if !refused {
            11
        } else if k(KGMON_STATE, 0, 0).is_err() {
            12
        } else {
            0
        });
    }
    let (_, status) = sys::wait4(child as i32, 0).map_err(|e| e.message())?;
    ensure!(
        sys::exited(status) == Some(0),
        "user 1000: status {status:#x} (10 setuid, 11 a change not EPERM, 12 the state refused)"
    );
    expect_err("op 9", k(9, 0, 0), Errno::EINVAL)?;
    expect_err("a workload of 0 ms", k(KGMON_SPIN, 0, 0), Errno::EINVAL)?;
    k(KGMON_STOP, 0, 0).map_err(|e| format!("stop: {}", e.message()))?;
    k(KGMON_START, 0, 0).map_err(|e| format!("start: {}", e.message()))?;
    expect_err("a second start", k(KGMON_START, 0, 0), Errno::EALREADY)?;
    ensure!(
        k(KGMON_STATE, 0, 0) == Ok(KGMON_RUNNING),
        "not running after a start"
    );
    let reset_at = sys::monotonic_nanos();
    k(KGMON_RESET, 0, 0).map_err(|e| format!("reset: {}", e.message()))?;
    // A kernel built without mcount has no call graph to lose calls from;
    // the profiled one (--kprof) has lost none yet, its tables just reset.
    let lost = k(KGMON_LOST_ARCS, 0, 0);
    ensure!(
        matches!(lost, Err(Errno::EOPNOTSUPP) | Ok(0)),
        "calls lost from the call graph: {lost:?}"
    );
    // One spinner in the kernel on each CPU at once.
    let cpus = running_cpus()? as usize;
    let mut spinners = alloc::vec::Vec::new();
    for cpu in 0..cpus {
        let pid = sys::fork().map_err(|e| e.message())?;
        if pid == 0 {
            let mask = 1u64 << cpu;
            let pinned = raw(nr::SCHED_SETAFFINITY, &[0, 8, &mask as *const u64 as usize]);
            let spun = k(KGMON_SPIN, 0, 300);
            sys::exit(if pinned.is_err() {
                20
            } else if spun.is_err() {
                21
            } else {
                0
            });
        }
        spinners.push(pid);
    }
    for pid in spinners {
        let (_, status) = sys::wait4(pid as i32, 0).map_err(|e| e.message())?;
        ensure!(
            sys::exited(status) == Some(0),
            "spinner: status {status:#x} (20 pinning, 21 the workload)"
        );
    }
    // An extract while it runs pauses it for a moment; the time profiled
    // must go on counting from where it was, not twice.
    k(KGMON_EXTRACT, 0, 0).map_err(|e| format!("extract while running: {}", e.message()))?;
    k(KGMON_STOP, 0, 0).map_err(|e| format!("stop: {}", e.message()))?;
    let wall_ns = sys::monotonic_nanos() - reset_at;
    let mut per_cpu = alloc::vec::Vec::new();
    for cpu in 0..cpus {
        per_cpu.push(k(KGMON_CPU_SAMPLES, 0, cpu).map_err(|e| e.message())?);
    }
    ensure!(
        per_cpu.iter().all(|&n| n >= 10),
        "samples per CPU {per_cpu:?}, after 300 ms in the kernel on each"
    );
    expect_err(
        "the samples of a CPU past the last",
        k(KGMON_CPU_SAMPLES, 0, cpus),
        Errno::EINVAL,
    )?;
    // The spinners' forks and waits took the process table's lock, which
    // turns interrupts off: its time was counted, and no rank's total is
    // more than the CPU time profiled.
    let (profiled, ranks) = interrupts_off(&k)?;
    ensure!(
        profiled.0 > 0 && profiled.0 <= wall_ns && profiled.1 == cpus,
        "interrupts off: profiled {profiled:?}, {cpus} CPUs, in {wall_ns} ns from the reset to the stop"
    );
    ensure!(
        ranks.iter().any(|(rank, ns)| rank == "Table" && *ns > 0),
        "interrupts off: no time under the process table's lock: {ranks:?}"
    );
    ensure!(
        ranks.iter().all(|(_, ns)| *ns <= profiled.0 * cpus as u64),
        "interrupts off: a rank's time past the CPU time profiled {profiled:?}: {ranks:?}"
    );
    let len = k(KGMON_EXTRACT, 0, 0).map_err(|e| e.message())?;
    let mut profile = alloc::vec![0u8; len];
    let at = profile.as_mut_ptr() as usize;
    expect_err(
        "a buffer one byte short",
        k(KGMON_EXTRACT, at, len - 1),
        Errno::ERANGE,
    )?;
    expect_err("a bad buffer", k(KGMON_EXTRACT, 16, len), Errno::EFAULT)?;
    ensure!(
        k(KGMON_EXTRACT, at, len) == Ok(len),
        "the extract's length changed"
    );
    let decoded = kcore::gmon::decode(&profile).map_err(|e| format!("gmon.out: {e:?}"))?;
    let total: u64 = decoded.bins.iter().map(|&b| u64::from(b)).sum();
    let saturated = decoded.bins.contains(&u16::MAX);
    let sum: usize = per_cpu.iter().sum();
    ensure!(
        saturated || total == sum as u64,
        "the histogram holds {total} samples, the CPUs counted {sum} ({per_cpu:?})"
    );
    ensure!(
        decoded.low_pc >= 0xffff_ffff_8000_0000 && decoded.low_pc < decoded.high_pc,
        "the histogram covers {:#x}..{:#x}, not the kernel's text",
        decoded.low_pc,
        decoded.high_pc
    );
    k(KGMON_RESET, 0, 0).map_err(|e| format!("reset: {}", e.message()))?;
    // The histogram keeps its length; the profiled kernel's arcs (--kprof)
    // are gone, and with them the rest of the file.
    let after = k(KGMON_EXTRACT, at, len).map_err(|e| e.message())?;
    let decoded = kcore::gmon::decode(&profile[..after]).map_err(|e| format!("gmon.out: {e:?}"))?;
    ensure!(
        decoded.bins.iter().all(|&b| b == 0) && decoded.arcs.is_empty(),
        "a bin or an arc counts after a reset: {} arcs",
        decoded.arcs.len()
    );
    for cpu in 0..cpus {
        ensure!(
            k(KGMON_CPU_SAMPLES, 0, cpu) == Ok(0),
            "CPU {cpu} counts after a reset"
        );
    }
    let after_reset = interrupts_off(&k)?;
    ensure!(
        after_reset.0.0 == 0 && after_reset.1.is_empty(),
        "interrupts off after a reset: {after_reset:?}"
    );
    Ok(())
}

/// What `KGMON_IRQS_OFF` said: the time profiled (ns) and the CPUs, and
/// each rank's time with interrupts off (ns).
type InterruptsOff = ((u64, usize), alloc::vec::Vec<(alloc::string::String, u64)>);

/// Reads `KGMON_IRQS_OFF` through `k` (the test's kgmon call).
fn interrupts_off(
    k: &dyn Fn(u32, usize, usize) -> Result<usize, Errno>,
) -> Result<InterruptsOff, String> {
    let why = |e: Errno| format!("interrupts off: {}", e.message());
    let len = k(KGMON_IRQS_OFF, 0, 0).map_err(why)?;
    let mut text = alloc::vec![0u8; len];
    let got = k(KGMON_IRQS_OFF, text.as_mut_ptr() as usize, len).map_err(why)?;
    let text = core::str::from_utf8(&text[..got]).map_err(|_| "interrupts off: not text")?;
    let mut lines = text.lines();
    let first: alloc::vec::Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let (Some(&"profiled"), Some(Ok(ns)), Some(Ok(cpus))) = (
        first.first(),
        first.get(1).map(|n| n.parse::<u64>()),
        first.get(2).map(|n| n.parse::<usize>()),
    ) else {
        return Err(format!("interrupts off: first line {first:?}"));
    };
    let mut ranks = alloc::vec::Vec::new();
    for line in lines {
        let (rank, ns) = line
            .split_once(' ')
            .and_then(|(r, n)| Some((r, n.parse::<u64>().ok()?)))
            .ok_or_else(|| format!("interrupts off: line {line:?}"))?;
        ranks.push((rank.into(), ns));
    }
    Ok(((ns, cpus), ranks))
}
