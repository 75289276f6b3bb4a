//! The CPU's own random-number instructions, for seeding `random.rs`.
//!
//! - **RDSEED** (CPUID leaf 7, EBX bit 18) reads the hardware entropy source
//!   itself: meant for seeding a generator, which is what we do with it.
//! - **RDRAND** (CPUID leaf 1, ECX bit 30) reads a generator the CPU reseeds
//!   from that source: good output, one step removed.
//!
//! Either may say "not now" (carry clear) when the source is drained; Intel
//! advises retrying RDRAND ten times, RDSEED longer. QEMU's `-cpu max` under
//! TCG offers RDRAND (answered from the host's random source); whether it
//! offers RDSEED, the boot log says (`random: seeded from ...`).

/// Tries before an instruction is taken to have failed (Intel's advice for
/// RDRAND is 10; RDSEED may need more while the source refills).
const RETRIES: usize = 100;

pub fn has_rdseed() -> bool {
    core::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 18) != 0
}

pub fn has_rdrand() -> bool {
    core::arch::x86_64::__cpuid(1).ecx & (1 << 30) != 0
}

/// 64 bits from RDSEED, or None when the CPU has none to give.
pub fn rdseed() -> Option<u64> {
    // SAFETY: called only when CPUID reports RDSEED.
    retry(has_rdseed(), |v| unsafe {
        core::arch::x86_64::_rdseed64_step(v)
    })
}

/// 64 bits from RDRAND, or None when the CPU has none to give.
pub fn rdrand() -> Option<u64> {
    // SAFETY: called only when CPUID reports RDRAND.
    retry(has_rdrand(), |v| unsafe {
        core::arch::x86_64::_rdrand64_step(v)
    })
}

/// Runs `step` (one RDSEED or RDRAND: 1 when it wrote a value) until it
/// succeeds, at most `RETRIES` times; nothing if the CPU lacks it.
fn retry(present: bool, step: impl Fn(&mut u64) -> i32) -> Option<u64> {
    if !present {
        return None;
    }
    let mut value = 0;
    for _ in 0..RETRIES {
        if step(&mut value) == 1 {
            return Some(value);
        }
        core::hint::spin_loop();
    }
    None
}
