//! /bin/free: physical memory, as the kernel's frame allocator sees it.
#![no_std]
#![no_main]
use libc_lite::println;
libc_lite::entry!(run);
fn run() -> i32 {
    let k = match user::kinfo_or_report() {
        Ok(k) => k,
        Err(status) => return status,
    };
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
