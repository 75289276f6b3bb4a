//! libc-lite: the user-space C library of profkern, written in Rust.
//!
//! Programs link it for their start-up code (`_start` in `start.rs`), the
//! system call wrappers (`sys.rs`, numbers from the shared `abi` crate),
//! formatted output (`print!`, `println!`, `eprintln!` in `io.rs`), a heap on
//! brk (`malloc.rs`), their arguments (`env.rs`), signals and timers
//! (`signal.rs`), profil emulated with SIGPROF (`sigprof.rs`) and threads
//! (`thread.rs`). Rust programs use it as
//! a crate; the C interface grows on top of the same pieces.

#![no_std]

extern crate alloc;

pub mod c;
pub mod env;
pub mod exit;
pub mod gmon;
pub mod io;
pub mod malloc;
pub mod signal;
pub mod sigprof;
pub mod start;
pub mod sys;
pub mod syscall;
pub mod thread;

pub use abi::Errno;
pub use abi::types;

/// Declares the program's entry: `libc_lite::entry!(run)` with
/// `fn run() -> i32`; the arguments are in `libc_lite::env::args()`.
#[macro_export]
macro_rules! entry {
    ($run:path) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn main(
            _argc: i32,
            _argv: *const *const u8,
            _envp: *const *const u8,
        ) -> i32 {
            $run()
        }
    };
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    eprintln!("{}: panic: {}", env::program_name(), info);
    sys::exit(101)
}
