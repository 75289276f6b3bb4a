//! Segments: the GDT and the TSS, one of each per CPU.
//!
//! Long mode ignores segment bases and limits, but the GDT still says which
//! code runs in ring 0 and which in ring 3, and the TSS says which stack the
//! CPU switches to on an interrupt: `rsp0` for interrupts from user mode (set
//! to the running process's kernel stack on every switch), and separate IST
//! stacks for a double fault and an NMI, so a kernel stack overflow still gets
//! a report instead of a triple fault.
//!
//! The order of the entries is fixed by `syscall`/`sysret`: the STAR MSR
//! expects kernel data right after kernel code, and user data right before
//! user code. After the TSS (two entries) comes one more, which user code
//! reads and never loads: the CPU's number, for the vDSO's getcpu.

use alloc::boxed::Box;
use spin::Once;
use x86_64::VirtAddr;
use x86_64::instructions::segmentation::{CS, DS, ES, SS, Segment};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;

use super::percpu::{self, MAX_CPUS};

pub const DOUBLE_FAULT_IST: u16 = 0;
pub const NMI_IST: u16 = 1;
const IST_STACK_SIZE: usize = 16 * 1024;

/// The selectors a process and the syscall MSRs need: the same on every
/// CPU, since every CPU's GDT is built in the same order.
#[derive(Clone, Copy)]
pub struct Selectors {
    pub kernel_code: SegmentSelector,
    pub kernel_data: SegmentSelector,
    pub user_data: SegmentSelector,
    pub user_code: SegmentSelector,
    tss: SegmentSelector,
}

#[repr(align(16))]
// Only ever used through its address, as a stack.
#[allow(dead_code)]
struct IstStack([u8; IST_STACK_SIZE]);

/// The boot CPU's IST stacks are static (its GDT is loaded before the heap
/// exists); the others' come from the heap when they start.
static mut DOUBLE_FAULT_STACK: IstStack = IstStack([0; IST_STACK_SIZE]);
static mut NMI_STACK: IstStack = IstStack([0; IST_STACK_SIZE]);

/// One TSS per CPU: its rsp0 is the stack of the thread that CPU runs.
static mut TSS: [TaskStateSegment; MAX_CPUS] = [const { TaskStateSegment::new() }; MAX_CPUS];
/// One GDT per CPU, since each holds a descriptor of its own CPU's TSS.
static GDT: [Once<(GlobalDescriptorTable, Selectors)>; MAX_CPUS] =
    [const { Once::new() }; MAX_CPUS];

fn stack_top(stack: *const IstStack) -> VirtAddr {
    VirtAddr::from_ptr(stack) + IST_STACK_SIZE as u64
}

/// Loads the boot CPU's GDT and TSS. Called once, first thing at boot.
pub fn init() {
    let stacks = (
        stack_top(core::ptr::addr_of!(DOUBLE_FAULT_STACK)),
        stack_top(core::ptr::addr_of!(NMI_STACK)),
    );
    load(0, stacks);
}

/// Loads a GDT and TSS for CPU `index` (not the boot CPU), with IST stacks
/// from the heap. Called once by that CPU as it starts.
pub fn init_cpu(index: usize) {
    let fresh = || stack_top(Box::leak(Box::new(IstStack([0; IST_STACK_SIZE]))));
    load(index, (fresh(), fresh()));
}

fn load(index: usize, (double_fault, nmi): (VirtAddr, VirtAddr)) {
    // SAFETY: each CPU writes only its own TSS, here (once, before its
    // interrupts are enabled) and in `set_kernel_stack` afterwards.
    let tss: &'static TaskStateSegment = unsafe {
        let tss = &mut (*core::ptr::addr_of_mut!(TSS))[index];
        tss.interrupt_stack_table[DOUBLE_FAULT_IST as usize] = double_fault;
        tss.interrupt_stack_table[NMI_IST as usize] = nmi;
        &*(tss as *const TaskStateSegment)
    };
    let (gdt, sel) = GDT[index].call_once(|| {
        let mut gdt = GlobalDescriptorTable::new();
        let kernel_code = gdt.append(Descriptor::kernel_code_segment());
        let kernel_data = gdt.append(Descriptor::kernel_data_segment());
        let user_data = gdt.append(Descriptor::user_data_segment());
        let user_code = gdt.append(Descriptor::user_code_segment());
        let tss = gdt.append(Descriptor::tss_segment(tss));
        let cpu_number = gdt.append(cpu_number_segment(index));
        assert_eq!(cpu_number.0, kcore::vdso::CPU_NUMBER_SELECTOR);
        (
            gdt,
            Selectors {
                kernel_code,
                kernel_data,
                user_data,
                user_code,
                tss,
            },
        )
    });
    gdt.load();
    // SAFETY: the selectors index the GDT just loaded.
    unsafe {
        CS::set_reg(sel.kernel_code);
        SS::set_reg(sel.kernel_data);
        DS::set_reg(SegmentSelector(0));
        ES::set_reg(SegmentSelector(0));
        load_tss(sel.tss);
    }
}

/// A ring-3 data segment that nothing loads: its limit is the CPU's
/// number, which the vDSO's `getcpu` reads with LSL, an instruction user
/// code may run (Linux's `GDT_ENTRY_CPUNODE`). Byte granularity, so the
/// limit is the number itself.
fn cpu_number_segment(index: usize) -> Descriptor {
    use x86_64::structures::gdt::DescriptorFlags as F;
    let present_data = F::USER_SEGMENT | F::PRESENT | F::WRITABLE | F::ACCESSED | F::DPL_RING_3;
    Descriptor::UserSegment(present_data.bits() | index as u64)
}

pub fn selectors() -> &'static Selectors {
    &GDT[0].get().expect("gdt::init not called").1
}

/// Sets the stack this CPU switches to when an interrupt arrives in user
/// mode.
pub fn set_kernel_stack(top: VirtAddr) {
    let index = percpu::this_cpu().index() as usize;
    // SAFETY: a single aligned 64-bit store into this CPU's own TSS, done
    // with interrupts off by the scheduler; the CPU reads rsp0 only when
    // entering the kernel.
    unsafe { (*core::ptr::addr_of_mut!(TSS))[index].privilege_stack_table[0] = top };
}
