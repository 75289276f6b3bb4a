//! In-kernel self-tests, run when the kernel boots with `mode=selftest`.
//!
//! They check the machinery that user programs cannot see directly: the frame
//! allocator, page tables, the heap, the tick rate and exception return. Each
//! prints one `selftest: ok NAME` or `selftest: FAIL NAME: why` line, which
//! `cargo xtask test` counts; then the machine powers off with status 0 when
//! all passed. `crash=KIND` boots check the other half of the promise: a
//! kernel fault ends in a readable report and a failure status.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use x86_64::VirtAddr;
use x86_64::structures::paging::PageTableFlags as Flags;

use crate::arch::{self, power, rtc, trap};
use crate::clock;
use crate::mm::{frames, heap, paging::AddressSpace, phys_to_virt};

type TestResult = Result<(), String>;
type Test = (&'static str, fn() -> TestResult);

fn check(condition: bool, what: impl FnOnce() -> String) -> TestResult {
    if condition { Ok(()) } else { Err(what()) }
}

const TESTS: &[Test] = &[
    (
        "frames_alloc_zeroed_distinct_and_returned",
        frames_alloc_free,
    ),
    ("frames_shared_until_last_release", frames_share),
    (
        "paging_new_address_space_map_translate_drop",
        paging_address_space,
    ),
    ("heap_alloc_free_and_grow", heap_grow),
    ("breakpoint_returns", breakpoint_returns),
    ("uaccess_fault_in_copy_is_recovered", uaccess_fixup),
    ("uaccess_rejects_bad_ranges", uaccess_checks),
    (
        "profil_update_never_writes_kernel_memory",
        profil_kernel_buffer,
    ),
    ("tick_rate_matches_hz", tick_rate),
    (
        "smap_stops_kernel_reads_of_user_pages",
        smap_blocks_stray_reads,
    ),
    ("smep_is_on", smep_on),
    ("kernel_text_and_rodata_are_read_only", kernel_read_only),
    (
        "kernel_data_and_stacks_are_not_executable",
        kernel_no_execute,
    ),
    (
        "no_kernel_frame_is_both_writable_and_executable",
        kernel_write_xor_execute,
    ),
    (
        "no_program_frame_is_both_writable_and_executable",
        programs_write_xor_execute,
    ),
    (
        "system_ticks_are_charged_to_the_entry_pc",
        entry_pc_survives_a_rewritten_frame,
    ),
];

/// Runs every test and powers off with the result.
pub fn run_all() -> ! {
    let mut failed = 0;
    for (name, test) in TESTS {
        match test() {
            Ok(()) => crate::println!("selftest: ok {name}"),
            Err(why) => {
                failed += 1;
                crate::println!("selftest: FAIL {name}: {why}");
            }
        }
    }
    crate::println!("selftest: {} passed, {failed} failed", TESTS.len() - failed);
    power::exit(u8::from(failed > 0))
}

fn frames_alloc_free() -> TestResult {
    // Allocated before counting: growing the heap would take frames too.
    let mut got = Vec::with_capacity(256);
    let mut sorted: Vec<u64> = Vec::with_capacity(256);
    let before = frames::free_count();
    for i in 0..256u64 {
        let frame = frames::alloc().ok_or("out of frames")?;
        let page = phys_to_virt(frame.start_address()).as_mut_ptr::<u64>();
        // SAFETY: the frame is ours and mapped by the physical window.
        let first = unsafe { page.read() };
        check(first == 0, || format!("frame {frame:?} not zeroed"))?;
        // SAFETY: as above.
        unsafe { page.write(i) };
        got.push(frame);
    }
    check(frames::free_count() == before - 256, || {
        "free count did not drop by 256".into()
    })?;
    sorted.extend(got.iter().map(|f| f.start_address().as_u64()));
    sorted.sort();
    sorted.dedup();
    check(sorted.len() == 256, || {
        "a frame was handed out twice".into()
    })?;
    for frame in got {
        frames::release(frame);
    }
    check(frames::free_count() == before, || "frames lost".into())
}

fn frames_share() -> TestResult {
    let before = frames::free_count();
    let frame = frames::alloc().ok_or("out of frames")?;
    frames::share(frame);
    check(frames::users(frame) == 2, || "share did not count".into())?;
    frames::release(frame);
    check(frames::free_count() == before - 1, || {
        "freed while still shared".into()
    })?;
    frames::release(frame);
    check(frames::free_count() == before, || {
        "not freed by the last user".into()
    })
}

fn paging_address_space() -> TestResult {
    let before = frames::free_count();
    {
        let space = AddressSpace::new().ok_or("out of memory")?;
        let addr = VirtAddr::new(0x40_0000);
        let frame = frames::alloc().ok_or("out of frames")?;
        // SAFETY: fresh frame, mapped by the physical window.
        unsafe {
            phys_to_virt(frame.start_address())
                .as_mut_ptr::<u64>()
                .write(0x5eed)
        };
        let flags = Flags::PRESENT | Flags::WRITABLE | Flags::NO_EXECUTE;
        space
            .map(addr, frame, flags)
            .map_err(|e| format!("map: {e:?}"))?;
        check(space.map(addr, frame, flags).is_err(), || {
            "mapped the same page twice".into()
        })?;
        let (phys, got) = space.translate(addr + 8).ok_or("translate failed")?;
        check(phys == frame.start_address() + 8, || {
            format!("translated to {phys:?}")
        })?;
        check(
            got.contains(Flags::USER_ACCESSIBLE | Flags::WRITABLE),
            || format!("flags {got:?}"),
        )?;
        check(space.translate(VirtAddr::new(0x80_0000)).is_none(), || {
            "unmapped page translates".into()
        })?;
        let far = VirtAddr::new(0x7f00_0000_0000);
        let frame2 = frames::alloc().ok_or("out of frames")?;
        space
            .map(far, frame2, flags)
            .map_err(|e| format!("map: {e:?}"))?;
        let top = crate::mm::USER_TOP;
        let walk = [
            space.next_mapped(0, top),
            space.next_mapped(addr.as_u64() + 4096, top),
            space.next_mapped(far.as_u64() + 4096, top),
        ];
        check(
            walk == [Some(addr.as_u64()), Some(far.as_u64()), None],
            || format!("next_mapped walked {walk:x?}"),
        )?;
        // Fork copies table by table (its lock let go between them): both
        // pages, three levels apart, are in the child, on the same frames,
        // and write-protected copy-on-write on both sides.
        {
            use crate::mm::paging::COW;
            let child = space.fork_cow().ok_or("fork_cow: out of memory")?;
            for page in [addr, far] {
                let (mine, my_flags) = space.translate(page).ok_or("parent lost a page")?;
                let (its, its_flags) = child.translate(page).ok_or("child lacks a page")?;
                check(mine == its, || format!("child maps {page:?} to {its:?}"))?;
                check(
                    [my_flags, its_flags]
                        .iter()
                        .all(|f| f.contains(COW) && !f.contains(Flags::WRITABLE)),
                    || format!("after fork: {my_flags:?} and {its_flags:?}"),
                )?;
            }
        }
        space.activate();
        // The CPU's record hands out the loaded space with its own lock.
        check(crate::mm::paging::Space::current() == *space, || {
            "Space::current is not the space just loaded, with its lock".into()
        })?;
        // Through the user-copy path: with SMAP a plain read would fault.
        let mut bytes = [0u8; 8];
        let left = crate::mm::uaccess::copy_relying_on_fixup(&mut bytes, addr.as_u64());
        let seen = if left == 0 {
            u64::from_le_bytes(bytes)
        } else {
            0
        };
        crate::mm::paging::activate_kernel();
        check(seen == 0x5eed, || {
            format!("read {seen:#x} through the new mapping")
        })?;
        check(space.unmap(addr) == Some(frame), || {
            "unmap returned another frame".into()
        })?;
        space
            .map(addr, frame, flags)
            .map_err(|e| format!("remap: {e:?}"))?;
    }
    check(frames::free_count() == before, || {
        format!(
            "dropping the address space lost {} frames",
            before - frames::free_count()
        )
    })
}

fn heap_grow() -> TestResult {
    let (_, size_before) = heap::usage();
    let big: Vec<u8> = alloc::vec![0xa5; 8 << 20];
    let (_, size_after) = heap::usage();
    check(size_after > size_before, || {
        "heap did not grow for 8 MiB".into()
    })?;
    check(big.iter().all(|&b| b == 0xa5), || {
        "heap memory corrupted".into()
    })?;
    drop(big);
    let boxes: Vec<Box<[u64; 16]>> = (0..1000).map(|i| Box::new([i; 16])).collect();
    check(
        boxes.iter().enumerate().all(|(i, b)| b[15] == i as u64),
        || "boxes corrupted".into(),
    )
}

fn breakpoint_returns() -> TestResult {
    let before = trap::BREAKPOINTS.load(Ordering::Relaxed);
    x86_64::instructions::interrupts::int3();
    let after = trap::BREAKPOINTS.load(Ordering::Relaxed);
    check(after == before + 1, || {
        format!("breakpoint count {before} -> {after}")
    })
}

fn uaccess_fixup() -> TestResult {
    let mut buf = [0u8; 64];
    // 0x1000_0000 is an unmapped user address in the kernel's own table.
    let left = crate::mm::uaccess::copy_relying_on_fixup(&mut buf, 0x1000_0000);
    check(left == buf.len(), || {
        format!("copy from an unmapped page left {left} of 64 bytes")
    })
}

fn uaccess_checks() -> TestResult {
    use crate::mm::uaccess::{check_range, copy_from_user};
    let mut buf = [0u8; 8];
    for (addr, len, what) in [
        (0u64, 8usize, "NULL"),
        (0xffff_8000_0000_0000, 8, "kernel half"),
        (crate::mm::USER_TOP - 4, 8, "straddles the user top"),
        (u64::MAX - 3, 8, "wraps around"),
        (0x40_0000, 8, "unmapped"),
    ] {
        check(
            check_range(addr, len, false) == Err(abi::Errno::EFAULT),
            || format!("{what} accepted"),
        )?;
    }
    check(
        copy_from_user(&mut buf, 0) == Err(abi::Errno::EFAULT),
        || "copy from NULL".into(),
    )?;
    check(check_range(0, 0, true).is_ok(), || {
        "an empty range is always fine".into()
    })
}

/// Even if a kernel address reached a profile, the deferred update goes
/// through uaccess and must refuse it, leaving the kernel's bytes alone.
fn profil_kernel_buffer() -> TestResult {
    let target = Box::new([0x1234u16; 4]);
    let addr = target.as_ptr() as u64;
    let result = crate::profil::add_to_bin(addr + 2, 5);
    check(result == Err(abi::Errno::EFAULT), || {
        format!("update of a kernel address gave {result:?}")
    })?;
    check(*target == [0x1234; 4], || {
        format!("kernel memory changed: {:x?}", *target)
    })
}

/// A user page the kernel reads directly must fault (SMAP); the user-copy
/// path, which opens the window, still reads it.
fn smap_blocks_stray_reads() -> TestResult {
    use crate::mm::uaccess::{copy_relying_on_fixup, kernel_can_read};
    check(arch::protect::smap(), || "SMAP is not enabled".into())?;
    let space = AddressSpace::new().ok_or("out of memory")?;
    let addr = VirtAddr::new(0x40_0000);
    let frame = frames::alloc().ok_or("out of frames")?;
    space
        .map(
            addr,
            frame,
            Flags::PRESENT | Flags::WRITABLE | Flags::NO_EXECUTE,
        )
        .map_err(|e| format!("map: {e:?}"))?;
    space.activate();
    let stray = kernel_can_read(addr.as_u64());
    let mut buf = [0u8; 8];
    let left = copy_relying_on_fixup(&mut buf, addr.as_u64());
    crate::mm::paging::activate_kernel();
    check(!stray, || {
        "the kernel read a user page outside uaccess".into()
    })?;
    check(left == 0, || {
        format!("uaccess could not read it either ({left} left)")
    })
}

fn smep_on() -> TestResult {
    use x86_64::registers::control::{Cr4, Cr4Flags};
    check(arch::protect::smep(), || "SMEP is not enabled".into())?;
    check(
        Cr4::read().contains(Cr4Flags::SUPERVISOR_MODE_EXECUTION_PROTECTION),
        || "CR4.SMEP is clear".into(),
    )
}

/// Writing its own code or constants faults even for the kernel (CR0.WP and
/// the bootloader's read-only mappings); the heap is writable.
fn kernel_read_only() -> TestResult {
    use crate::mm::uaccess::kernel_can_write;
    static MESSAGE: &str = "read-only data";
    let text = run_all as *const () as u64;
    let rodata = MESSAGE.as_ptr() as u64;
    let heap = Box::new(0u8);
    check(!kernel_can_write(text), || {
        format!("kernel text at {text:#x} is writable")
    })?;
    check(!kernel_can_write(rodata), || {
        format!("read-only data at {rodata:#x} is writable")
    })?;
    check(kernel_can_write(&*heap as *const u8 as u64), || {
        "the heap is not writable (the probe is broken)".into()
    })
}

/// Every kind of kernel data page is mapped NO_EXECUTE; text is not.
fn kernel_no_execute() -> TestResult {
    static mut DATA: u64 = 1;
    let stack = 0u64;
    let heap = Box::new(0u64);
    let space = crate::mm::paging::Space::current();
    let nx = |addr: u64| {
        space
            .translate(VirtAddr::new(addr))
            .map(|(_, flags)| flags.contains(Flags::NO_EXECUTE))
    };
    for (what, addr) in [
        ("data", &raw const DATA as u64),
        ("the stack", &stack as *const u64 as u64),
        ("the heap", &*heap as *const u64 as u64),
    ] {
        check(nx(addr) == Some(true), || {
            format!("{what} at {addr:#x} is executable")
        })?;
    }
    let text = run_all as *const () as u64;
    check(nx(text) == Some(false), || {
        format!("text at {text:#x} is mapped NO_EXECUTE?")
    })
}

/// A tick in system time is charged to the pc at which the process entered
/// the kernel, even after the call rewrote its trap frame (rt_sigreturn
/// restores another pc, execve sets the new entry point): proc::on_tick
/// reads `Thread::user_pc_at_entry`, which reads the entry record that
/// every entry from user mode writes above its frame. A real rt_sigreturn
/// spends microseconds after its rewrite, too few for a user test to catch
/// a tick there reliably, so this walks the mechanism on a kernel stack of
/// its own: a new process's stack, an entry at a second pc (written by the
/// same code as a real one, `arch::trap::record_entry`), then the frame
/// rewritten.
fn entry_pc_survives_a_rewritten_frame() -> TestResult {
    use crate::arch::trap::TrapFrame;
    let stack = crate::mm::kstack::KernelStack::new().ok_or("no memory for a stack")?;
    let frame = TrapFrame {
        rip: 0x40_1000,
        cs: 0x23,
        ..TrapFrame::default()
    };
    // SAFETY: a fresh, mapped stack that nothing runs on.
    unsafe { arch::switch::prepare_new_stack(stack.entry_top(), &frame) };
    check(stack.entry_pc() == 0x40_1000, || {
        format!("a new stack records {:#x}", stack.entry_pc())
    })?;
    // SAFETY: the frame slot of this unused stack; writing it is what an
    // entry from user mode does.
    let tf = unsafe { &mut *stack.user_frame_at() };
    tf.rip = 0x40_2002; // the pc after a `syscall`
    // SAFETY: `tf` lies at this stack's entry_top.
    unsafe { arch::trap::record_entry(tf) };
    tf.rip = 0x40_3000; // what rt_sigreturn restores
    check(stack.entry_pc() == 0x40_2002, || {
        format!(
            "after the frame was rewritten, the entry pc reads {:#x}, want 0x402002",
            stack.entry_pc()
        )
    })?;
    check(stack.user_frame().rip == 0x40_3000, || {
        "the frame itself was not rewritten (the test is broken)".into()
    })
}

/// W^X over physical frames in the kernel's page table (every mapping, the
/// physical-memory window included): no frame the kernel can execute may be
/// writable through any address. A per-entry check would miss a frame
/// mapped twice, once each way (kcore::wx says why).
fn kernel_write_xor_execute() -> TestResult {
    let mut mappings = Vec::new();
    crate::mm::paging::Space::kernel().for_each_mapping(true, |m| mappings.push(m));
    wx_report("the kernel", &mappings)
}

/// The same rule for every program in /bin, as exec loads it: no page of
/// the new image is writable and executable, and no frame is both.
fn programs_write_xor_execute() -> TestResult {
    let bin = crate::fs::ramfs::lookup("/bin").map_err(|e| format!("/bin: {e:?}"))?;
    let mut checked = 0;
    for crate::fs::ramfs::DirEntry { name, .. } in
        crate::fs::ramfs::list(&bin).map_err(|e| format!("/bin: {e:?}"))?
    {
        let path = format!("/bin/{name}");
        let argv = [path.clone().into_bytes()];
        let image = match crate::proc::exec::load(
            &path,
            &argv,
            &[],
            kcore::rlimit::STACK_DEFAULT,
            &kcore::cred::Cred::root(),
        ) {
            Ok(image) => image,
            Err(abi::Errno::ENOEXEC) => continue, // not a program
            Err(e) => return Err(format!("{path}: exec: {e:?}")),
        };
        let mut mappings = Vec::new();
        image
            .mem
            .space
            .for_each_mapping(false, |m| mappings.push(m));
        wx_report(&path, &mappings)?;
        checked += 1;
    }
    check(checked > 10, || format!("only {checked} programs in /bin"))
}

fn wx_report(what: &str, mappings: &[kcore::wx::Mapping]) -> TestResult {
    match kcore::wx::first_violation(mappings) {
        None => Ok(()),
        Some(v) => Err(format!(
            "{what}: frame {:#x} is writable at {:#x} and executable at {:#x}",
            v.writable.phys.max(v.executable.phys),
            v.writable.virt + v.executable.phys.saturating_sub(v.writable.phys),
            v.executable.virt + v.writable.phys.saturating_sub(v.executable.phys),
        )),
    }
}

/// Counts ticks over one second of the RTC, a clock the tick does not drive.
/// The bounds are wide on purpose: a loaded host may slow the guest, but a
/// dead or wildly wrong timer falls outside them.
fn tick_rate() -> TestResult {
    let hz = u64::from(clock::hz());
    let limit = clock::tsc_per_sec() * 5;
    let start = arch::rdtsc();
    let timed_out = || arch::rdtsc() - start > limit;
    let wait_for_next_second = || -> Result<(), String> {
        let s = rtc::seconds();
        while rtc::seconds() == s {
            if timed_out() {
                return Err("the RTC second did not change within 5 TSC seconds".into());
            }
            core::hint::spin_loop();
        }
        Ok(())
    };
    wait_for_next_second()?;
    let t0 = clock::ticks();
    wait_for_next_second()?;
    let counted = clock::ticks() - t0;
    crate::info!("selftest: {counted} ticks in one RTC second at hz={hz}");
    check(counted >= hz / 10 && counted <= hz * 3, || {
        format!("{counted} ticks in one second, expected about {hz}")
    })
}

/// Crashes on purpose, so the test runner can check the report.
pub fn crash(kind: &str) -> ! {
    use crate::sync::{IrqLock, Rank};
    crate::info!("selftest: crashing on purpose: {kind}");
    match kind {
        "pagefault" => {
            // SAFETY: not safe at all: this read faults by design.
            let value = unsafe { core::ptr::read_volatile(0x0dea_dbee_f000 as *const u64) };
            panic!("read {value:#x} from an unmapped address");
        }
        "stackoverflow" => {
            #[allow(unconditional_recursion)]
            fn recurse(depth: u64) -> u64 {
                let buffer = core::hint::black_box([depth; 64]);
                recurse(depth + 1) + buffer[0]
            }
            panic!("recursion returned {}", recurse(0));
        }
        "switch-holding-lock" => {
            // What the scheduler's switch checks: a lock held across it.
            static SOME_LOCK: IrqLock<u32> = IrqLock::new(Rank::Service, 0);
            let _held = SOME_LOCK.lock();
            crate::sync::assert_none_held("switch_to_scheduler");
            panic!("a switch with a lock held went unnoticed");
        }
        "lock-twice" => {
            // A CPU waiting for a lock it holds itself waits forever; the
            // lock notices and says so.
            static SOME_LOCK: IrqLock<u32> = IrqLock::new(Rank::Service, 0);
            let _held = SOME_LOCK.lock();
            let _again = SOME_LOCK.lock();
            panic!("a lock taken twice went unnoticed");
        }
        "sleep-holding-lock" => {
            // A sleep lock may sleep, so taking one inside a spinlock is a
            // sleep holding a spinlock: refused at once, even when free.
            static SOME_LOCK: IrqLock<u32> = IrqLock::new(Rank::Service, 0);
            static SLEEPY: crate::sync::SleepLock<u32> = crate::sync::SleepLock::new(0);
            let _held = SOME_LOCK.lock();
            let _sleepy = SLEEPY.lock();
            panic!("a sleep lock taken holding a spinlock went unnoticed");
        }
        "lock-order" => {
            // Frames come after the process table in the order: taking the
            // table while holding the frame allocator is the half of an
            // AB-BA deadlock this CPU can be caught in alone.
            static FRAMES_LIKE: IrqLock<u32> = IrqLock::new(Rank::Frames, 0);
            static TABLE_LIKE: IrqLock<u32> = IrqLock::new(Rank::Table, 0);
            let _frames = FRAMES_LIKE.lock();
            let _table = TABLE_LIKE.lock();
            panic!("a lock taken out of order went unnoticed");
        }
        "lock-held-too-long" => {
            // Interrupts stay off while a lock is held; holding one for
            // seconds is a bug the release reports.
            static SOME_LOCK: IrqLock<u32> = IrqLock::new(Rank::Service, 0);
            let held = SOME_LOCK.lock();
            let start = crate::arch::rdtsc();
            while crate::arch::rdtsc() - start < 2 * crate::clock::tsc_per_sec() {
                core::hint::spin_loop();
            }
            drop(held);
            if crate::sync::long_holds() > 0 {
                panic!("deliberate panic: the long hold was warned about and the kernel ran on");
            }
            panic!("a lock held for two seconds went unnoticed");
        }
        _ => panic!("deliberate panic ({kind})"),
    }
}
