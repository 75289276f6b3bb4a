//! Program start-up (crt0).
//!
//! The kernel enters `_start` with the stack as Linux lays it out: argc, the
//! argv pointers and a NULL, the envp pointers and a NULL, then the aux
//! vector. `_start` passes that stack pointer to `start_main`, which records
//! argv, envp and auxv for `env.rs`, calls the program's C-ABI `main`, and
//! exits with its result.

use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

pub(crate) static ARGC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static ARGV: AtomicPtr<*const u8> = AtomicPtr::new(core::ptr::null_mut());
pub(crate) static ENVP: AtomicPtr<*const u8> = AtomicPtr::new(core::ptr::null_mut());
pub(crate) static AUXV: AtomicPtr<u64> = AtomicPtr::new(core::ptr::null_mut());

unsafe extern "C" {
    fn main(argc: i32, argv: *const *const u8, envp: *const *const u8) -> i32;
}

/// The profiled start-up (BSD's gcrt0.o): profile the whole text before main
/// and write gmon.out when the program exits. Programs built with the
/// `gprof` feature always do; any other does when its environment has
/// `LIBC_LITE_PROFILE=FILE` (what `/bin/prof` sets), without call counts.
fn gcrt0() {
    unsafe extern "C" {
        /// The start of the program image (defined by the linker).
        static __ehdr_start: u8;
        /// The end of the text (defined by the linker).
        static etext: u8;
    }
    let (low, high) = (&raw const __ehdr_start as usize, &raw const etext as usize);
    crate::gmon::monstartup(low, high);
    crate::exit::atexit(crate::gmon::_mcleanup);
}

/// The entry point: rbp = 0 ends frame-pointer walks here.
///
/// # Safety
/// Only the kernel calls this, with the initial process stack.
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _start() -> ! {
    core::arch::naked_asm!(
        "xor ebp, ebp",
        "mov rdi, rsp",
        "and rsp, -16",
        "call {start}",
        "ud2",
        start = sym start_main,
    )
}

unsafe extern "C" fn start_main(stack: *const usize) -> ! {
    // SAFETY: the kernel built this stack: argc, then argc pointers and a
    // NULL, then the environment pointers and a NULL, then the aux vector.
    unsafe {
        let argc = *stack;
        let argv = stack.add(1) as *mut *const u8;
        let envp = argv.add(argc + 1);
        let mut end = envp;
        while !(*end).is_null() {
            end = end.add(1);
        }
        ARGC.store(argc, Ordering::Relaxed);
        ARGV.store(argv, Ordering::Relaxed);
        ENVP.store(envp, Ordering::Relaxed);
        AUXV.store(end.add(1) as *mut u64, Ordering::Relaxed);
        if cfg!(feature = "gprof") || crate::gmon::profile_file().is_some() {
            gcrt0();
        }
        let status = main(argc as i32, argv, envp);
        crate::exit::exit(status)
    }
}
