//! /bin/fault KIND: fault on purpose, to show (and test) that a faulting
//! program ends alone with the right signal. KIND is one of
//! null, kernel, divide, opcode, privileged, write-text, exec-stack,
//! stack-overflow.
#![no_std]
#![no_main]
use libc_lite::eprintln;
libc_lite::entry!(run);

#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let pad = core::hint::black_box([depth; 512]);
    recurse(depth + 1) + pad[0]
}

fn run() -> i32 {
    let kind = libc_lite::env::args().nth(1).unwrap_or("");
    // SAFETY (all blocks below): none; each one faults on purpose.
    unsafe {
        match kind {
            "null" => core::ptr::read_volatile(core::ptr::null::<u64>()) as i32,
            "kernel" => core::ptr::read_volatile(0xffff_ffff_8000_0000 as *const u64) as i32,
            "divide" => {
                let zero = core::hint::black_box(0u64);
                let r: u64;
                core::arch::asm!("div {0}", in(reg) zero, inout("rax") 1u64 => r, inout("rdx") 0u64 => _);
                r as i32
            }
            "opcode" => {
                core::arch::asm!("ud2");
                0
            }
            "privileged" => {
                core::arch::asm!("cli");
                0
            }
            "write-text" => {
                let text = run as *const () as *mut u8;
                core::ptr::write_volatile(text, 0xc3);
                0
            }
            "exec-stack" => {
                // A `ret` on the stack: NX must stop the jump there.
                let code = core::hint::black_box([0xc3u8; 16]);
                let f: extern "C" fn() = core::mem::transmute(code.as_ptr());
                f();
                0
            }
            "stack-overflow" => recurse(0) as i32,
            _ => {
                eprintln!(
                    "usage: fault null|kernel|divide|opcode|privileged|write-text|exec-stack|stack-overflow"
                );
                2
            }
        }
    }
}
