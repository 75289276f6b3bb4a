//! The user's x87, MMX and SSE registers.
//!
//! The kernel is built soft-float and never touches these registers, so they
//! only need saving when the CPU changes hands between user contexts: on a
//! switch to another process (eagerly, with FXSAVE/FXRSTOR of 512 bytes; on
//! one CPU that is cheap and keeps the code obvious) and around a signal
//! handler, whose frame carries them as Linux's does (signal.rs).

use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};

/// The FXSAVE image: 512 bytes, 16-byte aligned.
#[repr(C, align(16))]
#[derive(Clone)]
pub struct FpuState(pub [u8; 512]);

/// Where MXCSR sits in the FXSAVE image, and the mask of its valid bits.
const MXCSR_AT: usize = 24;
const MXCSR_MASK_AT: usize = 28;
/// The state a program starts with: x87 control word 0x37f (all exceptions
/// masked, extended precision), MXCSR 0x1f80 (all SSE exceptions masked).
const FCW_DEFAULT: u16 = 0x37f;
const MXCSR_DEFAULT: u32 = 0x1f80;

impl FpuState {
    pub fn initial() -> FpuState {
        let mut state = FpuState([0; 512]);
        state.0[0..2].copy_from_slice(&FCW_DEFAULT.to_le_bytes());
        state.0[MXCSR_AT..MXCSR_AT + 4].copy_from_slice(&MXCSR_DEFAULT.to_le_bytes());
        state
    }

    /// Saves the CPU's registers here.
    pub fn save(&mut self) {
        // SAFETY: the buffer is 512 bytes and 16-byte aligned, as FXSAVE
        // needs; `init` enabled the instruction (CR4.OSFXSR).
        unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) self.0.as_mut_ptr(), options(nostack)) };
    }

    /// Loads the CPU's registers from here.
    pub fn restore(&self) {
        // SAFETY: as in save; every image here went through `sanitize` or
        // came from FXSAVE, so its MXCSR has no reserved bit set (which
        // would make FXRSTOR fault).
        unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) self.0.as_ptr(), options(nostack)) };
    }

    /// An image from user memory (a signal frame), made safe for FXRSTOR.
    pub fn sanitized(bytes: [u8; 512]) -> FpuState {
        let mut state = FpuState(bytes);
        let mxcsr =
            u32::from_le_bytes(state.0[MXCSR_AT..MXCSR_AT + 4].try_into().expect("4 bytes"));
        let valid = mxcsr_mask();
        state.0[MXCSR_AT..MXCSR_AT + 4].copy_from_slice(&(mxcsr & valid).to_le_bytes());
        state.0[MXCSR_MASK_AT..MXCSR_MASK_AT + 4].copy_from_slice(&valid.to_le_bytes());
        state
    }
}

/// The MXCSR bits this CPU accepts (from FXSAVE; 0xffbf if it reports none).
fn mxcsr_mask() -> u32 {
    static MASK: spin::Once<u32> = spin::Once::new();
    *MASK.call_once(|| {
        let mut probe = FpuState([0; 512]);
        probe.save();
        match u32::from_le_bytes(
            probe.0[MXCSR_MASK_AT..MXCSR_MASK_AT + 4]
                .try_into()
                .expect("4 bytes"),
        ) {
            0 => 0xffbf,
            mask => mask,
        }
    })
}

/// Lets user programs use the FPU and SSE, and loads the initial state.
pub fn init() {
    // SAFETY: clearing EM and setting MP/NE makes x87/SSE instructions run
    // natively (errors reported as exceptions); OSFXSR enables SSE and
    // FXSAVE/FXRSTOR, OSXMMEXCPT reports SIMD errors as #XM. None of this
    // changes memory safety.
    unsafe {
        Cr0::update(|f| {
            f.remove(Cr0Flags::EMULATE_COPROCESSOR | Cr0Flags::TASK_SWITCHED);
            f.insert(Cr0Flags::MONITOR_COPROCESSOR | Cr0Flags::NUMERIC_ERROR);
        });
        Cr4::update(|f| f.insert(Cr4Flags::OSFXSR | Cr4Flags::OSXMMEXCPT_ENABLE));
    }
    mxcsr_mask();
    FpuState::initial().restore();
}
