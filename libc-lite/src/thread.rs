//! Threads for libc-lite programs: `spawn` a function on a stack of its
//! own, `join` it. The same three kernel pieces pthreads stand on: clone
//! with the thread flags (the new thread shares memory, files and
//! handlers), CLONE_CHILD_CLEARTID (the kernel writes 0 to the thread's id
//! word when it exits, and wakes a futex waiter there) and futex (join
//! sleeps on that word).
//!
//! libc-lite's heap and output are not made for two threads at once: a
//! thread should compute and report through atomics, and leave printing
//! and allocating to the thread that spawned it.

use abi::sys::{CLONE, EXIT, FUTEX};
use abi::types::*;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::Errno;
use crate::syscall::syscall;

/// Bytes of stack a thread gets.
pub const STACK_SIZE: usize = 64 * 1024;

const THREAD_FLAGS: u64 = CLONE_VM
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SIGHAND
    | CLONE_THREAD
    | CLONE_SYSVSEM
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID;

// clone_thread(flags, stack_top, parent_tid, child_tid, entry, arg): puts
// entry and arg on the new stack, then clone. The child pops them and calls
// entry(arg) on its own stack, then exits (this thread only); the parent
// returns clone's answer. In the child nothing of the parent's frame may be
// used: it is on another stack.
core::arch::global_asm!(
    ".globl libc_lite_clone_thread",
    ".type libc_lite_clone_thread, @function",
    "libc_lite_clone_thread:",
    "sub rsi, 16",
    "mov [rsi], r8",
    "mov [rsi + 8], r9",
    "mov r10, rcx",
    "xor r8, r8",
    "mov eax, {clone}",
    "syscall",
    "test rax, rax",
    "jnz 2f",
    "xor ebp, ebp",
    "pop rax",
    "pop rdi",
    "call rax",
    "xor edi, edi",
    "mov eax, {exit}",
    "syscall",
    "ud2",
    "2:",
    "ret",
    ".size libc_lite_clone_thread, . - libc_lite_clone_thread",
    clone = const CLONE,
    exit = const EXIT,
);

unsafe extern "C" {
    fn libc_lite_clone_thread(
        flags: u64,
        stack_top: u64,
        parent_tid: *mut u32,
        child_tid: *mut u32,
        entry: extern "C" fn(usize),
        arg: usize,
    ) -> isize;
}

/// A running thread; `join` waits for it and frees its stack.
pub struct Thread {
    /// The thread's id while it runs, 0 once it has exited (the kernel
    /// clears it). Boxed: its address is the kernel's, so it must not move.
    tid: Box<AtomicU32>,
    stack: Vec<u8>,
}

/// Starts `entry(arg)` in a new thread of this process.
pub fn spawn(entry: extern "C" fn(usize), arg: usize) -> Result<Thread, Errno> {
    let tid = Box::new(AtomicU32::new(0));
    let stack = alloc::vec![0u8; STACK_SIZE];
    let top = (stack.as_ptr() as u64 + STACK_SIZE as u64) & !15;
    let word = tid.as_ptr();
    // SAFETY: the stack and the id word live in the returned Thread, which
    // `join` keeps until the kernel has cleared the word, that is until the
    // thread has exited and touches neither any more.
    let ret = unsafe { libc_lite_clone_thread(THREAD_FLAGS, top, word, word, entry, arg) };
    Errno::from_return(ret)?;
    Ok(Thread { tid, stack })
}

impl Thread {
    /// The thread's id (0 once it has exited).
    pub fn id(&self) -> u32 {
        self.tid.load(Ordering::Acquire)
    }

    /// Waits until the thread has exited.
    pub fn join(self) {
        loop {
            let now = self.tid.load(Ordering::Acquire);
            if now == 0 {
                break;
            }
            // SAFETY: the word is live; the kernel only reads it.
            let _ = unsafe {
                syscall(
                    FUTEX,
                    &[
                        self.tid.as_ptr() as usize,
                        FUTEX_WAIT as usize,
                        now as usize,
                        0,
                    ],
                )
            };
        }
        drop(self.stack);
    }
}
