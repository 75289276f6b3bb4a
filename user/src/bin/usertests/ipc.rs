//! System V IPC: bad pointers lose nothing, and shared memory and
//! semaphore undo go at the end.

use super::*;

/// System V IPC with bad pointers: EFAULT each time, and nothing lost: a
/// message whose receive buffer was bad stays queued (Linux drops it).
pub(super) fn sysv_ipc_bad_pointers_lose_nothing() -> Outcome {
    use abi::ipc::*;
    const KERNEL: usize = 0xffff_8000_0000_0000;
    let q = raw(nr::MSGGET, &[IPC_PRIVATE as usize, 0o600]).map_err(|e| e.message())?;
    let mut msg = [0u8; 16];
    msg[..8].copy_from_slice(&7i64.to_ne_bytes());
    msg[8..13].copy_from_slice(b"hello");
    let good = msg.as_mut_ptr() as usize;
    raw(nr::MSGSND, &[q, good, 5, 0]).map_err(|e| e.message())?;
    let s = raw(nr::SEMGET, &[IPC_PRIVATE as usize, 2, 0o600]).map_err(|e| e.message())?;
    let m = raw(nr::SHMGET, &[IPC_PRIVATE as usize, 4096, 0o600]).map_err(|e| e.message())?;
    for bad in [8, KERNEL, usize::MAX - 4] {
        let calls: [(&str, usize, [usize; 5]); 9] = [
            ("msgsnd", nr::MSGSND, [q, bad, 5, 0, 0]),
            ("msgrcv", nr::MSGRCV, [q, bad, 16, 0, IPC_NOWAIT as usize]),
            (
                "msgctl IPC_STAT",
                nr::MSGCTL,
                [q, IPC_STAT as usize, bad, 0, 0],
            ),
            (
                "msgctl IPC_SET",
                nr::MSGCTL,
                [q, IPC_SET as usize, bad, 0, 0],
            ),
            ("semop", nr::SEMOP, [s, bad, 1, 0, 0]),
            ("semtimedop timeout", nr::SEMTIMEDOP, [s, good, 1, bad, 0]),
            ("semctl GETALL", nr::SEMCTL, [s, 0, GETALL as usize, bad, 0]),
            ("semctl SETALL", nr::SEMCTL, [s, 0, SETALL as usize, bad, 0]),
            (
                "shmctl IPC_STAT",
                nr::SHMCTL,
                [m, IPC_STAT as usize, bad, 0, 0],
            ),
        ];
        for (what, number, args) in calls {
            expect_err(
                &format!("{what}({bad:#x})"),
                raw(number, &args),
                Errno::EFAULT,
            )?;
        }
    }
    let mut ds = [0u8; 120];
    let stat = ds.as_mut_ptr() as usize;
    raw(nr::MSGCTL, &[q, IPC_STAT as usize, stat]).map_err(|e| e.message())?;
    let queued = u64::from_ne_bytes(ds[80..88].try_into().expect("8 bytes"));
    ensure!(
        queued == 1,
        "{queued} messages queued after the bad receives"
    );
    let mut out = [0u8; 16];
    let got = raw(nr::MSGRCV, &[q, out.as_mut_ptr() as usize, 8, 7, 0]).map_err(|e| e.message())?;
    ensure!(
        &out[8..8 + got] == b"hello",
        "received {:?}",
        &out[8..8 + got]
    );
    for (number, id) in [(nr::MSGCTL, q), (nr::SEMCTL, s), (nr::SHMCTL, m)] {
        let args = if number == nr::SEMCTL {
            [id, 0, IPC_RMID as usize]
        } else {
            [id, IPC_RMID as usize, 0]
        };
        raw(number, &args).map_err(|e| e.message())?;
    }
    Ok(())
}

/// A shared memory segment removed while attached keeps its pages for
/// its attachments (a forked child's too) and gives every frame back when
/// the last goes; a process killed while holding SEM_UNDO adjustments has
/// them applied.
pub(super) fn sysv_memory_and_undo_go_at_the_end() -> Outcome {
    use abi::ipc::*;
    let before = frames_in_use();
    let pages = 64;
    let id =
        raw(nr::SHMGET, &[IPC_PRIVATE as usize, pages * 4096, 0o600]).map_err(|e| e.message())?;
    let at = raw(nr::SHMAT, &[id, 0, 0]).map_err(|e| e.message())?;
    for i in 0..pages {
        // SAFETY: inside the fresh attachment.
        unsafe { core::ptr::write_volatile((at + i * 4096) as *mut u8, i as u8) };
    }
    let used = frames_in_use().saturating_sub(before);
    ensure!(
        used >= pages as u64,
        "{used} frames for {pages} touched pages"
    );
    raw(nr::SHMCTL, &[id, IPC_RMID as usize, 0]).map_err(|e| e.message())?;
    let status = child_status(|| {
        // SAFETY: the child inherited the attachment.
        let seen = unsafe { core::ptr::read_volatile((at + 5 * 4096) as *const u8) };
        i32::from(seen)
    })?;
    ensure!(sys::exited(status) == Some(5), "the child read {status:#x}");
    raw(nr::SHMDT, &[at]).map_err(|e| e.message())?;
    expect_err(
        "IPC_STAT after the last shmdt",
        raw(nr::SHMCTL, &[id, IPC_STAT as usize, 0]),
        Errno::EINVAL,
    )?;
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 8, "{left} frames still in use after the last detach");

    let s = raw(nr::SEMGET, &[IPC_PRIVATE as usize, 1, 0o600]).map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        let up = abi::ipc::SemBuf {
            sem_num: 0,
            sem_op: 2,
            sem_flg: SEM_UNDO,
        };
        let _ = raw(nr::SEMOP, &[s, &up as *const _ as usize, 1]);
        let _ = libc_lite::signal::pause();
        sys::exit(0);
    }
    let value = || raw(nr::SEMCTL, &[s, 0, GETVAL as usize]).unwrap_or(99);
    // Waited for by the clock, not by a count of yields: on several CPUs a
    // yield with nothing else to run on this CPU returns at once, and the
    // child may not have started yet on another.
    let start = sys::monotonic_nanos();
    while value() != 2 && sys::monotonic_nanos() - start < 10_000_000_000 {
        sys::sched_yield();
    }
    let raised = value();
    sys::kill(pid as i32, SIGKILL).map_err(|e| e.message())?;
    sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let after = value();
    raw(nr::SEMCTL, &[s, 0, IPC_RMID as usize]).map_err(|e| e.message())?;
    ensure!(raised == 2, "the child's semop gave {raised} in 10 s");
    ensure!(after == 0, "value {after} after the killed child's undo");
    Ok(())
}
