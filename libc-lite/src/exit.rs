//! exit(3) and atexit(3): handlers run in reverse order of registration,
//! then the process ends. `_exit` (`sys::exit`) skips them.

use core::cell::UnsafeCell;

const MAX_HANDLERS: usize = 32;

struct Handlers(UnsafeCell<([Option<extern "C" fn()>; MAX_HANDLERS], usize)>);
// SAFETY: programs here are single-threaded.
unsafe impl Sync for Handlers {}
static HANDLERS: Handlers = Handlers(UnsafeCell::new(([None; MAX_HANDLERS], 0)));

/// Registers `f` to run at exit; returns 0, or -1 when the table is full.
#[unsafe(no_mangle)]
pub extern "C" fn atexit(f: extern "C" fn()) -> i32 {
    // SAFETY: single-threaded, see Handlers.
    let (table, len) = unsafe { &mut *HANDLERS.0.get() };
    if *len == MAX_HANDLERS {
        return -1;
    }
    table[*len] = Some(f);
    *len += 1;
    0
}

/// Runs the atexit handlers (last registered first), then ends the process.
#[unsafe(no_mangle)]
pub extern "C" fn exit(status: i32) -> ! {
    loop {
        // SAFETY: single-threaded; each handler is taken out before it runs,
        // so one that calls exit again does not run twice.
        let next = unsafe {
            let (table, len) = &mut *HANDLERS.0.get();
            if *len == 0 {
                break;
            }
            *len -= 1;
            table[*len].take()
        };
        if let Some(f) = next {
            f();
        }
    }
    crate::sys::exit(status)
}
