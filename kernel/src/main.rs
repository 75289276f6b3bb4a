//! The kernel's entry point and boot sequence.
//!
//! The bootloader enters `kernel_main` in long mode with paging on, all of
//! physical memory mapped (at an offset it chooses inside the range we give
//! it), and the ramdisk loaded. From there the order matters and is spelled
//! out below: this CPU's record (GS, which every lock counts itself in),
//! then the console (so everything after can report) and the boot options
//! (so that `quiet` holds from the first line), then the CPU tables,
//! memory, the other CPUs' discovery, the file system, interrupts and the
//! clock. docs/architecture.md lists the steps; the docs check holds the
//! list to this function.

#![no_std]
#![no_main]
// `#[instrument_fn = "off"]`: the few functions the profiled kernel's
// mcount must not be called from (arch/mcount.rs says which and why).
#![feature(instrument_fn)]

extern crate alloc;

// The mechanisms above the hardware hold no unsafe code of their own (the
// compiler refuses it in the modules marked below): what they need of it
// is behind the named walls `arch` and `mm`. Outside the walls only `log`
// (COM1), `sync` (the lock's cell and its interrupt flag), `selftest` (which
// provokes faults on purpose) and the boot code in this file have any.
mod arch;
#[deny(unsafe_code)]
mod clock;
#[deny(unsafe_code)]
mod fs;
#[deny(unsafe_code)]
mod ipc;
#[deny(unsafe_code)]
mod kprof;
mod log;
mod mm;
#[deny(unsafe_code)]
mod pci;
#[deny(unsafe_code)]
mod proc;
#[deny(unsafe_code)]
mod profil;
#[deny(unsafe_code)]
mod random;
mod selftest;
#[deny(unsafe_code)]
mod signal;
mod sync;
#[deny(unsafe_code)]
mod syscall;
#[deny(unsafe_code)]
mod vdso;
#[deny(unsafe_code)]
mod virtio_blk;

use bootloader_api::config::{BootloaderConfig, Mapping};
use bootloader_api::{BootInfo, entry_point};
use kcore::bootopts::{BootOptions, Mode};

pub static BOOTLOADER_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    // Keep everything the bootloader maps in the kernel half; user space
    // owns the lower half of every address space.
    config.mappings.dynamic_range_start = Some(0xffff_8000_0000_0000);
    config.mappings.dynamic_range_end = Some(0xffff_bfff_ffff_ffff);
    config.kernel_stack_size = 256 * 1024;
    config
};

entry_point!(kernel_main, config = &BOOTLOADER_CONFIG);

const BANNER: &str = concat!(
    "profkern ",
    env!("CARGO_PKG_VERSION"),
    ": a small Unix kernel for x86_64 with profil(2) in the clock interrupt"
);

fn kernel_main(boot_info: &'static mut BootInfo) -> ! {
    // GS first: every lock, the console's too, counts itself in this CPU's
    // record (arch/percpu.rs).
    arch::percpu::init_boot_cpu();
    log::init();
    println!("\n{BANNER}");
    // The options are read first so that `quiet` holds from the first line
    // (the ramdisk is mapped by the bootloader already).
    let (ramdisk, opts) = read_boot_options(boot_info);
    log::set_quiet(opts.quiet);
    arch::gdt::init();
    arch::trap::init();
    arch::syscall::init();
    arch::fpu::init();
    arch::protect::init();
    log_memory_map(boot_info);
    mm::init(boot_info);
    info!(
        "memory: {} MiB usable, {} frames free",
        (mm::frames::total_count() * 4096) >> 20,
        mm::frames::free_count()
    );

    let processors = find_processors(boot_info.rsdp_addr.into_option());
    random::init();

    info!(
        "boot: ramdisk {} KiB; hz={} tick={:?} mode={:?} init={}",
        ramdisk.len() / 1024,
        opts.hz,
        opts.tick,
        opts.mode,
        opts.init
    );

    if sync::choose_discipline(opts.lock) {
        info!("sync: ticket locks (first come, first served)");
    } else {
        info!(
            "sync: test-and-set locks (a virtual CPU the host stops must not hold up the CPUs queued behind it)"
        );
    }
    sync::set_hold_panic(opts.hold_panic);
    log::set_console_level(opts.loglevel);

    fs::ramfs::make_standard_dirs();
    match fs::ramfs::load_cpio(ramdisk) {
        Ok(files) => info!("ramfs: {files} files from the ramdisk"),
        Err(e) => warn!("ramfs: ramdisk archive damaged ({e:?}); continuing with what was read"),
    }
    fs::export::init(opts.export);
    fs::procfs::set_cmdline(opts.cmdline());
    proc::exec::set_randomize_va_space(opts.randomize_va_space)
        .expect("bootopts checked the level");

    arch::pic::init();
    // Before the other CPUs start: only the boot CPU may use the PCI
    // configuration ports (arch/pci.rs).
    pci::init();
    virtio_blk::init();
    vdso::init();
    clock::init(opts.hz, opts.tick, boot_info.rsdp_addr.into_option());
    proc::sched::set_slice_ms(opts.slice_ms);
    if opts.profhz != 0
        && let Err(why) = profil::set_profhz(opts.profhz, opts.hz)
    {
        warn!("boot: ignoring profhz={}: {why}", opts.profhz);
    }
    let running = arch::smp::start_others(&processors, opts.hz);
    info!("cpus: {running} running");
    fs::console::init();
    x86_64::instructions::interrupts::enable();

    if let Some(kind) = opts.crash {
        selftest::crash(kind);
    }
    if opts.mode == Mode::SelfTest {
        selftest::run_all();
    }
    start_init(&opts);
    proc::sched::run()
}

/// Starts the first user process; without one there is nothing to do.
fn start_init(opts: &BootOptions) {
    // xtask passes only UTF-8 (it refuses other arguments); a hand-written
    // boot.conf with other bytes gets them replaced, not a failed boot.
    let args: alloc::vec::Vec<alloc::string::String> = opts
        .init_args()
        .map(|arg| {
            let bytes: alloc::vec::Vec<u8> = arg.bytes().collect();
            alloc::string::String::from_utf8_lossy(&bytes).into_owned()
        })
        .collect();
    match proc::lifecycle::spawn_init(opts.init, &args) {
        Ok(()) => {
            info!("boot: starting {} {:?}", opts.init, args);
            if args.is_empty() {
                info!(
                    "boot: type 'help' at the shell prompt; Ctrl-A X quits QEMU; docs/book is the guide"
                );
            }
        }
        Err(e) => {
            error!("boot: cannot start {}: {}", opts.init, e.message());
            arch::power::fail();
        }
    }
}

/// The local APIC ids of the processors the firmware lists (reported),
/// empty if its tables cannot be read: then the boot CPU runs alone.
fn find_processors(rsdp: Option<u64>) -> alloc::vec::Vec<u32> {
    match arch::acpi::processors(rsdp) {
        Ok(cpus) => {
            let ids: alloc::vec::Vec<u32> = cpus
                .iter()
                .filter(|c| c.usable)
                .map(|c| c.apic_id)
                .collect();
            info!(
                "cpus: {} in the ACPI MADT (local APIC ids {:?})",
                ids.len(),
                ids
            );
            ids
        }
        Err(why) => {
            warn!("cpus: {why}; running on the boot CPU");
            alloc::vec::Vec::new()
        }
    }
}

/// Logs the bootloader's memory map, one line per run of regions of one
/// kind (the firmware's map, less what the bootloader took for itself):
/// what `mm::init` will hand to the frame allocator is every `Usable` line.
fn log_memory_map(boot_info: &BootInfo) {
    let mut regions = boot_info.memory_regions.iter().peekable();
    while let Some(first) = regions.next() {
        let mut end = first.end;
        while let Some(next) = regions.next_if(|r| r.kind == first.kind && r.start == end) {
            end = next.end;
        }
        info!("memory: {:#x}..{:#x} {:?}", first.start, end, first.kind);
    }
}

/// The ramdisk and the boot options in its `etc/boot.conf`
/// (`kcore::bootopts`): a bad line is logged and its default kept.
fn read_boot_options(boot_info: &BootInfo) -> (&'static [u8], BootOptions<'static>) {
    let ramdisk = ramdisk(boot_info);
    let conf = kcore::cpio::find(ramdisk, "etc/boot.conf").unwrap_or_default();
    let conf = core::str::from_utf8(conf).unwrap_or_else(|_| {
        warn!("boot: etc/boot.conf is not UTF-8; using defaults");
        ""
    });
    let opts = BootOptions::parse(conf, |bad| {
        warn!("boot: ignoring '{}': {}", bad.line, bad.reason)
    });
    (ramdisk, opts)
}

/// The ramdisk the bootloader loaded, or an empty slice.
fn ramdisk(boot_info: &BootInfo) -> &'static [u8] {
    match boot_info.ramdisk_addr.into_option() {
        // SAFETY: the bootloader mapped `ramdisk_len` bytes at this address
        // and nothing writes them.
        Some(addr) => unsafe {
            core::slice::from_raw_parts(addr as *const u8, boot_info.ramdisk_len as usize)
        },
        None => &[],
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    x86_64::instructions::interrupts::disable();
    log::emergency_write(format_args!("\n!!! KERNEL PANIC: {info}\n"));
    arch::power::fail()
}
