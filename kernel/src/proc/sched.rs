//! The scheduler: round-robin over runnable processes, xv6 style.
//!
//! The boot stack becomes the scheduler's own thread (`run`): it picks the
//! next runnable process after the last one, switches to its kernel stack and
//! address space, and gets control back when that process gives up the CPU:
//! because its time slice ran out (preemption, on the way back to user mode),
//! it went to sleep on a wait channel, or it exited. With nothing runnable the
//! scheduler halts until the next interrupt.
//!
//! Sleeping is `wait_event(chan, poll)`: with interrupts off, `poll` checks
//! the condition and, if it does not hold, the process sleeps on `chan` until
//! someone calls `wakeup(chan)`. Checking and sleeping with interrupts off is
//! what keeps a wakeup from an interrupt handler from being lost in between.

use abi::Errno;
use x86_64::instructions::interrupts;
use x86_64::registers::model_specific::FsBase;

use super::{Pid, State, TABLE, current};
use crate::arch::{gdt, syscall};
use crate::mm::kstack;

/// What a sleeping process waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chan {
    /// A child of this pid to change state (wait4).
    Child(Pid),
    /// Data or room in the pipe at this address.
    Pipe(usize),
    /// A line of console input.
    Console,
    /// The tick at `Process::wake_at` (nanosleep).
    Timer,
    /// Only a signal (pause, sigsuspend).
    Signal,
}

/// Ticks in a time slice: 10 ms, at least one tick.
pub fn time_slice() -> u32 {
    (crate::clock::hz() / 100).max(1)
}

/// The scheduler loop; never returns.
pub fn run() -> ! {
    let mut last: Pid = 0;
    loop {
        interrupts::disable();
        let next = {
            let mut table = TABLE.lock();
            let runnable =
                |(_, p): &(&Pid, &alloc::boxed::Box<super::Process>)| p.state == State::Runnable;
            let pick = table
                .procs
                .range(last + 1..)
                .find(runnable)
                .or_else(|| table.procs.range(..=last).find(runnable))
                .map(|(pid, _)| *pid);
            pick.map(|pid| {
                table.current = Some(pid);
                let p = table.procs.get_mut(&pid).expect("picked from the table");
                p.state = State::Running;
                p.slice_left = time_slice();
                p.fpu.restore();
                if let Some(mem) = p.mem.as_ref() {
                    mem.space.activate();
                }
                (pid, p.kstack.id(), p.kstack.entry_top(), p.fs_base)
            })
        };
        match next {
            Some((pid, stack, stack_top, fs_base)) => {
                last = pid;
                gdt::set_kernel_stack(x86_64::VirtAddr::new(stack_top));
                syscall::set_kernel_stack(stack_top);
                FsBase::write(x86_64::VirtAddr::new_truncate(fs_base));
                crate::sync::assert_none_held("scheduler");
                // Runs the process until it gives up the CPU.
                kstack::resume(stack);
                TABLE.lock().current = None;
            }
            None => interrupts::enable_and_hlt(),
        }
    }
}

/// Switches from the current process to the scheduler. Interrupts must be
/// off and the process's state already changed from Running.
pub fn switch_to_scheduler() {
    assert!(
        !interrupts::are_enabled(),
        "switch_to_scheduler with interrupts on"
    );
    let stack = current(|p| {
        p.fpu.save();
        p.kstack.id()
    });
    crate::sync::assert_none_held("switch_to_scheduler");
    kstack::suspend(stack);
}

/// Gives up the CPU but stays runnable.
pub fn yield_now() {
    let were_enabled = interrupts::are_enabled();
    interrupts::disable();
    current(|p| p.state = State::Runnable);
    switch_to_scheduler();
    if were_enabled {
        interrupts::enable();
    }
}

/// Sleeps on `chan` until `poll` returns Some. A signal that is not blocked
/// ends the wait with `ERESTARTSYS`, which the way back to user mode turns
/// into a restart of the call or `EINTR` (signal.rs).
pub fn wait_event<R>(chan: Chan, mut poll: impl FnMut() -> Option<R>) -> Result<R, Errno> {
    let were_enabled = interrupts::are_enabled();
    let result = loop {
        interrupts::disable();
        if let Some(r) = poll() {
            break Ok(r);
        }
        if current(|p| p.sig.interrupts()) {
            break Err(crate::signal::ERESTARTSYS);
        }
        current(|p| p.state = State::Sleeping(chan));
        switch_to_scheduler();
    };
    if were_enabled {
        interrupts::enable();
    }
    result
}

/// Makes every process sleeping on `chan` runnable.
pub fn wakeup(chan: Chan) {
    for p in TABLE.lock().procs.values_mut() {
        if p.state == State::Sleeping(chan) {
            p.state = State::Runnable;
        }
    }
}

/// Sleeps for `ticks` clock ticks.
pub fn sleep_ticks(ticks: u64) -> Result<(), Errno> {
    let deadline = crate::clock::ticks() + ticks;
    current(|p| p.wake_at = deadline);
    wait_event(Chan::Timer, || {
        (crate::clock::ticks() >= deadline).then_some(())
    })
}
