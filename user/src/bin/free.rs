//! /bin/free: physical memory, as the kernel's frame allocator sees it.
#![no_std]
#![no_main]
use libc_lite::{eprintln, println, sys};
libc_lite::entry!(run);
fn run() -> i32 {
    match sys::kinfo() {
        Ok(k) => {
            let kib = |frames: u64| frames * 4;
            println!("       total KiB   free KiB  kernel heap KiB");
            println!(
                "frames {:>9} {:>10} {:>16}",
                kib(k.total_frames),
                kib(k.free_frames),
                kib(k.heap_frames)
            );
            0
        }
        Err(e) => {
            eprintln!("free: {}", e.message());
            1
        }
    }
}
